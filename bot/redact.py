"""Keep webhook secrets out of the logs: discord.py logs every gateway event at DEBUG, and an
interaction of /webhook carries its URL, accepted or refused, as the person typed it.

`redact` replaces the secret part of any Discord or Slack webhook URL in a text by "…", whatever
its case and however its slashes are written (`/`, JSON's `\\/`, `%2F`): Discord's token after
`/webhooks/<id>/`; Slack's after `/services/<team>/<bot>/`; on hooks.slack.com, everything after
the path's first word in any other shape (workflows, triggers, a path missing an id). An
interaction's token (`"token": "…"`, `/interactions/<id>/<token>`) goes the same way.

`install` makes every log record scrubbed when it is made, by a record factory: every logger,
every level, the message and an exception's traceback, before any handler (the process's, a
test's) sees it. `mapwatch run`'s formatter scrubs again (mapwatch/log_format.py)."""

from __future__ import annotations

import logging
import re
from typing import Any

_SEP = r"(?:/|\\/|%2[fF])"  # a slash, as a URL, JSON or a percent-encoded URL writes it
_END = r"[^/?#&\s'\"\\<>%]+"  # a path segment, up to what ends it in any of those
_WEBHOOK = re.compile(
    rf"({_SEP}webhooks{_SEP}[^/\s'\"\\<>%?#]{{1,40}}{_SEP}){_END}"  # Discord (and Discord-like bases)
    rf"|({_SEP}services{_SEP}[a-z0-9]{{1,20}}{_SEP}[a-z0-9]{{1,20}}{_SEP}){_END}"  # Slack (and Slack-like bases)
    # anything else on Slack's host (the well-formed incoming webhook left to the line above)
    rf"|(hooks\.slack\.com{_SEP}(?!services{_SEP}[a-z0-9]{{1,20}}{_SEP}[a-z0-9]{{1,20}}{_SEP})[a-z]{{1,20}}{_SEP})"
    r"(?:[^\s'\"\\<>]|\\/)+",
    re.IGNORECASE)
_INTERACTION_TOKEN = re.compile(r"""(['"]token['"]\s*:\s*['"])[^'"]+|(/interactions/\d{1,20}/)[^/\s'"]+""")


def redact(text: str) -> str:
    text = _WEBHOOK.sub(lambda m: (m[1] or m[2] or m[3]) + "…", text)
    return _INTERACTION_TOKEN.sub(lambda m: (m[1] or m[2]) + "…", text)


_made = logging.getLogRecordFactory()


def _scrubbed_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
    """A log record (from the factory in place before `install`), its message and traceback scrubbed."""
    record = _made(*args, **kwargs)
    try:
        message = record.getMessage()
    except Exception:  # a call whose arguments do not fit its format: the handler reports it
        return record
    clean = redact(message)
    if clean != message:
        record.msg, record.args = clean, ()
    if record.exc_info and not record.exc_text:
        record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
    return record


def install() -> None:
    """Once per process (idempotent): every log record scrubbed as it is made."""
    global _made
    current = logging.getLogRecordFactory()
    if current is not _scrubbed_record:
        _made = current
        logging.setLogRecordFactory(_scrubbed_record)
