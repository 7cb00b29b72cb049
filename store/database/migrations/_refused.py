"""What a migration raises when it cannot bring a database across without losing something:
it stops before changing anything and says why (store/database/db.py turns it into the
user's one-line error). Not a migration itself."""

from __future__ import annotations


class Refused(ValueError):
    """This database holds what the migration cannot carry; nothing was changed."""
