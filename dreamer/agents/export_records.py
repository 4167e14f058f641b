"""What each record of an export file must hold before ``dream import`` writes any of it.

A file may come from an older dreamer, a hand edit or another tool: each field the import reads
is checked for its type (and a time for its form) here, so a bad record is one error line that
names the line and the field, and nothing of the file lands in the workspace.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dreamer.errors import UsageError
from dreamer.store.kinds import LIFECYCLES, SEMANTIC_TYPES
from dreamer.store.records import DREAM_COLUMNS
from dreamer.support.encoding import unencodable
from dreamer.support.times import parse_iso


def _text(value: Any) -> str | None:
    if not isinstance(value, str):
        return "text"
    return None


def _maybe_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _whole(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return "a whole number, 0 or more"
    return None


def _maybe_whole(value: Any) -> str | None:
    return None if value is None else _whole(value)


def _share(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return "a number from 0 to 1"
    return None if 0 <= value <= 1 else "a number from 0 to 1"


def _maybe_share(value: Any) -> str | None:
    return None if value is None else _share(value)


def _time(value: Any) -> str | None:
    if not isinstance(value, str):
        return "an ISO-8601 time"
    try:
        parse_iso(value)
    except ValueError:
        return "an ISO-8601 time (like 2026-03-12T14:30:00Z)"
    return None


def _maybe_time(value: Any) -> str | None:
    return None if value is None else _time(value)


def _one_of(*allowed: str) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        return None if value in allowed else f"one of {', '.join(allowed)}"

    return check


def _files(value: Any) -> str | None:
    ok = isinstance(value, dict) and all(
        isinstance(name, str)
        and isinstance(ids, list)
        and all(not isinstance(i, bool) and isinstance(i, int) for i in ids)
        for name, ids in value.items()
    )
    return None if ok else "an object of file names, each with a list of crystal ids"


Check = Callable[[Any], str | None]  # the fix (what the value must be), or None when it is fine

# The fields the import reads, by record type; a field left out of the file is an error too.
FIELDS: dict[str, dict[str, Check]] = {
    "memory": {"text": _text},
    "crystal": {
        "id": _whole,
        "text": _text,
        "source": _text,
        "semantic_type": _one_of(*SEMANTIC_TYPES),
        "importance": _share,
        "lifecycle": _one_of(*LIFECYCLES),
        "created_at": _time,
        "updated_at": _time,
        "last_accessed_at": _maybe_time,
        "access_count": _whole,
        "parent_id": _maybe_whole,
        "origin": _maybe_text,
        "consolidated_at": _maybe_time,
    },
    "tombstone": {
        "crystal_id": _whole,
        "source": _text,
        "semantic_type": _one_of(*SEMANTIC_TYPES),
        "importance": _share,
        "created_at": _time,
        "forgotten_at": _time,
    },
    "dream": {"started_at": _time, "outcome": _text},
    "note_files": {"files": _files},
}
# Read when present: a file may leave them out.
OPTIONAL: dict[str, dict[str, Check]] = {
    "crystal": {"dopamine": _maybe_share, "cortisol": _maybe_share, "oxytocin": _maybe_share},
}


def check(path: Path, line: int, row: dict[str, Any]) -> None:
    """Raise UsageError naming the line and field when ``row`` is no record the import reads."""
    kind = row["type"]
    where = f"{path} line {line} ({kind})"
    fix = "fix the record, or export the workspace again with 'dream export --all'"
    for name, rule in FIELDS.get(kind, {}).items():
        if name not in row:
            raise UsageError(f"{where} has no '{name}' field; {fix}")
        _field(where, name, rule(row[name]), row[name], fix)
    for name, rule in OPTIONAL.get(kind, {}).items():
        if name in row:
            _field(where, name, rule(row[name]), row[name], fix)
    if kind == "dream":
        unknown = sorted(set(row) - {"type", *DREAM_COLUMNS})
        if unknown:
            raise UsageError(f"{where} has fields a journal entry has not: {unknown}; {fix}")
    _encodable(where, row, fix)


def _field(where: str, name: str, wanted: str | None, value: Any, fix: str) -> None:
    if wanted is not None:
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise UsageError(f"{where}: '{name}' must be {wanted}, not {shown}; {fix}")


def _encodable(where: str, value: Any, fix: str) -> None:
    """Every text in the record is Unicode a store can hold (no lone surrogate from a JSON
    ``\\ud800`` escape)."""
    if isinstance(value, str):
        at = unencodable(value)
        if at is not None:
            raise UsageError(
                f"{where} holds a lone surrogate (U+{ord(value[at]):04X}), not Unicode text; {fix}"
            )
    elif isinstance(value, dict):
        for key, item in value.items():
            _encodable(where, key, fix)
            _encodable(where, item, fix)
    elif isinstance(value, list):
        for item in value:
            _encodable(where, item, fix)
