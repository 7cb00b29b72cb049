"""A publish's first stage: what changed since the last publish into the same folder (queries only).

The last publish of the same kind into the same folder, with the same base URL and limit, left
cursors on the events and snapshots (table feed_publishes): the papers changed since, and the
directions they are placed in, are rebuilt; so is anything whose file is missing. The first
publish, or `full`, rebuilds everything. feeds/publish.py builds and writes what this says.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from sqlite_utils import Database

from mapwatch.feeds import build, pages, paper_files
from mapwatch.store.database import feed_index, published_files
from mapwatch.store.questions import feed_queries
from mapwatch.store.questions.types import Direction

log = logging.getLogger("mapwatch.feeds.publish")
ALL, TRACKED = "all", "tracked"


@dataclass
class Changes:
    key: str  # the folder (and kind) the cursors are kept for
    cursor: int  # the last event and snapshot ids, read before anything is built
    snap: int
    dirs: list[Direction]  # every direction with a safe slug (the OPML and the index list them)
    unsafe: list[str]  # the files of directions whose slug is not a safe file name: not written
    touched: set[str]  # slugs of the directions to rebuild (whose files exist)
    paper_ids: list[str]  # the papers with files in the folder
    has_page: Callable[[str], bool]  # whether a paper gets a page of its own
    todo: list[str]  # the papers to rebuild
    incremental: bool
    charted: list[str] = field(default_factory=list)  # papers with a chart (two points or more)
    enriched: int = 0  # the newest author change, read before anything is built

    def direction_current(self, root: Path, d: Direction) -> bool:
        """Its feed and page are there and nothing placed in it changed."""
        return (d.slug not in self.touched and (root / build.direction_feed_path(d.slug)).exists()
                and (root / pages.direction_page_path(d.slug)).exists())


def what_changed(db: Database, root: Path, base_url: str, limit: int, *, full: bool, papers: str,
                 today: date) -> Changes:
    """What this publish into `root` has to rebuild (see the module's docstring). Brings the
    feed index up to date first (store/database/feed_index.py)."""
    key = str(root.resolve()) + ("#papers=all" if papers == ALL else "")
    cursor, snap = feed_queries.last_event_id(db), feed_queries.last_snapshot_id(db)  # read before building
    enriched = feed_queries.last_enrichment_id(db)
    feed_index.update(db)  # who newly cites each direction, up to now
    dirs, unsafe = [], []
    for d in feed_queries.directions(db):
        if build.safe_path(build.direction_feed_path(d.slug)):
            dirs.append(d)
        else:
            log.warning("not publishing direction %r: unsafe slug", d.slug)
            unsafe.append(build.direction_feed_path(d.slug))
    state = published_files.last_publish(db, key)
    same_settings = (not full and state is not None and state.base_url == base_url
                     and state.entry_limit == limit)
    changed: set[str] = set()
    if same_settings and state is not None and (state.last_event_id, state.last_snapshot_id) != (cursor, snap):
        changed = feed_queries.papers_changed_since(db, state.last_event_id, state.last_snapshot_id)
    # authors named since (store/scholarly)
    if same_settings and state is not None and state.last_enrichment_id != enriched:
        changed |= feed_queries.papers_enriched_since(db, state.last_enrichment_id)
    has_page: Callable[[str], bool]
    if papers == ALL:
        paper_ids = feed_queries.followed_papers(db)
        has_page = frozenset(paper_ids).__contains__
    else:
        paper_ids, has_page = feed_queries.tracked_papers(db), paper_files.FeedLookup(db)
    # A direction's feed and page are built from the events, pages and placements of the papers
    # placed in it (and the titles of their citers): only the directions of changed papers differ.
    touched = feed_queries.directions_of(db, changed) if same_settings else {d.slug for d in dirs}
    base = f"{root}{os.sep}"  # every paper's files are looked for: os.path on strings, a third of pathlib's cost
    todo = paper_ids
    if same_settings:
        todo = [pid for pid in paper_ids if pid in changed or not os.path.exists(base + build.paper_feed_path(pid))
                or not os.path.exists(base + pages.paper_page_path(pid))]
    charted = (feed_queries.papers_with_history(db) if papers == ALL else
               [pid for pid in paper_ids if len(paper_files.chart_history(db, pid, today)) >= 2])
    return Changes(key, cursor, snap, dirs, unsafe, touched, paper_ids, has_page, todo, same_settings, charted,
                   enriched)
