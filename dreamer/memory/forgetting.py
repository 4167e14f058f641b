"""Explicit forgetting: the text of chosen crystals removed everywhere, bytes included.

The engine never deletes on its own; this runs only when a user or an agent asks (``dream
forget``, the ``memory_forget`` tool, or a forget request in a note that a dream resolves).
For each crystal it:

1. empties the crystal (text, vector) and keeps a tombstone: id, content hash, dates, why;
2. drops the note from the scratch (and from a scratch rotated by a running dream);
3. drops the lines of MEMORY.md that carry it, atomically, journaled as a ``forgotten`` row
   (which holds the new state only: the old one would still carry the text);
4. removes the lines that carry it from the journal's stored states, drafts and answers and
   from stimulus reasons, and drops the logged searches and gaps whose query names it;
5. removes those lines from the seed migration's backups of MEMORY.md, and deletes
   ``memory/report.html`` (a page drawn before: ``dream forget`` draws it again);
6. purges the database files (a rebuilt file with no free page, merged full-text index,
   emptied WAL; on PostgreSQL, lexemes no crystal uses any more are deleted).

It takes a ``Forgettable``, the few parts of a workspace it touches, so it never imports the
workspace: ``Workspace.forget`` calls it, and so do redaction and forget requests.

The audit log records the forget without the text. A line "carries" a text when one holds the
other (ignoring case, spacing and a list marker), or when most of the line's words come from
it (three or more, stems compared): a dream may reword a note, so the words decide.

What was *made* from the text goes too, however reworded: a topic label ("Mostly busy with:
attic quokkavelvet."), a pointer's keywords, a skill's name, a summary in the journal. The
*lost words* of a forget are the content words of the forgotten texts that no crystal left
holds (the full-text index counts them after the crystals are emptied); a line of derived
text holding one is dropped whole (rewriting it without the word would leave a label that no
longer says anything, and the next dream writes what the remaining crystals support). The
state's title and section headings are the only lines kept whatever they hold: they are the
shape of MEMORY.md, not memory.
"""

from __future__ import annotations

import functools
import glob
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from dreamer.errors import UsageError, WorkspaceError
from dreamer.memory import forget_pending
from dreamer.memory.forget_search import same_word
from dreamer.memory.scratch import ScratchLog
from dreamer.memory.state import TITLE, sections
from dreamer.store import Store, content_hash
from dreamer.support.files import atomic_write
from dreamer.support.secrets import PLACEHOLDER
from dreamer.support.times import iso
from dreamer.support.words import RESTATEMENT_STOP_WORDS, STOP_WORDS, stem, words

MIN_SHARED_WORDS = 3
SHARED_SHARE = 0.6
FORGOTTEN = "[forgotten]"
MIN_QUOTE = 12  # characters: shorter texts are too common to be "the" text
MIN_LOST = 3  # characters: shorter words ("a", "12") say nothing of what was forgotten
# Journal outcomes whose new_state dreamer wrote to MEMORY.md (as dreamer.dream.hand_edits
# reads them: that layer is above this one).
WROTE_MEMORY = ("committed", "restored", "forgotten")
_STATUS = re.compile(r"^_Last dream:.*_\s*$")  # the state's status line: the clock, the mood
_MARKER = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(?:\[[^\]]*\]\s*)?(?:\w+:\s+)?")


class Forgettable(Protocol):
    """What forgetting and redaction need of a workspace (``Workspace`` is one)."""

    @property
    def store(self) -> Store: ...

    @property
    def scratch(self) -> ScratchLog: ...

    @property
    def seed_backup(self) -> Path: ...

    @property
    def report_html(self) -> Path: ...

    def read_memory(self, *, errors: str = "strict") -> str: ...

    def write_memory(self, text: str, now: datetime) -> None: ...


