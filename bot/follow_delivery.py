"""Delivering follows (instant) and digests: read pending -> render -> pace -> send -> record.

Exactly once: cursors move and digest periods are recorded only after Discord accepted the
message; a failed post leaves everything as it was, so the next tick retries; a channel
that is gone (404) or forbids the bot (403) disables what was meant for it, and /tracked
says why. At most `per_channel_limit` instant messages per channel per tick; one digest per
channel, mode and period. Every post waits for the shared `Pacer`.

`call(fn, *args)` runs `fn(db, *args)` off the event loop (the bot's Runner.call);
`send(place, delivery)` posts and reports how it went (`discord_sender` for a real client),
so the loop is tested without Discord and the adapter against the fake Discord.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot import render_follow
from bot.pacer import PER_CHANNEL_PER_TICK, Pacer, per_channel
from store import follows
from store.follows import Place

log = logging.getLogger("mapwatch.follow")

GONE = "the channel is gone (404 from Discord)"
FORBIDDEN = "the bot may not post in that channel (403 from Discord)"


@dataclass(frozen=True)
class Sent:
    """How a post went: ok (with the message id), gone, forbidden, or retry (try next tick)."""

    status: str
    message_id: int | None = None


Call = Callable[..., Awaitable[Any]]
Send = Callable[[Place, render_follow.Delivery, str], Awaitable[Sent]]  # place, message, nonce


def digest_nonce(place: Place, mode: str, period: str) -> str:
    """Discord drops a repeat of an enforced nonce for a few minutes: a crash between its
    acceptance and our record cannot post the same digest twice then."""
    key = f"{place.guild_id}:{place.channel_id}:{place.user_id}:{mode}:{period}"
    return "d" + hashlib.sha256(key.encode()).hexdigest()[:24]


async def deliver_follows(call: Call, send: Send, pacer: Pacer, clock: Callable[[], datetime], *,
                          per_channel_limit: int = PER_CHANNEL_PER_TICK) -> int:
    """Post every instant follow's new entries. Returns how many messages were sent."""
    pending = await call(follows.pending_follow_alerts)
    for news in pending:
        if news.total == 0:  # nothing matched: move on without a message
            await call(follows.mark_follow_delivered, news.follow.id, news.upto_event_id, clock(), sent=False)
    loud = [n for n in pending if n.total]
    now, later = per_channel(loud, key=lambda n: n.follow.place, limit=per_channel_limit)
    if later:
        log.info("%d follow deliveries wait for the next tick (per-channel limit)", len(later))
    sent = 0
    for news in now:
        await call(follows.mark_follow_sending, news.follow.id, news.upto_event_id, clock())
        await pacer.wait()
        result = await send(news.follow.place, render_follow.follow_alert(news),
                            f"f{news.follow.id}e{news.upto_event_id}"[:25])
        if result.status == "ok":
            await call(follows.mark_follow_delivered, news.follow.id, news.upto_event_id, clock())
            sent += 1
        elif result.status in ("gone", "forbidden"):
            await call(follows.disable_follow, news.follow.id, GONE if result.status == "gone" else FORBIDDEN)
        else:
            log.warning("follow %d not delivered; will retry", news.follow.id)
    return sent


async def deliver_digests(call: Call, send: Send, pacer: Pacer, clock: Callable[[], datetime]) -> int:
    """Compose and post every digest that is due (a quiet one is recorded, not posted).
    Returns how many messages were sent."""
    sent = 0
    for due in await call(follows.due_digests, clock()):
        digest = await call(follows.compose_digest, due.place, due.mode, due.period)
        if digest.quiet:
            await call(follows.record_digest, digest, clock())
            continue
        await pacer.wait()
        result = await send(due.place, render_follow.digest_message(digest),
                            digest_nonce(due.place, due.mode, digest.period))
        if result.status == "ok":
            await call(follows.record_digest, digest, clock(), message_id=result.message_id)
            sent += 1
        elif result.status in ("gone", "forbidden"):
            await call(follows.disable_follows_in, due.place, GONE if result.status == "gone" else FORBIDDEN,
                       mode=due.mode)
        else:
            log.warning("%s digest for channel %d not delivered; will retry", due.mode, due.place.channel_id)
    return sent


def allowed_mentions(role_ids: tuple[int, ...]) -> Any:
    """Exactly the chosen roles may be mentioned; everyone, users and replies never."""
    import discord

    roles: Any = [discord.Object(id=r) for r in role_ids] if role_ids else False
    return discord.AllowedMentions(everyone=False, users=False, roles=roles, replied_user=False)


def discord_sender(client: Any) -> Send:
    """`send` for a discord.py client: posts to the place's channel (or DM channel)."""
    import discord

    from bot.glue import to_embed

    async def send(place: Place, delivery: render_follow.Delivery, nonce: str) -> Sent:
        channel = client.get_partial_messageable(place.channel_id, guild_id=place.guild_id)
        try:
            msg = await channel.send(content=delivery.content or None,
                                     embeds=[to_embed(e) for e in delivery.embeds],
                                     allowed_mentions=allowed_mentions(delivery.role_ids), nonce=nonce)
        except discord.NotFound:
            return Sent("gone")
        except discord.Forbidden:
            return Sent("forbidden")
        except (TimeoutError, discord.HTTPException, OSError) as e:
            log.warning("post to channel %d failed (%s)", place.channel_id, type(e).__name__)
            return Sent("retry")
        return Sent("ok", msg.id)

    return send
