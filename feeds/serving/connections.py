"""The feed server's connections: a deadline for a request's line and headers, a cap on open
connections below the descriptor limit, and one log line when descriptors run out anyway
(docs/feeds.md, "mapwatch serve [--db FILE] [--out DIR] [--host HOST] [--port PORT] [--base-url URL]": connections).

A client that opens connections and never finishes a request (half a request line, headers
trickled in) held each one open for as long as aiohttp's keep-alive allowed (an hour), until
the process ran out of file descriptors: nothing was served, and asyncio logged a traceback
for every failed accept, many times a second. Now:

- a connection that has not sent a whole request line and headers within `header_timeout`
  seconds of opening is closed (and an idle keep-alive connection after as long);
- at most `max_connections` are open (and never more than the descriptor limit less a
  reserve for the database, the log and a burst of accepts); at the cap, a new connection
  closes the oldest one that is not being answered (so a slow or stuck client is what goes,
  and `/healthz` keeps answering); when every one is being answered, the new one gets 503;
- a failed accept for want of descriptors is one log line a minute, with the count, and
  closes idle connections to free some.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import math
import os
import resource
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from mapwatch.feeds.serving import guesses

if TYPE_CHECKING:
    from mapwatch.store.environment import Environment

log = logging.getLogger(__name__)

HEADER_TIMEOUT = 20.0  # seconds; nginx's client_header_timeout is 60 s
MAX_CONNECTIONS = 4096
RESERVE = 256  # descriptors kept for everything else (at most half the limit)
SHED = 64  # idle connections closed when an accept fails for want of descriptors
LOG_EVERY = 60.0  # seconds between two log lines about failed accepts
SHED_EVERY = 1.0  # seconds between two sheddings (asyncio reports each failed accept of a burst)
REFUSED_LINGER = 1.0  # seconds a refused connection stays (half-closed) for its client to read the 503
OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nContent-Type: text/plain\r\n"
        b"Content-Length: 33\r\nConnection: close\r\n\r\nToo many connections; try again.\n")

Handler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class Limits:
    header_timeout: float = HEADER_TIMEOUT
    max_connections: int = MAX_CONNECTIONS
    not_found_burst: int = guesses.BURST  # 404s a client may have at once (feeds/serving/guesses.py; 0: no bound)
    not_found_per_second: float = guesses.PER_SECOND  # and then one more every 1/this seconds


def limits_from_env(env: Environment) -> Limits:
    """$MAPWATCH_HEADER_TIMEOUT (seconds), $MAPWATCH_MAX_CONNECTIONS and $MAPWATCH_NOT_FOUND_BURST
    of `env` (the command's); a bad value is a usage error naming it (BadSetting: exit 2)."""
    return Limits(env.header_timeout_seconds(HEADER_TIMEOUT), env.connection_cap(MAX_CONNECTIONS),
                  env.not_found_burst(guesses.BURST))


def descriptor_cap(wanted: int) -> int:
    """`wanted`, lowered to leave RESERVE descriptors (at most half) below RLIMIT_NOFILE."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft - min(RESERVE, soft // 2)))


class GuardedServer(web.Server):
    """aiohttp's low-level server, with the header deadline and the connection cap."""

    def __init__(self, handler: Handler, limits: Limits, **kwargs: Any) -> None:
        super().__init__(self._tracked(handler), keepalive_timeout=limits.header_timeout, **kwargs)
        self.limits = limits
        self.cap = descriptor_cap(limits.max_connections)
        self.open: dict[RequestHandler, asyncio.TimerHandle | None] = {}  # oldest first
        self.busy: set[RequestHandler] = set()  # being answered
        self.evicted = self.refused = self.timed_out = 0

    def _tracked(self, handler: Handler) -> Handler:
        async def tracked(request: web.BaseRequest) -> web.StreamResponse:
            proto = request.protocol
            timer = self.open.get(proto)
            if timer is not None:  # its first request arrived in time
                timer.cancel()
                self.open[proto] = None
            self.busy.add(proto)
            try:
                return await handler(request)
            finally:
                self.busy.discard(proto)

        return tracked

    def connection_made(self, handler: RequestHandler, transport: asyncio.Transport) -> None:
        super().connection_made(handler, transport)
        if len(self.open) >= self.cap and not self.shed(1):
            self.refused += 1
            handler.close()  # aiohttp reads no request from it
            transport.write(BUSY)
            transport.write_eof()  # the answer, then end of file: the client reads both
            asyncio.get_running_loop().call_later(REFUSED_LINGER, transport.abort)
            return
        self.open[handler] = asyncio.get_running_loop().call_later(
            self.limits.header_timeout, self._too_slow, handler)

    def connection_lost(self, handler: RequestHandler, exc: BaseException | None = None) -> None:
        timer = self.open.pop(handler, None)
        if timer is not None:
            timer.cancel()
        self.busy.discard(handler)
        super().connection_lost(handler, exc)

    def _too_slow(self, handler: RequestHandler) -> None:
        """No whole request line and headers within the deadline: closed."""
        if handler in self.open and self.open[handler] is not None:
            self.timed_out += 1
            self._close(handler)

    def shed(self, n: int) -> int:
        """Close the `n` oldest connections not being answered; how many were closed."""
        victims = []
        for handler in self.open:
            if handler not in self.busy:
                victims.append(handler)
                if len(victims) == n:
                    break
        for handler in victims:
            self.evicted += 1
            self._close(handler)
        return len(victims)

    def _close(self, handler: RequestHandler) -> None:
        timer = self.open.pop(handler, None)
        if timer is not None:
            timer.cancel()
        handler.force_close()


class AcceptFailures:
    """The loop's exception handler while the server runs: an accept that failed for want of
    descriptors is counted and logged as one line a minute (asyncio logs a traceback for each
    one, and re-arms its accept loop per failure: thousands a second), and idle connections
    are closed to free descriptors. Anything else goes to the handler that was there."""

    def __init__(self, loop: asyncio.AbstractEventLoop, server: GuardedServer) -> None:
        self.loop, self.server = loop, server
        self.previous = loop.get_exception_handler()
        self.failures = 0
        self.logged_at = self.shed_at = -math.inf

    def install(self) -> None:
        self.loop.set_exception_handler(self)

    def uninstall(self) -> None:
        if self.loop.get_exception_handler() is self:
            self.loop.set_exception_handler(self.previous)

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in OUT_OF_DESCRIPTORS and "accept" in str(context.get("message")):
            self.failures += 1
            now = time.monotonic()
            if now - self.shed_at >= SHED_EVERY:
                self.server.shed(SHED)
                self.shed_at = now
            if now - self.logged_at >= LOG_EVERY:
                soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
                log.error("out of file descriptors (%s): %d connection(s) not accepted; %d open, cap %d, "
                          "RLIMIT_NOFILE %d; closing idle connections (logged at most once a minute)",
                          os.strerror(exc.errno or 0), self.failures, len(self.server.open), self.server.cap, soft)
                self.failures, self.logged_at = 0, now
            return
        if self.previous is not None:
            self.previous(loop, context)
        else:
            loop.default_exception_handler(context)
