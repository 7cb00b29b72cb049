"""Instant alerts of tracks on people and teams (store.subscriptions.people_tracks), as the
same `Instant` items paper tracks make: one sender, one policy, threads and forum posts,
the same markers and nonces (`t<track>e<upto>`), so they are exactly once the same way."""

from __future__ import annotations

from mapwatch.bot.rendering import render_follow, render_people
from mapwatch.bot.sending.delivery import Call
from mapwatch.bot.sending.instants import Clock, Instant, PostSpec, with_thread, without_byline
from mapwatch.store.subscriptions import deliveries, people_tracks


async def subject_instants(call: Call, clock: Clock,
                           threaded: set[int]) -> tuple[list[Instant], dict[int, PostSpec]]:
    """The pending alerts of tracks on people and teams, and their forum posts' specs. A quiet
    one (counts that did not grow) moves its cursor without a message."""
    pending: list[people_tracks.SubjectAlert] = await call(people_tracks.pending_subject_alerts)
    items, posts = [], {}
    for a in pending:
        t = a.track
        if a.quiet:
            await call(deliveries.mark_delivered, deliveries.TRACKS, t.id, a.upto_event_id, clock(), sent=False)
            continue
        titles = [c.title for c in a.news.citers]
        more = a.news.total - len(a.news.citers)
        items.append(Instant(deliveries.TRACKS, f"alert for track {t.id} ({t.kind})", t.id, a.upto_event_id, t.place,
                             with_thread(render_people.subject_alert(a), titles, more,
                                         t.id in threaded and t.guild_id is not None),
                             f"t{t.id}e{a.upto_event_id}"[:25], a.sending_since, t.last_event_id,
                             without_byline(a.news.citers)))
        posts[t.id] = (render_follow.thread_name(titles, more), a.news.first_direction,
                       tuple(c.id for c in a.news.citers) or (f"{t.kind}:{t.subject}",))
    return items, posts