@dataclass
class ForgetReport:
    """What one forget removed, by place (counts and ids, never the text)."""

    forgotten: list[int] = field(default_factory=list)
    vectors: int = 0  # of the forgotten crystals, those that had a vector
    index_entries: int = 0  # full-text index entries removed (crystals that had text)
    lost_words: int = 0  # words no crystal holds any more, cleaned from derived text
    scratch_notes: int = 0
    memory_lines: int = 0
    journal_rows: int = 0
    searches: int = 0  # of journal_rows: the logged searches and gaps dropped
    requests: int = 0  # forget requests waiting for the user that this answered or cleaned
    backup_lines: int = 0
    report_removed: bool = False
    dream_id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)

    def receipt(self) -> list[str]:
        """What was removed from where, one place a line (counts and ids, never the text)."""
        ids = ", ".join(f"#{crystal_id}" for crystal_id in self.forgotten)
        rows = [
            ("crystals", f"{len(self.forgotten)} emptied ({ids}); a tombstone keeps each id"),
            ("vectors", f"{self.vectors} removed"),
            ("full-text index", f"{self.index_entries} entrie(s) removed"),
            ("scratch", f"{self.scratch_notes} pending note(s) removed"),
            ("MEMORY.md", f"{self.memory_lines} line(s) removed"),
            (
                "journal",
                f"{self.journal_rows - self.searches} row(s) rewritten, "
                f"{self.searches} logged search(es) dropped",
            ),
            ("seed backups", f"{self.backup_lines} line(s) removed"),
            ("forget requests", f"{self.requests} waiting request(s) answered or cleaned"),
            ("report", "drawn again without it" if self.report_removed else "none drawn"),
            ("derived text", f"{self.lost_words} word(s) no memory holds any more, cleaned"),
        ]
        return [f"  {place:<16} {what}" for place, what in rows]


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def _stems(text: str) -> set[str]:
    return {stem(w) for w in words(text) if len(w) >= 3 and w not in RESTATEMENT_STOP_WORDS}


def lost_words(
    store: Store, texts: Sequence[str], kept: Sequence[str] = (), *, asking: Sequence[str] = ()
) -> frozenset[str]:
    """The content words of ``texts`` that no crystal holds (once the texts are emptied) but
    the ``asking`` ones, nor any of the ``kept`` texts (a person's own lines of MEMORY.md)."""
    candidates = sorted(
        {
            word
            for text in texts
            for word in words(PLACEHOLDER.sub(_placeholder_hash, text))
            if len(word) >= MIN_LOST and word not in STOP_WORDS
        }
    )
    if not candidates:
        return frozenset()
    held = store.search.term_frequencies(candidates)
    theirs = {word for text in kept for word in words(text)}
    asked = [{stem(word) for word in words(text)} for text in asking]
    return frozenset(
        word
        for word in candidates
        if held.get(word, 0) <= sum(stem(word) in stems for stems in asked) and word not in theirs
    )


def hand_written(store: Store, memory: str, texts: Sequence[str]) -> list[str]:
    """The lines of ``memory`` a person wrote (dreamer did not) that carry none of ``texts``."""
    last = store.journal.latest_dream_id(WROTE_MEMORY)
    written = store.journal.get_dream(last).get("new_state") if last is not None else None
    ours = set(written.split("\n")) if isinstance(written, str) else set()
    return [
        line
        for line in memory.split("\n")
        if line.strip() and line not in ours and not any(carries(line, t) for t in texts)
    ]


def _placeholder_hash(found: re.Match[str]) -> str:
    # "[secret:aws-key#1a2b]": its hash names that secret; "secret" and the kind do not.
    return " " + found.group(0).rsplit("#", 1)[1].rstrip("]") + " "


def holds_lost(line: str, lost: frozenset[str]) -> bool:
    """Whether a line holds one of the lost words (or another form of one)."""
    if not lost:
        return False
    lost_stems = _stems_of(lost)
    return any(word in lost or stem(word) in lost_stems for word in words(line))


@functools.lru_cache(maxsize=4)  # one forget scrubs every stored line with the same words
def _stems_of(lost: frozenset[str]) -> frozenset[str]:
    return frozenset(stem(word) for word in lost)


@functools.cache
def _shape_lines() -> frozenset[str]:
    return frozenset([_normal(TITLE), *(_normal(f"## {s.title}") for s in sections())])


