"""``dream redact --scan``: secrets already stored in a workspace, redacted in place.

New text is redacted at the door (``Workspace.note``/``index``); this reaches what is already
there, from before redaction existed or from while it was turned off: crystals (text, hash and
vector rewritten, audited as ``redacted`` with counts only), the scratch and a rotated scratch,
MEMORY.md and the seed migration's backups of it, and the journal, search log, gaps and
stimulus reasons; ``memory/report.html`` is deleted (``dream redact`` draws it again). Then the
database files are purged, so the old bytes are gone (see ``Store.purge``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from dreamer.memory.forgetting import map_stored, remove_report, rewrite_backups
from dreamer.memory.workspace import Workspace
from dreamer.retrieval.embed import embed_texts, to_blob
from dreamer.retrieval.vectors import rewritten
from dreamer.support.progress import Progress
from dreamer.support.secrets import redact


@dataclass
class ScanReport:
    """What a scan found (and, unless a dry run, redacted), by place."""

    secrets: int = 0
    crystals: int = 0
    scratch_lines: int = 0
    memory_lines: int = 0
    journal_rows: int = 0
    backup_lines: int = 0
    report_removed: bool = False
    dry_run: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def scan(
    ws: Workspace, *, now: datetime, dry_run: bool = False, progress: Progress | None = None
) -> ScanReport:
    """Redact every stored secret in the workspace (under its lock); report what changed.

    ``progress(done, total)`` counts the crystals scanned (most of the work)."""
    report = ScanReport(dry_run=dry_run)

    def text_of(value: str) -> str:
        found = redact(value)
        report.secrets += len(found.found)
        return found.text

    with ws.lock():
        store = ws.store
        changed: list[int] = []
        crystals = store.crystals.select()
        for number, crystal in enumerate(crystals, 1):
            if progress:
                progress(number, len(crystals))
            found = redact(crystal.text)
            if not found.found:
                continue
            report.crystals += 1
            report.secrets += len(found.found)
            if not dry_run:
                vector = to_blob(embed_texts(ws.embedder, [found.text])[0])
                kinds = sorted({finding.kind for finding in found.found})
                store.forgetting.replace_text(
                    crystal.id,
                    found.text,
                    embedding=vector,
                    embedder=ws.embedder.name,
                    action="redacted",
                    detail={"secrets": len(found.found), "kinds": kinds},
                    at=now,
                )
                changed.append(crystal.id)
        report.scratch_lines = ws.scratch.rewrite(text_of, text_of, dry_run=dry_run)
        old = ws.read_memory(errors="replace")
        new = text_of(old)  # whole: a private key spans lines
        report.memory_lines = len(set(old.split("\n")) - set(new.split("\n")))
        if new != old and not dry_run:
            ws.write_memory(new, now)  # on a shared store, the state row as well
        report.backup_lines = rewrite_backups(ws, text_of, dry_run=dry_run)
        if dry_run:
            return report
        report.journal_rows = store.forgetting.rewrite_texts(
            lambda value: map_stored(value, text_of)
        )
        if report.secrets:  # a page drawn before may show them
            report.report_removed = remove_report(ws)
        store.forgetting.purge()
        rewritten(store, changed)  # the vector file must not keep the old vectors either
    return report
