"""End to end: `mapwatch run` (run_all) against the fake Discord and loopback fakes of arXiv,
OpenAlex and Semantic Scholar. A tick's new citers are described before their alerts go out:
the alert names their authors, marks the self-citation (a names-only arXiv byline against the
tracked person's OpenAlex id), leaves it out under `self:hide`, quotes the citing sentence with
its intent and influence; a hostile byline neither pings nor breaks it. With the sources slower
than the bound, the alert goes out at once without authors and is edited in place (a PATCH of
the same message) once they come; nothing is posted twice."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mapwatch.service.run import run_all
from mapwatch.service.settings import RunSettings
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.pages.parse import parse_page
from mapwatch.store.scholarly.enrich import EnrichSettings
from mapwatch.store.scholarly.polite import POLITENESS, Politeness
from mapwatch.store.scholarly.saved import save_openalex
from mapwatch.store.subscriptions import people_tracks, tracking
from tests import openapi_check
from tests.author_helpers import HOSTILE, SURVEY, WANG, work
from tests.fakediscord import FakeDiscord
from tests.fakediscord.payloads import FakeChannel, snowflake
from tests.scholarly_fakes import ArxivEntry, ScholarlyFakes, s2_citation, serve_scholarly
from tests.waiting import async_wait_until

pytest_plugins = ["tests.fakediscord.fixtures"]

SOURCES = ("arxiv", "openalex", "s2")
SENTENCE = "We adopt the reward model of [12] for our agent."


def _new_citers() -> list[str]:
    """The survey's last three listed citers: what `make_older_seeds(3)` leaves out."""
    page = parse_page((SEEDS_DIR / f"{SURVEY}.txt").read_bytes())
    assert page.built_on_by is not None
    return [it.id for it in page.built_on_by.items[-3:]]


def _fakes(own: str, hostile: str, plain: str, *, slow: float | None = None) -> ScholarlyFakes:
    fakes = ScholarlyFakes(slow_seconds=slow or 0.0)
    fakes.arxiv[own] = ArxivEntry("Our own follow-up", [("S. Wang", ["Zhejiang University"]), ("Ana Lima", [])])
    fakes.arxiv[hostile] = ArxivEntry("Someone else's", [(HOSTILE, []), ("<@&222> Eve", [])])
    fakes.arxiv[plain] = ArxivEntry("A third paper", [("Bo Chen", ["MIT"]), ("Ai Ito", []), ("Li Na", []),
                                                      ("Oskar Berg", [])])
    fakes.s2[SURVEY] = [s2_citation(hostile, [SENTENCE, "A second sentence.", "A third one."], ["methodology"], True),
                        s2_citation(plain, [], ["background"], False)]
    if slow is not None:
        fakes.down(how="slow")
    return fakes


def _start(tmp_path: Path, make_older_seeds, clock, fake: FakeDiscord) -> tuple[Path, dict[str, int]]:
    db_path = tmp_path / "m.db"
    db = open_db(db_path)
    ingest_paths(db, [make_older_seeds(3)], clock=clock)
    save_openalex(db, [work(SURVEY, WANG)], [SURVEY], clock())  # the tracked person's paper, by OpenAlex id
    channels = {name: fake.guild.channel(name).id for name in ("alerts", "general")}
    people = FakeChannel(snowflake(), "people", fake.guild.id, position=2)
    fake.guild.channels.append(people)  # before the bot connects: the guild it receives holds it
    channels["people"] = people.id
    tracking.add_track(db, guild_id=fake.guild.id, channel_id=channels["alerts"], user_id=None, paper_id=SURVEY,
                       created_by=fake.user.id, now=clock())
    tracking.add_track(db, guild_id=fake.guild.id, channel_id=channels["general"], user_id=None, paper_id=SURVEY,
                       created_by=fake.user.id, now=clock(), hide_self=True)
    people_tracks.add_subject_track(db, guild_id=fake.guild.id, channel_id=people.id, user_id=None,
                                    author_key=WANG.author_id, created_by=fake.user.id, now=clock())
    db.close()
    return db_path, channels


def _settings(db_path: Path, tmp_path: Path, fake: FakeDiscord, fakes: ScholarlyFakes, before: float) -> RunSettings:
    politeness = {s: Politeness(0.01, timeout=20.0) for s in POLITENESS}
    enrich = EnrichSettings(SOURCES, fakes.apis(), "team@example.org", politeness=politeness)
    return RunSettings(db_path=db_path, source=str(SEEDS_DIR), out_dir=tmp_path / "out", port=0, refresh="1h",
                       enrich=enrich, before_alerts=before, token=fake.token, alert_interval=0.2,
                       client_kwargs={"guild_ready_timeout": 0.05})


def _line(desc: str, pid: str) -> str:
    """The lines of a citer's entry: from the one naming its id to the next entry."""
    lines = desc.splitlines()
    start = next(i for i, line in enumerate(lines) if pid in line)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("•")), len(lines))
    return "\n".join(lines[start:end])


