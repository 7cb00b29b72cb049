"""GET requests to one scholarly source, at its published rate (docs/enrichment.md).

One `PoliteClient` per source and round: request starts are spaced by the source's interval
(arXiv 3 s, OpenAlex 0.1 s, Semantic Scholar 1 s), one request at a time; every request says
who asks (a User-Agent with the contact address); no redirect is followed (the source is
reported with where it points); bodies are read up to `MAX_BODY_BYTES`; a
429 (or 503) with a Retry-After is honoured up to `max_retry_after`, beyond it the source is
left for the next round. The clock and the sleep are injectable, so tests check the spacing
without waiting for it.

What goes wrong is one of two errors, each with a one-line reason that never holds a secret
(the Semantic Scholar key is sent in a header, and scrubbed from any reason that could
echo it, in whatever form: `Scrubber`): `SourceDown` (the source cannot be asked this round: down, slow, refusing, or
asking to wait too long) and `BadAnswer` (this one request failed; the next may not).
"""

from __future__ import annotations

import asyncio
import base64
import functools
import string
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mapwatch.store.clock import retry_after_seconds

# defined in the one exception tree (store/errors.py), and importable from here as before
from mapwatch.store.errors import BadAnswer as BadAnswer
from mapwatch.store.errors import OutOfTime as OutOfTime
from mapwatch.store.errors import SourceDown as SourceDown
from mapwatch.store.http_body import read_capped

MAX_BODY_BYTES = 10 * 1024 * 1024  # an answer of 100 papers is a few hundred kB


@dataclass(frozen=True)
class Politeness:
    """How one source is asked: `interval` seconds between request starts (its published
    rate), `timeout` seconds for a whole answer, a Retry-After honoured up to `max_retry_after`
    seconds and `retries` times a request."""

    interval: float
    timeout: float = 30.0
    max_retry_after: float = 120.0
    retries: int = 3


# The sources' published rates: arXiv asks for one request every 3 seconds, one connection
# at a time (API Terms of Use); OpenAlex allows 10 requests a second and 100,000 a day in its
# polite pool; Semantic Scholar 1 request a second (the shared public pool, and a key's
# introductory rate).
POLITENESS = {"arxiv": Politeness(3.0), "openalex": Politeness(0.1), "s2": Politeness(1.0)}


@functools.cache
def user_agent(contact: str | None) -> str:
    """mapwatch's User-Agent, naming whom to write to (the polite pools ask for it)."""
    try:
        from importlib.metadata import version

        ver = version("mapwatch")
    except Exception:  # not installed (running from a checkout)
        ver = "0"
    return f"mapwatch/{ver} (citation map follower; mailto:{contact})" if contact else \
        f"mapwatch/{ver} (citation map follower)"




# The shortest piece of a secret taken out of a text: any run of this many characters of the
# secret, or of a form of it, is a piece (a whole secret shorter than this is its own piece).
SECRET_PIECE = 8
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)  # keeps every index


def secret_forms(secret: str) -> tuple[str, ...]:
    """The forms in which an answer could echo `secret`: as it is, reversed, URL-encoded (as
    `quote` and `quote_plus` do, and every byte as %XX), in hex, and in base64 (standard and
    URL-safe, at each of the three places it can start in a longer encoded text: the characters
    that depend on what is around it left out). Compared without case."""
    raw = secret.encode()
    forms = {secret, secret[::-1], urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret),
             "".join(f"%{b:02x}" for b in raw), raw.hex()}
    for start in range(3):
        whole = raw[start:][:len(raw[start:]) - len(raw[start:]) % 3]  # whole 3-byte groups only
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            forms.add(encode(whole).decode())
    return tuple(sorted(f for f in forms if f))


@dataclass(frozen=True)
class Scrubber:
    """Takes secrets out of a text (a reason, which is stored and shown): every piece of
    SECRET_PIECE characters or more of a secret or of any of its `secret_forms`, in any case,
    each run of them replaced by one "…"."""

    pieces: Mapping[int, frozenset[str]]  # length -> the pieces of that length, lower case

    @classmethod
    def of(cls, secrets: Iterable[str]) -> Scrubber:
        pieces: dict[int, set[str]] = {}
        for secret in secrets:
            for form in secret_forms(secret) if secret else ():
                form = form.translate(_ASCII_LOWER)
                n = min(SECRET_PIECE, len(form))
                pieces.setdefault(n, set()).update(form[i:i + n] for i in range(len(form) - n + 1))
        return cls({n: frozenset(p) for n, p in pieces.items()})

    def __call__(self, text: str) -> str:
        if not self.pieces:
            return text
        lower = text.translate(_ASCII_LOWER)
        secret = bytearray(len(text))
        for n, pieces in self.pieces.items():
            for i in range(len(text) - n + 1):
                if lower[i:i + n] in pieces:
                    secret[i:i + n] = b"\x01" * n
        if not any(secret):
            return text
        out: list[str] = []
        for i, ch in enumerate(text):
            if not secret[i]:
                out.append(ch)
            elif i == 0 or not secret[i - 1]:
                out.append("…")
        return "".join(out)


