"""Migration 0021_webhook_seal: webhook URLs sealed again with AES-GCM."""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.store.database.rows import named_row

NAME = "0021_webhook_seal"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """Webhook URLs sealed with AES-GCM (store/secret_box.py) instead of the HMAC keystream of
    0015: each `s1` value is opened with the old construction and sealed again, bound to its
    row's `url_id`. Without the key (a database restored without it) the rows stay as they are
    and are sealed again at their first read once the key is back (store.subscriptions.webhooks)."""
    from mapwatch.store import secret_box

    rows = db.conn.execute("SELECT id, url_sealed, url_id FROM webhooks WHERE substr(url_sealed, 1, 2) = ?",
                           (secret_box.LEGACY,)).fetchall()
    if not rows:
        return
    main = named_row(db, "PRAGMA database_list")
    try:
        key = secret_box.load_key(str(main["file"] or "") if main else "", create=False)
    except secret_box.SecretUnreadable:
        return
    for webhook_id, blob, url_id in rows:
        try:
            url = secret_box.open_legacy(key, bytes(blob))
        except secret_box.SecretUnreadable:
            continue  # altered, or another key: left for the delivery to report (the webhook is disabled)
        db.conn.execute("UPDATE webhooks SET url_sealed = ? WHERE id = ?",
                        (secret_box.seal(key, url, str(url_id).encode()), webhook_id))
