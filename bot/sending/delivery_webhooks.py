"""Deliveries to webhooks (store.subscriptions.webhooks): a paper's alerts and a direction's follows posted
to a Discord webhook (a channel the bot is not in, `?thread_id=` for a forum post) or a Slack
incoming webhook, under the same policy as channel deliveries (bot.sending.delivery.settle):

- 2xx: accepted; the cursor moves.
- 5xx, 429, a timeout or a broken connection: retried in the tick with backoff (429: after its
  `Retry-After`), `TRIES` times; then left for the next tick, nothing lost. A receiver that
  does not answer at all (timeouts, refused connections, the round's deadline) in every round
  for `webhooks.NO_ANSWER_LIMIT` (24 h, and at least 3 rounds) is disabled with that reason.
- 404: the webhook is gone; it is disabled, with that reason.
- any other 4xx: refused; after `MAX_REFUSALS` refusals of the same delivery it is recorded as
  failed with the status and the receiver's first line, and the cursor moves past it.

A round posts to every pending webhook at once, at most `PER_HOST` at a time to one host, and
ends after `ROUND_DEADLINE` seconds whatever is still waiting (left for the next round). It
runs beside the channel deliveries, never under their lock (bot.sending.delivery_loop.WebhookRounds):
a silent receiver cannot hold up a channel's alert or the tick.

The URL is opened from its sealed form only to post; logs and reasons name the webhook by its
id and `url_hint`, never by its URL (an aiohttp error's text can hold the URL: only its type
is kept). Webhooks take no nonce: a crash between the receiver's 2xx and the cursor's move
resends that one delivery once (docs/bot.md).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from mapwatch.bot.rendering import render_follow, text
from mapwatch.bot.rendering.render_follow import Delivery
from mapwatch.bot.rendering.render_slack import slack_message
from mapwatch.bot.sending import delivery
from mapwatch.bot.sending.delivery import Call
from mapwatch.bot.sending.outcomes import Sent
from mapwatch.store import secret_box
from mapwatch.store.subscriptions import webhooks

log = logging.getLogger("mapwatch.delivery")

TRIES = 3  # attempts in one tick for a 5xx, a 429 or no answer
BACKOFF = 0.5  # seconds before the second try, doubled each time
RETRY_AFTER_MAX = 30.0  # a longer Retry-After waits for the next tick
TIMEOUT = 8.0  # seconds one POST may take: three tries and their backoff fit in a round
PER_HOST = 2  # posts at once to one host (Discord's, Slack's)
ROUND_DEADLINE = 30.0  # seconds a round may take; what is left waits for the next one
GONE = "the webhook is gone (404): add it again to resume"
Sleep = Callable[[float], Awaitable[Any]]


def discord_payload(d: Delivery) -> dict[str, Any]:
    from mapwatch.bot.interactions import to_embed

    body: dict[str, Any] = {"embeds": [to_embed(e).to_dict() for e in d.embeds], "allowed_mentions": {"parse": []}}
    content = text.clip(text.strip_control(d.content), text.CONTENT_MAX)
    if content:
        body["content"] = content
    return body


def target_url(url: str, kind: str) -> str:
    """Discord: ask for the message back (`wait=true`), keeping `thread_id`."""
    if kind != "discord":
        return url
    parts = urlsplit(url)
    query = [*parse_qsl(parts.query), ("wait", "true")]
    return urlunsplit(parts._replace(query=urlencode(query)))


async def post_webhook(session: Any, hook: webhooks.Webhook, url: str, payload: dict[str, Any], *,
                       sleep: Sleep = asyncio.sleep, timeout: float = TIMEOUT) -> Sent:
    """POST one delivery, retrying 5xx, 429 and no answer with backoff within the tick."""
    import aiohttp

    wait = BACKOFF
    last = Sent("retry", text="no answer")
    for attempt in range(1, TRIES + 1):
        try:
            async with session.post(target_url(url, hook.kind), json=payload,
                                    timeout=aiohttp.ClientTimeout(total=timeout)) as r:
                answer = _first_line((await r.text())[:300])
                if 200 <= r.status < 300:
                    return Sent("ok")
                if r.status == 404:
                    return Sent("gone", http_status=404, text=answer)
                if r.status == 429 or r.status >= 500:
                    last = Sent("retry", http_status=r.status, text=answer)
                    if r.status == 429:
                        wait = max(wait, _retry_after(r.headers.get("Retry-After")))
                else:
                    return Sent("refused", http_status=r.status, text=answer)
        except (TimeoutError, aiohttp.ClientError, OSError) as e:
            last = Sent("retry", text=type(e).__name__)
        if attempt < TRIES and wait <= RETRY_AFTER_MAX:
            await sleep(wait)
            wait *= 2
        elif attempt < TRIES:
            break
    return last


def _retry_after(value: str | None) -> float:
    try:
        return max(0.0, float(value or 0))
    except ValueError:
        return BACKOFF


def _first_line(text: str) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return "".join(c for c in line if c.isprintable())[:200]


def message_of(p: webhooks.Pending) -> Delivery:
    if p.people is not None:  # a person's or a team's alerts
        from mapwatch.bot.rendering.render_people import subject_alert

        return subject_alert(p.people)  # type: ignore[arg-type]
    if p.alert is not None:
        return render_follow.track_alert(p.alert)
    return render_follow.follow_alert(p.news)  # type: ignore[arg-type]


def host_of(hook: webhooks.Webhook) -> str:
    """The host (with its port, if any) a webhook posts to, from its shown hint."""
    return hook.url_hint.split(" ", 1)[0].split("/", 1)[0]


_said: list[str] = []  # the last key problem logged: said once, not every round


async def deliver_webhooks(call: Call, clock: Callable[[], datetime], *, session: Any = None,
                           sleep: Sleep = asyncio.sleep, timeout: float = TIMEOUT, per_host: int = PER_HOST,
                           deadline: float = ROUND_DEADLINE) -> int:
    """One round: post every webhook's pending delivery, concurrently, at most `per_host` at a
    time to one host, for at most `deadline` seconds. Returns how many the receivers accepted."""
    import aiohttp

    held = await call(webhooks.key_state)
    if held:  # a database restored without its key: nothing is disabled, nothing is lost
        if _said != [held]:
            log.error("%s", held)
            _said[:] = [held]
        return 0
    _said.clear()
    pending: list[webhooks.Pending] = await call(webhooks.pending_webhooks)
    if not pending:
        return 0
    own = session is None
    session = session or aiohttp.ClientSession()
    limits: dict[str, asyncio.Semaphore] = {}
    posting: set[int] = set()  # webhooks whose POST is under way

    async def one(p: webhooks.Pending) -> int:
        async with limits.setdefault(host_of(p.hook), asyncio.Semaphore(per_host)):
            return await _deliver_one(call, clock, session, p, sleep, timeout, posting)

    tasks = [asyncio.create_task(one(p)) for p in pending]
    try:
        _done, late = await asyncio.wait(tasks, timeout=deadline)
        for t in late:
            t.cancel()
        await asyncio.gather(*late, return_exceptions=True)
    finally:
        for t in tasks:
            t.cancel()
        if own:
            await session.close()
    sent = 0
    for p, t in zip(pending, tasks, strict=True):
        label = f"webhook {p.hook.id} ({p.hook.url_hint})"
        if t in late:
            if p.hook.id in posting:
                log.warning("%s did not answer within the round's %.0f s; will retry", label, deadline)
                await _no_answer(call, clock, p.hook.id, label)
            else:
                log.info("%s waits for the next round (the round's deadline)", label)
        elif t.exception() is not None:
            log.error("%s failed; retrying next round", label, exc_info=t.exception())
        else:
            sent += t.result()
    return sent


async def _no_answer(call: Call, clock: Callable[[], datetime], webhook_id: int, label: str) -> None:
    why = await call(webhooks.mark_no_answer, webhook_id, clock())
    if why:
        log.error("%s: %s", label, why)


async def _deliver_one(call: Call, clock: Callable[[], datetime], session: Any, p: webhooks.Pending,
                       sleep: Sleep, timeout: float, posting: set[int]) -> int:
    hook = p.hook
    label = f"webhook {hook.id} ({hook.url_hint})"
    try:
        url = await call(webhooks.webhook_url, hook.id)
    except secret_box.KeyMissing:
        return 0  # the key went away during the round: key_state says so next round
    except secret_box.SecretUnreadable as e:
        log.error("%s cannot be read (%s): disabled", label, e)
        await call(webhooks.disable_webhook, hook.id, f"its URL cannot be read ({e}): add it again")
        return 0
    message = message_of(p)
    payload = slack_message(message) if hook.kind == "slack" else discord_payload(message)
    await call(webhooks.mark_sending, hook.id, p.upto, clock())
    posting.add(hook.id)
    result = await post_webhook(session, hook, url, payload, sleep=sleep, timeout=timeout)
    posting.discard(hook.id)
    if result.status == "retry" and result.http_status is None:
        await _no_answer(call, clock, hook.id, label)
    else:
        await call(webhooks.mark_answered, hook.id)
    nonce = f"w{hook.id}e{p.upto}"

    async def delivered(_r: Sent) -> None:
        await call(webhooks.mark_delivered, hook.id, p.upto, clock())

    async def disable(_why: str) -> None:
        log.warning("%s: %s", label, GONE)
        await call(webhooks.disable_webhook, hook.id, GONE)

    async def give_up(why: str) -> None:
        await call(webhooks.mark_failed, hook.id, p.upto, why, clock())

    ok = await delivery.settle(call, label, nonce, result, clock(), delivered=delivered, disable=disable,
                               give_up=give_up)
    return int(ok)
