"""Webhooks that receive a paper's alerts or a direction's follows, for channels the bot is not
in and for Slack (docs/bot.md, "Webhooks: channels without the bot, and Slack"). Additive to
store.subscriptions.tracking and store.subscriptions.follows: the same events, the same cursor rule
(it moves only after the receiver accepted a message).

A webhook URL is a secret (anyone holding it can post): it is stored sealed
(store.secret_box), found again by a keyed fingerprint (`url_id`), and shown only
as `url_hint` (host and webhook id, never the token). No function here puts a URL in an exception's message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from urllib.parse import parse_qs, urlsplit

from sqlite_utils import Database

from mapwatch.store import secret_box
from mapwatch.store.clock import iso, parse_iso
from mapwatch.store.database.rows import fill, named_row, named_rows, one_column, scalar
from mapwatch.store.errors import BadOption
from mapwatch.store.questions.paper_rows import PAPER_COLS, named_paper
from mapwatch.store.subscriptions.kinds import WebhookKind, WebhookTarget
from mapwatch.store.subscriptions.tracking import Alert, Track, alert_citers

DISCORD_HOSTS = ("discord.com", "discordapp.com", "ptb.discord.com", "canary.discord.com", "ptb.discordapp.com",
                 "canary.discordapp.com")
SLACK_HOST = "hooks.slack.com"
# Discord's Execute Webhook route (optionally under a versioned API) and Slack's incoming webhook
_DISCORD_PATH = re.compile(r"^/api(?:/v\d{1,2})?/webhooks/(?P<id>\d{1,20})/(?P<token>[A-Za-z0-9_\-]{1,100})/?$")
_SLACK_PATH = re.compile(r"^/services/(?P<team>T[A-Z0-9]{1,20})/(?P<id>B[A-Z0-9]{1,20})/(?P<token>[A-Za-z0-9]{1,64})$")
URL_MAX = 400
MAX_PER_SERVER = 10  # webhooks one Discord server may have (the host's CLI is not counted)
NOT_A_WEBHOOK = "That is not a Discord or Slack webhook URL"
SHAPES = "https://discord.com/api/webhooks/<id>/<token> or https://hooks.slack.com/services/T…/B…/…"


@dataclass(frozen=True)
class WebhookUrl:
    kind: WebhookKind
    url: str  # the secret, as given (with ?thread_id= for a Discord forum post)
    hint: str  # what may be shown: host and webhook id


def _refuse(why: str) -> BadOption:
    return BadOption(f"{NOT_A_WEBHOOK}: {why} ({SHAPES}).")


def parse_url(url: str, *, extra_bases: tuple[str, ...] = ()) -> WebhookUrl:
    """A Discord webhook URL (optionally `?thread_id=<id>`) or a Slack incoming webhook URL:
    https, Discord's or Slack's host, port 443 or none, no user name, no fragment, the
    documented path. `extra_bases`: other accepted URL prefixes (a self-hosted or test
    Discord API base, whose webhooks live at `<base>/webhooks/<id>/<token>`, or a
    Slack-compatible base ending in `/services`). Raises BadOption with one line that never
    repeats the URL."""
    url = url.strip()
    if len(url) > URL_MAX or any(c.isspace() or not c.isprintable() for c in url):
        raise _refuse(f"too long or has spaces (at most {URL_MAX} characters)")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise _refuse("its port is not a number from 1 to 65535") from None
    query = parse_qs(parts.query, keep_blank_values=True)
    for base in extra_bases:
        b = urlsplit(base.rstrip("/"))
        if (parts.scheme, parts.netloc) == (b.scheme, b.netloc) and parts.path.startswith(b.path + "/") \
                and not parts.fragment:
            rest = parts.path[len(b.path):]
            if (m := re.fullmatch(r"/webhooks/(\d{1,20})/[A-Za-z0-9_\-]{1,100}/?", rest)):
                return _discord(url, query, f"{parts.netloc}/webhooks/{m[1]}")
            if (m := re.fullmatch(r"/[A-Z0-9]{1,20}/([A-Z0-9]{1,20})/[A-Za-z0-9]{1,64}", rest)) and not parts.query:
                return WebhookUrl("slack", url, f"{parts.netloc} {m[1]}")
    if parts.scheme != "https":
        raise _refuse("it must start with https://")
    host = parts.hostname or ""
    if host not in DISCORD_HOSTS and host != SLACK_HOST:
        raise _refuse("the host is neither Discord's nor Slack's")
    if parts.username is not None or parts.password is not None:
        raise _refuse("it may not carry a user name or password")
    if port not in (None, 443):
        raise _refuse("its port must be 443 or none")
    if parts.fragment or "#" in url:
        raise _refuse("it may not end with a #fragment")
    if host in DISCORD_HOSTS:
        if not (m := _DISCORD_PATH.match(parts.path)):
            raise _refuse("its path is not /api/webhooks/<id>/<token>")
        return _discord(url, query, f"{host}/webhooks/{m['id']}")
    if not (m := _SLACK_PATH.match(parts.path)):
        raise _refuse("its path is not /services/T…/B…/<token>")
    if parts.query:
        raise _refuse("a Slack webhook URL takes no ?query")
    return WebhookUrl("slack", url, f"{SLACK_HOST} {m['id']}")


def _discord(url: str, query: dict[str, list[str]], hint: str) -> WebhookUrl:
    if set(query) - {"thread_id"} or any(not re.fullmatch(r"\d{1,20}", v) for v in query.get("thread_id", [])):
        raise BadOption("A Discord webhook URL may carry only ?thread_id=<id> (a forum post or thread).")
    thread = query.get("thread_id", [""])[0]
    return WebhookUrl("discord", url, hint + (f" thread {thread}" if thread else ""))


@dataclass(frozen=True)
class Webhook:
    id: int
    kind: WebhookKind
    target_kind: WebhookTarget
    target: str  # a paper id or a direction slug
    url_hint: str
    guild_id: int | None
    created_at: str
    last_event_id: int
    last_delivery_at: str | None
    disabled_reason: str | None
    last_failure: str | None
    no_answer_since: str | None = None  # the first of the rounds in a row its receiver did not answer


_COLS = ("id, kind, target_kind, target, url_hint, guild_id, created_at, last_event_id, last_delivery_at,"
         " disabled_reason, last_failure, no_answer_since")
NO_ANSWER_LIMIT = timedelta(hours=24)  # a receiver silent this long (and NO_ANSWER_ROUNDS rounds) is disabled
NO_ANSWER_ROUNDS = 3


def _db_file(db: Database) -> str:
    row = named_row(db, "PRAGMA database_list")
    return str(row["file"] or "") if row else ""


def add_webhook(db: Database, target_kind: str, target: str, hook: WebhookUrl, *, guild_id: int | None,
                created_by: int | None, now: datetime) -> tuple[Webhook, bool]:
    """Deliver `target`'s alerts (a paper) or follows (a direction) to the webhook from now on.
    (webhook, new): the same URL and target again changes nothing. A server has at most
    MAX_PER_SERVER webhooks. With sealed URLs in the database and no key (a restore that left
    it behind), nothing is added: a new key would make the others unreadable for good."""
    if target_kind not in ("paper", "direction", "author", "team"):
        raise BadOption("a webhook receives a paper's, a person's or a team's alerts, or a direction's follows")
    sealed = scalar(db.conn, "SELECT count(*) FROM webhooks")
    try:
        key = secret_box.load_key(_db_file(db), create=not sealed)
    except secret_box.KeyMissing as e:
        raise BadOption(f"The webhooks' key is missing ({e}): put it back first (docs/operations.md, "
                        "\"Webhooks and their key\").") from None
    url_id = secret_box.fingerprint(key, hook.url)
    with db.atomic():
        known = db.conn.execute("SELECT 1 FROM webhooks WHERE url_id = ? AND target_kind = ? AND target = ?",
                                (url_id, target_kind, target)).fetchone()
        if guild_id is not None and not known:
            n = scalar(db.conn, "SELECT count(*) FROM webhooks WHERE guild_id = ?", (guild_id,))
            if n >= MAX_PER_SERVER:
                raise BadOption(f"This server has {n} webhooks, the most it may have ({MAX_PER_SERVER}): "
                                "remove one first (`/webhook` lists them).")
        cur = db.conn.execute(
            "INSERT INTO webhooks (kind, target_kind, target, url_sealed, url_id, url_hint, guild_id, created_by,"
            " created_at, last_event_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT coalesce(max(id), 0) FROM events))"
            " ON CONFLICT (url_id, target_kind, target) DO NOTHING",
            (hook.kind, target_kind, target, secret_box.seal(key, hook.url, url_id.encode()), url_id, hook.hint,
             guild_id, created_by, iso(now)))
        new = cur.rowcount == 1
    row = named_row(db, f"SELECT {_COLS} FROM webhooks WHERE url_id = ? AND target_kind = ? AND target = ?",
                    (url_id, target_kind, target))
    assert row is not None  # inserted above, or already there
    return fill(Webhook, row), new


def list_webhooks(db: Database, *, guild_id: int | None = None, every: bool = False) -> list[Webhook]:
    """This server's webhooks (or, `every`, all of them: the CLI)."""
    where, params = ("1", ()) if every else ("guild_id IS ?", (guild_id,))
    return [fill(Webhook, r) for r in named_rows(db, f"SELECT {_COLS} FROM webhooks WHERE {where} ORDER BY id", params)]


