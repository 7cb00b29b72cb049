"""A bound on the addresses one client may get wrong (docs/feeds.md,
"Addresses not found, bounded").

Some of the feed server's addresses are secrets or tell something: a team's feed is read by
whoever has its address, and an author's feed answers only for someone a /track follows. A
client trying addresses got each answer at once, thousands a second. Now each client has a
token bucket of 404s: `burst` of them at once, one more every 1/`per_second` seconds. A client
whose bucket is empty is answered `429` with `Retry-After` on every path that would need a
lookup (a feed or page built on demand, a file looked up on disk), before the lookup, so
neither the answer nor its timing tells a right guess from a wrong one; the files publish
wrote (the index, the directions' feeds and pages, `feeds.opml`, the tracked papers') answer
as always. Each lookup holds a token while it runs, given back unless the answer is a 404, so
a client's requests in flight at once are bounded too; a 200, 304 or 301 costs nothing in the
end: a reader that polls the addresses it was given never runs out.

The client is the connection's peer address (an IPv6 one by its /64, the block one host is
usually given). Behind a reverse proxy every client is the proxy: give the proxy its own limit
(nginx's `limit_req`) or serve without one. At most `clients` buckets are kept, least recently
used first out; a client whose bucket has filled up again is forgotten when next seen.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import OrderedDict
from collections.abc import Callable

BURST = 100  # 404s a client may have at once ($MAPWATCH_NOT_FOUND_BURST)
PER_SECOND = 1.0  # and then one more a second
CLIENTS = 65_536  # buckets kept (a few hundred bytes each)


def client_key(peer: str | None) -> str:
    """Whose bucket a request draws on: its peer's IPv4 address, or its IPv6 address's /64."""
    if not peer:
        return ""
    try:
        address = ipaddress.ip_address(peer.split("%", 1)[0])
    except ValueError:
        return peer
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class Guesses:
    """The token buckets, by client (not thread-safe: the server's event loop calls it)."""

    def __init__(self, burst: int = BURST, per_second: float = PER_SECOND, clients: int = CLIENTS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.burst, self.per_second, self.clients = burst, per_second, clients
        self.clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # client -> (tokens, at)
        self.refused = 0  # requests answered 429

    def _tokens(self, client: str, now: float) -> float:
        held = self._buckets.get(client)
        if held is None:
            return float(self.burst)
        tokens, at = held
        return min(float(self.burst), tokens + (now - at) * self.per_second)

    def take(self, client: str) -> int | None:
        """Before a lookup: None, a token taken (given back unless the answer is a 404, so that
        requests in flight at once cannot pass on one token); else the whole seconds until the
        client may be answered (at least 1), the request counted as refused."""
        now = self.clock()
        tokens = self._tokens(client, now)
        if tokens < 1.0:
            self.refused += 1
            return max(1, math.ceil((1.0 - tokens) / self.per_second))
        self._buckets[client] = (tokens - 1.0, now)
        self._buckets.move_to_end(client)
        while len(self._buckets) > self.clients:
            self._buckets.popitem(last=False)  # the least recently seen: full again by now, or an idle guesser
        return None

    def give_back(self, client: str) -> None:
        """The answer was not a 404: its token back. A client whose bucket is full is forgotten."""
        now = self.clock()
        tokens = self._tokens(client, now) + 1.0
        if tokens >= self.burst:
            self._buckets.pop(client, None)
        else:
            self._buckets[client] = (tokens, now)

    def __len__(self) -> int:
        return len(self._buckets)
