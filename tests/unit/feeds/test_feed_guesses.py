"""A team's feed address cannot be guessed (tests/RELIABILITY.md, section 20, item 5): 160
random bits for a new team and, by migration 0035, for every team made before (whose old
address then answers 404 like any other); and a client guessing addresses of the feed server
is bounded: after its burst of 404s it gets 429 with Retry-After on everything that needs a
lookup, while the published feeds answer it as always and other clients are not touched.
Real HTTP on loopback, the second client from 127.0.0.2."""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from collections import Counter
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import aiohttp
import pytest
from sqlite_utils import Database

from mapwatch.bot.commands import run_core
from mapwatch.feeds.publish import publish
from mapwatch.feeds.serving.connections import Limits
from mapwatch.feeds.serving.ondemand import PaperCache
from mapwatch.feeds.serving.server import start_server
from mapwatch.store.clock import parse_iso
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.database.migrations import migrations
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.questions import teams as people
from mapwatch.store.subscriptions import teams
from tests.bot_helpers import ctx
from tests.conftest import FakeClock

RL = "lr/reinforcement-learning-for-reasoning"
SURVEY = "2412.10400"
NEW_ADDRESS = re.compile(r"^[a-z0-9-]{1,40}-[a-z2-7]{32}$")  # the slug, 160 bits in base 32


# -- the address ------------------------------------------------------------------------------

def test_a_new_teams_address_holds_160_random_bits(db_path: Path, clock: FakeClock) -> None:
    db = open_db(db_path)
    made = [teams.ensure_team(db, guild, "Reading group", 1, clock())[0] for guild in range(1, 21)]
    for team in made:
        assert NEW_ADDRESS.match(team.feed_slug), team.feed_slug
        assert team.feed_slug.startswith("reading-group-") and team.feed_renewed_at is None
    assert len({t.feed_slug for t in made}) == 20
    long, _ = teams.ensure_team(db, 1, "x" * 60, 1, clock())
    assert NEW_ADDRESS.match(long.feed_slug) and len(long.feed_slug) == 73


def at_0034(path: Path) -> Database:
    """A database as the version before migration 0035 left it."""
    db = Database(path)
    migrations.apply(db, stop_before="0035_team_feed_tokens")
    return db


async def test_migration_0035_replaces_every_guessable_address(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "m.db"
    old = at_0034(path)
    old.execute("INSERT INTO teams (guild_id, slug, name, feed_slug, created_at, created_by) VALUES"
                " (111, 'lab', 'Lab', 'lab-3f9a1c2e', '2026-10-01T00:00:00+00:00', 1),"
                " (222, 'lab', 'Lab', 'lab-0b1d4e77', '2026-10-01T00:00:00+00:00', 1)")
    old.execute("INSERT INTO team_members (guild_id, team_slug, kind, value, label, added_at) VALUES"
                f" (111, 'lab', 'paper', '{SURVEY}', 'The survey', '2026-10-01T00:00:00+00:00')")
    old.conn.commit()
    old.close()
    db = open_db(path)  # migration 0035 (and those after it)
    ingest_paths(db, [SEEDS_DIR], clock=clock)  # the map, stored by this version
    lab, other = people.get_team(db, 111, "lab"), people.get_team(db, 222, "lab")
    assert lab is not None and other is not None
    for team in (lab, other):
        assert NEW_ADDRESS.match(team.feed_slug) and team.feed_slug.startswith("lab-"), team.feed_slug
        assert team.feed_renewed_at
    assert lab.feed_slug != other.feed_slug and [m.value for m in lab.members] == [SURVEY]
    # /team list gives the new address and says why it changed; after 90 days it no longer says so
    soon = replace(ctx(guild=111), now=parse_iso(lab.feed_renewed_at or "") + timedelta(days=1),
                   can_manage_guild=True)
    listed = run_core(db, soon, "team list", {})[0].embeds[0].description
    assert f"/feeds/teams/{lab.feed_slug}.atom" in listed and "3f9a1c2e" not in listed
    assert "could be guessed and no longer answers" in listed, listed
    added = run_core(db, soon, "team add", {"name": "Lab", "paper": "2507.04136"})[0].content
    assert lab.feed_slug in added and "no longer answers" in added, added
    later = replace(soon, now=soon.now + timedelta(days=91))
    assert "no longer answers" not in run_core(db, later, "team list", {})[0].embeds[0].description
    out = tmp_path / "public"
    publish(db, out, "http://127.0.0.1")
    db.close()
    runner, port = await start_server(out, "127.0.0.1", 0, papers=PaperCache(path, "http://127.0.0.1"))
    try:
        async with aiohttp.ClientSession() as session:
            for address, status in ((f"/feeds/teams/{lab.feed_slug}.atom", 200), (f"/teams/{lab.feed_slug}/", 200),
                                    ("/feeds/teams/lab-3f9a1c2e.atom", 404), ("/teams/lab-3f9a1c2e/", 404)):
                async with session.get(f"http://127.0.0.1:{port}{address}") as r:
                    assert r.status == status, address
    finally:
        await runner.cleanup()


# -- a client guessing addresses -----------------------------------------------------------------

@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("guesses")
    db = open_db(tmp / "m.db")
    ingest_paths(db, [SEEDS_DIR], clock=FakeClock())
    team, _ = teams.ensure_team(db, 7, "Lab", 1, FakeClock()())
    teams.add_member(db, team, "paper", SURVEY, "The survey", 1, FakeClock()())
    publish(db, tmp / "public", "http://127.0.0.1")
    db.close()
    return tmp / "public", team.feed_slug


def session_from(address: str) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(address, 0)))


