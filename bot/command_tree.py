"""The discord.py slash commands, generated from the `COMMANDS` specs (bot/commands/).

Everything Discord is told about a command comes from its spec, once: name, description,
options (name, description, type, required, choices, bounds), autocomplete, and for
`manage` commands the default permission Manage Channels plus a check that enforces it.
Each generated callback hands its options to `Runner.run` (bot/interactions.py).
"""

from __future__ import annotations

import inspect
import keyword
from collections.abc import Callable, Coroutine
from typing import Any

import discord
from discord import app_commands

from mapwatch.bot.commands import Command, Opt, commands, error_reply, groups, refusal
from mapwatch.bot.interactions import Runner
from mapwatch.store.errors import NotAllowed

MANAGE = discord.Permissions(manage_channels=True)
MANAGE_WEBHOOKS = discord.Permissions(manage_webhooks=True)


def python_name(option: str) -> str:
    """A Python identifier for an option name (`from` -> `from_`, `self` -> `self_`; `-` -> `_`)."""
    name = option.replace("-", "_")
    return name + "_" if keyword.iskeyword(name) or name == "self" else name


def annotation(o: Opt) -> Any:
    """The parameter type discord.py turns into the option's type (and bounds)."""
    if o.kind == "int":
        if o.min_value is not None or o.max_value is not None:
            return app_commands.Range[int, o.min_value, o.max_value]
        return int
    if o.kind == "role":
        return discord.Role
    if o.kind == "channel":
        return app_commands.Transform[app_commands.AppCommandChannel, ChannelOption]
    return str


class ChannelOption(app_commands.Transformer):
    """A channel option offering text, announcement and forum channels. The value stays the
    channel as the interaction resolved it, with the user's permissions there."""

    @property
    def type(self) -> discord.AppCommandOptionType:
        return discord.AppCommandOptionType.channel

    @property
    def channel_types(self) -> list[discord.ChannelType]:
        return [discord.ChannelType.text, discord.ChannelType.news, discord.ChannelType.forum]

    async def transform(self, interaction: discord.Interaction, value: Any, /) -> Any:
        return value


def autocomplete_of(o: Opt, runner: Runner) -> Callable[..., Any] | None:
    """The Runner's autocomplete for an option: paper, direction or tracked (the channel's tracks)."""
    which = o.autocomplete or (o.kind if o.kind in ("paper", "direction") else "")
    return getattr(runner, f"{which}_autocomplete") if which else None


def _value(value: Any) -> Any:
    if isinstance(value, app_commands.AppCommandChannel):
        return f"forum:{value.id}" if value.type == discord.ChannelType.forum else str(value.id)  # as cores read it
    return value.id if isinstance(value, discord.Role) else value  # a role option: its id


def may_manage(options: dict[str, Any]) -> bool:
    """A channel option of a guarded command names a channel where the user has Manage Channels
    too (Discord resolves the user's permissions in that channel with the option)."""
    return all(value.permissions.manage_channels for value in options.values()
               if isinstance(value, app_commands.AppCommandChannel))


