"""Keep webhook URLs out of the logs: discord.py logs every gateway event at DEBUG, and an
interaction of /webhook carries its URL. A filter on discord.py's loggers replaces the secret
part of any Discord or Slack webhook URL in a record by "…" before it is written."""

from __future__ import annotations

import logging
import re

_WEBHOOK = re.compile(r"(/webhooks/\d{1,20}/)[A-Za-z0-9_\-]+|(/services/[A-Z0-9]{1,20}/[A-Z0-9]{1,20}/)[A-Za-z0-9]+")
LOGGERS = ("discord", "discord.gateway", "discord.http", "discord.client", "discord.state",
           "discord.app_commands.tree", "discord.webhook.async_")


def redact(text: str) -> str:
    return _WEBHOOK.sub(lambda m: (m[1] or m[2]) + "…", text)


class RedactWebhooks(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, ()
        return True


def install() -> None:
    """Once per process: the filter on discord.py's loggers."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactWebhooks) for f in logger.filters):
            logger.addFilter(RedactWebhooks())
