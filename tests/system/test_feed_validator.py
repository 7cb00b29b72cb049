"""The feeds validate under the W3C Feed Validation Service's own validator (tests/vendor/
feedvalidator, run in a child process): a direction feed and a paper feed whose entries carry
`<author>` elements for the citing papers' authors (issue 29), including hostile names."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from mapwatch.feeds.publish import publish
from mapwatch.store.scholarly.records import AuthorRecord, OpenAlexWork
from mapwatch.store.scholarly.saved import save_openalex

VENDOR = Path(__file__).resolve().parents[1] / "vendor"
VALIDATE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import feedvalidator
from feedvalidator import logging as fvl
out = []
for path in sys.argv[2:]:
    events = feedvalidator.validateString(open(path, "rb").read(), firstOccurrenceOnly=1)["loggedEvents"]
    out.append({"path": path,
                "errors": [type(e).__name__ + " " + str(e.params) for e in events if isinstance(e, fvl.Error)],
                "authors": sum(1 for e in events if type(e).__name__ == "ValidElement"
                               and e.params.get("element") == "author")})
print(json.dumps(out))
"""


def test_feeds_with_authors_validate(seeded, tmp_path: Path) -> None:
    citers = [r[0] for r in seeded.conn.execute(
        "SELECT DISTINCT citing_id FROM citations WHERE cited_id = '2412.10400' ORDER BY citing_id LIMIT 30")]
    save_openalex(seeded, [OpenAlexWork(pid, f"W{k}", (
        AuthorRecord("Ada Lovelace", "A1", "0000-0002-1825-0097"),
        AuthorRecord("Zoë Ünicode-Ñame"), AuthorRecord("Bob & <Co> \"quoted\""),
        AuthorRecord("@everyone")), "NeurIPS", None) for k, pid in enumerate(citers)], citers,
        datetime(2026, 12, 1, tzinfo=UTC))
    out = tmp_path / "public"
    publish(seeded, out, "https://feeds.example.org", papers="all")
    feeds = [out / "feeds" / "lr" / "reinforcement-learning-for-reasoning.atom",
             out / "feeds" / "papers" / "2412.10400.atom"]
    proc = subprocess.run([sys.executable, "-c", VALIDATE, str(VENDOR), *map(str, feeds)], capture_output=True,
                          text=True, timeout=120, check=True)
    results = json.loads(proc.stdout)
    for r in results:
        assert r["errors"] == [], r
    assert all(r["authors"] >= 1 for r in results), results  # the validator saw the entries' authors
    assert b"<name>Ada Lovelace</name>" in feeds[1].read_bytes()


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