def callback_for(cmd: Command, runner: Runner) -> Callable[..., Coroutine[Any, Any, None]]:
    """An async callback whose signature declares the spec's options (discord.py reads the
    signature and its annotations), decorated with their descriptions, choices and autocomplete."""
    names = {python_name(o.name): o.name for o in cmd.options}

    async def callback(interaction: discord.Interaction, **options: Any) -> None:
        if cmd.manage and not may_manage(options):
            await runner.send(interaction, error_reply(NotAllowed(refusal(cmd.name))))
            return
        await runner.run(interaction, cmd.name, **{names[k]: _value(v) for k, v in options.items()})

    params = [inspect.Parameter("interaction", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                annotation=discord.Interaction)]
    params += [inspect.Parameter(python_name(o.name), inspect.Parameter.KEYWORD_ONLY, annotation=annotation(o),
                                 default=inspect.Parameter.empty if o.required else None) for o in cmd.options]
    callback.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    callback.__name__ = callback.__qualname__ = python_name(cmd.name)
    func: Any = callback
    if cmd.options:
        func = app_commands.describe(**{python_name(o.name): o.description for o in cmd.options})(func)
    renamed = {python_name(o.name): o.name for o in cmd.options if python_name(o.name) != o.name}
    if renamed:
        func = app_commands.rename(**renamed)(func)
    choices = {python_name(o.name): [app_commands.Choice(name=n, value=v) for n, v in o.named_choices()]
               for o in cmd.options if o.choices}
    if choices:
        func = app_commands.choices(**choices)(func)
    completes = {python_name(o.name): fn for o in cmd.options if (fn := autocomplete_of(o, runner))}
    if completes:
        func = app_commands.autocomplete(**completes)(func)
    return func


def installs(cmd: Command) -> tuple[app_commands.AppInstallationType, app_commands.AppCommandContext]:
    """Where a command exists (`integration_types`, `contexts`): every command in a server that
    added the app and in the bot's DMs; the read-only ones also for a person who installed the
    app for themselves, in any server, group DM or DM. Commands that change a channel: server only."""
    return (app_commands.AppInstallationType(guild=True, user=cmd.user_install),
            app_commands.AppCommandContext(guild=True, dm_channel=True, private_channel=cmd.user_install))


def message_text(message: discord.Message) -> str:
    """The text of a message a context menu runs on: its content and its embeds' text and links."""
    parts = [message.content or ""]
    for e in message.embeds:
        parts += [e.title or "", e.url or "", e.description or ""]
        parts += [f"{f.name} {f.value}" for f in e.fields]
        parts.append(e.footer.text or "" if e.footer else "")
    return "\n".join(p for p in parts if p)


def build_menu(cmd: Command, runner: Runner) -> app_commands.ContextMenu:
    """A message context menu: the command runs on the message's text (its one option)."""
    async def on_message(interaction: discord.Interaction, message: discord.Message) -> None:
        await runner.run(interaction, cmd.name, text=message_text(message))

    allowed_installs, allowed_contexts = installs(cmd)
    return app_commands.ContextMenu(name=cmd.menu, callback=on_message, allowed_installs=allowed_installs,
                                    allowed_contexts=allowed_contexts)


def build(cmd: Command, runner: Runner) -> app_commands.Command[Any, ..., None]:
    command: app_commands.Command[Any, ..., None] = app_commands.Command(
        name=cmd.name.rsplit(" ", 1)[-1], description=cmd.description, callback=callback_for(cmd, runner))
    command.allowed_installs, command.allowed_contexts = installs(cmd)
    if cmd.manage:
        command.default_permissions = MANAGE
        command.add_check(runner.manage_check)
    if cmd.webhooks:
        command.default_permissions = MANAGE_WEBHOOKS
        command.allowed_contexts = app_commands.AppCommandContext(guild=True)
        command.add_check(runner.webhooks_check)
    return command


def install_commands(tree: app_commands.CommandTree, runner: Runner) -> None:
    """Add every command of the specs to `tree`: slash commands, and message context menus."""
    made: dict[str, app_commands.Group] = {}
    for cmd in commands().values():
        if cmd.slash and " " in cmd.name:  # "team add": subcommand `add` of the group `/team`
            group_name = cmd.name.split(" ", 1)[0]
            if group_name not in made:
                made[group_name] = app_commands.Group(
                    name=group_name, description=groups()[group_name],
                    allowed_installs=app_commands.AppInstallationType(guild=True),
                    allowed_contexts=app_commands.AppCommandContext(guild=True))
                tree.add_command(made[group_name])
            made[group_name].add_command(build(cmd, runner))
            continue
        tree.add_command(build(cmd, runner) if cmd.slash else build_menu(cmd, runner))
