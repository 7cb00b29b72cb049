"""The Semantic Scholar key out of every reason (hardening round 4, item 9): `PoliteClient.scrub`
took the key out only as an exact copy, so an answer echoing it reversed or upper-cased (in a
redirect's Location, or an error aiohttp quotes) was stored in `enrichment_fetches.reason` and
printed. Now every piece of 8 characters or more of the key, or of any form of it (reversed,
URL-encoded, hex, base64 at any alignment), is taken out, in any case."""

from __future__ import annotations

import base64
import urllib.parse

import pytest

from mapwatch.store.scholarly.polite import POLITENESS, SECRET_PIECE, PoliteClient, Scrubber

# A key with characters that URL-encoding and base64's two alphabets change.
KEY = "s2k+Abc/def=Ghij-KLMNOPqrstuvwx_1234~"


def client(*secrets: str) -> PoliteClient:
    return PoliteClient(None, "s2", POLITENESS["s2"], secrets=secrets)


def b64_inside(prefix: str, secret: str, alphabet: str = "standard") -> str:
    """`secret` base64-encoded inside a longer value (at the alignment `prefix`'s length gives)."""
    encode = base64.b64encode if alphabet == "standard" else base64.urlsafe_b64encode
    return encode((prefix + secret + "|tail").encode()).decode()


ECHOES = {
    "exact": KEY,
    "upper": KEY.upper(),
    "lower": KEY.lower(),
    "mixed": "".join(c.upper() if i % 2 else c.lower() for i, c in enumerate(KEY)),
    "reversed": KEY[::-1],
    "reversed upper": KEY[::-1].upper(),
    "url-encoded": urllib.parse.quote(KEY, safe=""),
    "url-encoded lower": urllib.parse.quote(KEY, safe="").lower(),
    "form-encoded": urllib.parse.quote_plus(KEY),
    "every byte %XX": "".join(f"%{b:02X}" for b in KEY.encode()),
    "hex": KEY.encode().hex(),
    "hex upper": KEY.encode().hex().upper(),
    "base64": base64.b64encode(KEY.encode()).decode(),
    "base64 url-safe": base64.urlsafe_b64encode(KEY.encode()).decode(),
    "base64 unpadded": base64.b64encode(KEY.encode()).decode().rstrip("="),
    "base64 at 1": b64_inside("u", KEY),
    "base64 at 2": b64_inside("u:", KEY),
    "base64 at 3, url-safe": b64_inside("us:", KEY, "url-safe"),
    "basic auth": "Basic " + base64.b64encode(f"mapwatch:{KEY}".encode()).decode(),
    "a piece of 12": KEY[10:22],
    "a piece of 8": KEY[20:28],
    "a piece of 8, reversed and upper": KEY[12:20][::-1].upper(),
    "cut at its end": KEY[:9],
}


def leaks(text: str) -> list[str]:
    """Which 8-character pieces `text` still holds, in any case, of the key, of its reverse, or of
    its base64 (the whole 3-byte groups of it, from each of its first 3 bytes)."""
    lower = text.lower()
    forms = [KEY, KEY[::-1], *(base64.b64encode(KEY.encode()[k:][:(len(KEY) - k) // 3 * 3]).decode()
                               for k in range(3))]
    return [p for form in forms for i in range(len(form) - SECRET_PIECE + 1)
            if (p := form[i:i + SECRET_PIECE]).lower() in lower]


@pytest.mark.parametrize("name", list(ECHOES))
def test_every_form_of_the_key_is_taken_out(name: str) -> None:
    echo = ECHOES[name]
    reason = f"HTTP 301, redirected to 'https://evil.example/x?k={echo}&page=2': point its API setting there"
    clean = client(KEY).scrub(reason)
    assert clean.startswith("HTTP 301, redirected to 'https://evil.example/x?k=") and clean.endswith(
        "': point its API setting there"), clean
    middle = clean.removeprefix("HTTP 301, redirected to 'https://evil.example/x?k=").removesuffix(
        "&page=2': point its API setting there")
    assert "…" in middle and leaks(clean) == [] and echo not in clean
    if not name.startswith(("base64 at", "basic")):  # (those hold more than the key)
        # The "…", and an encoding's last group, which holds at most 2 bytes of the key ("fg==": 1).
        assert len(middle) <= 5


def test_the_key_is_taken_out_wherever_and_however_often() -> None:
    text = f"{KEY}{KEY.upper()} then {KEY[::-1]} and {urllib.parse.quote(KEY, safe='')}."
    assert client(KEY).scrub(text) == "… then … and …."


def test_a_text_without_the_key_is_left_as_it_is() -> None:
    for text in ("HTTP 301, redirected to 'http://127.0.0.1:9/elsewhere': point its API setting there",
                 "cannot connect (Cannot connect to host 127.0.0.1:9 ssl:default [Connect call failed])",
                 "HTTP 503, asked to wait 3,600 s (more than the 120 s honoured)", "", "…",
                 KEY[:SECRET_PIECE - 1] + " " + KEY[SECRET_PIECE - 1:2 * SECRET_PIECE - 2]):  # pieces of 7
        assert client(KEY).scrub(text) == text
    assert client().scrub(KEY) == KEY  # no key, nothing to hide


def test_a_key_shorter_than_a_piece_is_taken_out_whole() -> None:
    short = "Ab3_x"
    assert client(short).scrub(f"k={short.upper()};r={short[::-1]};p={short[:4]}") == f"k=…;r=…;p={short[:4]}"


def test_non_ascii_text_keeps_its_places() -> None:
    text = f"İstanbul ß {KEY.upper()} ǅ"  # characters whose lower case is longer or other
    assert Scrubber.of([KEY])(text) == "İstanbul ß … ǅ"
