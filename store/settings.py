"""Checks of the settings an operator types: environment variables and command options.

Each check takes the raw value and the name the operator used (`$PORT`, `--port`), and
returns the value to use or raises `BadSetting` with one line naming the setting, the value
and what it accepts (a usage error, exit 2: docs/getting-started.md, "Exit status"). Pure: no environment
is read here: store.environment reads it, once.
"""

from __future__ import annotations

import re
from pathlib import Path

from mapwatch.store.errors import BadSetting
from mapwatch.store.urls import redact_url, safe_http_url

MAX_PORT = 65_535
MAX_FEED_ENTRIES = 100_000  # --limit: entries per feed
MAX_BUDGET = 10_000_000  # --budget: pages fetched in one tick
MAX_ID = 2**63 - 1  # a Discord id (--guild, --channel, --user of `ask`): what SQLite's INTEGER holds
_WS = re.compile(r"wss?://", re.ASCII | re.IGNORECASE)


def _shown(value: object) -> str:
    text = repr(redact_url(value) if isinstance(value, str) else value)
    return text if len(text) <= 80 else text[:77] + "...'"


shown = _shown  # a value as an error line shows it (repr, clipped)
_EMAIL = re.compile(r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$", re.ASCII)


def port(value: int | str, name: str) -> int:
    """A TCP port to listen on: 0 (any free port) to 65535."""
    text = str(value).strip()
    number = int(text) if text.isascii() and text.isdigit() else -1
    if not 0 <= number <= MAX_PORT:
        raise BadSetting(f"{name} must be a port number from 0 to {MAX_PORT}, not {_shown(value)}")
    return number


def listen_host(value: str, name: str) -> str:
    """An address to listen on: one this machine can resolve (an IP address, or a name)."""
    import socket

    try:
        socket.getaddrinfo(value, None, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as e:
        reason = getattr(e, "strerror", None) or e
        raise BadSetting(f"{name} {_shown(value)}: not an address to listen on ({reason})") from None
    return value


def listen_address(value: str, name: str) -> tuple[str, int]:
    """HOST:PORT to listen on (`127.0.0.1:9100`, `[::1]:9100`, `:9100` for every address)."""
    text = value.strip()
    host, sep, port_text = text.rpartition(":")
    if not sep:
        raise BadSetting(f"{name} must be HOST:PORT (e.g. 127.0.0.1:9100), not {_shown(value)}")
    host = host.removeprefix("[").removesuffix("]") or "0.0.0.0"
    return listen_host(host, name), port(port_text, name)


def base_url(value: str, name: str) -> str:
    """The public address of the feeds: an absolute http(s) URL with a host, without a
    trailing slash (it prefixes every link in the feeds and the bot's answers)."""
    url = safe_http_url(value.strip())
    if url is None or "?" in url or "#" in url:
        raise BadSetting(f"{name} must be an http(s) address with a host and no query, "
                         f"e.g. https://feeds.example.org, not {_shown(value)}")
    return url.rstrip("/")


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")


def http_source(value: str, name: str) -> str:
    """A source is a folder, or an http(s) URL with a host: any other scheme (`ftp://`) is
    refused, not taken for a folder of that name."""
    url = value.lower().startswith(("http://", "https://"))
    if (url and safe_http_url(value) is None) or (not url and _SCHEME.match(value.strip())):
        raise BadSetting(f"{name} must be a folder or an http(s) address with a host, not {_shown(value)}")
    return value


REPLICA_SCHEMES = ("file", "s3", "gs", "abs", "sftp", "webdav", "webdavs", "nats", "oss")


def replica(value: str, name: str) -> str:
    """A Litestream replica URL (`file:///path`, `s3://bucket/path`, `sftp://host/path`, ...) or a
    plain path; its credentials are never shown back."""
    value = value.strip()
    if "://" not in value and value:
        return value
    m = re.match(r"^([A-Za-z][A-Za-z0-9+.\-]*)://(.+)$", value)
    if not m or m[1].lower() not in REPLICA_SCHEMES:
        raise BadSetting(f"{name} must be a path or a replica URL ({', '.join(REPLICA_SCHEMES)}), "
                         f"not {_shown(value)}")
    return value


def endpoint_url(value: str, name: str, *, websocket: bool = False) -> str:
    """A Discord-compatible API base (http(s)) or gateway (ws(s)) with a host."""
    if websocket and _WS.match(value.strip()):
        ok = safe_http_url("http" + value.strip()[2:]) is not None
    else:
        ok = safe_http_url(value) is not None
    if not ok:
        kind = "a ws(s) or http(s)" if websocket else "an http(s)"
        raise BadSetting(f"{name} must be {kind} address with a host, not {_shown(value)}")
    return value.strip()


def api_base(value: str, name: str) -> str:
    """The base URL of a scholarly source's API: http(s) with a host, no fragment; without a
    trailing slash (paths are appended to it)."""
    url = safe_http_url(value.strip())
    if url is None or "#" in url or "?" in url:
        raise BadSetting(f"{name} must be an http(s) address with a host and no query, not {_shown(value)}")
    return url.rstrip("/")


def email(value: str, name: str) -> str:
    """An e-mail address (what the polite pools of the scholarly sources ask for): one
    `local@domain.tld`, ASCII, no spaces, no line breaks (it goes into a header)."""
    if len(value) > 254 or not _EMAIL.match(value):
        raise BadSetting(f"{name} must be an e-mail address such as team@example.org, not {_shown(value)}")
    return value


def bounded_int(value: int, name: str, low: int, high: int) -> int:
    """A whole-number option within [low, high]."""
    if not low <= value <= high:
        raise BadSetting(f"{name} must be from {low:,} to {high:,}, not {value}")
    return value


def seconds(value: str, name: str, low: float, high: float) -> float:
    """A number of seconds within [low, high] (not NaN, not infinite)."""
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not low <= number <= high:  # NaN fails every comparison
        raise BadSetting(f"{name} must be seconds from {low:g} to {high:g}, not {_shown(value)}")
    return number


def out_folder(value: str, name: str) -> str:
    """A folder to write into: it may not exist yet, but must not be something else."""
    path = Path(value)
    if path.exists() and not path.is_dir():
        raise BadSetting(f"{name} {value}: not a folder")
    return value


def webhook_base(value: str, name: str) -> str:
    """A Slack-compatible webhook base: an http(s) URL with a host."""
    if safe_http_url(value.strip()) is None:
        raise BadSetting(f"{name} must be an http(s) address with a host, not {_shown(value)}")
    return value.strip()
