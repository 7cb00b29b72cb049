"""Webhooks that receive a paper's alerts or a direction's follows, for channels the bot is not
in and for Slack (docs/bot.md, "Webhooks"). Additive to store.subscriptions.tracking and
store.subscriptions.follows: the same events, the same cursor rule (it moves only after the
receiver accepted a message).

A webhook URL is a secret (anyone holding it can post): it is stored sealed
(store.subscriptions.secret_box), found again by a keyed fingerprint (`url_id`), and shown only
as `url_hint` (host and webhook id, never the token). No function here puts a URL in an exception's message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from urllib.parse import parse_qs, urlsplit

from sqlite_utils import Database

from mapwatch.store.clock import iso
from mapwatch.store.errors import BadOption
from mapwatch.store.questions.queries import PAPER_COLS, paper_row
from mapwatch.store.subscriptions import secret_box
from mapwatch.store.subscriptions.tracking import Alert, Track, alert_citers

DISCORD_HOSTS = ("discord.com", "discordapp.com", "ptb.discord.com", "canary.discord.com")
SLACK_HOST = "hooks.slack.com"
_DISCORD_PATH = re.compile(r"^/api(?:/v\d{1,2})?/webhooks/(?P<id>\d{1,20})/(?P<token>[A-Za-z0-9_\-]{1,100})/?$")
_SLACK_PATH = re.compile(r"^/services/(?P<team>[A-Z0-9]{1,20})/(?P<id>[A-Z0-9]{1,20})/(?P<token>[A-Za-z0-9]{1,64})$")
URL_MAX = 400


@dataclass(frozen=True)
class WebhookUrl:
    kind: str  # discord | slack
    url: str  # the secret, as given (with ?thread_id= for a Discord forum post)
    hint: str  # what may be shown: host and webhook id


def parse_url(url: str, *, extra_bases: tuple[str, ...] = ()) -> WebhookUrl:
    """A Discord webhook URL (optionally `?thread_id=<id>`) or a Slack incoming webhook URL.
    `extra_bases`: other accepted URL prefixes (a self-hosted or test Discord API base, whose
    webhooks live at `<base>/webhooks/<id>/<token>`, or a Slack-compatible base ending in
    `/services`). Raises BadOption, whose message never repeats the URL."""
    url = url.strip()
    if len(url) > URL_MAX or any(c.isspace() for c in url):
        raise BadOption("That is not a Discord or Slack webhook URL.")
    parts = urlsplit(url)
    query = parse_qs(parts.query, keep_blank_values=True)
    for base in extra_bases:
        b = urlsplit(base.rstrip("/"))
        if (parts.scheme, parts.netloc) == (b.scheme, b.netloc) and parts.path.startswith(b.path + "/"):
            rest = parts.path[len(b.path):]
            if (m := re.fullmatch(r"/webhooks/(\d{1,20})/[A-Za-z0-9_\-]{1,100}/?", rest)):
                return _discord(url, query, f"{parts.netloc}/webhooks/{m[1]}")
            if (m := re.fullmatch(r"/[A-Z0-9]{1,20}/([A-Z0-9]{1,20})/[A-Za-z0-9]{1,64}", rest)):
                return WebhookUrl("slack", url, f"{parts.netloc} {m[1]}")
    if parts.scheme == "https" and parts.hostname in DISCORD_HOSTS and (m := _DISCORD_PATH.match(parts.path)):
        return _discord(url, query, f"{parts.hostname}/webhooks/{m['id']}")
    if parts.scheme == "https" and parts.hostname == SLACK_HOST and (m := _SLACK_PATH.match(parts.path)) \
            and not parts.query:
        return WebhookUrl("slack", url, f"{SLACK_HOST} {m['id']}")
    raise BadOption("That is not a Discord or Slack webhook URL (https://discord.com/api/webhooks/… or "
                    "https://hooks.slack.com/services/…).")


def _discord(url: str, query: dict[str, list[str]], hint: str) -> WebhookUrl:
    if set(query) - {"thread_id"} or any(not re.fullmatch(r"\d{1,20}", v) for v in query.get("thread_id", [])):
        raise BadOption("A Discord webhook URL may carry only ?thread_id=<id> (a forum post or thread).")
    thread = query.get("thread_id", [""])[0]
    return WebhookUrl("discord", url, hint + (f" thread {thread}" if thread else ""))


@dataclass(frozen=True)
class Webhook:
    id: int
    kind: str
    target_kind: str  # paper | direction
    target: str  # a paper id or a direction slug
    url_hint: str
    guild_id: int | None
    created_at: str
    last_event_id: int
    last_delivery_at: str | None
    disabled_reason: str | None
    last_failure: str | None


_COLS = ("id, kind, target_kind, target, url_hint, guild_id, created_at, last_event_id, last_delivery_at,"
         " disabled_reason, last_failure")


def _db_file(db: Database) -> str:
    row = db.conn.execute("PRAGMA database_list").fetchone()
    return str(row[2] or "") if row else ""


def add_webhook(db: Database, target_kind: str, target: str, hook: WebhookUrl, *, guild_id: int | None,
                created_by: int | None, now: datetime) -> tuple[Webhook, bool]:
    """Deliver `target`'s alerts (a paper) or follows (a direction) to the webhook from now on.
    (webhook, new): the same URL and target again changes nothing."""
    if target_kind not in ("paper", "direction", "author", "team"):
        raise BadOption("a webhook receives a paper's, a person's or a team's alerts, or a direction's follows")
    key = secret_box.load_key(_db_file(db), create=True)
    url_id = secret_box.fingerprint(key, hook.url)
    with db.atomic():
        cur = db.conn.execute(
            "INSERT INTO webhooks (kind, target_kind, target, url_sealed, url_id, url_hint, guild_id, created_by,"
            " created_at, last_event_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT coalesce(max(id), 0) FROM events))"
            " ON CONFLICT (url_id, target_kind, target) DO NOTHING",
            (hook.kind, target_kind, target, secret_box.seal(key, hook.url), url_id, hook.hint, guild_id,
             created_by, iso(now)))
        new = cur.rowcount == 1
    row = db.conn.execute(f"SELECT {_COLS} FROM webhooks WHERE url_id = ? AND target_kind = ? AND target = ?",
                          (url_id, target_kind, target)).fetchone()
    return Webhook(*row), new


def list_webhooks(db: Database, *, guild_id: int | None = None, every: bool = False) -> list[Webhook]:
    """This server's webhooks (or, `every`, all of them: the CLI)."""
    where, params = ("1", ()) if every else ("guild_id IS ?", (guild_id,))
    return [Webhook(*r) for r in db.conn.execute(f"SELECT {_COLS} FROM webhooks WHERE {where} ORDER BY id", params)]


