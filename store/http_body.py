"""Reading an HTTP body within a size bound, shared by the map's crawl (store/sources/http_client.py)
and the open sources' client (store/scholarly/polite.py): a hostile or broken server cannot make
either hold more than the bound in memory."""

from __future__ import annotations

from typing import Any

CHUNK = 65_536


async def read_capped(resp: Any, limit: int) -> bytes:
    """The body of an aiohttp response, or its first limit+1 bytes when it is longer (so the
    caller can tell "too long" from "exactly the limit"). A body cut off before its announced
    length raises aiohttp.ClientPayloadError."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = await resp.content.read(min(CHUNK, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
