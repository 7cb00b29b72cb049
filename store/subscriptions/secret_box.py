"""Secrets at rest (webhook URLs): sealed with a key kept beside the database, never in it.

A copy of the database alone (a backup, a file sent for a bug report) holds no webhook URL in
clear: each is encrypted and authenticated (HMAC-SHA256 as a keystream in counter mode, then
HMAC-SHA256 over nonce and ciphertext, with two keys derived from one 32-byte key). The key is
the file `<database>.webhook-key` (created on first use, mode 0600); an in-memory database gets
a key for the life of the process. Without the key a sealed value cannot be opened: `open_secret`
raises `SecretUnreadable`, and the webhook is disabled with that reason (docs/bot.md).
"""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

from mapwatch.store.errors import MapwatchError

VERSION = b"s1"
NONCE = 16
TAG = 16
_memory_key = secrets.token_bytes(32)


class SecretUnreadable(MapwatchError):
    """A sealed value whose key is missing or different, or that was altered."""


def key_path(db_file: str) -> Path | None:
    """Where the key of the database `db_file` lives (None: an in-memory database)."""
    return None if not db_file or db_file == ":memory:" else Path(db_file + ".webhook-key")


def load_key(db_file: str, *, create: bool) -> bytes:
    """The database's key; made (0600) when `create` and absent."""
    path = key_path(db_file)
    if path is None:
        return _memory_key
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        if not create:
            raise SecretUnreadable(f"the key file {path.name} is missing") from None
        key = secrets.token_bytes(32)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key)
    if len(key) != 32:
        raise SecretUnreadable(f"the key file {path.name} is not a key")
    return key


def _keys(key: bytes) -> tuple[bytes, bytes]:
    return hmac.digest(key, b"enc", "sha256"), hmac.digest(key, b"mac", "sha256")


def _stream(key: bytes, nonce: bytes, n: int) -> bytes:
    out = bytearray()
    counter = 0
    while len(out) < n:
        out += hmac.digest(key, nonce + counter.to_bytes(8, "big"), "sha256")
        counter += 1
    return bytes(out[:n])


def seal(key: bytes, text: str) -> bytes:
    enc, mac = _keys(key)
    nonce = secrets.token_bytes(NONCE)
    data = text.encode()
    ct = bytes(a ^ b for a, b in zip(data, _stream(enc, nonce, len(data)), strict=True))
    return VERSION + nonce + ct + hmac.digest(mac, VERSION + nonce + ct, "sha256")[:TAG]


def open_secret(key: bytes, blob: bytes) -> str:
    enc, mac = _keys(key)
    if len(blob) < len(VERSION) + NONCE + TAG or not blob.startswith(VERSION):
        raise SecretUnreadable("not a sealed value")
    body, tag = blob[:-TAG], blob[-TAG:]
    if not hmac.compare_digest(hmac.digest(mac, body, "sha256")[:TAG], tag):
        raise SecretUnreadable("the key does not open it (another database's key, or altered)")
    nonce, ct = body[len(VERSION):len(VERSION) + NONCE], body[len(VERSION) + NONCE:]
    return bytes(a ^ b for a, b in zip(ct, _stream(enc, nonce, len(ct)), strict=True)).decode()


def fingerprint(key: bytes, text: str) -> str:
    """A stable keyed fingerprint of a secret: finds a duplicate without storing it in clear."""
    return hmac.digest(key, b"id:" + text.encode(), "sha256").hex()[:32]
