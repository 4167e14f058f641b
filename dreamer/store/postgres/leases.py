"""The workspace lease and the fenced MEMORY.md state, in PostgreSQL.

On one machine a lock file is enough: the kernel frees it when its process dies. Across
machines the workspace lock is a lease that expires (a worker can vanish without a word), and
an expired holder may still be running. So the lease carries a token that grows with every
new holder, and the state row (MEMORY.md as the dream committed it) takes a write only with the
current token: a dream whose lease was taken over cannot overwrite a newer state.
Times are parameters (``now``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from dreamer.store.postgres.base import Connected
from dreamer.support.times import iso


class LeaseTables(Connected):
    """The ``leases`` and ``states`` tables."""

    def acquire_lease(self, holder: str, now: datetime, ttl: timedelta) -> int | None:
        """Take this workspace's lease if it is free, expired or ours: its fencing token, or
        None when another holder's lease is live."""
        with self.transaction():
            self._run(
                "INSERT INTO leases (workspace) VALUES (%s) ON CONFLICT DO NOTHING", [self.ws]
            )
            return self._one(
                "UPDATE leases SET token = token + (holder IS DISTINCT FROM %s)::int,"
                " holder = %s, expires_at = %s WHERE workspace = %s AND (holder IS NULL"
                " OR holder = %s OR expires_at <= %s) RETURNING token",
                [holder, holder, now + ttl, self.ws, holder, now],
            )

    def lease_holder(self) -> tuple[str | None, datetime | None, int]:
        """(holder, expires_at, token) of this workspace's lease."""
        rows = self._all(
            "SELECT holder, expires_at, token FROM leases WHERE workspace = %s", [self.ws]
        )
        return (rows[0][0], rows[0][1], int(rows[0][2])) if rows else (None, None, 0)

    def renew_lease(self, holder: str, token: int, now: datetime, ttl: timedelta) -> bool:
        """Extend a held lease; False when it is no longer this holder's."""
        with self.transaction():
            cursor = self._run(
                "UPDATE leases SET expires_at = %s WHERE workspace = %s AND holder = %s"
                " AND token = %s",
                [now + ttl, self.ws, holder, token],
            )
            return bool(cursor.rowcount == 1)

    def release_lease(self, holder: str, token: int) -> None:
        """Give the lease up (if still ours); the token stays, so the next holder's grows."""
        with self.transaction():
            self._run(
                "UPDATE leases SET holder = NULL, expires_at = NULL WHERE workspace = %s"
                " AND holder = %s AND token = %s",
                [self.ws, holder, token],
            )

    def write_state(self, text: str, token: int, at: datetime) -> bool:
        """Store MEMORY.md's new state, only if ``token`` is the lease's current token."""
        with self.transaction():
            current = self._one("SELECT token FROM leases WHERE workspace = %s", [self.ws])
            if current is None or int(current) != token:
                return False
            self._run(
                "INSERT INTO states (workspace, text, token, written_at) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (workspace) DO UPDATE SET text = excluded.text,"
                " token = excluded.token, written_at = excluded.written_at",
                [self.ws, text, token, iso(at)],
            )
            return True

    def read_state(self) -> tuple[str, int, str] | None:
        """(text, token, written_at) of the newest committed state, if any."""
        rows = self._all(
            "SELECT text, token, written_at FROM states WHERE workspace = %s", [self.ws]
        )
        return (rows[0][0], int(rows[0][1]), rows[0][2]) if rows else None
