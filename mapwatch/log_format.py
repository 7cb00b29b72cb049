"""How `mapwatch serve` and `mapwatch run` log: $MAPWATCH_LOG_FORMAT is `text` (the default,
one readable line) or `json` (one object per line for log shippers: time, level, logger,
message, and the exception as text). Either way the Discord token never appears: a line
that holds $DISCORD_TOKEN's value has it replaced (docs/operations.md, "JSON logs")."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from mapwatch.store.environment import current

FORMATS = ("text", "json")
TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
HIDDEN = "[DISCORD_TOKEN]"


def log_format() -> str:
    """$MAPWATCH_LOG_FORMAT (text or json; unset: text); anything else is a usage error."""
    return current().log_format_name()


def _hide_token(text: str) -> str:
    token = current().token() or ""
    return text.replace(token, HIDDEN) if len(token) >= 8 else text


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__(TEXT)

    def format(self, record: logging.LogRecord) -> str:
        return _hide_token(super().format(record))


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line (newlines in the message or traceback escaped)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return _hide_token(json.dumps(entry, ensure_ascii=False, default=str))


def formatter(kind: str) -> logging.Formatter:
    return JsonFormatter() if kind == "json" else TextFormatter()


def configure(level: str, kind: str) -> None:
    """The root logger: one stderr handler with the chosen format."""
    handler = logging.StreamHandler()
    handler.setFormatter(formatter(kind))
    logging.basicConfig(level=level, handlers=[handler])
