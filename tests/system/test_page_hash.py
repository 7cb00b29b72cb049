"""The content hash: a canonical encoding of what a page says, not the model's repr.

A model change that keeps the content (a field added with a default, a subclass, another
field order) hashes the same, so the next run stores nothing; a database written with the
older repr-based hash (tests/data/db/schema_0001.db was) stores nothing new on re-ingest of
the same pages, and its hashes are rewritten once in the new format.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
from datetime import date
from pathlib import Path

from bench import generate as gen
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.database.save import SourceInfo, save_pages
from mapwatch.store.pages.model import ListedPaper, MapPage, PaperList
from mapwatch.store.pages.page_hash import HASH_FORMAT, HASH_PREFIX, canonical_json, legacy_page_hash, page_hash
from tests.conftest import DATA, SEED_FILES, FakeClock, seed_page

FIXTURE_0001 = DATA / "db" / "schema_0001.db"
ROOT = Path(__file__).resolve().parents[2]
# An ingest under a changed model: MapPage gains a field with a default before the parser
# and the store are imported, as a later version of mapwatch would have it.
CHANGED_MODEL = r"""
import dataclasses, sys
import mapwatch.store.pages.model as model
model.MapPage = dataclasses.make_dataclass(
    "MapPage", [(f.name, f.type) for f in dataclasses.fields(model.MapPage)]
    + [("license", "str | None", dataclasses.field(default=None))], frozen=True)
from mapwatch.store.database.db import open_db
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.parse import parse_page
assert "license=None" in repr(parse_page((SEEDS_DIR / "2412.10400.txt").read_bytes()))
report = ingest_paths(open_db(sys.argv[1]), [SEEDS_DIR], force=True)
print(report.stored, report.unchanged)
"""


def _plain(v: object) -> object:
    """The reference plain form, the slow obvious way."""
    if dataclasses.is_dataclass(v):
        out = {}
        for f in dataclasses.fields(v):
            x = getattr(v, f.name)
            default = (f.default if f.default is not dataclasses.MISSING else
                       f.default_factory() if f.default_factory is not dataclasses.MISSING else object())
            if x is not None and x != default:
                out[f.name] = _plain(x)
        return out
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    if isinstance(v, date):
        return v.isoformat()
    return v


def _pages() -> list[MapPage]:
    m = gen.build_map(40, seed=3)
    pages = [seed_page(f.stem) for f in SEED_FILES] + [gen.page(m, i, 2) for i in range(m.n)]
    odd = dataclasses.replace(pages[0], title="é \ud800 \u2028 \"q\" \\ <&>", abstract=None, builds_on=None,
                              placements=())
    return [*pages, odd]


def test_the_hash_is_the_sha256_of_sorted_json_with_a_format_version() -> None:
    for p in _pages():
        text = json.dumps({"format": HASH_FORMAT, "page": _plain(p)}, sort_keys=True, separators=(",", ":"))
        assert canonical_json(p) == json.dumps(_plain(p), sort_keys=True, separators=(",", ":"))
        assert page_hash(p) == HASH_PREFIX + hashlib.sha256(text.encode()).hexdigest()
    assert HASH_FORMAT == "mapwatch-page/1"


def _with_new_fields(page: MapPage) -> MapPage:
    """The page under a changed model: MapPage and ListedPaper each gain a field with a
    default (their subclasses' reprs differ from the originals' in name and fields)."""
    Item = dataclasses.make_dataclass(
        "ListedPaper", [("lang", str | None, dataclasses.field(default=None)),
                        ("flags", tuple, dataclasses.field(default=()))], bases=(ListedPaper,), frozen=True)
    Page = dataclasses.make_dataclass(
        "MapPage", [("license", str | None, dataclasses.field(default=None)),
                    ("version", int, dataclasses.field(default=1))], bases=(MapPage,), frozen=True)

    def items(lst: PaperList | None) -> PaperList | None:
        if lst is None:
            return None
        return dataclasses.replace(lst, items=tuple(Item(**vars(it)) for it in lst.items))

    fields = {f.name: getattr(page, f.name) for f in dataclasses.fields(MapPage)}
    fields.update(builds_on=items(page.builds_on), built_on_by=items(page.built_on_by))
    changed = Page(**fields)
    assert repr(changed) != repr(page)
    return changed


def test_a_model_change_with_the_same_content_keeps_the_hash() -> None:
    for p in _pages():
        assert page_hash(_with_new_fields(p)) == page_hash(p)
    p = seed_page("2412.10400")
    assert page_hash(dataclasses.replace(p, cited_by=(p.cited_by or 0) + 1)) != page_hash(p)


def test_a_model_change_with_the_same_content_writes_nothing(tmp_path: Path) -> None:
    clock = FakeClock()
    db = open_db(tmp_path / "m.db")
    ingest_paths(db, SEED_FILES, clock=clock)
    before = db.conn.total_changes
    snapshots, events = db["snapshots"].count, db["events"].count
    clock.advance(days=1)
    pages = [(_with_new_fields(seed_page(f.stem)), SourceInfo(str(f), "x")) for f in SEED_FILES]
    result = save_pages(db, pages, clock())
    assert (result.stored, result.unchanged) == ([], 2)
    assert (db["snapshots"].count, db["events"].count) == (snapshots, events)
    # Only the sources' validators ("x" here) were written: no paper, snapshot or event.
    assert db.conn.total_changes - before == len(SEED_FILES)


def test_an_ingest_under_a_changed_model_stores_nothing(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    db = open_db(path)
    ingest_paths(db, SEED_FILES, clock=FakeClock())
    snapshots, events = db["snapshots"].count, db["events"].count
    db.close()
    proc = subprocess.run([sys.executable, "-c", CHANGED_MODEL, str(path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "2"], "pages re-stored after a model change"
    db = open_db(path)
    assert (db["snapshots"].count, db["events"].count) == (snapshots, events)


def test_a_database_with_the_older_hash_stores_nothing_new(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copy(FIXTURE_0001, path)
    old = sqlite3.connect(path)
    hashes = dict(old.execute("SELECT paper_id, content_hash FROM snapshots s WHERE id ="
                              " (SELECT max(id) FROM snapshots t WHERE t.paper_id = s.paper_id)"))
    old.close()
    assert hashes == {f.stem: legacy_page_hash(seed_page(f.stem)) for f in SEED_FILES}  # the older format

    clock = FakeClock()
    db = open_db(path)
    papers = list(db.conn.execute("SELECT * FROM papers ORDER BY id"))
    snapshots, events = db["snapshots"].count, db["events"].count
    report = ingest_paths(db, SEED_FILES, clock=clock, force=True)
    assert (report.stored, report.unchanged) == (0, 2)
    assert (db["snapshots"].count, db["events"].count) == (snapshots, events)
    assert list(db.conn.execute("SELECT * FROM papers ORDER BY id")) == papers
    upgraded = dict(db.conn.execute("SELECT paper_id, content_hash FROM snapshots s WHERE id ="
                                    " (SELECT max(id) FROM snapshots t WHERE t.paper_id = s.paper_id)"))
    assert upgraded == {f.stem: page_hash(seed_page(f.stem)) for f in SEED_FILES}  # rewritten once

    clock.advance(days=1)
    report = ingest_paths(db, SEED_FILES, clock=clock, force=True)
    assert (report.stored, report.unchanged) == (0, 2)
    assert (db["snapshots"].count, db["events"].count) == (snapshots, events)
