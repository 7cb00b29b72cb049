"""`/why PAPER CITER` as the bot answers it: the core and its rendering on the bundled seeds (each
provenance named with its first-seen date; the reasons for a missing citation; malformed ids;
Discord's limits; hostile text escaped), `mapwatch ask`'s parsing, and end to end against the fake
Discord."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from mapwatch.bot.client import MapwatchBot
from mapwatch.bot.commands import run_core
from mapwatch.bot.rendering.replies import Reply
from mapwatch.bot.rendering.text import embed_size
from mapwatch.cli.ask import parse_slash
from mapwatch.store.database.db import open_db
from mapwatch.store.records import FoundCiter
from mapwatch.store.scholarly.discovered import save_found_citers
from mapwatch.store.scholarly.saved import save_status
from mapwatch.store.settings_table import SourceSettings
from tests import openapi_check
from tests.bot_helpers import ctx
from tests.fakediscord import FakeDiscord

pytest_plugins = ["tests.fakediscord.fixtures"]

SURVEY, LISTED, TECH, REF, NEW = "2412.10400", "2506.12217", "2507.04136", "2005.14165", "2610.04321"
HOSTILE = "HTTP 500: @everyone [click](https://evil.example) *now* <@123>"


def ask(db, paper: str, citer: str, sources: SourceSettings | None = None) -> tuple[Reply, bool]:
    c = ctx() if sources is None else replace(ctx(), sources=sources)
    reply, ok = run_core(db, c, "why", {"paper": paper, "citer": citer})
    assert len(reply.embeds) <= 1 and len(reply.content) <= 2000
    for e in reply.embeds:
        assert len(e.title) <= 256 and len(e.description) <= 4096 and len(e.footer) <= 2048
        assert embed_size(e) <= 6000
    return reply, ok


def test_the_map_names_its_page_and_snapshot_with_the_date(seeded) -> None:
    r, ok = ask(seeded, "2412.10400", "https://arxiv.org/abs/2506.12217v1")
    assert ok and not r.ephemeral
    e = r.embeds[0]
    assert e.title == "2506.12217 cites 2412.10400"
    assert "Known since 1 Nov 2026 12:00 UTC." in e.description
    assert ("• **The map**: `2412.10400`'s page, its “Built on by” list · snapshot 1 (data through 14 Oct 2026),"
            " first seen 1 Nov 2026 12:00 UTC") in e.description
    assert "[Reinforcement Learning Enhanced LLMs: A Survey](https://mlsanity.com/paper/2412.10400/)" in e.description
    assert "Why" not in e.description
    r, _ = ask(seeded, REF, "arXiv:2507.04136v2")
    d = r.embeds[0].description
    assert "`2507.04136`'s page, its “Builds on” list · snapshot 2 (data through 14 Oct 2026)" in d


def test_each_source_is_named_with_the_day_it_first_said_so(seeded, clock) -> None:
    save_found_citers(seeded, SURVEY, "s2", [], clock())  # the baseline answer
    save_found_citers(seeded, SURVEY, "openalex", [], clock())
    clock.advance(days=2)
    save_found_citers(seeded, SURVEY, "s2", [FoundCiter(NEW, "A New Citer", 2026)], clock())
    clock.advance(days=1)
    save_found_citers(seeded, SURVEY, "openalex", [FoundCiter(NEW), FoundCiter(LISTED)], clock())
    r, ok = ask(seeded, SURVEY, NEW)
    d = r.embeds[0].description
    assert ok and "Known since 3 Nov 2026 12:00 UTC, from Semantic Scholar: no map page names it yet." in d
    assert "• **Semantic Scholar**: first said so 3 Nov 2026 12:00 UTC" in d
    assert "• **OpenAlex**: first said so 4 Nov 2026 12:00 UTC" in d
    assert "**Why no map page names it**" in d and "lists 30 of its 71 citers" in d
    assert "[A New Citer](https://arxiv.org/abs/2610.04321)" in d  # its stub, from the source's title
    d = ask(seeded, SURVEY, LISTED)[0].embeds[0].description
    assert "• **The map**" in d and "• **OpenAlex**: first said so 4 Nov 2026 12:00 UTC" in d


def test_a_missing_citation_gives_its_reasons(seeded, clock) -> None:
    r, ok = ask(seeded, SURVEY, NEW)
    e = r.embeds[0]
    assert ok and e.title == "2610.04321 cites 2412.10400?" and "mapwatch does not know this citation." in e.description
    assert "**Citing:** `2610.04321` (not in the map)" in e.description
    assert ("• `2412.10400`'s page lists 30 of its 71 citers (most cited first, data through 14 Oct 2026): the"
            " citation may be among the 41 it does not name.") in e.description
    assert "• `2610.04321` is not in the map" in e.description
    assert "OpenAlex has not matched `2412.10400` to a work yet" in e.description
    assert "never for `2412.10400`" in e.description
    assert e.footer == "Sources asked for citers here: OpenAlex, Semantic Scholar · MAPWATCH_SOURCE_CITATIONS=include"
    # the sources off here, and a failed fetch stored before (its reason escaped: no ping, no link)
    save_status(seeded, [SURVEY], "s2", "failed", clock() - timedelta(hours=2), HOSTILE)
    r, _ = ask(seeded, SURVEY, NEW, SourceSettings(sources=()))
    d = r.embeds[0].description
    assert "No source is asked for citers here (MAPWATCH_ENRICH=off)" in d and "never for" not in d
    assert "Semantic Scholar's last fetch of `2412.10400` failed on 1 Nov 2026 10:00 UTC: HTTP 500:" in d
    assert "@everyone" not in d and "[click](https" not in d and "<@123>" not in d
    assert r.embeds[0].footer.startswith("Sources asked for citers here: none")
    # a page that lists all its citers; a citer that has no page of its own
    d = ask(seeded, TECH, LISTED)[0].embeds[0].description
    assert "`2507.04136`'s page lists all 21 of its citers (data through 14 Oct 2026), and not `2506.12217`" in d
    assert "`2506.12217` has no map page of its own yet (a stub)" in d
    # held back by omit
    save_found_citers(seeded, SURVEY, "s2", [], clock())
    save_found_citers(seeded, SURVEY, "s2", [FoundCiter("2610.05555")], clock(), include=False)
    d = ask(seeded, SURVEY, "2610.05555", SourceSettings(citations="omit"))[0].embeds[0].description
    assert "A source says so, but mapwatch's citations do not hold it yet." in d
    assert "held back: MAPWATCH_SOURCE_CITATIONS=omit" in d


def test_malformed_ids_and_one_paper_twice_are_errors_only_the_asker_sees(seeded) -> None:
    for paper, citer, said in (("2412.1040", LISTED, "“2412.1040” cannot be an arXiv id"),
                               (SURVEY, "2613.00001", "“2613.00001” cannot be an arXiv id"),
                               (SURVEY, "arXiv:12.3/4", "is not an arXiv id"),
                               (SURVEY, "https://arxiv.org/abs/2412.10400v4", "Both are 2412.10400"),
                               (SURVEY, "no such title in the map at all", "No paper matches")):
        r, ok = ask(seeded, paper, citer)
        assert not ok and r.ephemeral and said in r.content, (paper, citer, r.content)
    r, ok = ask(seeded, "hep-th/9901001v2", SURVEY)  # old style, not in the map: an answer
    assert ok and "`hep-th/9901001` is not in the map" in r.embeds[0].description


def test_many_reasons_stay_within_discord_limits(seeded) -> None:
    from mapwatch.bot.rendering.render_why import why_card
    from mapwatch.store.questions.why import why

    a = why(seeded, SURVEY, NEW)
    many = replace(a, reasons=a.reasons * 60)
    e = why_card(many).embeds[0]
    assert len(e.description) <= 4096 and e.description.endswith("more")


def test_ask_parses_both_papers() -> None:
    assert parse_slash("/why 2412.10400 2506.12217") == ("why", {"paper": "2412.10400", "citer": "2506.12217"})
    assert parse_slash("/why citer:2506.12217 paper:https://arxiv.org/abs/2412.10400v2") == (
        "why", {"citer": "2506.12217", "paper": "https://arxiv.org/abs/2412.10400v2"})


async def test_why_end_to_end(fake_discord: FakeDiscord, seeded_path: Path) -> None:
    db = open_db(seeded_path)
    save_found_citers(db, SURVEY, "s2", [], ctx().now)
    save_found_citers(db, SURVEY, "s2", [FoundCiter(NEW, "A New Citer", 2026)], ctx().now + timedelta(days=1))
    db.close()
    bot = MapwatchBot(seeded_path, base_url="http://feeds.example", guild_ready_timeout=0.05, alert_interval=60,
                      sources=SourceSettings(sources=("arxiv", "s2")))
    async with fake_discord.connected(bot):
        synced = {c["name"]: c for c in fake_discord.commands()}
        assert [o["name"] for o in synced["why"]["options"]] == ["paper", "citer"]
        assert all(o.get("autocomplete") for o in synced["why"]["options"])
        choices = await fake_discord.autocomplete("why", {"paper": SURVEY, "citer": "2506"}, focused="citer")
        assert "2506.12217" in [c["value"] for c in choices]
        h = await fake_discord.slash("why", {"paper": SURVEY, "citer": LISTED})
        msg = await h.wait_message()
        assert not h.ephemeral and msg.allowed_mentions == {"parse": []}
        assert msg.embed["title"] == "2506.12217 cites 2412.10400" and "“Built on by” list" in msg.embed["description"]
        h = await fake_discord.slash("why", {"paper": SURVEY, "citer": NEW}, installed="user")
        msg = await h.wait_message()
        assert "• **Semantic Scholar**: first said so 3 Nov 2026 00:00 UTC" in msg.embed["description"]
        assert msg.embed["footer"]["text"].startswith("Sources asked for citers here: Semantic Scholar ·")
        h = await fake_discord.slash("why", {"paper": SURVEY, "citer": "2412.1040"})
        msg = await h.wait_message()
        assert h.ephemeral and "cannot be an arXiv id" in msg.content
    assert openapi_check.recorded_errors(fake_discord.requests) == []
