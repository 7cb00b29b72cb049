"""Alerts edited in place once their citers' authors are known (docs/bot.md, "Alerts").

An alert, follow post or forum post that went out naming a citer without its authors (a
source down or slower than the bound before the alerts) is recorded
(store/subscriptions/alert_messages.py). Each delivery round, the messages whose missing
authors have come since are recomposed, exactly as they were composed (the same subscription,
the same event window, the same marker), and edited: a PATCH of the same message, never a
new post. A message that is gone is forgotten; a refused edit is not tried again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from mapwatch.bot.rendering import render_follow, render_people
from mapwatch.bot.rendering.render_follow import Delivery
from mapwatch.bot.sending.delivery import Call, marked
from mapwatch.bot.sending.instants import Clock, without_byline
from mapwatch.bot.sending.outcomes import Sent, allowed_mentions, outcome_of
from mapwatch.bot.sending.pacer import Pacer
from mapwatch.store.subscriptions import alert_messages, follows, people_tracks, tracking
from mapwatch.store.subscriptions.alert_messages import SentAlert

if TYPE_CHECKING:
    from sqlite_utils import Database

log = logging.getLogger("mapwatch.delivery")

Edit = Callable[[int, int, Delivery], Awaitable[Sent]]  # channel id, message id, the message (marked)


def recompose(db: Database, a: SentAlert) -> tuple[Delivery, tuple[str, ...]] | None:
    """The message `a` was, composed again now (with what is known now), and the citers it
    still names without authors; None when its subscription is gone."""
    if a.kind == "follow":
        f = follows.get_follow(db, a.item_id)
        if f is None:
            return None
        news = follows.follow_news(db, replace(f, last_event_id=a.after_event_id), upto=a.upto_event_id)
        return render_follow.follow_alert(news), without_byline(news.citers)
    t = tracking.get_track(db, a.item_id)
    if t is not None:
        alert = tracking.compose_alert(db, replace(t, last_event_id=a.after_event_id), a.upto_event_id)
        return render_follow.track_alert(alert), without_byline(alert.new_citers)
    st = people_tracks.get_subject_track(db, a.item_id)
    if st is None:
        return None
    sa = people_tracks.subject_alert(db, replace(st, last_event_id=a.after_event_id), a.upto_event_id)
    return render_people.subject_alert(sa), without_byline(sa.news.citers)


async def edit_awaiting(call: Call, edit: Edit, pacer: Pacer, clock: Clock) -> int:
    """Edit every recorded message some of whose citers' authors have come; how many were edited."""
    edited = 0
    for a in await call(alert_messages.awaiting_authors, clock()):
        again = await call(recompose, a)
        if again is None:
            await call(alert_messages.forget, a.id)
            continue
        message, missing = again
        await pacer.wait()
        result = await edit(a.channel_id, a.message_id, marked(message, a.nonce))
        if result.status == "ok":
            await call(alert_messages.edited, a, missing, clock())
            edited += 1
        elif result.status == "retry":
            log.warning("alert %s not edited (%s); will retry", a.nonce, result.reason)
        else:  # gone, forbidden, refused: the message stays as it was sent
            log.info("alert %s in channel %d not edited (%s): left as sent", a.nonce, a.channel_id, result.reason)
            await call(alert_messages.forget, a.id)
    if edited:
        log.info("edited %d alerts with their citers' authors", edited)
    return edited


def discord_editor(client: Any) -> Edit:
    """`edit` for a discord.py client: PATCH the message in its channel (or thread)."""
    import discord

    from mapwatch.bot.interactions import to_embed

    async def edit(channel_id: int, message_id: int, delivery: Delivery) -> Sent:
        message = client.get_partial_messageable(channel_id).get_partial_message(message_id)
        try:
            await message.edit(content=delivery.content or None, embeds=[to_embed(e) for e in delivery.embeds],
                               allowed_mentions=allowed_mentions(delivery.role_ids))
        except (TimeoutError, discord.HTTPException, OSError) as e:
            return outcome_of(e)
        return Sent("ok", message_id, channel_id=channel_id)

    return edit