def remove_webhook(db: Database, webhook_id: int, *, guild_id: int | None = None, every: bool = False) -> bool:
    with db.atomic():
        if every:
            cur = db.conn.execute("DELETE FROM webhooks WHERE id = ?", (webhook_id,))
        else:
            cur = db.conn.execute("DELETE FROM webhooks WHERE id = ? AND guild_id IS ?", (webhook_id, guild_id))
    return cur.rowcount == 1


def webhook_url(db: Database, webhook_id: int) -> str:
    """The URL, opened with the database's key (raises secret_box.SecretUnreadable)."""
    row = db.conn.execute("SELECT url_sealed FROM webhooks WHERE id = ?", (webhook_id,)).fetchone()
    if row is None:
        raise secret_box.SecretUnreadable("no such webhook")
    return secret_box.open_secret(secret_box.load_key(_db_file(db), create=False), bytes(row[0]))


# -- what is pending ----------------------------------------------------------------------

@dataclass(frozen=True)
class Pending:
    hook: Webhook
    alert: Alert | None  # a paper's webhook
    news: object | None  # a direction's webhook: store.subscriptions.follows.FollowNews
    upto: int
    sending_since: str | None
    people: object | None = None  # a person's or team's webhook: store.subscriptions.people_tracks.SubjectAlert


