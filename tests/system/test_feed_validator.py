"""The feeds validate under the W3C Feed Validation Service's own validator (tests/vendor/
feedvalidator, run in a child process): a direction feed and a paper feed whose entries carry
`<author>` elements for the citing papers' authors (issue 29), including hostile names, and a
person's and a team's feed named with markup, without a warning a name causes."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from mapwatch.feeds import people_feeds
from mapwatch.feeds.publish import publish
from mapwatch.store.records import AuthorRecord, OpenAlexWork
from mapwatch.store.scholarly.saved import save_openalex
from mapwatch.store.subscriptions import teams

VENDOR = Path(__file__).resolve().parents[1] / "vendor"
VALIDATE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import feedvalidator
from feedvalidator import logging as fvl
out = []
for arg in sys.argv[2:]:
    path, _, base = arg.partition("=")  # base: the feed's own address (its rel="self" link)
    events = feedvalidator.validateString(open(path, "rb").read(), firstOccurrenceOnly=1, base=base)["loggedEvents"]
    out.append({"path": path,
                "errors": [type(e).__name__ + " " + str(e.params) for e in events if isinstance(e, fvl.Error)],
                "warnings": [type(e).__name__ + " " + str(e.params) for e in events if isinstance(e, fvl.Warning)],
                "authors": sum(1 for e in events if type(e).__name__ == "ValidElement"
                               and e.params.get("element") == "author")})
print(json.dumps(out))
"""


BASE = "https://feeds.example.org"
# Names as a hostile or careless source may give them: markup, a Discord role mention, references
# escaped once and twice, an address in brackets.
HOSTILE = ("<b>Eve</b> Hacker", "<@&222>", "&lt;script&gt;alert(1)&lt;/script&gt; Mallory",
           "&amp;lt;i&amp;gt;Trudy", "Ann Other <ann@example.org>", "Zed &alpha; &222")
# The warnings names never cause: entries first seen at one instant share their <updated> (the
# seeds' citers were all read at once; a refresh finding several citers does the same).
DATA_WARNINGS = ("DuplicateUpdated",)


def validate(*feeds: tuple[Path, str]) -> list[dict]:
    proc = subprocess.run([sys.executable, "-c", VALIDATE, str(VENDOR), *(f"{p}={url}" for p, url in feeds)],
                          capture_output=True, text=True, timeout=120, check=True)
    results: list[dict] = json.loads(proc.stdout)
    return results


def test_feeds_with_authors_validate(seeded, tmp_path: Path) -> None:
    citers = [r[0] for r in seeded.conn.execute(
        "SELECT DISTINCT citing_id FROM citations WHERE cited_id = '2412.10400' ORDER BY citing_id LIMIT 30")]
    save_openalex(seeded, [OpenAlexWork(pid, f"W{k}", (
        AuthorRecord("Ada Lovelace", "A1", "0000-0002-1825-0097"),
        AuthorRecord("Zoë Ünicode-Ñame"), AuthorRecord("Bob & <Co> \"quoted\""),
        AuthorRecord("@everyone"), *(AuthorRecord(n) for n in HOSTILE)), "NeurIPS", None)
        for k, pid in enumerate(citers)], citers, datetime(2026, 12, 1, tzinfo=UTC))
    out = tmp_path / "public"
    publish(seeded, out, BASE, papers="all")
    feeds = [out / "feeds" / "lr" / "reinforcement-learning-for-reasoning.atom",
             out / "feeds" / "papers" / "2412.10400.atom"]
    results = validate(*((f, f"{BASE}/{f.relative_to(out)}") for f in feeds))
    for r in results:
        assert r["errors"] == [], r
        assert [w for w in r["warnings"] if not w.startswith(DATA_WARNINGS)] == [], r
    assert all(r["authors"] >= 1 for r in results), results  # the validator saw the entries' authors
    data = feeds[1].read_bytes()
    assert b"<name>Ada Lovelace</name>" in data and b"<name>Eve Hacker</name>" in data
    assert b"<name>Trudy</name>" in data and b"<name>Ann Other</name>" in data
    assert b"<name>alert(1) Mallory</name>" in data and "<name>Zed α 222</name>".encode() in data
    assert b"222&gt;" not in data and b"script" not in data and b"ann@example.org" not in data
    assert b"By Ada Lovelace, Zo\xc3\xab \xc3\x9cnicode-\xc3\x91ame, Bob &amp;amp; &amp;quot;quoted" in data


def test_person_and_team_feeds_named_with_markup_validate(seeded, tmp_path: Path) -> None:
    now = datetime(2026, 12, 1, tzinfo=UTC)
    eve = AuthorRecord("<b>Eve</b> &lt;@&amp;222&gt;", "A5000000666")
    save_openalex(seeded, [OpenAlexWork("2412.10400", "W1", (eve,), None, None)], ["2412.10400"], now)
    team, _ = teams.ensure_team(seeded, 7, "<i>Reading</i> group &amp;lt;b&amp;gt;", 1, now)
    teams.add_member(seeded, team, "author", "A5000000666", eve.name, 1, now)
    files = []
    for kind, key, path in ((people_feeds.AUTHOR_FEED, "A5000000666", "feeds/authors/A5000000666.atom"),
                            (people_feeds.TEAM_FEED, team.feed_slug, f"feeds/teams/{team.feed_slug}.atom")):
        body = people_feeds.build_file(seeded, kind, key, BASE, 50)
        assert body is not None
        (tmp_path / path.replace("/", "-")).write_bytes(body)
        files.append((tmp_path / path.replace("/", "-"), f"{BASE}/{path}"))
    results = validate(*files)
    for r in results:
        assert r["errors"] == [], r
        assert [w for w in r["warnings"] if not w.startswith(DATA_WARNINGS)] == [], r
    person, group = (f.read_bytes() for f, _ in files)
    assert b"<title>Eve: new citing papers</title>" in person
    assert "<title>the team “Reading group”: new citing papers</title>".encode() in group
    assert b"&lt;" not in group.split(b"<entry>")[0]


def test_the_validator_finds_an_error_when_there_is_one(tmp_path: Path) -> None:
    """The reference is not a rubber stamp: an entry without its id fails it."""
    bad = tmp_path / "bad.atom"
    bad.write_text('<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'
                   "<id>urn:x</id><title>t</title><updated>2026-12-01T00:00:00Z</updated>"
                   "<author><name>a</name></author><entry><title>e</title>"
                   "<updated>2026-12-01T00:00:00Z</updated></entry></feed>")
    proc = subprocess.run([sys.executable, "-c", VALIDATE, str(VENDOR), str(bad)], capture_output=True, text=True,
                          timeout=120, check=True)
    [result] = json.loads(proc.stdout)
    assert any(e.startswith("MissingElement") and "'id'" in e for e in result["errors"]), result