async def test_a_guessing_client_gets_429_and_the_published_feeds_and_other_clients_do_not(
        site: tuple[Path, str]) -> None:
    out, slug = site
    limits = Limits(not_found_burst=20, not_found_per_second=4.0)
    seconds = [1_000.0]  # the buckets' clock: it moves when the test moves it, whatever the machine's load
    runner, port = await start_server(out, "127.0.0.1", 0, papers=PaperCache(out.parent / "m.db", "http://127.0.0.1"),
                                      limits=limits, clock=lambda: seconds[0])
    base = f"http://127.0.0.1:{port}"
    team_feed = f"/feeds/teams/{slug}.atom"
    try:
        async with session_from("127.0.0.1") as guesser, session_from("127.0.0.2") as reader:
            # a reader polling what it was given is never bounded: 200s and 304s cost nothing
            tag = ""
            for _ in range(60):
                async with reader.get(base + team_feed, headers={"If-None-Match": tag} if tag else {}) as r:
                    assert r.status in (200, 304), r.status
                    tag = r.headers["ETag"]
            seen: Counter[int] = Counter()
            retry_after = []
            for k in range(60):
                if k == 30:
                    seconds[0] += 1.0  # a second passes among the guesses: 4 tokens come back
                async with guesser.get(f"{base}/feeds/teams/lab-{secrets.token_hex(4)}.atom") as r:
                    seen[r.status] += 1
                    if r.status == 429:
                        retry_after.append(int(r.headers["Retry-After"]))
                        assert r.headers["Cache-Control"] == "no-store" and r.headers["X-Frame-Options"] == "DENY"
            assert seen == {404: 24, 429: 36} and min(retry_after) >= 1, seen
            # the bounded client: the published feeds and pages answer as always, 200 and 304
            for path in (f"/feeds/{RL}.atom", "/", "/feeds.opml", f"/directions/{RL}/"):
                async with guesser.get(base + path) as r:
                    assert r.status == 200, path
                    etag = r.headers["ETag"]
                async with guesser.get(base + path, headers={"If-None-Match": etag}) as r:
                    assert r.status == 304, path
            # anything that needs a lookup is 429 before the lookup: a right guess looks like a wrong one
            for path in (team_feed, f"/feeds/papers/{SURVEY}.atom", "/feeds/teams/lab-00000000.atom"):
                async with guesser.get(base + path, headers={"If-None-Match": "*"}) as r:
                    assert r.status == 429, path
            # another client is not touched: its 200s, and its own first 404
            async with reader.get(base + team_feed) as r:
                assert r.status == 200
            async with reader.get(f"{base}/feeds/teams/lab-{secrets.token_hex(4)}.atom") as r:
                assert r.status == 404
            # once its bucket has a token again (Retry-After), the guesser is answered again
            async with guesser.get(base + team_feed) as r:
                assert r.status == 429
                wait = int(r.headers["Retry-After"])
            async with guesser.get(base + team_feed) as r:
                assert r.status == 429  # the time does not move: still refused
            seconds[0] += wait  # the time it was told to wait (whole seconds, rounded up)
            async with guesser.get(base + team_feed) as r:
                assert r.status == 200
    finally:
        await runner.cleanup()


