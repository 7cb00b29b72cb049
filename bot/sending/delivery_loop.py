"""Each tick: read what is pending -> render -> pace -> post -> settle, for track alerts, follows
and digests alike (docs/bot.md, "Alerts").

Exactly once: cursors move and digest periods are recorded only after Discord accepted the
message; what a failed post does (retry next tick, disable, or, refused for good three
times, record the failure and move past it) is bot.sending.delivery's one policy. At most
`per_channel_limit` instant messages per channel per tick; one digest per channel, mode
and period. Every post waits for the one shared `Pacer` and goes through the one `send`.

`call(fn, *args)` runs `fn(db, *args)` off the event loop (the bot's Runner.call);
`send(place, delivery, nonce)` posts and reports how it went (bot.sending.delivery.discord_sender for
a real client), so the rounds are tested without Discord and the sender against the fake one.
The client polls with `discord.ext.tasks.loop` (`start_polling`): it waits until the client
is ready, and one failed tick is logged and the next one tries again.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from mapwatch.bot.rendering import render_follow
from mapwatch.bot.rendering.render_follow import Delivery
from mapwatch.bot.sending import delivery
from mapwatch.bot.sending.alert_edits import Edit, edit_awaiting
from mapwatch.bot.sending.delivery import Call, Find, Send
from mapwatch.bot.sending.delivery_people import subject_instants  # tracks on people and teams
from mapwatch.bot.sending.instants import Clock, Instant, PostSpec, with_thread, without_byline
from mapwatch.bot.sending.outcomes import Sent
from mapwatch.bot.sending.pacer import PER_CHANNEL_PER_TICK, Pacer, per_channel
from mapwatch.store.subscriptions import alert_messages, deliveries, digests, follows, team_channels, tracking
from mapwatch.store.subscriptions.follows import Place

if TYPE_CHECKING:
    import discord
    from discord.ext import tasks

log = logging.getLogger("mapwatch.delivery")
# (kind: track, follow, digest; a Sent status): feeds.serving.metrics.Metrics.delivery
Count = Callable[[str, str], None]

PRUNE_EVERY = timedelta(hours=1)  # how often bot_state is bounded (store.subscriptions.bot_state.prune_state)


def digest_nonce(place: Place, mode: str, period: str) -> str:
    """Discord drops a repeat of an enforced nonce for a few minutes: a crash between its
    acceptance and our record cannot post the same digest twice then."""
    key = f"{place.guild_id}:{place.channel_id}:{place.user_id}:{mode}:{period}"
    return "d" + hashlib.sha256(key.encode()).hexdigest()[:24]


async def _post(call: Call, send: Send, find: Find | None, pacer: Pacer, clock: Clock, *, label: str, place: Place,
                message: Delivery, nonce: str, sending_since: str | None,
                delivered: Callable[[Sent], Awaitable[Any]], disable: Callable[[str], Awaitable[Any]],
                give_up: Callable[[str], Awaitable[Any]], kind: str = "track", count: Count | None = None) -> int:
    """Post one message under the policy; 1 when a new message reached the channel. `count`
    is told how each post went (not a message found already in the channel)."""
    result = await delivery.post(send, find, pacer, place, message, nonce, sending_since, clock())
    if count is not None and not result.found:
        count(kind, result.status)
    ok = await delivery.settle(call, label, nonce, result, clock(), delivered=delivered, disable=disable,
                               give_up=give_up)
    return int(ok and not result.found)


async def in_forums(call: Call, items: list[Instant], posts: dict[int, PostSpec]) -> list[Instant]:
    """The items whose place is a forum channel, with their forum post: `posts` gives, per item
    id, the post's title, tag and keys (the citing papers); an existing post of one of them is
    reused (store.subscriptions.team_channels)."""
    forums = await call(team_channels.forum_channels)
    out = []
    for i in items:
        if i.place.channel_id in forums and i.item_id in posts:
            title, tag, keys = posts[i.item_id]
            thread_id = await call(team_channels.forum_post, i.place.channel_id, keys)
            post = render_follow.ForumPost(title, render_follow.forum_tag(tag), keys, thread_id,
                                           resend=i.sending_since is not None)
            i = replace(i, message=replace(i.message, forum=post, thread_name=""))
        out.append(i)
    return out


async def _deliver_instant(call: Call, send: Send, find: Find | None, pacer: Pacer, clock: Clock,
                           items: list[Instant], per_channel_limit: int, count: Count | None = None) -> int:
    now, later = per_channel(items, key=lambda i: (i.place.guild_id, i.place.channel_id), limit=per_channel_limit)
    if later:
        log.info("%d deliveries wait for the next tick (per-channel limit)", len(later))
    sent = 0
    for i in now:
        await call(deliveries.mark_sending, i.kind, i.item_id, i.upto, clock())
        sent += await _post(call, send, find, pacer, clock, label=i.label, place=i.place, message=i.message,
                            nonce=i.nonce, sending_since=i.sending_since, count=count,
                            kind="track" if i.kind is deliveries.TRACKS else "follow",
                            **_cursor_hooks(call, i, clock))
    return sent


def _cursor_hooks(call: Call, i: Instant, clock: Clock) -> dict[str, Callable[..., Awaitable[Any]]]:
    """What the policy does to an instant delivery's cursor: delivered, disable, give_up."""
    async def delivered(result: Sent) -> None:
        await call(deliveries.mark_delivered, i.kind, i.item_id, i.upto, clock())
        if i.missing and result.message_id is not None:  # edited once their authors are known
            await call(alert_messages.record_sent, "track" if i.kind is deliveries.TRACKS else "follow", i.item_id,
                       i.after, i.upto, result.channel_id or i.place.channel_id, result.message_id,
                       i.place.guild_id, i.nonce, i.missing, clock())

    async def disable(why: str) -> None:
        await call(deliveries.disable, i.kind, i.item_id, why)

    async def give_up(why: str) -> None:
        await call(deliveries.mark_failed, i.kind, i.item_id, i.upto, why, clock())

    return {"delivered": delivered, "disable": disable, "give_up": give_up}


