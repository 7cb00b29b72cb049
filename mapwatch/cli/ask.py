"""`mapwatch ask`: run a slash command without Discord and print its answer as text."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mapwatch.cli.options import answers_base_url
from mapwatch.store.errors import EXIT_OK, EXIT_REJECTED, EXIT_USAGE, AskError, BadChoice

if TYPE_CHECKING:
    from mapwatch.bot.commands import Command, Opt
    from mapwatch.bot.rendering.replies import File

_NAMED = re.compile(r"^(?P<name>[a-z_]+):(?P<value>.*)$", re.DOTALL)


def parse_slash(text: str) -> tuple[str, dict[str, Any]]:
    """'/citers 2412.10400 sort:newest' -> ('citers', {'paper': '2412.10400', 'sort': 'newest'}).

    Options come positionally in their declared order or as `name:value` (a named value
    runs until the next `name:`); a command with one option takes all the words. `page:N`
    (1-based) shows another page of a paged answer."""
    from mapwatch.bot.commands import commands

    try:
        tokens = shlex.split(text)
    except ValueError:
        tokens = text.split()
    if not tokens:
        raise AskError("give a command, e.g. \"/paper 2412.10400\"")
    name = tokens[0].lstrip("/").lower()
    cmds = commands()
    if name not in cmds and len(tokens) > 1 and f"{name} {tokens[1].lower()}" in cmds:  # a subcommand
        name, tokens = f"{name} {tokens[1].lower()}", tokens[1:]
    if name not in cmds:
        raise AskError(f"unknown command /{name}; commands: " + ", ".join(f"/{c}" for c in cmds))
    cmd = cmds[name]
    names = [o.name for o in cmd.options] + (["page"] if cmd.paged else [])
    named: dict[str, list[str]] = {}
    positional: list[str] = []
    current: str | None = None
    for tok in tokens[1:]:
        m = _NAMED.match(tok)
        if m and m.group("name") in names:
            current = m.group("name")
            named[current] = [m.group("value")] if m.group("value") else []
        elif current is not None:
            named[current].append(tok)
        else:
            positional.append(tok)
    options: dict[str, Any] = {k: " ".join(v) for k, v in named.items()}
    free = [o.name for o in cmd.options if o.name not in options]
    filled: list[str] = []  # the options the bare words went to, in order
    if positional:
        if not free:
            raise AskError(f"/{name} takes no more options (got {' '.join(positional)!r})")
        if len(cmd.options) == 1 or len(free) == 1:
            options[free[0]] = " ".join(positional)
            filled = free[:1]
        else:
            for i, tok in enumerate(positional):
                if i >= len(free):
                    options[free[-1]] += " " + tok
                else:
                    options[free[i]] = tok
            filled = free[:len(positional)]
    for o in cmd.options:
        if o.required and not options.get(o.name, "").strip():
            raise AskError(f"/{name} needs <{o.name}>: {o.description}")
        if o.choices and o.name in options:
            typed = options[o.name].strip().lower()
            if typed not in o.choices:
                raise AskError(_bad_choice(cmd, o, options, named, positional, filled))
            options[o.name] = typed
    if "page" in options:
        try:
            options["page"] = int(options["page"]) - 1
        except ValueError:
            raise AskError("page must be a number") from None
        if options["page"] < 0:
            raise AskError("page must be 1 or more")
    return name, options


def _bad_choice(cmd: Command, opt: Opt, options: dict[str, Any], named: dict[str, list[str]],
                positional: list[str], filled: list[str]) -> str:
    """A choice option given a value it does not take: what it takes and what it got (BadChoice's
    words), and, when bare words filled several options in turn, how they were read and the
    command with them all in the first of those options (what was meant, most often)."""
    from mapwatch.store.records import clean  # what is shown of the words: printable, one line

    said = BadChoice(opt.name, options[opt.name], opt.choices).words()
    if opt.name not in filled or len(filled) < 2:
        return said
    bare = clean(" ".join(positional), 300)
    read = clean(" ".join(f"{o}:{options[o]}" for o in filled), 300)
    said += f" Bare words fill the options in turn: “{bare}” was read as {read}."
    first = next(o for o in cmd.options if o.name == filled[0])
    if not first.choices:
        given = "".join(f" {o}:{clean(options[o], 100)}" for o in named)
        said += f" Did you mean “/{cmd.name} {first.name}:{bare}{given}”?"
    return said


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ask", help="run a bot command locally and print the answer",
                       description="Run a slash command without Discord and print its answer as text, "
                                   "e.g. mapwatch ask \"/paper 2412.10400\". Options: positionally in "
                                   "their order, or name:value.")
    p.add_argument("command", metavar="\"/COMMAND ...\"", help="the slash command, quoted")
    p.add_argument("--guild", type=int, metavar="ID", help="as if in this server (default: a DM)")
    p.add_argument("--channel", type=int, metavar="ID", help="as if in this channel")
    p.add_argument("--user", type=int, metavar="ID", help="as this user (default 1)")
    p.set_defaults(func=cmd_ask)


def cmd_ask(args: argparse.Namespace) -> int:
    from mapwatch.bot.commands import commands, run_core
    from mapwatch.bot.rendering.render import to_text
    from mapwatch.bot.rendering.replies import Ctx
    from mapwatch.store.clock import utc_now
    from mapwatch.store.database.db import open_db
    from mapwatch.store.environment import of_command

    name, options = parse_slash(args.command)  # AskError: a usage error, as main reports it
    from mapwatch.store import settings

    for flag in ("guild", "channel", "user"):  # Discord ids: positive, and they fit SQLite's INTEGER
        if getattr(args, flag) is not None:
            settings.bounded_int(getattr(args, flag), f"--{flag}", 1, settings.MAX_ID)
    cmd = commands()[name]
    if cmd.manage and args.channel is None and args.user is None:
        print("mapwatch: error: say where alerts go: --guild ID --channel ID, or --user ID for DMs",
              file=sys.stderr)
        return EXIT_USAGE
    user = args.user if args.user is not None else 1
    channel = args.channel if args.channel is not None else user
    env = of_command(args)
    ctx = Ctx(guild_id=args.guild, channel_id=channel, user_id=user, now=utc_now(), can_manage=True,
              can_manage_guild=True, base_url=answers_base_url(args), sources=env.source_settings())
    reply, ok = run_core(open_db(args.db, create=False), ctx, name, options)
    saved, problem = write_attachments(reply.files, Path(args.db or of_command(args).database()))
    print(to_text(reply, saved))
    if problem:
        print(f"mapwatch: error: {problem}", file=sys.stderr)
        return EXIT_REJECTED
    return EXIT_OK if ok else EXIT_REJECTED


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def write_attachments(files: Sequence[File], database: Path, folder: Path = Path(".")) -> tuple[dict[str, str], str]:
    """Write a reply's attachments (a /graph picture, a /paper chart) into `folder` (the current
    one), each under its own name made safe (letters, digits, `.`, `_`, `-`; never hidden), over a
    file of that name: (file name -> the path written, for the answer to say; why one was not, or "")."""
    from mapwatch.store.atomic import write_atomic
    from mapwatch.store.database.db_check import output_problem

    saved: dict[str, str] = {}
    for f in files:
        target = folder / (_UNSAFE.sub("_", Path(f.filename).name).lstrip(".") or "attachment")
        problem = output_problem(target, database)
        if problem:
            return saved, problem
        try:
            write_atomic(target, f.data)
        except OSError as e:
            return saved, f"cannot write {target}: {e.strerror or e}"
        saved[f.filename] = str(target) if target.is_absolute() else f"./{target}"
    return saved, ""


