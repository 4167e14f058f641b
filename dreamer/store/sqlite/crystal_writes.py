"""A crystal written (audited) and found by its content hash: the crystals table as a note
uses it. The rest of the table (reads, changes, forgetting, vectors) is crystals.py."""

from __future__ import annotations

from dreamer.store.sqlite.base import Connected, marks
from dreamer.support.times import iso

TYPE_CHECKING = False  # as typing's, without importing typing (~2 ms of a fresh note)
if TYPE_CHECKING:
    from dreamer.store.crystal import NewCrystal


class CrystalWrites(Connected):
    """The ``crystals`` table's inserts, the audit log, and a crystal by its content hash."""

    def add_crystal(self, crystal: NewCrystal) -> tuple[int, bool]:
        """Insert a crystal unless one with the same content exists; return (id, created)."""
        row = crystal.columns()
        stamp = iso(crystal.at)
        row.update(created_at=stamp, updated_at=stamp)
        with self.transaction():
            found = self.find_by_hash(row["content_hash"])
            if found is not None:
                return found, False
            cursor = self.db.execute(
                f"INSERT INTO crystals ({', '.join(row)}) VALUES ({marks(row)})", list(row.values())
            )
            crystal_id = int(cursor.lastrowid or 0)
            detail = {"source": crystal.source, "lifecycle": crystal.lifecycle}
            self.audit(crystal_id, "created", detail, crystal.at)
            return crystal_id, True

    def find_by_hash(self, digest: str) -> int | None:
        """The id of the crystal with this content hash, if any."""
        return self._one("SELECT id FROM crystals WHERE content_hash = ?", [digest])