def _gone(line: str, texts: Sequence[str], lost: frozenset[str]) -> bool:
    if _normal(line) in _shape_lines() or _STATUS.match(line):
        return False
    return holds_lost(line, lost) or any(carries(line, text) for text in texts)


def carries(line: str, text: str) -> bool:
    """Whether a line of text quotes or restates ``text`` (see the module docstring)."""
    body = _normal(_MARKER.sub("", line))
    whole = _normal(text)
    if not body or not whole:
        return False
    if (len(whole) >= MIN_QUOTE and whole in body) or (len(body) >= MIN_QUOTE and body in whole):
        return True
    mine, theirs = _stems(body), _stems(whole)
    shared = len(mine & theirs)
    return shared >= MIN_SHARED_WORDS and shared >= SHARED_SHARE * len(mine)


def names(query: str, texts: Sequence[str]) -> bool:
    """Whether a search query names one of ``texts``: each of its words is in it (word forms
    compared), as "Zorbulax" or "locker code" name "Ada's locker code is Zorbulax 7731"."""
    wanted = _stems(query)
    return bool(wanted) and any(
        all(same_word(word, have) for word in wanted) for have in map(_stems, texts)
    )


def scrub(content: str, texts: Sequence[str], lost: frozenset[str] = frozenset()) -> str:
    """``content`` without the lines that carry any of ``texts`` or hold a lost word."""
    lines = content.split("\n")
    kept = [line for line in lines if not _gone(line, texts, lost)]
    return "\n".join(kept) if len(kept) != len(lines) else content


def map_stored(value: str, transform: Callable[[str], str]) -> str:
    """Apply ``transform`` to a stored text: to each string of a JSON value, else to it whole.

    Journal columns hold JSON; transforming its text directly could break the escaping.
    """
    if value[:1] in "[{":
        try:
            data = json.loads(value)
        except json.JSONDecodeError:
            return transform(value)
        mapped = _map_json(data, transform)
        return value if mapped == data else json.dumps(mapped, ensure_ascii=False)
    return transform(value)


def _map_json(data: Any, transform: Callable[[str], str]) -> Any:
    if isinstance(data, str):
        return transform(data)
    if isinstance(data, list):
        return [_map_json(item, transform) for item in data]
    if isinstance(data, dict):
        return {key: _map_json(item, transform) for key, item in data.items()}
    return data


def _scrub_piece(value: str, texts: Sequence[str], lost: frozenset[str]) -> str:
    """One stored string without what carries ``texts`` or a lost word (a one-line string
    goes whole)."""
    if "\n" not in value and _gone(value, texts, lost):
        return FORGOTTEN
    return scrub(value, texts, lost)


def crystal_ids(ids: Any) -> list[int]:
    """Crystal ids as forgetting takes them: a list of whole numbers, else UsageError.

    A string is refused whole: iterated, "12" would name crystals 1 and 2.
    """
    if isinstance(ids, str | bytes) or not isinstance(ids, Iterable):
        raise UsageError(f"crystal ids are a list of whole numbers such as [12], not {ids!r}")
    checked = []
    for value in ids:
        if isinstance(value, bool) or not isinstance(value, int):
            raise UsageError(f"a crystal id is a whole number, not {value!r}")
        if value < 1:
            raise UsageError(f"a crystal id is a whole number from 1, not {value}")
        checked.append(value)
    return list(dict.fromkeys(checked))