def remove_webhook(db: Database, webhook_id: int, *, guild_id: int | None = None, every: bool = False) -> bool:
    with db.atomic():
        if every:
            cur = db.conn.execute("DELETE FROM webhooks WHERE id = ?", (webhook_id,))
        else:
            cur = db.conn.execute("DELETE FROM webhooks WHERE id = ? AND guild_id IS ?", (webhook_id, guild_id))
    return cur.rowcount == 1


def webhook_url(db: Database, webhook_id: int) -> str:
    """The URL, opened with the database's key (raises secret_box.SecretUnreadable, KeyMissing
    when there is no key). A URL still sealed the old way (a database migrated while its key
    was away) is sealed again with AES-GCM here."""
    row = named_row(db, "SELECT url_sealed, url_id FROM webhooks WHERE id = ?", (webhook_id,))
    if row is None:
        raise secret_box.SecretUnreadable("no such webhook")
    key = secret_box.load_key(_db_file(db), create=False)
    blob, url_id = bytes(row["url_sealed"]), str(row["url_id"])
    if not secret_box.is_legacy(blob):
        return secret_box.open_secret(key, blob, url_id.encode())
    url = secret_box.open_legacy(key, blob)
    with db.atomic():
        db.conn.execute("UPDATE webhooks SET url_sealed = ? WHERE id = ?",
                        (secret_box.seal(key, url, url_id.encode()), webhook_id))
    return url


