"""The one rule for links taken from pages: only absolute http and https URLs, with a host.

`safe_http_url` is used where a page is parsed (so nothing else is stored) and again at
every output that shows a stored link (feeds, OPML, the bot's answers and embeds), so a row
written by an older version cannot leak either. See (docs/pages.md,
"mapwatch ingest [PATH ...] [--db FILE] [--force] [--quiet]": links from pages).

What a browser would run or fetch from elsewhere is refused, however it is spelled:
`javascript:`, `data:`, `vbscript:`, `file:` and every other scheme, in any case, with
tabs, newlines or control characters inside or around it (browsers drop them), or written
with HTML entities (`javascript&colon;`, `&#106;avascript:`: the scheme must be written
out literally). A protocol-relative link (`//host/path`) is refused too: it would resolve
against whatever page shows it, not against the map.
"""

from __future__ import annotations

import re

# What a browser strips before reading a URL (WHATWG URL standard): leading and trailing
# C0 controls and spaces, and every tab and newline anywhere.
_EDGES = "".join(chr(c) for c in range(0x21))
_TAB_NEWLINE = re.compile(r"[\t\n\r]")
_HTTP = re.compile(r"https?://", re.ASCII | re.IGNORECASE)
# Left in the middle of a URL, these would end it early or break out of an HTML attribute
# or a Markdown link: a page's URL never needs them (a browser would percent-encode them).
_UNSAFE = re.compile(r"[\x00-\x20\x7f-\x9f\"'<>\\`\u2028\u2029]")
MAX_URL = 2000


def safe_http_url(url: str | None) -> str | None:
    """`url` as a browser would read it, if it is an absolute http(s) URL with a host; else None."""
    if not url:
        return None
    text = _TAB_NEWLINE.sub("", url.strip(_EDGES))
    if len(text) > MAX_URL or not _HTTP.match(text) or _UNSAFE.search(text):
        return None
    scheme, rest = text.split("://", 1)
    if not _has_host(_AUTHORITY_END.split(rest, 1)[0]):
        return None
    return scheme.lower() + "://" + rest


_AUTHORITY_END = re.compile(r"[/?#]")
_PORT = re.compile(r"\d{0,5}")


def _has_host(authority: str) -> bool:
    """What `urlsplit(url).hostname` and `.port` accept, with a host: done by hand because
    urlsplit is ten times slower on URLs it has not cached (every list item is new)."""
    host = authority.rpartition("@")[2]
    if host.startswith("["):  # an IPv6 literal
        end = host.find("]")
        if end < 2:
            return False
        port = host[end + 1:]
        if port and not port.startswith(":"):
            return False
        port = port[1:]
    else:
        host, _colon, port = host.partition(":")
        if not host or "[" in host or "]" in host:
            return False
    return bool(_PORT.fullmatch(port)) and (not port or int(port) <= 65535)


def url_problem(url: str) -> str | None:
    """Why a page's link is refused (for a rejection's reason), or None when it is fine."""
    if safe_http_url(url) is not None:
        return None
    shown = url if len(url) <= 80 else url[:77] + "..."
    return f"not an http(s) link with a host: {shown!r}"


# A URL's user information ("user:password@"), wherever it stands in a text, and query
# parameters whose names say they hold a secret.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^\s/?#@\"'<>]+)@")
_SECRET_QUERY = re.compile(r"(?i)([?&](?:[a-z0-9_\-]*(?:key|secret|token|password|passwd|signature|sig)"
                           r"[a-z0-9_\-]*)=)[^&#\s\"'<>]+")
HIDDEN = "***"


def redact_url(text: str) -> str:
    """`text` (a URL, or any text holding URLs) with every URL's user information and every
    secret-named query value replaced by ***: `sftp://***@host/db`, `?key=***`. What a
    setting like $MAPWATCH_REPLICA holds is shown this way in /healthz, logs and errors."""
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{HIDDEN}@", text)
    return _SECRET_QUERY.sub(lambda m: f"{m[1]}{HIDDEN}", text)