def _short(e: BaseException, scrub: Callable[[str], str]) -> str:
    """The first line of what `e` says, scrubbed whole before it is cut."""
    text = scrub(str(e)).strip() or type(e).__name__
    return text.splitlines()[0][:200]


@dataclass
class PoliteClient:
    """Requests to one source. `session`: an aiohttp ClientSession; `headers`: sent with each
    request besides the User-Agent (the S2 key's `x-api-key`); `secrets`: strings never let
    into a reason; `deadline`: a `monotonic()` time no request starts after."""

    session: Any
    source: str
    politeness: Politeness
    contact: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()
    deadline: float | None = None
    monotonic: Callable[[], float] = time.monotonic
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep
    requests: int = 0
    bytes_read: int = 0
    started: list[float] = field(default_factory=list)  # when each request started (monotonic)
    _next_start: float = field(default=float("-inf"), repr=False)
    _scrubber: Scrubber = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._scrubber = Scrubber.of(self.secrets)

    def scrub(self, text: str) -> str:
        """`text` without any piece of the secrets, in any form an answer could echo (Scrubber)."""
        return self._scrubber(text)

    async def _wait_turn(self) -> None:
        now = self.monotonic()
        start = max(now, self._next_start)
        if self.deadline is not None and start > self.deadline:
            raise OutOfTime(f"{self.source}: the round's time is up")
        if start > now:
            await self.sleep(start - now)
        self._next_start = start + self.politeness.interval

    async def get(self, url: str, params: Mapping[str, str] | None = None) -> tuple[int, bytes]:
        """(status, body) of a GET: 200, or 404 (the source does not know the thing asked
        for). Any other answer raises SourceDown or BadAnswer."""
        for attempt in range(self.politeness.retries + 1):
            status, body, wait = await self._once(url, params)
            if wait is None:
                return status, body
            if attempt == self.politeness.retries:
                raise SourceDown(f"HTTP {status}, still after {attempt + 1} tries")
            self._next_start = max(self._next_start, self.monotonic() + wait)
        raise AssertionError("unreachable")

    async def _once(self, url: str, params: Mapping[str, str] | None) -> tuple[int, bytes, float | None]:
        import aiohttp

        await self._wait_turn()
        self.requests += 1
        self.started.append(self.monotonic())
        headers = {"User-Agent": user_agent(self.contact), "Accept": "*/*", **self.headers}
        timeout = aiohttp.ClientTimeout(total=self.politeness.timeout)
        try:
            # No redirect is followed: a header (the key) would go to wherever it points.
            async with self.session.get(url, params=params, headers=headers, timeout=timeout,
                                        allow_redirects=False) as resp:
                status = resp.status
                if 300 <= status < 400:
                    where = self.scrub(resp.headers.get("Location", ""))[:200]  # scrubbed whole, then cut
                    raise SourceDown(f"HTTP {status}, redirected to {where!r}: point its API setting there")
                if status in (429, 503) and "Retry-After" in resp.headers:
                    delay = retry_after_seconds(resp.headers.get("Retry-After"))
                    if delay is None or delay > self.politeness.max_retry_after:
                        shown = "an unreadable one" if delay is None else f"{delay:,.0f} s"
                        raise SourceDown(f"HTTP {status}, asked to wait {shown} (more than the "
                                         f"{self.politeness.max_retry_after:g} s honoured)")
                    return status, b"", delay
                if status == 429:  # no Retry-After: wait ten intervals, at least 5 s
                    return status, b"", max(5.0, 10 * self.politeness.interval)
                if status >= 500 or status in (401, 403):
                    raise SourceDown(f"HTTP {status}")
                if status not in (200, 404):
                    raise BadAnswer(f"HTTP {status}")
                if resp.content_length is not None and resp.content_length > MAX_BODY_BYTES:
                    raise BadAnswer(f"an answer of {resp.content_length:,} bytes (at most {MAX_BODY_BYTES:,} read)")
                body = await read_capped(resp, MAX_BODY_BYTES)
                self.bytes_read += len(body)
                if len(body) > MAX_BODY_BYTES:
                    raise BadAnswer(f"an answer of more than {MAX_BODY_BYTES:,} bytes")
                return status, body, None
        except TimeoutError:
            raise SourceDown(f"no answer within {self.politeness.timeout:g} s") from None
        except aiohttp.ClientPayloadError as e:
            raise BadAnswer(f"answer cut off ({_short(e, self.scrub)})") from None
        except aiohttp.ClientError as e:
            raise SourceDown(f"cannot connect ({_short(e, self.scrub)})") from None


