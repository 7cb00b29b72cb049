"""An HTML page's bytes -> its text: UTF-8, UTF-16 with a BOM, or the charset its `<meta>`
declares, strictly (docs/pages.md, "Page formats"): bytes that are not text in their encoding reject the
page with the text parser's line and reason, and nothing becomes U+FFFD."""

from __future__ import annotations

import codecs

from selectolax.lexbor import LexborHTMLParser

from mapwatch.store.errors import undecodable


def decode_html(data: bytes) -> str:
    """The document's text: UTF-8 (with or without a BOM), UTF-16 with a BOM, or the charset
    its `<meta>` declares. Bytes that are not text in that encoding are rejected with their
    line and byte, as a text page's are (docs/pages.md, "Page formats"): nothing becomes U+FFFD."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as e:
            raise undecodable(data, e, "UTF-16") from None
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        not_utf8 = undecodable(data, e)
    charset = _declared_charset(data)
    try:
        codec = codecs.lookup((charset or "").strip().strip("'\""))
    except LookupError:
        raise not_utf8 from None
    if codec.name == "utf-8" or data.startswith(codecs.BOM_UTF8):
        raise not_utf8
    try:
        return data.decode(codec.name)
    except UnicodeDecodeError as e:
        raise undecodable(data, e, codec.name) from None


def _declared_charset(data: bytes) -> str | None:
    """The charset a `<meta>` in the document's first 4 KiB declares, if any."""
    probe = LexborHTMLParser(data[:4096].decode("latin-1"))
    for meta in probe.css("meta"):
        attrs = meta.attributes
        if attrs.get("charset"):
            return attrs["charset"]
        if (attrs.get("http-equiv") or "").lower() == "content-type":
            for part in (attrs.get("content") or "").split(";"):
                key, _, value = part.strip().partition("=")
                if key.lower() == "charset":
                    return value
    return None
