"""How `mapwatch serve` and `mapwatch run` log: $MAPWATCH_LOG_FORMAT is `text` (the default,
one readable line) or `json` (one object per line for log shippers: time, level, logger,
message, and the exception as text). Either way no secret appears: a line that holds
$DISCORD_TOKEN's value has it replaced, and so are a webhook URL's secret part, an
interaction's token, a URL's user information ("sftp://***@host") and secret-named query
values, whichever logger wrote them (docs/operations.md, "JSON logs")."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import UTC, datetime

from mapwatch.bot.redact import install as redact_records
from mapwatch.bot.redact import redact as redact_webhooks
from mapwatch.store.urls import redact_url

FORMATS = ("text", "json")
TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
HIDDEN = "[DISCORD_TOKEN]"


Secrets = Sequence[tuple[str, str]]  # (variable, value): store.environment's `secret_values()`


def _hide_token(text: str, secrets: Secrets) -> str:
    for name, secret in secrets:  # every `secret` of store.settings_table that is set
        if len(secret) >= 8:  # shorter is no key (and would hide common words)
            text = text.replace(secret, f"[{name}]")  # [DISCORD_TOKEN] is HIDDEN
    return redact_url(redact_webhooks(text))  # webhook secrets and interaction tokens, then URL credentials


class TextFormatter(logging.Formatter):
    """One readable line per record, `secrets` (the environment's) hidden."""

    def __init__(self, secrets: Secrets) -> None:
        super().__init__(TEXT)
        self.secrets = tuple(secrets)

    def format(self, record: logging.LogRecord) -> str:
        return _hide_token(super().format(record), self.secrets)


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line (newlines in the message or traceback escaped),
    `secrets` (the environment's) hidden."""

    def __init__(self, secrets: Secrets) -> None:
        super().__init__()
        self.secrets = tuple(secrets)

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": _hide_token(record.getMessage(), self.secrets),  # (before JSON escapes its quotes)
        }
        if record.exc_info:
            entry["exception"] = _hide_token(self.formatException(record.exc_info), self.secrets)
        elif record.exc_text:
            entry["exception"] = _hide_token(record.exc_text, self.secrets)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return _hide_token(json.dumps(entry, ensure_ascii=False, default=str), self.secrets)


def formatter(kind: str, secrets: Secrets) -> logging.Formatter:
    return JsonFormatter(secrets) if kind == "json" else TextFormatter(secrets)


def configure(level: str, kind: str, secrets: Secrets) -> None:
    """The root logger: one stderr handler with the chosen format, hiding `secrets`; the
    scheduler's own loggers quieter below DEBUG."""
    redact_records()  # every record scrubbed as it is made, whoever handles it
    handler = logging.StreamHandler()
    handler.setFormatter(formatter(kind, secrets))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    if level != "DEBUG":
        logging.getLogger("apscheduler").setLevel(logging.WARNING)
        # A failed tick is logged once, in one line, by the scheduler's listener
        # (mapwatch/service/schedule.py); the executor's traceback of the same failure only at DEBUG.
        logging.getLogger("apscheduler.executors").setLevel(logging.CRITICAL)
