"""Citations the map never names, as the open sources tell them (docs/enrichment.md, "Citations
the map does not name"), checked before they are stored.

A map page lists only its 30 most cited citers and references, so some citations appear on no
page. Semantic Scholar (a tracked or team paper's citers) and OpenAlex (the new arXiv works of a
day, with their references) can name them. What a source says is kept in `source_citations`;
a citation no map page names yet also enters `citations` with its source as `provenance`, with
its event (so feeds and alerts carry it once), unless $MAPWATCH_SOURCE_CITATIONS is `omit`. The
citing paper gets a stub row (`has_page` 0), which queues its map page for the next tick; a
citer beyond arXiv (keyed by DOI, store/ids.py) gets one too, with what OpenAlex says of it, and
no map page is asked for it (the map has pages of arXiv papers only).

What a source says can only add: a stored paper's title is never overwritten, a map citation
is never re-labelled, and a citation with an impossible id (a month after today, self-citing, a
cited paper the map does not have) is dropped and counted. The first answer a source gives
about a paper is its baseline: its citers were there before mapwatch asked, so they are kept in
`source_citations` only, not announced as new; so is a later answer's backlog (what Semantic
Scholar names of a paper past MAX_NEW_PER_ANSWER new citers). How much a source may add in a
round and a day is bounded at the scale of the map (store/scholarly/budget.py): past it, the
rest is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal, get_args

from sqlite_utils import Database

from mapwatch.store.clock import iso, unix_seconds
from mapwatch.store.database.event_batches import record_batch
from mapwatch.store.database.paper_keys import keys_of
from mapwatch.store.database.rows import next_ids, one_column, rows_in_chunks
from mapwatch.store.ids import arxiv_url, is_outside_key, paper_label, possible_key, posted_key
from mapwatch.store.records import FoundCiter, Provenance
from mapwatch.store.scholarly.budget import Budget
from mapwatch.store.scholarly.saved import known_papers, save_outside_works
from mapwatch.store.scholarly.versions import canonical

FindingSource = Literal["openalex", "s2"]
PROVENANCES: tuple[Provenance, ...] = get_args(Provenance)
MAX_NEW_PER_ANSWER = 2_000  # new citations one source's answer about one paper may add
# Semantic Scholar lists a paper's citers, old and new, in an order of its own, so an answer naming
# more new citers of a paper than one answer may add (its list grew at once: records merged, a
# paper it did not know) holds a backlog, not news: past MAX_NEW_PER_ANSWER, the oldest (by arXiv
# id) are kept as baseline, like a first answer, and never announced. The backlog is absorbed by
# the answer that names it, not fed in 2,000 a round. OpenAlex's new works are new by their
# publication day: what one answer cannot add of them waits for the next.
BACKLOG_SOURCES: frozenset[FindingSource] = frozenset({"s2"})
UNBOUNDED = 2**62  # the room of an answer saved without a budget


@dataclass
class Findings:
    """What one answer added: new citations (in `citations` or, with `omit` or past a bound,
    held back), the baseline kept, the citers dropped as impossible, and those left out past
    the source's bounds."""

    new: int = 0
    held: int = 0
    baseline: int = 0
    dropped: int = 0
    known: int = 0  # already known, from the map or this source
    over: int = 0  # left out: past what the source may still add (store/scholarly/budget.py)