async def test_an_alert_names_its_new_citers_authors_in_the_tick(
        fake_discord: FakeDiscord, tmp_path: Path, make_older_seeds, clock) -> None:
    fake = fake_discord
    own, hostile, plain = _new_citers()
    db_path, ch = _start(tmp_path, make_older_seeds, clock, fake)
    with serve_scholarly(_fakes(own, hostile, plain)) as fakes:
        stop = asyncio.Event()
        task = asyncio.create_task(run_all(_settings(db_path, tmp_path, fake, fakes, 20.0), say=lambda _: None,
                                           stop=stop))
        try:
            [full] = await fake.wait_channel_messages(ch["alerts"], 1, timeout=30)
            [hidden] = await fake.wait_channel_messages(ch["general"], 1, timeout=30)
            [person] = await fake.wait_channel_messages(ch["people"], 1, timeout=30)
        finally:
            stop.set()
            await asyncio.wait_for(task, 15)
    # arXiv was asked about the three new citers before anything was posted.
    asked = [r for r in fakes.seen("arxiv") if set(r.query.get("id_list", "").split(",")) >= {own, hostile, plain}]
    assert asked, [r.query for r in fakes.seen("arxiv")]
    assert fakes.seen("s2"), "Semantic Scholar was asked for the tracked paper's new citations"

    desc = full.embed["description"]
    assert full.embed["title"].endswith(": 3 new citers")
    mine = _line(desc, own)
    assert "↺ self-citation" in mine and "S. Wang, Ana Lima (Zhejiang University)" in mine
    theirs = _line(desc, hostile)
    assert "↺ self-citation" not in theirs
    assert "@everyone" not in desc and "<@&222>" not in desc  # escaped: no ping, no broken markup
    assert "> “We adopt the reward model of \\[12\\] for our agent.”" in theirs  # Markdown escaped
    assert "> “A second sentence.”" in theirs and "A third one" not in theirs  # two sentences at most
    assert "— Semantic Scholar · uses your method · influential citation" in theirs
    third = _line(desc, plain)
    assert "Bo Chen, Ai Ito, Li Na et al. (MIT)" in third and "— Semantic Scholar · background" in third
    for msg in (full, hidden, person):
        assert msg.allowed_mentions["parse"] == [] and not msg.allowed_mentions.get("roles")

    left = hidden.embed["description"]
    assert own not in left and hostile in left and plain in left
    assert "1 self-citation left out (self:hide)." in left

    said = person.embed["description"]
    assert "Shuhe Wang" in person.content and "S. Wang, Ana Lima" in _line(said, own)
    assert "↺ self-citation" in _line(said, own)

    for channel in ch.values():  # one post each, none edited: nothing was missing
        assert len(fake.requests_to("POST", f"/channels/{channel}/messages")) == 1
    assert not [r for r in fake.requests if r.method == "PATCH" and "/messages/" in r.path]
    assert openapi_check.recorded_errors(fake.requests) == []


async def test_sources_slower_than_the_bound_alert_at_once_then_edit_in_place(
        fake_discord: FakeDiscord, tmp_path: Path, make_older_seeds, clock) -> None:
    fake = fake_discord
    own, hostile, plain = _new_citers()
    db_path, ch = _start(tmp_path, make_older_seeds, clock, fake)
    with serve_scholarly(_fakes(own, hostile, plain, slow=2.0)) as fakes:
        stop = asyncio.Event()
        task = asyncio.create_task(run_all(_settings(db_path, tmp_path, fake, fakes, 0.5), say=lambda _: None,
                                           stop=stop))
        try:
            [sent] = await fake.wait_channel_messages(ch["alerts"], 1, timeout=30)
            before = sent.embed["description"]
            assert "Ana Lima" not in before and "Semantic Scholar" not in before  # out without the sources
            # The tick's enrichment round gets the answers (2 s each); the next delivery round edits.
            edits = f"/channels/{ch['alerts']}/messages/{sent.id}"
            await async_wait_until(lambda: fake.requests_to("PATCH", edits), 40,
                                   what="the alert edited with its citers' authors")
            await async_wait_until(lambda: fake.requests_to("PATCH", f"/channels/{ch['people']}/messages/*"), 20,
                                   what="the person track's alert edited too")
        finally:
            stop.set()
            await asyncio.wait_for(task, 15)
    edits = f"/channels/{ch['alerts']}/messages/{sent.id}"
    [edited] = fake.channel_messages(ch["alerts"])
    assert edited.id == sent.id
    after = edited.embed["description"]
    assert "S. Wang, Ana Lima" in _line(after, own) and "↺ self-citation" in _line(after, own)
    assert "ref t" in edited.embed["footer"]["text"]  # the marker kept: a resend still finds it
    for channel in ch.values():  # posted once; edits are PATCHes of that message
        assert len(fake.requests_to("POST", f"/channels/{channel}/messages")) == 1
    assert {r.path for r in fake.requests_to("PATCH", f"/channels/{ch['alerts']}/messages/*")} == {edits}
    [person] = fake.channel_messages(ch["people"])
    assert "S. Wang, Ana Lima" in _line(person.embed["description"], own)
    assert openapi_check.recorded_errors(fake.requests) == []
