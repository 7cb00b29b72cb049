"""The slash commands as plain specs and pure cores.

Each module in this package defines, per command, a core `(db, ctx, **options) -> Reply`
(validate -> query -> render; raises MapwatchError subclasses for users' mistakes) and its
`COMMANDS` specs. The spec is the one declaration of a command: bot/command_tree.py builds
the discord.py wrappers from it, and `mapwatch ask` runs the cores from it without loading discord.

bot/commands may import (mapwatch/layers.py): store/, feeds/*.py, bot/rendering.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from mapwatch.bot.rendering.replies import Ctx, Reply

MODULES = [f"{__name__}.{name}" for name in ("papers", "directions", "tracking", "follow", "info", "graph", "message",
                                             "webhooks", "people", "team", "export", "why")]
PAGE_SIZE = 10


# What an option asks for; "channel" takes a text or forum channel.
OptKind = Literal["paper", "direction", "text", "choice", "int", "role", "channel"]


@dataclass(frozen=True)
class Opt:
    name: str
    description: str
    kind: OptKind = "text"
    required: bool = True
    choices: tuple[str, ...] = ()  # the values a choice option takes
    choice_names: tuple[str, ...] = ()  # what Discord shows for each value (default: the value)
    min_value: int | None = None  # bounds of an int option, enforced by Discord
    max_value: int | None = None
    autocomplete: str = ""  # paper | direction | tracked | author | author_name; default: the kind's (paper, direction)

    def named_choices(self) -> tuple[tuple[str, str], ...]:
        """(name shown, value) of each choice."""
        return tuple(zip(self.choice_names or self.choices, self.choices, strict=True))


@dataclass(frozen=True)
class Command:
    name: str
    description: str
    options: tuple[Opt, ...]
    core: Callable[..., Reply]
    manage: bool = False  # needs Manage Channels in a server
    refusal: str = ""  # what a user without Manage Channels is told (names this command's action)
    paged: bool = False  # accepts `page` (0-based) for its buttons
    menu: str = ""  # a message context menu of this name instead of a slash command (its one option: `text`)
    user_install: bool = False  # read-only: usable as a user-installed app too, in any server and in DMs
    webhooks: bool = False  # needs Manage Webhooks, in a server only

    @property
    def slash(self) -> bool:
        return not self.menu


def check_manage(ctx: Ctx, message: str) -> None:
    """A guarded command in a server needs Manage Channels (any DM is fine)."""
    from mapwatch.store.errors import NotAllowed

    if ctx.guild_id is not None and not ctx.can_manage:
        raise NotAllowed(message)


def here(ctx: Ctx) -> dict[str, Any]:
    """Whose tracks and follows a command changes: this server's channel, or the user's DMs."""
    return {"guild_id": ctx.guild_id, "channel_id": ctx.channel_id, "user_id": ctx.user_id}


def stop_reply(gone: bool, what: str, not_here: str, stopped: str) -> Reply:
    """/untrack and /unfollow: `stopped` (what stopped here), or, only to the user, `not_here`
    (nothing did); `{}` in either stands for `what`."""
    from mapwatch.bot.rendering import text

    if not gone:
        return Reply(content=not_here.format(what), ephemeral=True)
    return text.fit_reply(Reply(content=stopped.format(what)))


def int_option(value: Any, name: str, lo: int, hi: int, default: int) -> int:
    """A whole-number option within [lo, hi] (`mapwatch ask` passes text), `default` when not given."""
    from mapwatch.store.errors import BadOption

    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise BadOption(f"{name} must be a whole number from {lo} to {hi}") from None
    if not lo <= n <= hi:
        raise BadOption(f"{name} must be from {lo} to {hi}")
    return n


def refusal(name: str) -> str:
    """The Manage Channels refusal of command `name` (each guarded command names its own action)."""
    cmd = commands().get(name)
    return (cmd.refusal if cmd else "") or "You need the Manage Channels permission to do that here."


# What a user-installed app offers (with the message menu).
READ_ONLY = ("paper", "citers", "refs", "search", "direction", "directions", "related", "path", "rising",
             "graph", "feed", "stats", "author", "export", "why")


def groups() -> dict[str, str]:
    """Slash commands with subcommands (`/team add`): the group's name -> its description. A
    spec named "<group> <sub>" is that group's subcommand."""
    out: dict[str, str] = {}
    for name in MODULES:
        out.update(getattr(importlib.import_module(name), "GROUPS", {}))
    return out


def commands() -> dict[str, Command]:
    """Every command, by name, in the order the modules declare them."""
    out: dict[str, Command] = {}
    for name in MODULES:
        for cmd in importlib.import_module(name).COMMANDS:
            if cmd.name in out:
                raise ValueError(f"duplicate command {cmd.name}")
            out[cmd.name] = replace(cmd, user_install=True) if cmd.name in READ_ONLY else cmd
    return out


def pages(total: int, size: int = PAGE_SIZE) -> int:
    return max(1, -(-total // size))


def error_reply(exc: Exception) -> Reply:
    """The one mapping from domain errors to friendly, ephemeral answers."""
    from mapwatch.bot.rendering import render, text
    from mapwatch.store.errors import (
        BadChoice,
        BadOption,
        DirectionNotFound,
        MapwatchError,
        NotAllowed,
        PaperNotFound,
    )

    if isinstance(exc, PaperNotFound):
        return render.error(f"No paper matches “{text.clip(exc.ref, 200)}”. Try an arXiv id, an arXiv or map "
                            "URL, or more of the title.", exc.suggestions)
    if isinstance(exc, DirectionNotFound):
        return render.error(f"No direction matches “{text.clip(exc.ref, 200)}”. /directions lists them.",
                            exc.suggestions)
    if isinstance(exc, BadChoice):  # the value as typed, shown literally
        return render.error(exc.words(text.esc))
    if isinstance(exc, NotAllowed | BadOption):
        return render.error(str(exc))
    from mapwatch.store.questions.teams import PersonChoice, PersonNotFound

    if isinstance(exc, PersonChoice):  # a name that fits several people: the choice, never a guess
        from mapwatch.bot.rendering.render_people import person_choice

        return person_choice(exc.ref, exc.people, exc.more, "/track")
    if isinstance(exc, PersonNotFound):
        return render.error(f"No author in the map is named “{text.clip(exc.ref, 200)}”. Try their ORCID or "
                            "OpenAlex author id.", exc.suggestions)
    if isinstance(exc, MapwatchError):
        return render.error(f"That did not work: {exc}")
    return render.error("Something went wrong on our side; it has been logged. Please try again later.")


def run_core(db: Any, ctx: Any, name: str, options: dict[str, Any]) -> tuple[Reply, bool]:
    """Run a command's core. Returns (reply, ok); users' mistakes become friendly replies.
    Unexpected exceptions propagate (the caller logs them and answers generically)."""
    from mapwatch.store.errors import BadOption, MapwatchError

    cmd = commands().get(name)
    if cmd is None:
        return error_reply(BadOption(f"Unknown command /{name}.")), False
    try:
        return cmd.core(db, ctx, **{k: v for k, v in options.items() if v is not None}), True
    except MapwatchError as e:
        return error_reply(e), False
