"""Every answer about people (issue 44, migration 0044: each person stored once), from a map
whose authors came in two enrichment rounds, for tests/system/test_people_schema.py.

    python -m tests.people_answers make OUT

writes `people.db.gz` (the database, compacted) and `people.answers.json.gz` (what this
version answers about it). tests/data/people_before/ holds them as the version before
migration 0044 made them (commit 54268a3): that version stored each author slot whole in the
table `paper_authors`.

The authors (bylines drawn from a pool of 90 people) mix what the sources give: OpenAlex
lists with an id and ORCID, an id alone, an ORCID alone, neither; arXiv's names alone; one
person under two spellings of one id; namesakes with other ids; one name in two cases; a
hostile name. The second round shortens, reorders and replaces some lists, so people leave
bylines and some leave the map.
"""

from __future__ import annotations

import gzip
import json
import random
import sys
import tempfile
import zlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from bench import generate as gen
from mapwatch.store.database.save import SourceInfo, save_pages
from mapwatch.store.errors import PersonChoice, PersonNotFound
from mapwatch.store.person_ids import _orcid_check_digit
from mapwatch.store.questions import authors, autocomplete, queries, teams
from mapwatch.store.records import ArxivRecord, AuthorRecord, Institution, OpenAlexWork
from mapwatch.store.scholarly.saved import save_arxiv, save_openalex
from tests.compact_answers import _plain, dump, feed_bytes, jsonable

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "data" / "people_before"
FIRST = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
PAPERS = 240
HOSTILE = "Mallory [click](https://evil.example) @everyone *bold*"
INSTITUTIONS = (Institution("Zhejiang University", "I76130692"), Institution("OpenAI", "I4210161460"),
                Institution("Peking University"))


def _pool() -> list[AuthorRecord]:
    """90 people: ids, ORCIDs, both or neither; namesakes, a second spelling, two cases."""
    rng = random.Random(44)
    first = ("Ada", "Ingrid", "Wei", "Tom", "Shuhe", "Maria", "Jie", "Omar", "Lena", "Kofi")
    last = ("Prolific", "Halvorsen", "Zhang", "Brown", "Wang", "Garcia", "Li", "Haddad", "Berg", "Mensah")
    people = []
    for i in range(84):
        name = f"{first[i % 10]} {last[(i // 10 + i) % 10]}"
        kind = i % 4  # 0: id and ORCID, 1: id, 2: ORCID, 3: neither
        aid = f"A51000{i:05d}" if kind in (0, 1) else None
        orcid = _orcid(i) if kind in (0, 2) else None
        inst = (INSTITUTIONS[i % 3],) if rng.random() < 0.6 else ()
        people.append(AuthorRecord(name, aid, orcid, inst))
    people += [
        AuthorRecord("Ada Prolific", "A5199999998"),  # a namesake of person 0, with another id
        AuthorRecord("A. Prolific", people[0].author_id, people[0].orcid),  # person 0, spelt short
        AuthorRecord("ada prolific"),  # the name in another case, no id
        AuthorRecord(HOSTILE, "A5199999999"),
        AuthorRecord("Ingrid M. Halvorsen"),
        AuthorRecord("Ingrid Halvorsen", None, None, (INSTITUTIONS[1],)),
    ]
    return people


def _orcid(n: int) -> str:
    """A valid ORCID iD (its check digit right): 0000-0002-NNNN-NNN?."""
    body = f"0000-0002-{1000 + n:04d}-{n % 1000:03d}"
    return body + _orcid_check_digit(body)


def _byline(rng: random.Random, pool: list[AuthorRecord]) -> tuple[AuthorRecord, ...]:
    weights = [8 if i in (0, 85) else 1 for i in range(len(pool))]  # person 0 on many papers
    chosen: list[AuthorRecord] = []
    for _ in range(rng.randint(1, 6)):
        a = rng.choices(pool, weights)[0]
        if a not in chosen:
            chosen.append(a)
    return tuple(chosen)


def _work(pid: str, byline: tuple[AuthorRecord, ...]) -> OpenAlexWork:
    return OpenAlexWork(pid, f"W{zlib.crc32(pid.encode())}", byline, None, None)


def _arxiv(pid: str, byline: tuple[AuthorRecord, ...]) -> ArxivRecord:
    names = tuple(AuthorRecord(a.name) for a in byline)  # arXiv gives names alone
    return ArxivRecord(pid, f"Title of {pid}", names, "cs.LG", ("cs.LG",), None, None, None, None, None)


