"""Delivering follows (instant) and digests: read pending -> render -> pace -> send -> record.

Exactly once: cursors move and digest periods are recorded only after Discord accepted the
message; what a failed post does (retry next tick, disable, or, refused for good three
times, record the failure and move past it) is bot.delivery's one policy. At most
`per_channel_limit` instant messages per channel per tick; one digest per channel, mode
and period. Every post waits for the shared `Pacer`.

`call(fn, *args)` runs `fn(db, *args)` off the event loop (the bot's Runner.call);
`send(place, delivery)` posts and reports how it went (`discord_sender` for a real client),
so the loop is tested without Discord and the adapter against the fake Discord.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from mapwatch.bot import delivery, render_follow
from mapwatch.bot.pacer import PER_CHANNEL_PER_TICK, Pacer, per_channel
from mapwatch.store import bot_state, digests, follows
from mapwatch.store.follows import Place

log = logging.getLogger("mapwatch.follow")

GONE, FORBIDDEN = delivery.GONE, delivery.FORBIDDEN
Sent = delivery.Sent
Call, Send, Find = delivery.Call, delivery.Send, delivery.Find


def digest_nonce(place: Place, mode: str, period: str) -> str:
    """Discord drops a repeat of an enforced nonce for a few minutes: a crash between its
    acceptance and our record cannot post the same digest twice then."""
    key = f"{place.guild_id}:{place.channel_id}:{place.user_id}:{mode}:{period}"
    return "d" + hashlib.sha256(key.encode()).hexdigest()[:24]


async def deliver_follows(call: Call, send: Send, pacer: Pacer, clock: Callable[[], datetime], *,
                          per_channel_limit: int = PER_CHANNEL_PER_TICK, find: Find | None = None) -> int:
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
        fid, upto = news.follow.id, news.upto_event_id
        nonce = f"f{fid}e{upto}"[:25]
        await call(bot_state.mark_follow_sending, fid, upto, clock())
        result = await delivery.post(send, find, pacer, news.follow.place, render_follow.follow_alert(news), nonce,
                                     news.sending_since, clock())
        if await delivery.settle(
                call, f"follow {fid}", nonce, result, clock(),
                delivered=lambda _r, fid=fid, upto=upto: call(follows.mark_follow_delivered, fid, upto, clock()),
                disable=lambda why, fid=fid: call(follows.disable_follow, fid, why),
                give_up=lambda why, fid=fid, upto=upto: call(follows.mark_follow_failed, fid, upto, why, clock())):
            sent += not result.found
    return sent


async def deliver_digests(call: Call, send: Send, pacer: Pacer, clock: Callable[[], datetime]) -> int:
    """Compose and post every digest that is due (a quiet one is recorded, not posted).
    Returns how many messages were sent."""
    sent = 0
    for due in await call(digests.due_digests, clock()):
        digest = await call(digests.compose_digest, due.place, due.mode, due.period)
        if digest.quiet:
            await call(digests.record_digest, digest, clock())
            continue
        nonce = digest_nonce(due.place, due.mode, digest.period)
        result = await delivery.post(send, None, pacer, due.place, render_follow.digest_message(digest), nonce,
                                     None, clock())
        if await delivery.settle(
                call, f"{due.mode} digest for channel {due.place.channel_id}", nonce, result, clock(),
                delivered=lambda r, digest=digest: call(digests.record_digest, digest, clock(),
                                                        message_id=r.message_id),
                disable=lambda why, due=due: call(digests.disable_follows_in, due.place, why, mode=due.mode),
                give_up=lambda why, digest=digest: call(digests.record_digest, digest, clock(), failure=why)):
            sent += 1
    return sent


def allowed_mentions(role_ids: tuple[int, ...]) -> Any:
    """Exactly the chosen roles may be mentioned; everyone, users and replies never."""
    import discord

    roles: Any = [discord.Object(id=r) for r in role_ids] if role_ids else False
    return discord.AllowedMentions(everyone=False, users=False, roles=roles, replied_user=False)


def discord_sender(client: Any) -> Send:
    """`send` for a discord.py client (see bot.delivery)."""
    return delivery.discord_sender(client)
