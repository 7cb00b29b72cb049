"""Secrets at rest (webhook URLs): sealed with a key kept beside the database, never in it.

A copy of the database alone (a file sent for a bug report, a replica) holds no webhook URL in
clear: each is sealed with AES-256-GCM (the `cryptography` library's AESGCM: a random 96-bit
nonce, a 128-bit tag over the ciphertext and the row's fingerprint, so a sealed value moved to
another row does not open either). The AES key is derived with HKDF-SHA256 from one 32-byte key,
which also keys the fingerprints (HMAC-SHA256) that find a duplicate URL.

The key is `$MAPWATCH_WEBHOOK_KEY` when set (base64, 44 characters: the platform's secret
store, so a database restored from its Litestream replica keeps its webhooks), else the file
`<database>.webhook-key` (created on first use, mode 0600; `mapwatch backup` copies it beside
the backup); an in-memory database gets a key for the life of the process. Without the key a
sealed value cannot be opened: `open_secret` raises `SecretUnreadable` (`KeyMissing` when
there is no key at all), and the webhooks wait for it (docs/operations.md, "Webhooks and
their key").

Values sealed before AES-GCM (`s1`: HMAC-SHA256 as a keystream, then an HMAC tag) are opened
only to be sealed again (`open_legacy`): by the migration `0021_webhook_seal`, or, for a
database migrated while its key was away, at the first read once the key is back.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

# defined in the one exception tree (store/errors.py), and importable from here as before
from mapwatch.store.errors import KeyMissing as KeyMissing
from mapwatch.store.errors import SecretUnreadable as SecretUnreadable

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

VERSION = b"s2"
NONCE = 12  # AES-GCM's 96-bit nonce: random, never reused in practice (2^-32 after 2^32 seals)
LEGACY = b"s1"
KEY_BYTES = 32
KEY_FILE_SUFFIX = ".webhook-key"
KEY_ENV = "MAPWATCH_WEBHOOK_KEY"
_memory_key = secrets.token_bytes(KEY_BYTES)


def key_path(db_file: str) -> Path | None:
    """Where the key of the database `db_file` lives (None: an in-memory database)."""
    return None if not db_file or db_file == ":memory:" else Path(db_file + KEY_FILE_SUFFIX)


def encode_key(key: bytes) -> str:
    """The key as $MAPWATCH_WEBHOOK_KEY takes it (URL-safe base64)."""
    return base64.urlsafe_b64encode(key).decode()


def decode_key(text: str) -> bytes:
    """$MAPWATCH_WEBHOOK_KEY's value as a key; SecretUnreadable for anything else."""
    try:
        key = base64.urlsafe_b64decode(text.strip().encode())
    except (binascii.Error, ValueError):
        key = b""
    if len(key) != KEY_BYTES:
        raise SecretUnreadable(f"${KEY_ENV} is not a key (44 characters of base64, `mapwatch webhook key` "
                               "prints the database's)")
    return key


def env_key() -> bytes | None:
    from mapwatch.store.environment import current

    value = current().webhook_key_text()
    return decode_key(value) if value.strip() else None


def load_key(db_file: str, *, create: bool) -> bytes:
    """The database's key: $MAPWATCH_WEBHOOK_KEY, else its key file, made (0600) when
    `create` and absent. KeyMissing when there is none and `create` is false."""
    from_env = env_key()
    if from_env is not None:
        return from_env
    path = key_path(db_file)
    if path is None:
        return _memory_key
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        if not create:
            raise KeyMissing(f"the key file {path.name} is missing and ${KEY_ENV} is not set") from None
        key = secrets.token_bytes(KEY_BYTES)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key)
    if len(key) != KEY_BYTES:
        raise SecretUnreadable(f"the key file {path.name} is not a key")
    return key


def _aead(key: bytes) -> AESGCM:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    aes_key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"mapwatch webhook url seal v2").derive(key)
    return AESGCM(aes_key)


def seal(key: bytes, text: str, context: bytes = b"") -> bytes:
    """`text` encrypted and authenticated; `context` (the row's fingerprint) is authenticated
    too, and the same must be given to open it."""
    nonce = secrets.token_bytes(NONCE)
    return VERSION + nonce + _aead(key).encrypt(nonce, text.encode(), VERSION + context)


def open_secret(key: bytes, blob: bytes, context: bytes = b"") -> str:
    from cryptography.exceptions import InvalidTag

    if is_legacy(blob):
        raise SecretUnreadable("sealed the old way (s1): not migrated yet")
    if len(blob) < len(VERSION) + NONCE + 16 or not blob.startswith(VERSION):
        raise SecretUnreadable("not a sealed value")
    nonce, ct = blob[len(VERSION):len(VERSION) + NONCE], blob[len(VERSION) + NONCE:]
    try:
        return _aead(key).decrypt(nonce, ct, VERSION + context).decode()
    except InvalidTag:
        raise SecretUnreadable("the key does not open it (another database's key, or altered)") from None


def fingerprint(key: bytes, text: str) -> str:
    """A stable keyed fingerprint of a secret: finds a duplicate without storing it in clear."""
    return hmac.digest(key, b"id:" + text.encode(), "sha256").hex()[:32]


# -- the construction before AES-GCM: opened only to be sealed again ---------------------------

def is_legacy(blob: bytes) -> bool:
    return blob.startswith(LEGACY)


def open_legacy(key: bytes, blob: bytes) -> str:
    """Open an `s1` value (HMAC-SHA256 keystream and tag, keys derived by HMAC from `key`)."""
    enc, mac = hmac.digest(key, b"enc", "sha256"), hmac.digest(key, b"mac", "sha256")
    if len(blob) < len(LEGACY) + 16 + 16 or not blob.startswith(LEGACY):
        raise SecretUnreadable("not a sealed value")
    body, tag = blob[:-16], blob[-16:]
    if not hmac.compare_digest(hmac.digest(mac, body, "sha256")[:16], tag):
        raise SecretUnreadable("the key does not open it (another database's key, or altered)")
    nonce, ct = body[len(LEGACY):len(LEGACY) + 16], body[len(LEGACY) + 16:]
    stream = b"".join(hmac.digest(enc, nonce + i.to_bytes(8, "big"), "sha256") for i in range(len(ct) // 32 + 1))
    return bytes(a ^ b for a, b in zip(ct, stream, strict=False)).decode()
