"""How a post to Discord went, and what the two senders (channels and forum posts) share to
tell: the outcome of a post (`Sent`, from `outcome_of` for a discord.py error), the marker
every delivery carries in its footer, and the mentions a post may make. bot.sending.delivery
holds the policy that acts on these; bot.sending.delivery_forum posts to forum channels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import discord

HISTORY_LIMIT = 50  # recent channel messages searched for an older delivery's marker
MARKER = "ref "  # footer marker: "ref <nonce>"

GONE = "the channel is gone (404 from Discord)"
FORBIDDEN = "the bot may not post in that channel (403 from Discord)"

SentStatus = Literal["ok", "gone", "forbidden", "retry", "refused"]


@dataclass(frozen=True)
class Sent:
    """How a post went: ok (with the message id; `found`: already in the channel, not posted
    again), gone, forbidden, retry (try next tick) or refused (Discord refuses it for good)."""

    status: SentStatus
    message_id: int | None = None
    http_status: int | None = None
    code: int | None = None
    text: str = ""
    found: bool = False
    channel_id: int | None = None  # where the message is, when not the place's channel (a forum post's thread)

    @property
    def reason(self) -> str:
        """One line: HTTP status, Discord's error code and message."""
        first = (self.text or "").strip().splitlines()[0] if (self.text or "").strip() else "no message"
        return f"HTTP {self.http_status}, Discord error {self.code or 0}: {first[:200]}"


def outcome_of(error: BaseException) -> Sent:
    """Classify a failed post (a discord.py HTTPException, a timeout, an OSError)."""
    import discord

    if isinstance(error, discord.NotFound):
        return Sent("gone", http_status=404, code=error.code, text=error.text)
    if isinstance(error, discord.Forbidden):
        return Sent("forbidden", http_status=403, code=error.code, text=error.text)
    if isinstance(error, discord.HTTPException):
        status = int(getattr(error, "status", 0) or 0)
        if 400 <= status < 500 and status != 429:
            return Sent("refused", http_status=status, code=error.code, text=error.text)
        return Sent("retry", http_status=status or None, code=error.code, text=error.text)
    return Sent("retry", text=type(error).__name__)


def carries_marker(footers: list[str], nonce: str) -> bool:
    tag = f"{MARKER}{nonce}"
    return any(f == tag or f.endswith(" " + tag) for f in footers)


def allowed_mentions(role_ids: tuple[int, ...]) -> discord.AllowedMentions:
    """Exactly the chosen roles may be mentioned; everyone, users and replies never."""
    import discord

    roles: Any = [discord.Object(id=r) for r in role_ids] if role_ids else False
    return discord.AllowedMentions(everyone=False, users=False, roles=roles, replied_user=False)