async def test_guesses_in_flight_at_once_are_bounded_too(site: tuple[Path, str]) -> None:
    """50 connections guessing at once: no more lookups than the burst (and what refilled)."""
    out, _ = site
    runner, port = await start_server(out, "127.0.0.1", 0, papers=PaperCache(out.parent / "m.db", "http://127.0.0.1"),
                                      limits=Limits(not_found_burst=20, not_found_per_second=1.0))
    seen: Counter[int] = Counter()
    try:
        connector = aiohttp.TCPConnector(limit=50)
        async with aiohttp.ClientSession(connector=connector) as session:
            async def one() -> None:
                for _ in range(6):
                    async with session.get(f"http://127.0.0.1:{port}/feeds/teams/lab-{secrets.token_hex(4)}.atom") as r:
                        seen[r.status] += 1

            started = time.monotonic()
            await asyncio.gather(*(one() for _ in range(50)))
            took = time.monotonic() - started
    finally:
        await runner.cleanup()
    assert sum(seen.values()) == 300 and 20 <= seen[404] <= 20 + int(took) + 1, (seen, took)


async def test_no_bound_when_the_burst_is_zero(site: tuple[Path, str]) -> None:
    out, _ = site
    runner, port = await start_server(out, "127.0.0.1", 0, limits=Limits(not_found_burst=0))
    try:
        async with aiohttp.ClientSession() as session:
            for i in range(150):
                async with session.get(f"http://127.0.0.1:{port}/no/such/{i}.html") as r:
                    assert r.status == 404
    finally:
        await runner.cleanup()


# -- the buckets ---------------------------------------------------------------------------------

class Ticks:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_refills_at_its_rate_and_a_full_one_is_forgotten() -> None:
    from mapwatch.feeds.serving.guesses import Guesses

    ticks = Ticks()
    g = Guesses(burst=3, per_second=0.5, clients=10, clock=ticks)
    assert g.take("a") is None
    g.give_back("a")  # a 200: nothing spent, nothing kept
    assert len(g) == 0
    for _ in range(3):
        assert g.take("a") is None  # three 404s
    assert g.take("a") == 2 and g.refused == 1  # one token takes 2 s
    ticks.now += 1.0
    assert g.take("a") == 1
    ticks.now += 1.0
    assert g.take("a") is None and len(g) == 1
    g.give_back("a")
    ticks.now += 10.0
    assert g.take("a") is None
    g.give_back("a")
    assert len(g) == 0  # full again: forgotten


def test_lookups_in_flight_at_once_hold_a_token_each() -> None:
    from mapwatch.feeds.serving.guesses import Guesses

    g = Guesses(burst=5, per_second=0.001, clock=Ticks())
    assert [g.take("a") is None for _ in range(8)] == [True] * 5 + [False] * 3
    for _ in range(5):
        g.give_back("a")  # all five were 200s
    assert g.take("a") is None


def test_the_table_of_clients_is_bounded_least_recently_missed_first_out() -> None:
    from mapwatch.feeds.serving.guesses import Guesses

    g = Guesses(burst=1, per_second=0.001, clients=100, clock=Ticks())
    for i in range(1000):
        assert g.take(f"10.0.{i // 256}.{i % 256}") is None
    assert len(g) == 100
    assert g.take("10.0.3.231") is not None and g.take("10.0.0.0") is None  # the newest kept


def test_a_client_is_its_ipv4_address_or_its_ipv6_64() -> None:
    from mapwatch.feeds.serving.guesses import client_key

    assert client_key("127.0.0.2") == "127.0.0.2"
    assert client_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert client_key("2001:db8:1:2:aaaa::1") == client_key("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert client_key("2001:db8:1:3::1") != client_key("2001:db8:1:2::1")
    assert client_key("fe80::1%eth0") == "fe80::/64" and client_key(None) == "" and client_key("") == ""
