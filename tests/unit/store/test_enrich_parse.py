"""The sources' answers read into bounded records (store/scholarly/parse.py): the documented
formats, and hostile ones: 10,000 authors, 5 KB names, control characters, bad ORCIDs and ids,
a DTD (anywhere, in any encoding), encodings no parser reads, JSON of the wrong shape."""

from __future__ import annotations

import codecs
import json

import pytest

from mapwatch.store.records import MAX_AUTHORS, MAX_CONTEXT_CHARS, MAX_CONTEXTS, MAX_NAME_CHARS
from mapwatch.store.scholarly import parse
from mapwatch.store.scholarly.parse import Malformed, parse_arxiv, parse_openalex, parse_s2_citations
from tests.scholarly_fakes import (
    ARXIV_ERROR_ENTRY,
    ARXIV_FEED,
    SURVEY_AUTHORS,
    ArxivEntry,
    arxiv_bomb,
    arxiv_entry_xml,
    openalex_work,
    s2_citation,
)


def feed(*entries: str) -> bytes:
    return ARXIV_FEED.format(query="x", total=len(entries), entries="\n".join(entries)).encode()


def test_arxiv_entry_read_in_full() -> None:
    e = ArxivEntry("Attention\n  Is All You Need", [("Ashish Vaswani", ["Google Brain"]), ("Noam Shazeer", [])],
                   primary="cs.CL", categories=["cs.CL", "cs.LG", "cs.CL"], published="2017-06-12T17:57:34Z",
                   updated="2023-08-02T00:41:18Z", version=7, doi="10.5555/3295222.3295349",
                   journal_ref="NeurIPS 2017", comment="15 pages, 5 figures")
    old = ArxivEntry("Old style", [("A. Physicist", [])], primary="hep-th", categories=["hep-th"],
                     published="1999-01-04T00:00:00Z", updated="1999-01-04T00:00:00Z", version=1)
    body = feed(arxiv_entry_xml("1706.03762", e), arxiv_entry_xml("hep-th/9901001", old),
                arxiv_entry_xml("2412.10400", e), ARXIV_ERROR_ENTRY.format(id="bogus"))
    records = {r.paper_id: r for r in parse_arxiv(body, ["1706.03762", "hep-th/9901001", "bogus"])}
    assert set(records) == {"1706.03762", "hep-th/9901001"}  # not asked, and arXiv's error entry: left out
    r = records["1706.03762"]
    assert r.title == "Attention Is All You Need"
    assert [(a.name, [i.name for i in a.institutions]) for a in r.authors] == [
        ("Ashish Vaswani", ["Google Brain"]), ("Noam Shazeer", [])]
    assert (r.primary_category, r.categories) == ("cs.CL", ("cs.CL", "cs.LG"))
    assert (r.published, r.updated) == ("2017-06-12T17:57:34+00:00", "2023-08-02T00:41:18+00:00")
    assert (r.doi, r.journal_ref, r.comments) == ("10.5555/3295222.3295349", "NeurIPS 2017", "15 pages, 5 figures")
    assert records["hep-th/9901001"].primary_category == "hep-th"


def test_arxiv_hostile_entry_is_bounded() -> None:
    # XML forbids C0 controls (a feed holding one is not XML, below); C1 controls and bidi overrides it allows.
    many = [(f"Author\u0085 {i}\u202e" + "x" * (5000 if i < 200 else 5), ["Inst\u009b[31m"] * 50)
            for i in range(10_000)]
    e = ArxivEntry("T\u200bitle", many, primary="cs.LG; DROP TABLE", categories=["<b>", "cs.AI"] * 100,
                   published="0001-01-01T00:00:00Z", updated="not a date", doi="javascript:alert(1)",
                   journal_ref="j" * 50_000)
    (r,) = parse_arxiv(feed(arxiv_entry_xml("2412.10400", e)), ["2412.10400"])
    assert len(r.authors) == MAX_AUTHORS
    a = r.authors[0]
    assert len(a.name) == MAX_NAME_CHARS and a.name.startswith("Author 0 x") and a.name.isprintable()
    assert [i.name for i in a.institutions] == ["Inst [31m"]  # the escape gone, duplicates once
    assert r.title == "T itle" and r.primary_category == "cs.AI" and r.categories == ("cs.AI",)
    assert r.published is None and r.updated is None and r.doi is None and len(r.journal_ref or "") == 1000


