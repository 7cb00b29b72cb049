"""pytest fixtures for the fake Discord: ``pytest_plugins = ["tests.fakediscord.fixtures"]``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from .server import FakeDiscord


@pytest.fixture
def fake_config() -> dict[str, Any]:
    """Keyword arguments for ``FakeDiscord``; override in a module to change deadlines etc."""
    return {}


@pytest.fixture
async def fake_discord(fake_config: dict[str, Any]) -> AsyncIterator[FakeDiscord]:
    """A started fake Discord; discord.py's REST base and gateway point at it during the test."""
    import discord.gateway
    import discord.http

    from mapwatch.bot.discord_endpoints import point_discord_py_at

    saved = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    fake = FakeDiscord(**fake_config)
    await fake.start()
    point_discord_py_at(fake.api_base, fake.gateway_url)
    try:
        yield fake
    finally:
        await fake.close()
        discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = saved


@pytest.fixture
async def make_client() -> AsyncIterator[Callable[..., Any]]:
    """Factory of toy clients: ``make_client(**client_kwargs)`` -> ``discord.Client`` with ``.tree``.

    Intents are the defaults (no privileged ones) and ``guild_ready_timeout`` is short so
    ``on_ready`` comes at once. Every client made is closed after the test.
    """
    import discord
    from discord import app_commands

    made: list[discord.Client] = []

    def make(**kwargs: Any) -> discord.Client:
        kwargs.setdefault("intents", discord.Intents.default())
        kwargs.setdefault("guild_ready_timeout", 0.05)
        client = discord.Client(**kwargs)
        client.tree = app_commands.CommandTree(client)  # type: ignore[attr-defined]
        made.append(client)
        return client

    yield make
    for client in made:
        if not client.is_closed():
            await client.close()
