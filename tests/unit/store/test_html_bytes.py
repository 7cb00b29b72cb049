"""Bytes that are not text are rejected alike in every container (issue 21, item 9; DESIGN
section 9, "UTF-8 whatever the container"): an HTML page whose bytes are not valid in its
encoding is rejected with the line and reason a text page with the same bytes gets, and
nothing is stored as U+FFFD."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.errors import ParseError
from mapwatch.store.pages.parse import parse_document, parse_page
from tests.mapsite import HOST, render_page, seed_texts

TITLE = "Reinforcement Learning Enhanced LLMs"


def html_with(bad: bytes, head: str = "") -> bytes:
    """The seed 2412.10400 as the site's HTML, `bad` inside its title, `head` in its head."""
    data = render_page(seed_texts()["2412.10400"]).encode()
    assert data.count(TITLE.encode()) >= 1
    data = data.replace(b"<head>", b"<head>" + head.encode(), 1)
    at = data.index(b"<h1>" + TITLE.encode()) + 4
    return data[:at] + bad + data[at:]


@pytest.mark.parametrize("head", ["", '<meta charset="utf-8">',
                                  '<meta http-equiv="Content-Type" content="text/html; charset=UTF-8">',
                                  '<meta charset="no-such-charset">'],
                         ids=["undeclared", "meta-charset-utf8", "http-equiv-utf8", "unknown-charset"])
@pytest.mark.parametrize("bad", [b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\xf0\x9f\x98"],
                         ids=["ff", "bad-continuation", "surrogate", "truncated-4-byte"])
def test_invalid_utf8_in_html_is_rejected_like_text(head: str, bad: bytes) -> None:
    data = html_with(bad, head)
    with pytest.raises(ParseError) as as_text:
        parse_page(data)
    with pytest.raises(ParseError) as as_html:
        parse_document(data, url=f"{HOST}/paper/2412.10400/", content_type="text/html")
    assert as_html.value.reason.startswith("not UTF-8 text (binary data?) at byte ")
    assert (as_html.value.line, as_html.value.reason) == (as_text.value.line, as_text.value.reason)
    assert as_html.value.line > 1


def test_a_folder_rejects_both_files_alike_and_stores_nothing(db, tmp_path: Path, clock) -> None:
    data = html_with(b"\xff", '<meta charset="utf-8">')
    folder = tmp_path / "pages"
    folder.mkdir()
    (folder / "a.html").write_bytes(data)
    (folder / "a.txt").write_bytes(data)
    report = ingest_paths(db, [folder], clock=clock)
    got = sorted((Path(r.location).name, r.line, r.reason) for r in report.rejected)
    assert [name for name, *_ in got] == ["a.html", "a.txt"]
    assert got[0][1:] == got[1][1:] and got[0][2].startswith("not UTF-8 text")
    assert db["papers"].count == 0 and db["snapshots"].count == 0
    assert not db.conn.execute("SELECT 1 FROM papers WHERE title LIKE '%' || char(65533) || '%'").fetchall()


def test_utf16_with_an_unpaired_surrogate_is_rejected() -> None:
    text = render_page(seed_texts()["2412.10400"]).replace(TITLE, "\udc00" + TITLE, 1)
    data = codecs.BOM_UTF16_LE + text.encode("utf-16-le", "surrogatepass")
    with pytest.raises(ParseError, match="not UTF-16 text, as it declares"):
        parse_document(data, url=f"{HOST}/paper/2412.10400/", content_type="text/html")


def test_a_declared_charset_still_reads_its_bytes() -> None:
    data = html_with("é".encode("cp1252"), '<meta charset="windows-1252">')
    page = parse_document(data, url=f"{HOST}/paper/2412.10400/", content_type="text/html")
    assert page.title.startswith("é" + TITLE)
    with pytest.raises(ParseError, match=r"not cp1252 text, as it declares at byte \d+") as e:
        parse_document(html_with(b"\x81", '<meta charset="windows-1252">'), content_type="text/html")
    assert e.value.line > 1