def key_state(db: Database) -> str | None:
    """None when the webhooks' URLs can be opened (or there are none); else one line: which
    webhooks wait and why (a restored database without its key)."""
    ids = one_column(db, "SELECT id FROM webhooks WHERE disabled_reason IS NULL ORDER BY id")
    if not ids:
        return None
    try:
        secret_box.load_key(_db_file(db), create=False)
    except secret_box.SecretUnreadable as e:
        shown = ", ".join(map(str, ids[:20])) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")
        return (f"webhooks {shown} wait: {e}; put the key back (docs/operations.md, \"Webhooks and their key\"),"
                " nothing is lost meanwhile")
    return None


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
    from mapwatch.store.subscriptions.alert_hold import deliverable_upto
    from mapwatch.store.subscriptions.follows import Follow, follow_news

    top = deliverable_upto(db)  # the alert hold (store/subscriptions/alert_hold.py)
    out: list[Pending] = []
    c = db.conn
    for r in named_rows(db, f"SELECT {_COLS}, sending_upto, sending_since FROM webhooks"
                        " WHERE disabled_reason IS NULL AND last_event_id < ? ORDER BY id", (top,)):
        hook = fill(Webhook, r)
        resend = r["sending_upto"] is not None and r["sending_upto"] > hook.last_event_id
        upto = r["sending_upto"] if resend else top
        since = r["sending_since"] if resend else None
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
            d = named_row(c, "SELECT name, url FROM directions WHERE slug = ?", (hook.target,))
            if d is None:
                continue
            f = Follow(hook.id, None, 0, None, hook.target, d["name"], d["url"], None, "instant", None,
                       hook.created_at, None, hook.last_event_id, hook.last_delivery_at, None)
            news = follow_news(db, f, upto=upto, limit=limit)
            if news.total:
                out.append(Pending(hook, None, news, upto, since))
            else:
                mark_delivered(db, hook.id, upto, None)
    return out