def forget(
    ws: Forgettable,
    ids: Sequence[int],
    *,
    reason: str,
    now: datetime,
    asking: Sequence[str] = (),
) -> ForgetReport:
    """Forget these crystals everywhere (the caller holds the workspace lock). ``asking``: the
    texts of the forget requests being honoured, whose words hold nothing up (a note "forget
    the quokkavelvet attic" names the words, it is no memory of them)."""
    store = ws.store
    crystals = [store.crystals.get(crystal_id) for crystal_id in crystal_ids(ids)]  # all or none
    report = ForgetReport()
    texts = [crystal.text for crystal in crystals]
    hashes = {crystal.content_hash for crystal in crystals}
    for crystal in crystals:
        was = store.forgetting.forget_crystal(crystal.id, reason=reason, at=now)
        report.forgotten.append(crystal.id)
        report.vectors += was.embedder is not None
        report.index_entries += bool(was.text)
    old = ws.read_memory(errors="replace")
    lost = lost_words(store, texts, hand_written(store, old, texts), asking=asking)
    report.lost_words = len(lost)

    def drop_note(text: str) -> str | None:
        # Only the very note: another note that talks about it is the user's own words.
        if content_hash(text) in hashes:
            report.scratch_notes += 1
            return None
        return text

    ws.scratch.rewrite(drop_note)
    new = scrub(old, texts, lost)
    if new != old:
        report.memory_lines = old.count("\n") - new.count("\n")
        ws.write_memory(new, now)  # on a shared store, the state row as well
        ids_text = ", ".join(f"#{crystal.id}" for crystal in crystals)
        report.dream_id = store.journal.record_dream(
            {
                "started_at": iso(now),
                "finished_at": iso(now),
                "outcome": "forgotten",
                "reason": f"forgot crystal(s) {ids_text}: {report.memory_lines} line(s) of "
                f"MEMORY.md removed ({reason})",
                "new_state": new,
                "inputs": {"forgotten": report.forgotten},
            }
        )
    report.journal_rows = store.forgetting.rewrite_texts(
        lambda value: map_stored(value, lambda piece: _scrub_piece(piece, texts, lost))
    )
    report.searches = store.search.drop_searches(
        lambda query: names(query, texts) or holds_lost(query, lost)
    )
    report.journal_rows += report.searches
    report.requests = forget_pending.after_forget(
        store, report.forgotten, lambda text: _scrub_piece(text, texts, lost), now
    )
    report.backup_lines = rewrite_backups(ws, lambda text: scrub(text, texts, lost))
    report.report_removed = remove_report(ws)
    store.records.audit(None, "forget receipt", {"reason": reason, **report.to_dict()}, now)
    store.forgetting.purge()
    from dreamer.retrieval.vectors import forgotten  # numpy: only when forgetting

    forgotten(store)  # the vector file's rows of the emptied ids, zeroed now
    return report


def seed_backups(ws: Forgettable) -> list[Path]:
    """The seed migration's backups of MEMORY.md (``MEMORY.md.seed-backup``, ``.2``, ...)."""
    first = ws.seed_backup
    numbered = first.parent.glob(f"{glob.escape(first.name)}.*")
    return sorted(p for p in [first, *numbered] if p.is_file() and not p.name.endswith(".tmp"))


def rewrite_backups(
    ws: Forgettable, transform: Callable[[str], str], *, dry_run: bool = False
) -> int:
    """Rewrite each seed backup (and review mode's waiting candidate) through ``transform``,
    atomically; return the lines changed."""
    removed = 0
    candidate = ws.seed_backup.parent / "memory" / "MEMORY.candidate.md"  # dreamer.dream.review
    for path in [*seed_backups(ws), *([candidate] if candidate.is_file() else [])]:
        try:
            old = path.read_bytes().decode("utf-8", errors="surrogateescape")
            new = transform(old)
            if new != old and not dry_run:
                atomic_write(path, new.encode("utf-8", errors="surrogateescape"))
        except OSError as e:
            raise WorkspaceError(
                f"cannot rewrite {path} ({e.strerror}); make it writable and forget again"
            ) from e
        removed += len(set(old.split("\n")) - set(new.split("\n")))
    return removed


def remove_report(ws: Forgettable) -> bool:
    """Delete ``memory/report.html``, a page drawn before; whether there was one."""
    try:
        ws.report_html.unlink()
    except FileNotFoundError:
        return False
    except OSError as e:
        raise WorkspaceError(
            f"cannot delete {ws.report_html} ({e.strerror}); delete it by hand: it may show "
            "what was removed"
        ) from e
    return True
