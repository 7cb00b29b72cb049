"""`intent:` on /track and /follow alerts only on the citations Semantic Scholar gives that
intent; the others, and those it has not classified, are left out and counted. /citers and a
paper's web page show the intents as words."""

from __future__ import annotations

import pytest

from mapwatch.bot.commands.follow import follow_core
from mapwatch.bot.commands.papers import citers_core
from mapwatch.bot.commands.tracking import track_core
from mapwatch.bot.rendering import render_follow
from mapwatch.feeds import paper_files
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.errors import BadOption
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.questions import queries
from mapwatch.store.records import CitationContext
from mapwatch.store.scholarly.saved import save_contexts
from mapwatch.store.subscriptions import follows, tracking
from tests.bot_helpers import ctx

SURVEY = "2412.10400"
RLHF = "alignment/reward-modeling-and-rlhf"


def _grown(db, clock, make_older_seeds) -> list[str]:
    """The seeds before the survey's three newest citers; returns the newest event then."""
    ingest_paths(db, [make_older_seeds(3)], clock=clock)
    before = db.conn.execute("SELECT max(id) FROM events").fetchone()[0]
    return before


def _new(db, after: int) -> list[str]:
    return [r[0] for r in db.conn.execute("SELECT citing_id FROM events WHERE id > ? AND paper_id = ?"
                                          " AND kind = 'citation' ORDER BY id", [after, SURVEY])]


def _classify(db, clock, said: dict[str, tuple[str, ...]]) -> None:
    save_contexts(db, SURVEY, [CitationContext(c, SURVEY, ("They cite it.",), intents, c.endswith("7"))
                               for c, intents in said.items()], clock(), mark=False)


def test_a_track_with_an_intent_alerts_only_on_it(db, clock, make_older_seeds) -> None:
    after = _grown(db, clock, make_older_seeds)
    reply = track_core(db, ctx(), paper=SURVEY, intent="methodology")
    assert "only citations whose intent is methodology" in reply.content
    plain = track_core(db, ctx(channel=999), paper=SURVEY)
    assert "intent" not in plain.content
    clock.advance(days=1)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    uses, background, unknown = _new(db, after)
    _classify(db, clock, {uses: ("methodology", "background"), background: ("background",)})
    by_channel = {a.track.channel_id: a for a in tracking.pending_alerts(db)}
    mine = by_channel[222]
    assert [c.id for c in mine.new_citers] == [uses]
    assert (mine.other_intent, mine.unclassified, mine.more) == (1, 1, 0)
    desc = render_follow.track_alert(mine).embeds[0].description
    assert "1 citation of another intent and 1 Semantic Scholar has not classified yet left out " \
           "(intent:methodology)." in desc
    assert "— Semantic Scholar · uses your method · background" in desc
    assert len(by_channel[999].new_citers) == 3  # the plain track: every citation, as before
    assert unknown not in desc and background not in desc


def test_an_intent_no_citation_has_is_a_quiet_alert(db, clock, make_older_seeds) -> None:
    after = _grown(db, clock, make_older_seeds)
    track_core(db, ctx(), paper=SURVEY, intent="result")
    clock.advance(days=1)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    _classify(db, clock, {c: ("background",) for c in _new(db, after)})
    [alert] = tracking.pending_alerts(db)
    assert alert.quiet and alert.other_intent == 3  # nothing to say: skipped, its cursor moved


def test_a_follow_with_an_intent(db, clock, make_older_seeds) -> None:
    after = _grown(db, clock, make_older_seeds)
    follow_core(db, ctx(), direction=RLHF, intent="background")
    clock.advance(days=1)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    new = _new(db, after)
    _classify(db, clock, {new[0]: ("background",), new[1]: ("result",)})
    [news] = [n for n in follows.pending_follow_alerts(db) if n.total or n.unclassified or n.other_intent]
    assert {c.id for c in news.citers} == {new[0]}
    assert news.other_intent == 1 and news.unclassified >= 1
    desc = render_follow.follow_alert(news).embeds[0].description
    assert "left out (intent:background)." in desc


def test_intent_is_checked_and_only_for_papers_and_follows(db, clock, seeded) -> None:
    with pytest.raises(BadOption, match="intent is methodology, background or result"):
        track_core(db, ctx(), paper=SURVEY, intent="praise")
    with pytest.raises(BadOption, match="applies to a paper's track"):
        track_core(db, ctx(), author="A5023888391", intent="methodology")


def test_citers_and_the_paper_page_say_the_intents(db, clock, seeded) -> None:
    citer = queries.citers(db, SURVEY, sort="newest").items[0].id  # the first one the answer lists
    save_contexts(db, SURVEY, [CitationContext(citer, SURVEY, (), ("methodology",), True)], clock(), mark=False)
    reply = citers_core(db, ctx(), paper=SURVEY, sort="newest")
    text = "\n".join(e.description for e in reply.embeds)
    line = next(line for line in text.splitlines() if citer in line)
    assert line.endswith(" · uses its method · influential")
    data = paper_files.paper_data(db, SURVEY, 100)
    assert data is not None
    page = paper_files.paper_page(data, "http://feeds.example", 0, lambda _p: False).decode()
    assert '<span class="intent" title="Semantic Scholar">uses its method · influential</span>' in page