def _paper_alert(db: Database, hook: Webhook, hi: int, limit: int, since: str | None) -> Alert | None:
    c = db.conn
    paper = named_row(c, f"SELECT {PAPER_COLS} FROM papers p WHERE p.id = ?", (hook.target,))
    if paper is None:
        return None
    news = named_row(
        c, "SELECT max(id) AS upto, sum(kind = 'citation') AS n_citers, min(old_count) AS old_count,"
        " max(new_count) AS new_count, coalesce(sum(unlisted), 0) AS unlisted"
        " FROM events WHERE paper_id = ? AND id > ? AND id <= ?", (hook.target, hook.last_event_id, hi))
    assert news is not None  # an aggregate always has its one row
    upto, n_citers, old_count, new_count, unlisted = (
        news["upto"], news["n_citers"], news["old_count"], news["new_count"], news["unlisted"])
    if upto is None:
        return None
    shown, _left = alert_citers(db, hook.target, hook.last_event_id, hi, limit)
    p = named_paper(paper)
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
                        " sending_since = NULL, last_delivery_at = coalesce(?, last_delivery_at),"
                        " no_answer_since = CASE WHEN ? THEN NULL ELSE no_answer_since END,"
                        " no_answer_rounds = CASE WHEN ? THEN 0 ELSE no_answer_rounds END WHERE id = ?",
                        (upto, iso(now) if now else None, now is not None, now is not None, webhook_id))


def mark_answered(db: Database, webhook_id: int) -> None:
    """The receiver answered (any HTTP status): its rounds without an answer start again."""
    with db.atomic():
        db.conn.execute("UPDATE webhooks SET no_answer_since = NULL, no_answer_rounds = 0"
                        " WHERE id = ? AND no_answer_rounds > 0", (webhook_id,))


def mark_no_answer(db: Database, webhook_id: int, now: datetime, *, limit: timedelta = NO_ANSWER_LIMIT,
                   rounds: int = NO_ANSWER_ROUNDS) -> str | None:
    """One more round in which the receiver did not answer (timeouts, refused connections, the
    round's deadline). After `limit` of such rounds in a row (at least `rounds` of them) the
    webhook is disabled; returns the reason then, else None."""
    with db.atomic():
        db.conn.execute("UPDATE webhooks SET no_answer_since = coalesce(no_answer_since, ?),"
                        " no_answer_rounds = no_answer_rounds + 1 WHERE id = ?", (iso(now), webhook_id))
        since, n = db.conn.execute("SELECT no_answer_since, no_answer_rounds FROM webhooks WHERE id = ?",
                                   (webhook_id,)).fetchone()
        if n < rounds or now - parse_iso(since) < limit:
            return None
        hours = (now - parse_iso(since)).total_seconds() / 3600
        why = (f"no answer for {hours:.0f} h ({n} rounds in a row since {since}): disabled; add it again to"
               " resume")
        db.conn.execute("UPDATE webhooks SET disabled_reason = ?, sending_upto = NULL, sending_since = NULL"
                        " WHERE id = ?", (why[:300], webhook_id))
    return why


def mark_failed(db: Database, webhook_id: int, upto: int, why: str, now: datetime) -> None:
    with db.atomic():
        db.conn.execute("UPDATE webhooks SET last_event_id = max(last_event_id, ?), sending_upto = NULL,"
                        " sending_since = NULL, no_answer_since = NULL, no_answer_rounds = 0, last_failure = ?"
                        " WHERE id = ?",
                        (upto, f"{iso(now)}: {why}"[:400], webhook_id))


def disable_webhook(db: Database, webhook_id: int, why: str) -> None:
    with db.atomic():
        db.conn.execute("UPDATE webhooks SET disabled_reason = ?, sending_upto = NULL, sending_since = NULL"
                        " WHERE id = ?", (why[:300], webhook_id))