@pytest.mark.parametrize("body", [b"", b"<html><body>Rate exceeded", b'{"results": []}',
                                  b"<rss><channel/></rss>", feed("<entry><title>\x00</title></entry>"),
                                  b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]><feed/>'])
def test_arxiv_not_a_feed(body: bytes) -> None:
    with pytest.raises(Malformed, match="arXiv"):
        parse_arxiv(body, ["2412.10400"])


ONE = arxiv_entry_xml("2412.10400", ArxivEntry("About <!DOCTYPE html> & <!ENTITY x>", [("A. Author", [])]))
DTD = "the arXiv answer declares a DTD"
WIDE = {"utf-16-le-bom": ("utf-16-le", codecs.BOM_UTF16_LE), "utf-16-be-bom": ("utf-16-be", codecs.BOM_UTF16_BE),
        "utf-16-le": ("utf-16-le", b""), "utf-16-be": ("utf-16-be", b""),
        "utf-32-le-bom": ("utf-32-le", codecs.BOM_UTF32_LE), "utf-32-be-bom": ("utf-32-be", codecs.BOM_UTF32_BE),
        "utf-32-le": ("utf-32-le", b""), "utf-32-be": ("utf-32-be", b""), "utf-8-bom": ("utf-8", codecs.BOM_UTF8),
        "utf-8": ("utf-8", b"")}
BOMBS = ["utf-8", "utf-16-le-bom", "utf-16-be"]


def refusal(body: bytes) -> str:
    """Why parse_arxiv refused `body` (it must)."""
    with pytest.raises(Malformed) as refused:
        parse_arxiv(body, ["2412.10400"])
    return str(refused.value)


@pytest.mark.parametrize("codec", ["utf-16-le-bom", "utf-16-be-bom", "utf-8-bom", "utf-8"])
def test_arxiv_feed_in_utf16_or_utf8_is_read(codec: str) -> None:
    """What the DTD checks leave alone: a feed in an encoding expat reads, whose text (escaped)
    names a DTD."""
    name, bom = WIDE[codec]
    body = bom + feed(ONE).decode().replace('"UTF-8"', f'"{name[:6].upper()}"', 1).encode(name)
    (r,) = parse_arxiv(body, ["2412.10400"])
    assert r.title == "About <!DOCTYPE html> & <!ENTITY x>"


def test_arxiv_dtd_after_a_5_kb_comment_is_refused() -> None:
    body = arxiv_bomb(16 * 1024, ONE)
    assert body.index(b"<!DOCTYPE") > 5000
    assert refusal(body).startswith(DTD)


@pytest.mark.parametrize("codec", WIDE)
def test_arxiv_dtd_in_any_encoding_is_refused(codec: str) -> None:
    # UTF-16 is read by expat (the entity was expanded before); UTF-32 is not, but its DTD is named all the same.
    name, bom = WIDE[codec]
    assert refusal(arxiv_bomb(16 * 1024, ONE, codec=name, bom=bom)).startswith(DTD)


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_arxiv_dtd_in_utf16_without_a_declaration_after_a_space_is_refused(codec: str) -> None:
    # expat takes a NUL among the first two bytes for UTF-16, whatever the first character.
    text = arxiv_bomb(16 * 1024, ONE, codec=codec).decode(codec)
    body = (" " + text.split("\n", 1)[1]).encode(codec)
    assert body[:4] in (b" \0<\0", b"\0 \0<")
    assert refusal(body).startswith(DTD)


@pytest.mark.parametrize("codec", BOMBS)
def test_arxiv_entity_bomb_of_a_megabyte_is_refused_unexpanded(codec: str) -> None:
    """1 MB whose entity expands 40-fold into elements (before: 8.7 s and 958 MB of memory, read
    as a feed), refused by the scan of the whole text before any parser sees it."""
    name, bom = WIDE[codec]
    body = arxiv_bomb(1 << 20, ONE, codec=name, bom=bom)
    assert len(body) > 1_000_000
    assert refusal(body).startswith(DTD)


@pytest.mark.parametrize("codec", BOMBS)
def test_expat_refuses_a_dtd_the_scan_misses(monkeypatch: pytest.MonkeyPatch, codec: str) -> None:
    """The scan left out, expat itself names the DTD, before it reads the first entity declaration."""
    monkeypatch.setattr(parse, "_dtd_in", lambda body: False)
    name, bom = WIDE[codec]
    assert refusal(arxiv_bomb(1 << 20, ONE, codec=name, bom=bom)).startswith(DTD)
    (r,) = parse_arxiv(feed(ONE), ["2412.10400"])  # and passes a feed without one
    assert r.paper_id == "2412.10400"


@pytest.mark.parametrize("encoding", ["Shift_JIS", "UTF-7", "UTF-32", "no-such-encoding", "rot13", "idna",
                                      "punycode", "cp500"])
def test_arxiv_feed_in_an_encoding_no_parser_reads_is_malformed(encoding: str) -> None:
    # Before: ValueError, LookupError, UnicodeError (all but cp500), which ended the enrichment round.
    body = feed(ONE).replace(b'"UTF-8"', f'"{encoding}"'.encode(), 1)
    assert refusal(body).startswith("the arXiv answer is not XML")


def test_openalex_work_read_in_full() -> None:
    w = openalex_work("2412.10400", "W4405000000", SURVEY_AUTHORS, venue="ACM Computing Surveys")
    other = openalex_work("2005.14165", "W1", [{"name": "T. Brown"}])
    merged = openalex_work("2203.02155", "W2", [{"name": "L. Ouyang"}]) | {"doi": "https://doi.org/10.5555/j.1"}
    body = json.dumps({"meta": {"count": 3}, "results": [w, other, merged]}).encode()
    page = parse_openalex(body, ["2412.10400", "2203.02155"])
    assert page.count == 3
    works = {x.paper_id: x for x in page.works}
    assert set(works) == {"2412.10400", "2203.02155"}  # by DOI, and by its arXiv location
    x = works["2412.10400"]
    assert (x.work_id, x.venue, x.doi) == ("W4405000000", "ACM Computing Surveys", "10.48550/arxiv.2412.10400")
    a = x.authors[0]
    assert (a.name, a.author_id, a.orcid) == ("Shuhe Wang", "A5000000001", "0000-0002-1825-0097")
    assert [(i.name, i.id, i.ror, i.country) for i in a.institutions] == [
        ("Massachusetts Institute of Technology", "I63966007", "042nb2s44", "US")]
    assert works["2203.02155"].venue is None  # only arXiv, a repository: no venue


def test_openalex_hostile_work_is_bounded() -> None:
    authors = [{"name": "N\x00" + "n" * (5000 if k < 200 else 5), "id": "A1; DROP", "orcid": "0000-0002-1825-0098",
                "institutions": [{"name": f"I{j}", "id": "I1", "ror": "not-a-ror", "country": "usa"}
                                 for j in range(20)]} for k in range(10_000)]
    w = openalex_work("2412.10400", "W1", authors)
    w["authorships"][1:3] = ["junk", {"author": "junk", "institutions": "junk"}]
    page = parse_openalex(json.dumps({"results": [w, 5, None, {"id": "W2", "doi": 7}]}).encode(), ["2412.10400"])
    (x,) = page.works
    assert len(x.authors) == MAX_AUTHORS
    a = x.authors[0]
    assert len(a.name) == MAX_NAME_CHARS and a.author_id is None and a.orcid is None  # the checksum fails
    assert len(a.institutions) == 5 and a.institutions[0].ror is None and a.institutions[0].country is None


@pytest.mark.parametrize("body", [b"", b"[]", b'{"results": 5}', b"{" * 100_000, b"\xff\xfe"])
def test_openalex_not_works(body: bytes) -> None:
    with pytest.raises(Malformed, match="OpenAlex"):
        parse_openalex(body, ["2412.10400"])


def test_s2_citations_read_and_bounded() -> None:
    items = [s2_citation("2507.04136", ["As [12] show\x00s", "x" * 5000, *[f"s{k}" for k in range(20)]],
                         ["methodology", "result", "<script>", "methodology"], True),
             s2_citation("2507.04136v2", ["again"], [], False),  # the same citer (a version): once
             s2_citation(None, ["not on arXiv"], [], True), s2_citation("../../etc", ["bad id"], [], True),
             s2_citation("2412.10400", ["itself"], [], True), {"citingPaper": None}, "junk",
             {"contexts": "x", "intents": 5, "isInfluential": "yes",
              "citingPaper": {"externalIds": {"ArXiv": "2601.00001"}}}]
    page = parse_s2_citations(json.dumps({"offset": 0, "next": 1000, "data": items}).encode(), "2412.10400")
    assert page.next_offset == 1000
    a, b = page.contexts
    assert (a.citing_id, a.cited_id, a.intents, a.is_influential) == ("2507.04136", "2412.10400",
                                                                       ("methodology", "result"), True)
    assert len(a.contexts) == MAX_CONTEXTS and a.contexts[0] == "As [12] show s"
    assert len(a.contexts[1]) == MAX_CONTEXT_CHARS
    assert (b.citing_id, b.contexts, b.intents, b.is_influential) == ("2601.00001", (), (), False)
    last = parse_s2_citations(b'{"offset": 0, "data": []}', "2412.10400")
    assert last.contexts == () and last.next_offset is None


@pytest.mark.parametrize("body", [b"", b"[1, 2, 3]", b'{"data": {}}', b"<html>"])
def test_s2_not_citations(body: bytes) -> None:
    with pytest.raises(Malformed, match="Semantic Scholar"):
        parse_s2_citations(body, "2412.10400")