async def deliver_track_alerts(call: Call, send: Send, pacer: Pacer, clock: Clock, *,
                               per_channel_limit: int = PER_CHANNEL_PER_TICK, find: Find | None = None,
                               count: Count | None = None) -> int:
    """Post every tracked paper's pending alert. Returns how many messages were sent."""
    threaded = await call(team_channels.threads_on, "track")
    alerts = []
    for a in await call(tracking.pending_alerts):
        if a.quiet:  # only self-citations, left out (`self:hide`): move on without a message
            await call(deliveries.mark_delivered, deliveries.TRACKS, a.track.id, a.upto_event_id, clock(), sent=False)
        else:
            alerts.append(a)
    items = [Instant(deliveries.TRACKS, f"alert for track {a.track.id}", a.track.id, a.upto_event_id,
                     Place(a.track.guild_id, a.track.channel_id, a.track.user_id),
                     with_thread(render_follow.track_alert(a), [c.title for c in a.new_citers], a.more,
                                 a.track.id in threaded and a.track.guild_id is not None),
                     f"t{a.track.id}e{a.upto_event_id}"[:25], a.sending_since, a.track.last_event_id,
                     without_byline(a.new_citers))
             for a in alerts]
    posts = {a.track.id: (render_follow.thread_name([c.title for c in a.new_citers], a.more),
                          next((d for c in a.new_citers for d in c.directions), ""),
                          tuple(c.id for c in a.new_citers) or (f"paper:{a.paper.id}",)) for a in alerts}

    more_items, more_posts = await subject_instants(call, clock, threaded)
    items = await in_forums(call, items + more_items, {**posts, **more_posts})
    return await _deliver_instant(call, send, find, pacer, clock, items, per_channel_limit, count)


async def deliver_follows(call: Call, send: Send, pacer: Pacer, clock: Clock, *,
                          per_channel_limit: int = PER_CHANNEL_PER_TICK, find: Find | None = None,
                          count: Count | None = None) -> int:
    """Post every instant follow's new entries. Returns how many messages were sent."""
    pending = await call(follows.pending_follow_alerts)
    for news in pending:
        if news.total == 0:  # nothing matched: move on without a message
            await call(deliveries.mark_delivered, deliveries.FOLLOWS, news.follow.id, news.upto_event_id,
                       clock(), sent=False)
    threaded = await call(team_channels.threads_on, "follow")
    items = [Instant(deliveries.FOLLOWS, f"follow {n.follow.id}", n.follow.id, n.upto_event_id, n.follow.place,
                     with_thread(render_follow.follow_alert(n), [c.title for c in n.citers], n.more,
                                 n.follow.id in threaded and n.follow.place.guild_id is not None),
                     f"f{n.follow.id}e{n.upto_event_id}"[:25], n.sending_since, n.follow.last_event_id,
                     without_byline(n.citers))
             for n in pending if n.total]
    items = await in_forums(call, items, {
        n.follow.id: (render_follow.thread_name([c.title for c in n.citers], n.more), n.follow.direction_name,
                      tuple(c.id for c in n.citers) or (f"direction:{n.follow.direction_slug}",))
        for n in pending if n.total})
    return await _deliver_instant(call, send, find, pacer, clock, items, per_channel_limit, count)


