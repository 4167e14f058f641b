"""The jobs table ``dream worker`` processes share: due jobs claimed with ``FOR UPDATE SKIP
LOCKED`` under a lease, finished under a fencing token.

One row per workspace and job kind (``consolidate``, ``dream``): when it is next due, who holds
it and until when, and how often it ran. A claim takes due rows whose lease is free or expired,
sets ``lease_owner``/``lease_until`` and bumps ``lease_token``; the claim remembers the token.
``finish`` moves ``next_due`` on and counts the run only while the row still carries that token:
a worker whose lease expired (and whose job another worker took) finishes nothing. Every
finished run is also a row of ``job_runs``, unique per (workspace, kind, due time): a due time
runs once, whatever happens to the workers. Times are parameters (``now``), never read here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import psycopg

from dreamer.errors import StoreUnavailable
from dreamer.store.postgres.base import LOCK_CLASS, reported

MIGRATIONS: list[tuple[str, tuple[str, ...]]] = [
    (
        "j001_jobs",
        (
            """
            CREATE TABLE jobs (
                workspace TEXT NOT NULL,
                kind TEXT NOT NULL,
                interval_seconds DOUBLE PRECISION NOT NULL,
                next_due TIMESTAMPTZ NOT NULL,
                lease_owner TEXT,
                lease_until TIMESTAMPTZ,
                lease_token BIGINT NOT NULL DEFAULT 0,
                runs_count BIGINT NOT NULL DEFAULT 0,
                last_started TIMESTAMPTZ,
                last_outcome TEXT,
                last_detail TEXT,
                PRIMARY KEY (workspace, kind)
            )
            """,
            "CREATE INDEX jobs_due ON jobs (next_due)",
            """
            CREATE TABLE job_runs (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                workspace TEXT NOT NULL,
                kind TEXT NOT NULL,
                due_at TIMESTAMPTZ NOT NULL,
                owner TEXT NOT NULL,
                started_at TIMESTAMPTZ NOT NULL,
                finished_at TIMESTAMPTZ NOT NULL,
                outcome TEXT NOT NULL,
                detail TEXT,
                UNIQUE (workspace, kind, due_at)
            )
            """,
        ),
    ),
]
JOB_FIELDS = (
    "workspace",
    "kind",
    "interval_seconds",
    "next_due",
    "lease_owner",
    "lease_until",
    "lease_token",
    "runs_count",
    "last_started",
    "last_outcome",
    "last_detail",
)


@dataclass(frozen=True)
class Claim:
    """A job a worker holds: which, for which due time, under which fencing token."""

    workspace: str
    kind: str
    due_at: datetime
    interval_seconds: float
    token: int
    owner: str


class JobQueue:
    """The shared jobs table of a PostgreSQL database."""

    def __init__(self, url: str):
        self.url = url
        self.conn = self._connect()
        try:
            with reported():
                self._migrate()
        except BaseException:
            self.conn.close()
            raise

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(self.url, autocommit=True)
        except psycopg.Error as e:
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise StoreUnavailable(
                f"cannot connect to the jobs database ({first}); check --db "
                "(or DREAM_STORE_URL) and that the server is running"
            ) from e

    def reconnect(self) -> None:
        """A fresh connection (after the server restarted or the network dropped)."""
        with contextlib.suppress(psycopg.Error):
            self.conn.close()
        self.conn = self._connect()

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        with reported():
            return self.conn.execute(sql, list(params))

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def __enter__(self) -> JobQueue:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        conn = self.conn
        conn.execute(
            "CREATE TABLE IF NOT EXISTS dreamer_migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
        )
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", [LOCK_CLASS])
            done = {row[0] for row in conn.execute("SELECT name FROM dreamer_migrations")}
            for name, statements in MIGRATIONS:
                if name not in done:
                    for statement in statements:
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO dreamer_migrations (name, applied_at)"
                        " VALUES (%s, now()::text)",
                        [name],
                    )

    def register(
        self, workspace: str, kind: str, interval_seconds: float, next_due: datetime
    ) -> bool:
        """Add a workspace's job (due at ``next_due``); an existing one keeps its schedule and
        takes the new interval. True when the job is new."""
        row = self._execute(
            "INSERT INTO jobs (workspace, kind, interval_seconds, next_due)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (workspace, kind)"
            " DO UPDATE SET interval_seconds = excluded.interval_seconds"
            " RETURNING (xmax = 0)",
            [workspace, kind, interval_seconds, next_due],
        ).fetchone()
        return bool(row and row[0])

    def remove(self, workspace: str) -> int:
        """Take a workspace's jobs out of the table; how many there were."""
        cursor = self._execute("DELETE FROM jobs WHERE workspace = %s", [workspace])
        return cursor.rowcount

    def claim(self, owner: str, now: datetime, lease: timedelta, limit: int = 1) -> list[Claim]:
        """Take up to ``limit`` due jobs whose lease is free or expired, oldest due first."""
        rows = self._execute(
            "UPDATE jobs j SET lease_owner = %s, lease_until = %s,"
            " lease_token = j.lease_token + 1, last_started = %s"
            " FROM (SELECT workspace, kind FROM jobs WHERE next_due <= %s"
            "   AND (lease_until IS NULL OR lease_until <= %s)"
            "   ORDER BY next_due, workspace, kind LIMIT %s FOR UPDATE SKIP LOCKED) due"
            " WHERE j.workspace = due.workspace AND j.kind = due.kind"
            " RETURNING j.workspace, j.kind, j.next_due, j.interval_seconds, j.lease_token",
            [owner, now + lease, now, now, now, limit],
        ).fetchall()
        return [Claim(row[0], row[1], row[2], float(row[3]), int(row[4]), owner) for row in rows]

    def renew(self, claim: Claim, now: datetime, lease: timedelta) -> bool:
        """Extend a held lease (a long dream); False when it was lost to another worker."""
        cursor = self._execute(
            "UPDATE jobs SET lease_until = %s WHERE workspace = %s AND kind = %s"
            " AND lease_token = %s",
            [now + lease, claim.workspace, claim.kind, claim.token],
        )
        return cursor.rowcount == 1

    def finish(
        self,
        claim: Claim,
        started_at: datetime,
        now: datetime,
        outcome: str,
        detail: str | None,
        interval_seconds: float | None = None,
        next_due: datetime | None = None,
    ) -> bool:
        """Record a run and schedule the next one, if the claim still holds (its token).

        The next due time is ``next_due`` (a cron schedule's next time) or the claimed one plus
        the interval; if that has passed already (the job ran late or overran), the missed due
        times fold into one run due ``now``.
        False, and nothing written, when the lease was lost: the run does not count.
        """
        every = interval_seconds if interval_seconds is not None else claim.interval_seconds
        following = max(next_due or claim.due_at + timedelta(seconds=every), now)
        with reported(), self.conn.transaction():
            cursor = self.conn.execute(
                "UPDATE jobs SET next_due = %s, interval_seconds = %s, lease_owner = NULL,"
                " lease_until = NULL, runs_count = runs_count + 1, last_outcome = %s,"
                " last_detail = %s WHERE workspace = %s AND kind = %s AND lease_token = %s",
                [
                    following,
                    every,
                    outcome,
                    detail,
                    claim.workspace,
                    claim.kind,
                    claim.token,
                ],
            )
            if cursor.rowcount != 1:
                return False
            self.conn.execute(
                "INSERT INTO job_runs (workspace, kind, due_at, owner, started_at, finished_at,"
                " outcome, detail) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    claim.workspace,
                    claim.kind,
                    claim.due_at,
                    claim.owner,
                    started_at,
                    now,
                    outcome,
                    detail,
                ],
            )
        return True

    def release(self, claim: Claim) -> None:
        """Give a claimed job back unrun (a worker stopping), due as it was."""
        self._execute(
            "UPDATE jobs SET lease_owner = NULL, lease_until = NULL"
            " WHERE workspace = %s AND kind = %s AND lease_token = %s",
            [claim.workspace, claim.kind, claim.token],
        )

    def jobs(self) -> list[dict[str, Any]]:
        """Every job row, by workspace and kind."""
        rows = self._execute(
            f"SELECT {', '.join(JOB_FIELDS)} FROM jobs ORDER BY workspace, kind"
        ).fetchall()
        return [dict(zip(JOB_FIELDS, row, strict=True)) for row in rows]

    def pending(self, now: datetime) -> tuple[int, int]:
        """(due and claimable now, held under a live lease) job counts."""
        row = self._execute(
            "SELECT count(*) FILTER (WHERE next_due <= %s AND (lease_until IS NULL"
            " OR lease_until <= %s)), count(*) FILTER (WHERE lease_until > %s) FROM jobs",
            [now, now, now],
        ).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    def runs(self, workspaces: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Finished runs (of these workspaces, if given), oldest first."""
        fields = ("workspace", "kind", "due_at", "owner", "started_at", "finished_at", "outcome")
        where, params = (
            ("WHERE workspace = ANY(%s)", [list(workspaces)]) if workspaces else ("", [])
        )
        rows = self._execute(
            f"SELECT {', '.join(fields)} FROM job_runs {where} ORDER BY id", params
        ).fetchall()
        return [dict(zip(fields, row, strict=True)) for row in rows]