def save_found_citers(db: Database, cited_id: str, source: FindingSource, citers: Sequence[FoundCiter],
                      now: datetime, *, include: bool = True, baseline: bool | None = None,
                      count: int | None = None, budget: Budget | None = None) -> Findings:
    """Store what `source` says cites `cited_id`, in one transaction. `baseline`: whether this
    answer is the source's first about the paper (None: decided by `discovery_asked`); OpenAlex's
    new works are never a baseline. `count`: the source's citation count of the paper, read with
    every page of its citers (kept, with the time: a later round that finds it the same need not
    read them again, store/scholarly/saved.py `same_count`). `budget`: what the source may still
    add (store/scholarly/budget.py); an answer cut short by it is not taken as read in full (a
    baseline cut short stays the first answer: the rest comes as baseline too). A later answer of
    Semantic Scholar naming more new citers than MAX_NEW_PER_ANSWER keeps the rest, the oldest,
    as baseline: a backlog, absorbed at once and never announced."""
    found = Findings()
    conn = db.conn
    with db.atomic():
        if conn.execute("SELECT 1 FROM papers WHERE id = ?", [cited_id]).fetchone() is None:
            found.dropped = len(citers)
            return found
        stamp = iso(now)
        today = now.date()
        if baseline is None:
            baseline = conn.execute("SELECT 1 FROM discovery_asked WHERE paper_id = ? AND source = ?",
                                    [cited_id, source]).fetchone() is None
        good: dict[str, FoundCiter] = {}
        for c in canonical(db, citers, now):  # one citer per work (store/scholarly/versions.py)
            if (c.citing_id == cited_id or not possible_key(c.citing_id, today)
                    or (is_outside_key(c.citing_id) and c.work is None)):  # (a citer beyond arXiv comes with its work)
                found.dropped += 1
            else:
                good.setdefault(c.citing_id, c)
        said = {row["citing_id"] for row in rows_in_chunks(
            conn, "SELECT citing_id FROM source_citations WHERE cited_id = ? AND source = ? AND citing_id IN ({})",
            list(good), [cited_id, source])}
        fresh = [c for pid, c in good.items() if pid not in said]
        backlog = set() if baseline else _backlog(source, fresh)
        if backlog:  # kept first, so that what a bound cuts off is news, named again in the next answer
            fresh = [c for c in fresh if c.citing_id in backlog] + [c for c in fresh if c.citing_id not in backlog]
        room, stub_room = budget.room(db, today) if budget is not None else (UNBOUNDED, UNBOUNDED)
        cut = len(fresh) > room
        if cut:
            assert budget is not None
            found.over = len(fresh) - room
            fresh = fresh[:room]
            budget.cut(db, today, "citations")
        if not (cut and baseline):
            conn.execute("INSERT INTO discovery_asked (paper_id, source, first_asked, last_asked, citation_count,"
                         " read_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (paper_id, source) DO UPDATE SET"
                         " last_asked = excluded.last_asked, citation_count = excluded.citation_count,"
                         " read_at = excluded.read_at",
                         [cited_id, source, stamp, stamp, None if cut else count, None if cut else stamp])
        conn.executemany("INSERT INTO source_citations (citing_id, cited_id, source, first_seen, baseline)"
                         " VALUES (?, ?, ?, ?, ?)", [(c.citing_id, cited_id, source, stamp,
                                                      int(baseline or c.citing_id in backlog)) for c in fresh])
        if baseline:
            found.baseline = len(fresh)
            found.known = len(good) - len(fresh) - found.over
            _spend(db, budget, today, len(fresh), 0)
            return found
        # What the source said before and no citation holds yet (held back by `omit`, or by a
        # bound, then) comes in too, within what the source may still add.
        waiting = set(one_column(
            conn, "SELECT s.citing_id FROM source_citations s WHERE s.cited_id = ? AND s.source = ? AND s.baseline = 0"
            " AND NOT EXISTS (SELECT 1 FROM citations c WHERE c.citing_id = s.citing_id AND c.cited_id = s.cited_id)",
            [cited_id, source]))
        found.baseline = len([c for c in fresh if c.citing_id in backlog])
        found.known = len(good) - len([pid for pid in good if pid in waiting]) - found.over - found.baseline
        if not include:
            found.held = len(waiting)
            _spend(db, budget, today, len(fresh), 0)
            return found
        titles = {c.citing_id: c for c in fresh}
        older = sorted(waiting - titles.keys())
        if len(older) > room - len(fresh):
            assert budget is not None
            older = older[:room - len(fresh)]
            budget.cut(db, today, "citations")
        new = sorted(waiting & {*titles, *older})[:MAX_NEW_PER_ANSWER]
        known = known_papers(db, new)
        stubs = [pid for pid in new if pid not in known]
        if len(stubs) > stub_room:
            assert budget is not None
            budget.cut(db, today, "stubs")
            left_out = set(stubs[stub_room:])
            stubs = stubs[:stub_room]
            new = [pid for pid in new if pid not in left_out]
        conn.executemany(
            "INSERT OR IGNORE INTO papers (id, title, year, arxiv_url, has_page, first_seen, updated)"
            " VALUES (?, ?, ?, ?, 0, ?, ?)",
            [(pid, _title(titles.get(pid), pid), (t := titles.get(pid)) and t.year,
              None if is_outside_key(pid) else arxiv_url(pid), stamp, stamp) for pid in stubs])
        save_outside_works(db, [w for pid in stubs if is_outside_key(pid) and (t := titles.get(pid)) is not None
                                and (w := t.work) is not None], now)
        first_event = next_ids(conn, "event_log")  # each citation holds its event's id (citations.event_id)
        key = keys_of(conn, [cited_id, *new])  # the tables name papers by key (paper_keys)
        conn.executemany("INSERT INTO event_log (id, paper_key, citing_key, snapshot_id) VALUES (?, ?, ?, NULL)",
                         [(first_event + i, key[cited_id], key[pid]) for i, pid in enumerate(new)])
        conn.executemany("INSERT INTO citation_edges (citing_key, cited_key, first_seen_unix, snapshot_id,"
                         " at_first_read, provenance, event_id) VALUES (?, ?, ?, NULL, 0, ?, ?)",
                         [(key[pid], key[cited_id], unix_seconds(stamp), source, first_event + i)
                          for i, pid in enumerate(new)])
        record_batch(conn, first_event, len(new), stamp)
        found.new = len(new)
        found.held = len(waiting) - len(new)
        _spend(db, budget, today, len(fresh) + len(set(new) - titles.keys()), len(stubs))
    return found


def _backlog(source: FindingSource, fresh: Sequence[FoundCiter]) -> set[str]:
    """The citers of `fresh` past the MAX_NEW_PER_ANSWER newest (by arXiv id), when `source`'s
    answers can hold a backlog (BACKLOG_SOURCES)."""
    if source not in BACKLOG_SOURCES or len(fresh) <= MAX_NEW_PER_ANSWER:
        return set()
    newest = sorted(fresh, key=lambda c: posted_key(c.citing_id), reverse=True)
    return {c.citing_id for c in newest[MAX_NEW_PER_ANSWER:]}


def _spend(db: Database, budget: Budget | None, today: date, citations: int, stubs: int) -> None:
    if budget is not None:
        budget.spend(db, today, citations, stubs)


def _title(citer: FoundCiter | None, paper_id: str) -> str:
    """A stub's title: the source's, else its id (its map page gives the real one when read)."""
    if citer is not None and citer.title:
        return citer.title
    return paper_label(paper_id) if is_outside_key(paper_id) else f"arXiv:{paper_id}"


def source_only_counts(db: Database) -> dict[str, int]:
    """How many stored citations each source alone names (for `stats`)."""
    return dict(db.conn.execute(
        "SELECT provenance, count(*) FROM citations WHERE provenance != 'map' GROUP BY 1").fetchall())