def pending_webhooks(db: Database, *, limit: int = 10) -> list[Pending]:
    """For every enabled webhook with events past its cursor: what to send. A delivery that
    may have been posted (a crash, a lost answer) is recomposed up to the same event."""
    from mapwatch.store.questions.feed_queries import last_event_id
    from mapwatch.store.subscriptions.follows import Follow, follow_news

    top = last_event_id(db)
    out: list[Pending] = []
    c = db.conn
    for r in c.execute(f"SELECT {_COLS}, sending_upto, sending_since FROM webhooks"
                       " WHERE disabled_reason IS NULL AND last_event_id < ? ORDER BY id", (top,)).fetchall():
        hook = Webhook(*r[:11])
        resend = r[11] is not None and r[11] > hook.last_event_id
        upto = r[11] if resend else top
        since = r[12] if resend else None
        if hook.target_kind == "paper":
            alert = _paper_alert(db, hook, upto, limit, since)
            if alert is not None:
                out.append(Pending(hook, alert, None, alert.upto_event_id, since))
            else:
                mark_delivered(db, hook.id, upto, None)
        elif hook.target_kind in ("author", "team"):
            from mapwatch.store.subscriptions import people_tracks

            st = people_tracks.SubjectTrack(
                hook.id, hook.guild_id, 0, None, hook.target if hook.target_kind == "author" else None,
                hook.target if hook.target_kind == "team" else None, hook.created_at, None, hook.last_event_id,
                hook.last_delivery_at, None, "instant", None, None)
            sa = people_tracks.subject_alert(db, replace(st, name=people_tracks.subject_name(db, st)), upto,
                                             limit=limit, sending_since=since)
            if not sa.quiet:
                out.append(Pending(hook, None, None, sa.upto_event_id, since, sa))
            else:
                mark_delivered(db, hook.id, upto, None)
        else:
            d = c.execute("SELECT name, url FROM directions WHERE slug = ?", (hook.target,)).fetchone()
            if d is None:
                continue
            f = Follow(hook.id, None, 0, None, hook.target, d[0], d[1], None, "instant", None, hook.created_at,
                       None, hook.last_event_id, hook.last_delivery_at, None)
            news = follow_news(db, f, upto=upto, limit=limit)
            if news.total:
                out.append(Pending(hook, None, news, upto, since))
            else:
                mark_delivered(db, hook.id, upto, None)
    return out


def _paper_alert(db: Database, hook: Webhook, hi: int, limit: int, since: str | None) -> Alert | None:
    c = db.conn
    paper = c.execute(f"SELECT {PAPER_COLS} FROM papers p WHERE p.id = ?", (hook.target,)).fetchone()
    if paper is None:
        return None
    upto, n_citers, old_count, new_count, unlisted = c.execute(
        "SELECT max(id), sum(kind = 'citation'), min(old_count), max(new_count), coalesce(sum(unlisted), 0)"
        " FROM events WHERE paper_id = ? AND id > ? AND id <= ?", (hook.target, hook.last_event_id, hi)).fetchone()
    if upto is None:
        return None
    shown, _ = alert_citers(db, hook.target, hook.last_event_id, hi, limit)
    p = paper_row(paper)
    track = Track(hook.id, None, 0, None, p.id, p.title, hook.created_at, None, hook.last_event_id,
                  hook.last_delivery_at, None)
    return Alert(track, p, shown, max(0, (n_citers or 0) - len(shown)), old_count, new_count, unlisted, hi, since)


# -- cursors --------------------------------------------------------------------------------

def mark_sending(db: Database, webhook_id: int, upto: int, now: datetime) -> None:
    with db.atomic():
        db.conn.execute("UPDATE webhooks SET sending_upto = ?, sending_since = coalesce(sending_since, ?)"
                        " WHERE id = ?", (upto, iso(now), webhook_id))


def mark_delivered(db: Database, webhook_id: int, upto: int, now: datetime | None) -> None:
    """Accepted (or nothing to send, `now` None): the cursor moves, never backwards."""
    with db.atomic():
        db.conn.execute("UPDATE webhooks SET last_event_id = max(last_event_id, ?), sending_upto = NULL,"
                        " sending_since = NULL, last_delivery_at = coalesce(?, last_delivery_at) WHERE id = ?",
                        (upto, iso(now) if now else None, webhook_id))


def mark_failed(db: Database, webhook_id: int, upto: int, why: str, now: datetime) -> None:
    with db.atomic():
        db.conn.execute("UPDATE webhooks SET last_event_id = max(last_event_id, ?), sending_upto = NULL,"
                        " sending_since = NULL, last_failure = ? WHERE id = ?",
                        (upto, f"{iso(now)}: {why}"[:400], webhook_id))


def disable_webhook(db: Database, webhook_id: int, why: str) -> None:
    with db.atomic():
        db.conn.execute("UPDATE webhooks SET disabled_reason = ?, sending_upto = NULL, sending_since = NULL"
                        " WHERE id = ?", (why[:300], webhook_id))
