"""Point discord.py at another Discord-compatible API and gateway (self-hosted servers, tests).

``MAPWATCH_DISCORD_API`` is the REST base, e.g. ``http://127.0.0.1:8080/api/v10``;
``MAPWATCH_DISCORD_GATEWAY`` the gateway URL, e.g. ``ws://127.0.0.1:8080/ws`` (discord.py adds
``?v=10&encoding=json&compress=zlib-stream`` itself). Unset: Discord's own endpoints.
discord.py is imported inside the functions so that importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Mapping


def point_discord_py_at(api_base: str | None, gateway_url: str | None) -> None:
    """Set discord.py's REST base (``Route.BASE``) and gateway (``DiscordWebSocket.DEFAULT_GATEWAY``).

    Both are process-wide class attributes read when a request or connection is made, so call
    this before the client logs in. ``None`` leaves that endpoint unchanged.
    """
    import discord.gateway
    import discord.http
    import yarl

    if api_base:
        discord.http.Route.BASE = api_base.rstrip("/")
    if gateway_url:
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)


def check_environment(environ: Mapping[str, str]) -> tuple[str | None, str | None]:
    """``MAPWATCH_DISCORD_API`` and ``MAPWATCH_DISCORD_GATEWAY`` of `environ` (None: unset),
    each an address with a host; anything else raises ``BadSetting`` (a usage error). The
    commands pass the values of the environment they read at start instead
    (store.environment: ``discord_endpoints()``)."""
    from mapwatch.store.environment import Environment

    return Environment.read(environ).discord_endpoints()


def from_environment(environ: Mapping[str, str]) -> bool:
    """Apply ``MAPWATCH_DISCORD_API`` / ``MAPWATCH_DISCORD_GATEWAY`` of `environ` if set; True if either was."""
    api, gateway = check_environment(environ)
    point_discord_py_at(api, gateway)
    return bool(api or gateway)