def build(work: Path) -> Database:
    """The map (PAPERS generated pages), arXiv's names for a third of it, OpenAlex's lists for
    half, then a second round that changes a fifth of them."""
    from mapwatch.store.database.db import open_db

    db = open_db(work / "people.db")
    m = gen.build_map(PAPERS, seed=44)
    save_pages(db, [(p, SourceInfo(f"mem:{p.id}", p.id)) for p in gen.iter_pages(m)], FIRST)
    ids = [r[0] for r in db.conn.execute("SELECT id FROM papers ORDER BY id")]
    rng, pool = random.Random(7), _pool()
    bylines = {pid: _byline(rng, pool) for pid in ids}
    arxiv_ids, openalex_ids = ids[::3], [pid for i, pid in enumerate(ids) if i % 2 == 0]
    save_arxiv(db, [_arxiv(pid, bylines[pid]) for pid in arxiv_ids], arxiv_ids, FIRST)
    save_openalex(db, [_work(pid, bylines[pid]) for pid in openalex_ids], openalex_ids, FIRST)
    # the second round: lists shortened, reordered, replaced
    again = ids[1::5]
    changed = {}
    for k, pid in enumerate(again):
        b = bylines[pid]
        changed[pid] = b[:-1] if k % 3 == 0 and len(b) > 1 else b[::-1] if k % 3 == 1 else _byline(rng, pool)
    save_openalex(db, [_work(pid, changed[pid]) for pid in again], again, NOW)
    return db


def _names() -> list[str]:
    pool = _pool()
    texts = sorted({a.name for a in pool} | {a.name.upper() for a in pool[:10]})
    return [*texts, "Prolific", "A. Prolific", "I. Halvorsen", "Halvorsen, I.", "Zhang", "ada", "In", "Nobody Here",
            "Prol", "zh", "name:ada prolific", "name:Ingrid M. Halvorsen", "GAN", "W"]


def _safe(ask: Any) -> Any:
    try:
        return ask()
    except (PersonChoice, PersonNotFound) as e:  # what the bot shows as a choice or "not found"
        return {"error": type(e).__name__, "args": _plain(list(e.args)), "fields": _plain(vars(e))}


def answers(db: Database) -> dict[str, Any]:
    """What the query layer answers about every person and paper of the map."""
    out: dict[str, Any] = {}
    c = db.conn
    out["rows"] = c.execute("SELECT paper_id, position, name, author_id, orcid, source FROM paper_authors"
                            " ORDER BY paper_id, position").fetchall()
    keys = sorted({k for aid, orcid, name in c.execute("SELECT author_id, orcid, name FROM paper_authors")
                   for k in (aid, orcid, f"name:{name}") if k})
    ids = [r[0] for r in c.execute("SELECT id FROM papers ORDER BY id")]
    for text in keys + _names():
        found = authors.find_people(db, text)
        out[f"find {text}"] = found
        out[f"views {text}"] = [authors.author_view(db, p, papers=5, citers=5) for p in found[:3]]
        out[f"by name {text}"] = authors.papers_by_name(db, text)
        out[f"choices {text}"] = autocomplete.autocomplete_authors(db, text)
        out[f"choices by name {text}"] = autocomplete.autocomplete_authors(db, text, by_name=True)
        out[f"team person {text}"] = _safe(lambda text=text: teams.resolve_person(db, text))
        out[f"suggest {text}"] = teams.suggest_names(db, text)
    for key in keys:
        out[f"person papers {key}"] = sorted(teams.person_papers(db, key))
    out["bylines"] = authors.bylines(db, ids)
    pairs = [tuple(r) for r in c.execute("SELECT citing_id, cited_id FROM citations ORDER BY 1, 2")]
    out["self citations"] = sorted(authors.self_citations(db, pairs))
    for pid in ids[:40]:
        out[f"paper {pid}"] = queries.paper_view(db, pid)
        out[f"citers {pid}"] = queries.citers(db, pid, limit=20)
    return _plain(out)


def everything(db: Database, out_dir: Path) -> dict[str, Any]:
    return {"answers": answers(db), "feeds": feed_bytes(db, out_dir)}


def expected() -> dict[str, Any]:
    return json.loads(gzip.decompress((FIXTURES / "people.answers.json.gz").read_bytes()))


def load(target: Path) -> Database:
    """The version-before database (tests/data/people_before/) at `target`, opened (and so
    migrated) by this version."""
    from mapwatch.store.database.db import open_db

    target.write_bytes(gzip.decompress((FIXTURES / "people.db.gz").read_bytes()))
    return open_db(target)


def make(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = build(Path(tmp))
        (out / "people.db.gz").write_bytes(gzip.compress(dump(db, Path(tmp)), mtime=0))
        value = jsonable(everything(db, Path(tmp) / "feeds"))
        (out / "people.answers.json.gz").write_bytes(gzip.compress(json.dumps(value, sort_keys=True).encode(),
                                                                   mtime=0))
        db.conn.close()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "make":
        sys.exit("usage: python -m tests.people_answers make OUT")
    make(Path(sys.argv[2]))
