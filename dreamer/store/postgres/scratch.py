"""The scratch write-ahead log as rows, in PostgreSQL.

On one machine the scratch is a file (``memory/scratch.md``); a fleet's workers run on machines
that do not share the workspace folder, so on PostgreSQL each note is a row of ``scratch``.
A row is *pending* (``rotated_by`` NULL) until a dream takes it: rotation marks every pending
row with the dream's lease token in one statement, so a note appended meanwhile stays pending
for the next dream. A failed dream puts its rows back (``rotated_by`` NULL again); a committed
one deletes those it consumed and puts back the rest. Order is ``seq``, the order of arrival,
so notes put back are in front of those that came during the dream, as in the file.
Times are ISO-8601 text, as in every other table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from dreamer.store.base import ScratchRow
from dreamer.store.postgres.base import Connected
from dreamer.support.times import iso


class ScratchTables(Connected):
    """The ``scratch`` table: one workspace's pending and rotated notes."""

    def scratch_append(
        self,
        text: str,
        at: datetime,
        importance: float,
        *,
        about: str | None = None,
        replaces: str | None = None,
    ) -> int:
        """Store one pending note (committed before this returns); its ``seq``."""
        return int(
            self._one(
                "INSERT INTO scratch (workspace, at, importance, text, about, replaces)"
                " VALUES (%s, %s, %s, %s, %s, %s) RETURNING seq",
                [self.ws, iso(at), float(importance), text, about, replaces],
            )
        )

    def scratch_rows(self, *, pending: bool = True, rotated: bool = True) -> list[ScratchRow]:
        """The notes of the log, in order of arrival: pending ones, rotated ones or both."""
        if not (pending or rotated):
            return []
        where = (
            ""
            if pending and rotated
            else (" AND rotated_by IS NULL" if pending else " AND rotated_by IS NOT NULL")
        )
        return _rows(
            self._all(
                "SELECT seq, at, importance, text, rotated_by, about, replaces FROM scratch"
                " WHERE workspace = %s" + where + " ORDER BY seq",
                [self.ws],
            )
        )

    def scratch_rotate(self, token: int) -> list[ScratchRow]:
        """Mark every pending note as taken by the dream holding ``token``; those notes."""
        rows = self._all(
            "UPDATE scratch SET rotated_by = %s WHERE workspace = %s AND rotated_by IS NULL"
            " RETURNING seq, at, importance, text, rotated_by, about, replaces",
            [token, self.ws],
        )
        return sorted(_rows(rows))  # RETURNING keeps no order

    def scratch_restore(self, up_to_token: int | None) -> int:
        """Put back the notes rotated by dreams with a token up to ``up_to_token`` (every
        rotated note when None); how many. A newer holder's notes are not this caller's."""
        bound = "" if up_to_token is None else " AND rotated_by <= %s"
        params = [self.ws] if up_to_token is None else [self.ws, up_to_token]
        cursor = self._run(
            "UPDATE scratch SET rotated_by = NULL WHERE workspace = %s AND rotated_by IS NOT NULL"
            + bound,
            params,
        )
        return int(cursor.rowcount)

    def scratch_settle(self, token: int, keep: Iterable[int]) -> int:
        """After the dream holding ``token`` committed: put back its notes ``keep`` names (by
        seq) and delete the others it took, in one transaction; how many went back."""
        kept = sorted({int(seq) for seq in keep})
        with self.transaction():
            self._run(
                "DELETE FROM scratch WHERE workspace = %s AND rotated_by = %s"
                " AND NOT (seq = ANY(%s))",
                [self.ws, token, kept],
            )
            cursor = self._run(
                "UPDATE scratch SET rotated_by = NULL WHERE workspace = %s AND rotated_by = %s",
                [self.ws, token],
            )
            return int(cursor.rowcount)

    def scratch_rewrite(self, changes: Mapping[int, str | None]) -> None:
        """Give these notes (by seq) new text, or delete those mapped to None, together."""
        if not changes:
            return
        with self.transaction():
            gone = [seq for seq, text in changes.items() if text is None]
            if gone:
                self._run(
                    "DELETE FROM scratch WHERE workspace = %s AND seq = ANY(%s)", [self.ws, gone]
                )
            for seq, text in changes.items():
                if text is not None:
                    self._run(
                        "UPDATE scratch SET text = %s WHERE workspace = %s AND seq = %s",
                        [text, self.ws, seq],
                    )

    def scratch_stamp(self) -> tuple[int, int, int]:
        """(count, highest seq, total length) of the pending notes: changes when they do."""
        row = self._all(
            "SELECT count(*), coalesce(max(seq), 0), coalesce(sum(length(text)), 0)"
            " FROM scratch WHERE workspace = %s AND rotated_by IS NULL",
            [self.ws],
        )[0]
        return int(row[0]), int(row[1]), int(row[2])


def _rows(rows: list[Any]) -> list[ScratchRow]:
    return [
        (int(s), a, float(i), t, None if r is None else int(r), about, replaces)
        for s, a, i, t, r, about, replaces in rows
    ]
