"""Settings from the environment (read when used, never at import)."""

from __future__ import annotations

import os

DEFAULT_PORT = 8080


def discord_token() -> str | None:
    """The bot token: only from $DISCORD_TOKEN; never logged, echoed or stored."""
    token = os.environ.get("DISCORD_TOKEN", "").strip()
    return token or None


def base_url() -> str:
    """Where the feeds are served, as links in answers: $MAPWATCH_BASE_URL, else local."""
    from mapwatch.store import settings

    url = os.environ.get("MAPWATCH_BASE_URL", "").strip()
    if url:
        return settings.base_url(url, "$MAPWATCH_BASE_URL")
    return f"http://localhost:{settings.port(os.environ.get('PORT') or DEFAULT_PORT, '$PORT')}"


def alert_interval() -> float:
    """Seconds between checks of the event log for alerts: $MAPWATCH_ALERT_INTERVAL, a number
    of seconds (kept within 0.2 to 60); not a number is a usage error."""
    from mapwatch.store import settings

    raw = os.environ.get("MAPWATCH_ALERT_INTERVAL", "").strip()
    if not raw:
        return 30.0
    return min(60.0, max(0.2, settings.seconds(raw, "$MAPWATCH_ALERT_INTERVAL", 0.0, 86_400.0)))


MAX_SHARDS = 4096  # far above Discord's need for any one bot (one shard per 2,500 servers)


def shard_count() -> int | None:
    """$MAPWATCH_SHARDS: the number of gateway shards (1 to 4096); unset: Discord's
    recommendation from /gateway/bot. Not a whole number in range is a usage error."""
    from mapwatch.store import settings
    from mapwatch.store.errors import BadSetting

    raw = os.environ.get("MAPWATCH_SHARDS", "").strip()
    if not raw:
        return None
    if not raw.isdigit():
        raise BadSetting(f"$MAPWATCH_SHARDS must be a whole number of shards (1 to {MAX_SHARDS:,}), not {raw!r}")
    return settings.bounded_int(int(raw), "$MAPWATCH_SHARDS", 1, MAX_SHARDS)
