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
    url = os.environ.get("MAPWATCH_BASE_URL", "").strip().rstrip("/")
    if url:
        return url
    return f"http://localhost:{os.environ.get('PORT') or DEFAULT_PORT}"


def alert_interval() -> float:
    """Seconds between checks of the event log for alerts (at most 60)."""
    try:
        value = float(os.environ.get("MAPWATCH_ALERT_INTERVAL", "30"))
    except ValueError:
        value = 30.0
    return min(60.0, max(0.2, value))
