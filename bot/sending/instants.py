"""An instant message waiting to be posted (`Instant`: a track's or a follow's new events, its
place and its enforced nonce), with the shapes both delivery rounds build it from: a forum
post's spec and the discussion-thread request. bot.sending.delivery_loop runs the rounds of
papers and directions; bot.sending.delivery_people builds those of people and teams."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from mapwatch.bot.rendering import render_follow
from mapwatch.bot.rendering.render_follow import Delivery
from mapwatch.store.subscriptions import deliveries
from mapwatch.store.subscriptions.follows import Place

Clock = Callable[[], datetime]
PostSpec = tuple[str, str, tuple[str, ...]]  # a forum post's title, tag and keys


@dataclass(frozen=True)
class Instant:
    """One instant message: for track or follow `item_id` (of `kind`), the events up to `upto`."""

    kind: deliveries.Kind
    label: str
    item_id: int
    upto: int
    place: Place
    message: Delivery
    nonce: str  # enforced: Discord drops a repeat within minutes; later, bot.sending.delivery looks for it
    sending_since: str | None
    after: int = 0  # the item's cursor: the message is about events (after, upto]
    missing: tuple[str, ...] = ()  # citers it names without authors: edited when they come


def without_byline(citers: Iterable[Any]) -> tuple[str, ...]:
    """The ids of the citers (rows with `id` and `byline`) whose authors are not known yet."""
    return tuple(c.id for c in citers if getattr(c, "byline", None) is None)


def with_thread(message: Delivery, titles: list[str], more: int, on: bool) -> Delivery:
    """The delivery, asking for a discussion thread named after its citing paper when `on`."""
    return replace(message, thread_name=render_follow.thread_name(titles, more)) if on else message