async def deliver_digests(call: Call, send: Send, pacer: Pacer, clock: Clock, count: Count | None = None) -> int:
    """Compose and post every digest that is due (a quiet one is recorded, not posted).
    Returns how many messages were sent."""
    sent = 0
    for due in await call(digests.due_digests, clock()):
        digest = await call(digests.compose_digest, due.place, due.mode, due.period)
        if digest.quiet:
            await call(digests.record_digest, digest, clock())
            continue
        message = render_follow.digest_message(digest)
        if due.place.channel_id in await call(team_channels.forum_channels):  # one post per period
            key = f"digest:{due.mode}:{digest.period}"
            message = replace(message, forum=render_follow.ForumPost(
                render_follow.digest_post_title(due.mode, digest.period), "", (key,),
                await call(team_channels.forum_post, due.place.channel_id, (key,)), resend=True))
        sent += await _post(
            call, send, None, pacer, clock, label=f"{due.mode} digest for channel {due.place.channel_id}",
            place=due.place, message=message,
            nonce=digest_nonce(due.place, due.mode, digest.period), sending_since=None, kind="digest", count=count,
            **_digest_hooks(call, due, digest, clock))
    return sent


async def deliver_all(call: Call, send: Send, find: Find | None, pacer: Pacer, clock: Clock,
                      count: Count | None = None, edit: Edit | None = None) -> int:
    """One round of the channels: track alerts, then instant follows, then the digests that are
    due, then (with `edit`) the edits of alerts sent before their citers' authors were known
    (bot.sending.alert_edits). Returns how many messages were sent, not counting edits.
    (Webhooks go elsewhere than Discord's API and have their own rounds: WebhookRounds.)"""
    sent = await deliver_track_alerts(call, send, pacer, clock, find=find, count=count)
    sent += await deliver_follows(call, send, pacer, clock, find=find, count=count)
    sent += await deliver_digests(call, send, pacer, clock, count)
    if edit is not None:
        await edit_awaiting(call, edit, pacer, clock)
    return sent


class WebhookRounds:
    """The webhooks' deliveries, beside the channels' and never under their lock: `start()`
    begins a round (bot.sending.delivery_webhooks.deliver_webhooks) unless one is still under
    way, and returns at once, so a receiver that never answers delays neither a channel's alert
    nor the tick. A round's trouble is logged; the next round tries again."""

    def __init__(self, call: Call, clock: Clock) -> None:
        self.call = call
        self.clock = clock
        self.task: asyncio.Task[int] | None = None
        self.skipped = 0  # starts asked for while a round was under way

    def start(self) -> asyncio.Task[int] | None:
        if self.task is not None and not self.task.done():
            self.skipped += 1
            return None
        self.task = asyncio.create_task(self._round(), name="mapwatch webhook round")
        return self.task

    async def _round(self) -> int:
        from mapwatch.bot.sending.delivery_webhooks import deliver_webhooks

        try:
            return await deliver_webhooks(self.call, self.clock)
        except Exception:
            log.exception("webhook deliveries failed; retrying next round")
            return 0

    async def wait(self) -> int:
        """The round under way's count (0 when none): tests and a clean shutdown."""
        task = self.task
        return await task if task is not None else 0

    async def close(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)


def _digest_hooks(call: Call, due: digests.DueDigest, digest: digests.Digest,
                  clock: Clock) -> dict[str, Callable[..., Awaitable[Any]]]:
    """What the policy does to a digest: record it sent or failed, or disable the channel's follows."""
    async def delivered(result: Sent) -> None:
        await call(digests.record_digest, digest, clock(), message_id=result.message_id)

    async def disable(why: str) -> None:
        await call(digests.disable_follows_in, due.place, why, mode=due.mode)

    async def give_up(why: str) -> None:
        await call(digests.record_digest, digest, clock(), failure=why)

    return {"delivered": delivered, "disable": disable, "give_up": give_up}


def start_polling(client: discord.Client, interval: float, deliver: Callable[[], Awaitable[int]],
                  prune: Callable[[datetime], Awaitable[int]], clock: Clock) -> tasks.Loop[Any]:
    """Every `interval` seconds once `client` is ready: `deliver()`, and bound the bot state
    (`prune`) at most every PRUNE_EVERY. Returns the running `tasks.Loop` (cancel it on close)."""
    from discord.ext import tasks

    pruned_at: list[datetime] = []

    async def tick() -> None:
        try:
            await deliver()
        except Exception:  # an exception out of a tick would end the loop: log it, try next tick
            log.exception("alert delivery failed; retrying next tick")
        if not pruned_at or clock() - pruned_at[0] >= PRUNE_EVERY:
            pruned_at[:] = [clock()]
            try:
                removed = await prune(pruned_at[0])
                if removed:
                    log.info("pruned %d rows of bot state", removed)
            except Exception:
                log.exception("pruning the bot state failed; trying again later")

    poller = tasks.loop(seconds=interval)(tick)
    poller.before_loop(client.wait_until_ready)
    poller.start()
    return poller
