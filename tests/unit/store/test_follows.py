"""Follows and digests in the store: cursors, keyword filter, schedule, exactly-once records."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mapwatch.store.database.db import open_db
from mapwatch.store.errors import BadOption, DirectionNotFound
from mapwatch.store.questions import feed_queries
from mapwatch.store.subscriptions import deliveries, digests, follows
from mapwatch.store.subscriptions.digests import DigestSettings
from mapwatch.store.subscriptions.follows import Place
from tests.conftest import FakeClock, seed_page
from tests.follow_helpers import RL, RLHF, SURVEY, TECH, grow, start_older, store_pages

G, CH, U = 100, 200, 300


def follow(db, clock, slug=RL, **kw):
    args = {"guild_id": G, "channel_id": CH, "user_id": U, "created_by": U, "now": clock()}
    args.update(kw)
    return follows.add_follow(db, direction_slug=slug, **args)[0]


def citers_in(db, slug: str) -> set[str]:
    """Independent oracle: every paper citing a paper placed in `slug`."""
    return {r[0] for r in db.conn.execute(
        "SELECT DISTINCT c.citing_id FROM citations c JOIN placements p ON p.paper_id = c.cited_id"
        " WHERE p.direction_slug = ?", (slug,))}


def test_first_follow_does_not_flood_and_then_gets_exactly_the_new_entries(db, clock: FakeClock) -> None:
    start_older(db, clock)
    before = citers_in(db, RL)
    f = follow(db, clock)
    assert f.last_event_id == feed_queries.last_event_id(db) > 0
    assert follows.pending_follow_alerts(db) == []

    store_pages(db, [seed_page(SURVEY), seed_page(TECH)], clock)
    [news] = follows.pending_follow_alerts(db)
    expected = citers_in(db, RL) - before
    assert len(expected) == 6
    assert {c.id for c in news.citers} == expected and news.total == 6 and news.more == 0
    assert [c.event_id for c in news.citers] == sorted(c.event_id for c in news.citers)
    first = news.citers[0]
    assert (first.id, first.cites[0].id) == ("2506.12217", SURVEY)
    assert first.arxiv_url == "https://arxiv.org/abs/2506.12217"
    assert news.upto_event_id == feed_queries.last_event_id(db)

    deliveries.mark_delivered(db, deliveries.FOLLOWS, f.id, news.upto_event_id, clock())
    assert follows.pending_follow_alerts(db) == []
    again = follows.get_follow(db, f.id)
    assert again is not None and again.last_delivery_at == clock().isoformat(timespec="seconds")
    # the cursor never goes backwards
    deliveries.mark_delivered(db, deliveries.FOLLOWS, f.id, 1, clock())
    assert follows.get_follow(db, f.id).last_event_id == news.upto_event_id  # type: ignore[union-attr]


def test_restart_finds_nothing_new_and_limit_counts_the_rest(db_path, clock: FakeClock) -> None:
    db = open_db(db_path)
    start_older(db, clock, drop=5)
    f = follow(db, clock)
    store_pages(db, [seed_page(SURVEY), seed_page(TECH)], clock)
    [news] = follows.pending_follow_alerts(db, limit=4)
    assert (len(news.citers), news.total, news.more) == (4, 10, 6)
    deliveries.mark_delivered(db, deliveries.FOLLOWS, f.id, news.upto_event_id, clock())
    db.close()
    db = open_db(db_path)
    assert follows.pending_follow_alerts(db) == []
    db.close()


def test_a_citer_already_in_the_direction_is_not_new_and_a_new_one_counts_once(db, clock: FakeClock) -> None:
    start_older(db, clock, drop=0)
    follow(db, clock)
    known = seed_page(SURVEY).built_on_by.items[5]  # type: ignore[union-attr]
    assert known.id in citers_in(db, RL)
    fresh = ("2611.00001", "A Brand New Study of Reward Models", 2026)
    store_pages(db, [grow(seed_page(TECH), [(known.id, known.title, known.year or 2025), fresh]),
                     grow(seed_page(SURVEY), [fresh])], clock)
    [news] = follows.pending_follow_alerts(db)
    assert [c.id for c in news.citers] == ["2611.00001"]
    assert {r.id for r in news.citers[0].cites} == {SURVEY, TECH}


@pytest.mark.parametrize("keyword, hits", [
    ("reward", {"2611.00001", "2611.00003"}),
    ("REWARD MODELS", {"2611.00001"}),
    ("Überprüfung", {"2611.00003"}),
    ("überPRÜFUNG", {"2611.00003"}),
    ("%", set()),
    ("_", set()),
    ("' OR 1=1 --", set()),
    ("a\x00b\u202e", {"2611.00001"}),  # control characters count as spaces: "a b" is in "A Brand"
])
def test_keyword_filter_is_plain_case_insensitive_text(db, clock: FakeClock, keyword: str, hits: set[str]) -> None:
    start_older(db, clock, drop=0)
    follow(db, clock, keyword=keyword)
    store_pages(db, [grow(seed_page(SURVEY), [
        ("2611.00001", "A Brand New Study of Reward Models", 2026),
        ("2611.00002", "Scaling Laws, Revisited", 2026),
        ("2611.00003", "Reward-Überprüfung für LLMs", 2026)])], clock)
    [news] = follows.pending_follow_alerts(db)
    assert {c.id for c in news.citers} == hits and news.total == len(hits)


def test_a_keyword_that_matches_nothing_advances_quietly(db, clock: FakeClock) -> None:
    start_older(db, clock)
    f = follow(db, clock, keyword="diffusion")
    store_pages(db, [seed_page(SURVEY)], clock)
    [news] = follows.pending_follow_alerts(db)
    assert news.total == 0 and news.citers == ()
    deliveries.mark_delivered(db, deliveries.FOLLOWS, f.id, news.upto_event_id, clock(), sent=False)
    assert follows.pending_follow_alerts(db) == []
    assert follows.get_follow(db, f.id).last_delivery_at is None  # type: ignore[union-attr]


def test_follow_options_isolation_and_refollow(db, clock: FakeClock) -> None:
    start_older(db, clock)
    f = follow(db, clock, keyword="  Reward\tmodels \n", mode="Daily", role_id=42)
    assert (f.keyword, f.mode, f.role_id, f.user_id) == ("Reward models", "daily", 42, None)
    f2, new = follows.add_follow(db, guild_id=G, channel_id=CH, user_id=999, direction_slug=RL, mode=None,
                                 created_by=999, now=clock())
    assert not new and f2.id == f.id and (f2.keyword, f2.mode, f2.role_id) == (None, "instant", None)
    follow(db, clock, slug=RLHF, channel_id=201)
    follow(db, clock, guild_id=101)
    dm = follow(db, clock, guild_id=None, channel_id=555)
    assert dm.user_id == U
    assert {(x.channel_id, x.direction_slug) for x in follows.list_follows(db, guild_id=G, user_id=U)} == {
        (CH, RL), (201, RLHF)}
    assert [x.id for x in follows.list_follows(db, guild_id=None, user_id=U)] == [dm.id]
    assert follows.list_follows(db, guild_id=None, user_id=U + 1) == ()

    with pytest.raises(BadOption, match="Roles exist only in servers"):
        follow(db, clock, guild_id=None, channel_id=555, role_id=5)
    with pytest.raises(BadOption, match="instant, daily or weekly"):
        follow(db, clock, mode="hourly")
    with pytest.raises(BadOption, match="too long"):
        follow(db, clock, keyword="x" * 101)
    with pytest.raises(DirectionNotFound):
        follow(db, clock, slug="no/such-direction")

    assert follows.remove_follow(db, guild_id=G, channel_id=CH, user_id=1, direction_slug=RL)
    assert not follows.remove_follow(db, guild_id=G, channel_id=CH, user_id=1, direction_slug=RL)
    assert not follows.remove_follow(db, guild_id=102, channel_id=201, user_id=1, direction_slug=RLHF)


def test_disabled_follow_is_skipped_and_refollow_resumes_from_now(db, clock: FakeClock) -> None:
    start_older(db, clock, drop=6)
    f = follow(db, clock)
    store_pages(db, [grow(seed_page(SURVEY), [])], clock)
    deliveries.disable(db, deliveries.FOLLOWS, f.id, "the channel is gone (404 from Discord)")
    assert follows.pending_follow_alerts(db) == []
    shown = follows.list_follows(db, guild_id=G, user_id=None)[0]
    assert shown.disabled_reason == "the channel is gone (404 from Discord)"
    again, new = follows.add_follow(db, guild_id=G, channel_id=CH, user_id=U, direction_slug=RL, created_by=U,
                                    now=clock())
    assert not new and again.disabled_reason is None and again.last_event_id == feed_queries.last_event_id(db)
    assert follows.pending_follow_alerts(db) == []


def test_digest_mode_follows_wait_for_their_digest(db, clock: FakeClock) -> None:
    start_older(db, clock)
    follow(db, clock, mode="daily")
    store_pages(db, [seed_page(SURVEY)], clock)
    assert follows.pending_follow_alerts(db) == []


# -- schedule -----------------------------------------------------------------------------

def utc(*a: int) -> datetime:
    return datetime(*a, tzinfo=UTC)


NINE = DigestSettings(None, None, 9, "UTC")


@pytest.mark.parametrize("settings, mode, last, now, expected", [
    (NINE, "daily", utc(2026, 11, 1, 8, 59), utc(2026, 11, 1, 8, 59, 30), utc(2026, 11, 1, 9)),
    (NINE, "daily", utc(2026, 11, 1, 9), utc(2026, 11, 1, 10), utc(2026, 11, 2, 9)),
    (NINE, "daily", utc(2026, 11, 1, 9), utc(2026, 11, 2, 9), utc(2026, 11, 2, 9)),
    # down for days: the missed digests collapse into one, for the latest period
    (NINE, "daily", utc(2026, 11, 1, 9), utc(2026, 11, 5, 12, 30), utc(2026, 11, 5, 9)),
    (NINE, "daily", utc(2026, 11, 1, 9), utc(2026, 11, 5, 8), utc(2026, 11, 4, 9)),
    # weekly: Mondays (2 Nov 2026 is a Monday)
    (NINE, "weekly", utc(2026, 11, 1, 12), utc(2026, 11, 1, 12), utc(2026, 11, 2, 9)),
    (NINE, "weekly", utc(2026, 11, 2, 9), utc(2026, 11, 5, 9), utc(2026, 11, 9, 9)),
    (NINE, "weekly", utc(2026, 11, 2, 9), utc(2026, 11, 20, 9), utc(2026, 11, 16, 9)),
    # local hours in a time zone, across daylight-saving changes
    (DigestSettings(1, None, 9, "Europe/Paris"), "daily", utc(2026, 3, 28, 8), utc(2026, 3, 28, 9),
     utc(2026, 3, 29, 7)),
    (DigestSettings(1, None, 9, "Europe/Paris"), "daily", utc(2026, 10, 24, 7), utc(2026, 10, 24, 9),
     utc(2026, 10, 25, 8)),
    (DigestSettings(1, None, 2, "Europe/Paris"), "daily", utc(2026, 3, 28, 1), utc(2026, 3, 28, 2),
     utc(2026, 3, 29, 1)),
    (DigestSettings(1, None, 23, "America/New_York"), "daily", utc(2026, 11, 2, 4), utc(2026, 11, 2, 5),
     utc(2026, 11, 3, 4)),
])
def test_next_digest_at(settings, mode, last, now, expected) -> None:
    assert digests.next_digest_at(settings, mode, last, now) == expected


def test_digest_settings_validation_and_defaults(db, clock: FakeClock) -> None:
    s = digests.get_digest_settings(db, guild_id=G, user_id=U)
    assert (s.hour, s.timezone, s.is_default) == (9, "UTC", True)
    s = digests.set_digest_settings(db, guild_id=G, user_id=U, hour=7, timezone="Europe/Paris", updated_by=U,
                                    now=clock())
    assert (s.guild_id, s.user_id, s.hour, s.timezone, s.is_default) == (G, None, 7, "Europe/Paris", False)
    s = digests.set_digest_settings(db, guild_id=G, user_id=U, hour=18, updated_by=U, now=clock())
    assert (s.hour, s.timezone) == (18, "Europe/Paris")
    assert digests.get_digest_settings(db, guild_id=G + 1, user_id=U).is_default
    dm = digests.set_digest_settings(db, guild_id=None, user_id=U, hour=0, updated_by=U, now=clock())
    assert (dm.user_id, dm.hour, dm.timezone) == (U, 0, "UTC")
    assert db["digest_settings"].count == 2
    for hour in (24, -1, True, 7.5):
        with pytest.raises(BadOption, match="0 to 23"):
            digests.set_digest_settings(db, guild_id=G, user_id=U, hour=hour, updated_by=U, now=clock())
    for tz in ("Mars/Olympus", "../../etc/passwd", "/etc/localtime", "x" * 6000, "Europe/Paris\x00", "\u202e"):
        with pytest.raises(BadOption):
            digests.set_digest_settings(db, guild_id=G, user_id=U, hour=3, timezone=tz, updated_by=U, now=clock())
    assert digests.get_digest_settings(db, guild_id=G, user_id=U).hour == 18


# -- digests ------------------------------------------------------------------------------

def test_daily_digest_once_at_its_hour_quiet_day_and_catch_up(db_path, clock: FakeClock) -> None:
    clock.now = utc(2026, 11, 1, 6)
    db = open_db(db_path)
    start_older(db, clock, drop=6)
    rl = follow(db, clock, mode="daily", role_id=77)
    follow(db, clock, slug=RLHF, mode="daily", keyword="nothing matches this")
    follow(db, clock, slug=RL, channel_id=CH + 1, mode="weekly")
    place = Place(G, CH, None)
    store_pages(db, [seed_page(SURVEY), seed_page(TECH)], clock)

    clock.now = utc(2026, 11, 1, 8, 59)
    assert digests.due_digests(db, clock()) == []
    clock.now = utc(2026, 11, 1, 9, 0, 20)
    due = digests.due_digests(db, clock())
    assert [(d.place, d.mode, d.period) for d in due] == [(place, "daily", utc(2026, 11, 1, 9))]

    digest = digests.compose_digest(db, place, "daily", due[0].period, limit=5)
    [section] = digest.sections
    assert (section.kind, section.key, section.total, section.more, section.role_id) == ("direction", RL, 12, 7, 77)
    assert len(section.citers) == 5
    assert [c.cited_by or 0 for c in section.citers] == sorted((c.cited_by or 0 for c in section.citers),
                                                                reverse=True)
    assert (digest.role_ids, digest.directions, digest.papers, digest.citers) == ((77,), 1, 0, 12)
    assert len(digest.follow_ids) == 2
    assert digests.record_digest(db, digest, clock(), message_id=5001)
    assert not digests.record_digest(db, digest, clock(), message_id=5002)  # a period is handled once
    row = db.conn.execute("SELECT guild_id, channel_id, user_id, mode, period, upto_event_id, papers, directions,"
                          " citers, sent, message_id FROM digests").fetchall()
    top = feed_queries.last_event_id(db)
    assert row == [(G, CH, None, "daily", "2026-11-01T09:00:00+00:00", top, 0, 1, 12, 1, 5001)]
    assert follows.get_follow(db, rl.id).last_event_id == feed_queries.last_event_id(db)  # type: ignore[union-attr]
    assert digests.due_digests(db, clock()) == []
    db.close()

    # restart: nothing is due again until the next day's hour
    db = open_db(db_path)
    clock.now = utc(2026, 11, 2, 8, 59)
    assert digests.due_digests(db, clock()) == []
    clock.now = utc(2026, 11, 2, 9, 1)
    due2, weekly = digests.due_digests(db, clock())  # 2 Nov 2026 is a Monday: the weekly channel's too
    quiet = digests.compose_digest(db, place, "daily", due2.period)
    assert quiet.quiet and quiet.role_ids == ()
    assert (weekly.place.channel_id, weekly.mode, weekly.period) == (CH + 1, "weekly", utc(2026, 11, 2, 9))
    week = digests.compose_digest(db, weekly.place, "weekly", weekly.period)
    assert [(s.key, s.total) for s in week.sections] == [(RL, 12)]
    assert digests.record_digest(db, week, clock())
    assert digests.record_digest(db, quiet, clock())
    assert db.conn.execute("SELECT sent, period FROM digests ORDER BY id DESC LIMIT 1").fetchone() == (
        0, "2026-11-02T09:00:00+00:00")
    assert digests.due_digests(db, clock()) == []

    # the bot is down for three days, new citers arrive: one digest when it returns
    store_pages(db, [grow(seed_page(SURVEY), [("2611.00001", "A Brand New Study of Reward Models", 2026)])], clock)
    clock.now = utc(2026, 11, 5, 14)
    [due3] = digests.due_digests(db, clock())
    assert due3.period == utc(2026, 11, 5, 9)
    d3 = digests.compose_digest(db, place, "daily", due3.period)
    assert [(s.key, [c.id for c in s.citers]) for s in d3.sections] == [(RL, ["2611.00001"])]
    assert digests.record_digest(db, d3, clock())
    assert digests.due_digests(db, clock()) == []
    # the weekly channel's first digest is on Monday 9 Nov
    assert [(p.channel_id, m, at) for p, m, at in digests.digest_schedule(db, clock())] == [
        (CH, "daily", utc(2026, 11, 6, 9)), (CH + 1, "weekly", utc(2026, 11, 9, 9))]
    db.close()


def test_preview_shows_the_next_digest_without_recording(db, clock: FakeClock) -> None:
    start_older(db, clock)
    follow(db, clock, mode="weekly", keyword="LLM")
    store_pages(db, [seed_page(SURVEY), seed_page(TECH)], clock)
    [(digest, at)] = digests.preview_digests(db, Place(G, CH, None), clock())
    assert digest.mode == "weekly" and at == utc(2026, 11, 2, 9)
    assert all("llm" in c.title.lower() for s in digest.sections for c in s.citers)
    assert db["digests"].count == 0
    assert digests.preview_digests(db, Place(G, CH + 5, None), clock()) == []
