"""What the memory page changes, each through the core function the CLI calls.

Pin, unpin, adopt and discard are ``dreamer.dream.pins`` and ``dreamer.dream.review`` as they
are; a forget is ``Workspace.forget`` (the workspace lock, the tombstones, the journal row, the
purge) after a preview of exactly what it removes; a held item is accepted through
``dreamer.memory.held`` (forgetting one is the ordinary forget, as ``dream held forget``).
Two pieces live here because no command does them:

- ``edit_line`` is a hand edit, made as a person makes one in an editor: no workspace lock
  (a person takes none; a dream that read the file before it changed defers, and the next
  dream keeps the line: ``dreamer.dream.hand_edits``), the file rewritten atomically, and
  only when the line is still the one the page showed. The new text is redacted first, as
  every text that enters is.
- ``preview`` lists what a forget of these crystals would take: each crystal whole, the
  MEMORY.md lines that carry it (the same ``carries`` the forget uses) and the pending notes
  that are it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from dreamer.errors import UsageError, WorkspaceError
from dreamer.memory import forget_search, forgetting
from dreamer.memory.workspace import Workspace
from dreamer.store import content_hash
from dreamer.store.base import Leasing
from dreamer.support.files import atomic_write

MAX_LINE = 2000  # characters: a line of MEMORY.md, not a document


def edit_line(ws: Workspace, number: int, before: str, after: str) -> str:
    """Replace MEMORY.md line ``number`` (still ``before``) with ``after``; the line written."""
    if isinstance(ws.store, Leasing):
        raise UsageError(
            "MEMORY.md's state lives in the shared store here (memory.store.url); edit it "
            "through a dream, not the page"
        )
    if "\n" in after or "\r" in after:
        raise UsageError("an edit replaces one line; write one line, or edit MEMORY.md itself")
    if len(after) > MAX_LINE:
        raise UsageError(f"a line of MEMORY.md is at most {MAX_LINE} characters")
    try:
        text = ws.memory_md.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise UsageError("there is no MEMORY.md yet; a dream writes the first one") from None
    except (OSError, UnicodeDecodeError) as e:
        raise WorkspaceError(f"cannot read {ws.memory_md} ({e}); fix the file by hand") from e
    lines = text.split("\n")
    if not 0 <= number < len(lines) or lines[number] != before:
        raise UsageError(
            "MEMORY.md changed since the page showed it (a dream or an edit); reload the page "
            "and edit again"
        )
    written = ws.redact(after).text
    lines[number] = written
    atomic_write(ws.memory_md, "\n".join(lines))
    return written


def preview(
    ws: Workspace, ids: Sequence[int] | None = None, query: str | None = None
) -> dict[str, Any]:
    """What forgetting these crystals (by id, or those a query selects) would remove."""
    if bool(ids) == bool(query):
        raise UsageError("name crystal ids or a search (one of the two)")
    if query:
        chosen = [(m.crystal, m.marked) for m in forget_search.select(ws.store, query)]
        if not chosen:
            raise UsageError(f"no crystal holds every word of {query!r}; nothing would go")
    else:
        crystals = [ws.store.crystals.get(i) for i in forgetting.crystal_ids(ids)]
        chosen = [(crystal, crystal.text) for crystal in crystals]
    texts = [crystal.text for crystal, _ in chosen]
    hashes = {content_hash(text) for text in texts}
    memory = ws.read_memory(errors="replace")
    return {
        "crystals": [
            {"id": c.id, "text": c.text, "marked": marked, "lifecycle": c.lifecycle}
            for c, marked in chosen
        ],
        "memory_lines": [
            line
            for line in memory.split("\n")
            if line.strip() and any(forgetting.carries(line, text) for text in texts)
        ],
        "scratch_notes": sum(content_hash(n.text) in hashes for n in ws.scratch.waiting()),
        "many": len(chosen) > forget_search.FEW,
    }


def forget(ws: Workspace, ids: Sequence[int], now: datetime) -> dict[str, Any]:
    """Forget these crystals as ``dream forget`` does; what went, by place."""
    checked = forgetting.crystal_ids(ids)
    if not checked:
        raise UsageError("name the crystals to forget; the preview lists them")
    report = ws.forget(checked, reason="from the memory page", now=now)
    if report.report_removed:  # drawn before with the text: drawn again without it
        from dreamer.service import report as memory_report

        memory_report.write(ws, now)
    return report.to_dict()
