"""The storage interface: what every backend offers, as named methods (no SQL crosses it).

A backend stores one workspace's crystals (with full-text and vector columns), the meta
key/value table, the audit log, the dream journal, hormone history, the search log, curiosity
gaps and scheduled runs. Each role is its own small protocol (``Crystals``, ``Forgetting``,
``Vectors``, ``Search``, ``Records``, ``Hormones``, ``Journal``, ``History``); ``Store`` holds
the connection's life and one property per role, so a caller is checked against the role it
uses (``store.crystals.get(id)``). ``tests/store/test_store_contract.py`` runs the same contract
tests over every implementation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from dreamer.store.identity import content_hash  # noqa: F401  (the backends import it here)
from dreamer.store.rows import Crystal, FadeRow, VectorRow

if TYPE_CHECKING:
    from dreamer.store.crystal import NewCrystal

HormoneRow = tuple[str, float, float, float]  # (at, dopamine, cortisol, oxytocin)
RankRow = tuple[int, str, float, float, int]  # (id, source, julian day, importance, archived)
# (id, text, source, semantic type, importance, lifecycle, created at): what a search returns
HitRow = tuple[int, str, str, str, float, str, str]


class Crystals(Protocol):
    """A workspace's crystals: written, read, changed (each change audited)."""

    def add_crystal(self, crystal: NewCrystal) -> tuple[int, bool]:
        """Insert a crystal unless one with the same content exists; return (id, created)."""
        ...

    def add_crystals(self, crystals: Sequence[NewCrystal]) -> list[tuple[int, bool]]:
        """``add_crystal`` for each, in one transaction; (id, created) of each, in order (a
        bulk load: COPY on PostgreSQL)."""
        ...

    def find_by_hash(self, digest: str) -> int | None:
        """The id of the crystal with this content hash, if any."""
        ...

    def get(self, crystal_id: int) -> Crystal:
        """One crystal by id, or CrystalNotFound."""
        ...

    def crystals_by_id(self, ids: Sequence[int]) -> list[Crystal]:
        """The crystals with these ids (missing ids are left out), by id."""
        ...

    def crystals_about(self, about: str, limit: int = 20) -> list[Crystal]:
        """The newest live crystals whose ``about`` is this (any case), newest first."""
        ...

    def select(
        self,
        *,
        sources: Sequence[str] | None = None,
        lifecycles: Sequence[str] | None = None,
        newest_first: bool = False,
        limit: int | None = None,
    ) -> list[Crystal]:
        """Crystals filtered by source and lifecycle, by id (oldest first unless asked)."""
        ...

    def new_crystals(self, up_to_id: int, limit: int) -> list[Crystal]:
        """Crystals waiting for a dream (generated, unconsolidated, no insight), newest first."""
        ...

    def count_new(self) -> int:
        """How many crystals wait for a dream."""
        ...

    def touched_since(self, since: str, limit: int) -> list[Crystal]:
        """Crystals created or found by a search since ``since``, newest first."""
        ...

    def latest_text(self, source: str, until: str) -> str | None:
        """The text of the newest crystal of ``source`` created at or before ``until``."""
        ...

    def update_crystal(
        self,
        crystal_id: int,
        changes: Mapping[str, Any],
        *,
        action: str,
        at: datetime,
        reason: str | None = None,
    ) -> None:
        """Change some fields of a crystal and record the change in the audit log."""
        ...

    def record_access(self, ids: Sequence[int], at: datetime) -> None:
        """Count a search hit as an access of each crystal."""
        ...

    def count_by_lifecycle(self) -> dict[str, int]:
        """How many crystals are in each lifecycle stage."""
        ...

    def crystal_count(self) -> int:
        """How many crystals there are."""
        ...

    def max_crystal_id(self) -> int:
        """The highest crystal id (0 when empty): ids only grow, so it is a watermark."""
        ...

    def fade_candidates(self, due_before: str) -> list[FadeRow]:
        """Active crystals unchanged since ``due_before`` or used since their last change."""
        ...


class Forgetting(Protocol):
    """What an explicit forget or a redaction does: crystals emptied for good, tombstones, texts
    rewritten, bytes purged.
    """

    def forget_crystal(self, crystal_id: int, *, reason: str, at: datetime) -> Crystal:
        """Empty a crystal (text, vector) for good, keep a tombstone; return it as it was.

        The row stays (its id is never reused) with lifecycle ``forgotten``; reading it by id
        raises CrystalNotFound saying so, and no listing or search returns it.
        """
        ...

    def replace_text(
        self,
        crystal_id: int,
        text: str,
        *,
        embedding: bytes | None,
        embedder: str | None,
        action: str,
        detail: Mapping[str, Any],
        at: datetime,
    ) -> None:
        """Rewrite a crystal's text in place (e.g. redacted), with its new hash and vector."""
        ...

    def tombstone_count(self) -> int:
        """How many crystals were forgotten."""
        ...

    def tombstones(self) -> list[dict[str, Any]]:
        """Every tombstone, by id: what a forget keeps (no text), with the row's kind."""
        ...

    def restore_tombstone(self, row: Mapping[str, Any], at: datetime) -> int:
        """Append an emptied crystal row and its tombstone as a forget leaves them; its id.

        For an import into a new workspace: ``row`` holds the keys ``tombstones`` gives
        (``crystal_id`` aside, which the store assigns as it assigns every id).
        """
        ...

    def rewrite_texts(self, transform: Callable[[str], str]) -> int:
        """Apply ``transform`` to every stored text outside the crystals; count changed rows."""
        ...

    def purge(self) -> None:
        """Make what was deleted or rewritten unrecoverable from the files on disk."""
        ...


class Vectors(Protocol):
    """The crystals' vectors, each marked with the embedder that made it."""

    def vectors_after(self, after_id: int, limit: int) -> list[VectorRow]:
        """Crystals above ``after_id`` (by id, at most ``limit``), with their vectors if any."""
        ...

    def vector_blocks(self, below_id: int, embedder: str, block: int) -> Iterator[list[VectorRow]]:
        """Active crystals below ``below_id`` with vectors made by ``embedder``, in blocks."""
        ...

    def vectors_between(
        self, after_id: int, up_to_id: int, embedder: str, block: int
    ) -> Iterator[list[VectorRow]]:
        """Crystals with vectors made by ``embedder`` and ids in (after_id, up_to_id], by id."""
        ...

    def vectors_of(self, ids: Sequence[int], embedder: str) -> list[tuple[int, bytes]]:
        """(id, vector) of the given crystals that have one made by ``embedder``."""
        ...

    def unembedded(
        self, after_id: int = 0, up_to_id: int | None = None, limit: int | None = None
    ) -> list[tuple[int, str, str]]:
        """(id, source, text) of live crystals with no vector at all, ids in (after, up_to]."""
        ...

    def stale_vectors(self, embedder: str, limit: int) -> list[tuple[int, str]]:
        """(id, text) of live crystals whose vector another embedder made, or that have none."""
        ...

    def count_stale_vectors(self, embedder: str) -> int:
        """How many live crystals need a vector from ``embedder``."""
        ...

    def set_vectors(self, vectors: Sequence[tuple[int, bytes]], embedder: str) -> None:
        """Store new vectors made by ``embedder`` (a re-embedding: the memory is unchanged)."""
        ...


class Search(Protocol):
    """Full-text matching (BM25), what a search ranks and returns, and the search log with its
    curiosity gaps.
    """

    def fts_match(
        self, terms: Sequence[str], also: Sequence[str], limit: int
    ) -> list[tuple[int, float]]:
        """(id, BM25 score, higher is better) of the best matches of any of ``terms``.

        Words in ``also`` only rank: a match must hold one of ``terms``.
        """
        ...

    def fts_match_filtered(
        self, terms: Sequence[str], also: Sequence[str], sessions: bool, limit: int
    ) -> list[tuple[int, float]]:
        """Like ``fts_match``, among session transcripts only (or only the rest)."""
        ...

    def ids_of_kind(self, ids: Sequence[int], sessions: bool) -> set[int]:
        """Those of ``ids`` that are session transcripts (or, with sessions False, the rest)."""
        ...

    def term_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        """In how many crystals each word's indexed stem occurs."""
        ...

    def last_mention(self, words: Sequence[str]) -> str | None:
        """When the newest crystal holding all ``words`` (full-text) was created."""
        ...

    def texts_holding(
        self, groups: Sequence[Sequence[Sequence[str]]], limit: int
    ) -> list[list[str]]:
        """For each group of word sets, in one query: the texts of up to ``limit`` crystals
        (not forgotten) holding every word (full-text) of one of the group's sets."""
        ...

    def rank_rows(self, ids: Sequence[int]) -> list[RankRow]:
        """(id, source, julian day of creation, importance, archived 0/1) of the crystals."""
        ...

    def hit_rows(self, ids: Sequence[int]) -> list[HitRow]:
        """(id, text, source, semantic type, importance, lifecycle, created at) of the crystals
        (the forgotten left out): a search's results, read without writing its batched log."""
        ...

    def newest_day(self) -> float | None:
        """The julian day of the newest crystal's creation."""
        ...

    def record_search(
        self,
        at: datetime,
        query: str,
        search_type: str,
        ids: Sequence[int],
        top_score: float | None,
        *,
        gap: bool,
    ) -> None:
        """Log a search (a gap too when it found nothing good) and count the accesses.

        A backend may batch these writes (SQLite and PostgreSQL do); its reads of the log and
        of crystals include what it holds, and ``close`` writes it."""
        ...

    def search_queries(self, since: str, *, found_only: bool = False) -> list[str]:
        """The queries searched since ``since``, oldest first (with ``found_only``, hits only)."""
        ...

    def drop_searches(self, names: Callable[[str], bool]) -> int:
        """Delete the searches and gaps whose query ``names`` accepts; count the rows."""
        ...

    def open_gaps(self, since: str, limit: int) -> list[tuple[str, str]]:
        """(query, last asked) of searches that found nothing and were not answered since."""
        ...


class Records(Protocol):
    """The meta key/value table and the audit log."""

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        """A value from the meta table."""
        ...

    def set_meta(self, key: str, value: str) -> None:
        """Set a value in the meta table."""
        ...

    def meta_items(self, prefix: str) -> list[tuple[str, str]]:
        """The (key, value) pairs of the meta table whose key starts with ``prefix``."""
        ...

    def audit(
        self, crystal_id: int | None, action: str, detail: Mapping[str, Any], at: datetime
    ) -> None:
        """Append one line to the audit log."""
        ...

    def audit_entries(
        self, crystal_id: int | None = None, limit: int = 100
    ) -> list[dict[str, Any]]:
        """The newest audit rows (of one crystal, if given), newest first, detail decoded."""
        ...

    def latest_actions(self, action: str, rows: int) -> dict[int, str]:
        """For each crystal with an ``action`` row among the newest ``rows`` audit rows: the
        time of its newest such row (read by the database, not decoded row by row)."""
        ...


class Hormones(Protocol):
    """The hormone levels' history: stimuli and decay snapshots."""

    def add_hormone_row(
        self,
        at: datetime,
        levels: Mapping[str, float],
        hormone: str | None,
        delta: float | None,
        reason: str,
        source: str,
    ) -> None:
        """Store the levels right after a stimulus (or a decay snapshot, with no hormone)."""
        ...

    def hormones_at(self, until: str) -> HormoneRow | None:
        """The newest stored levels at or before ``until``."""
        ...

    def hormones_at_row(self, row_id: int) -> HormoneRow | None:
        """The newest stored levels among rows with id at most ``row_id``."""
        ...

    def hormone_rows_after(
        self, after_id: int, until: str
    ) -> list[tuple[int, str, float, float, float]]:
        """(id, at, dopamine, cortisol, oxytocin) of rows after ``after_id`` up to ``until``."""
        ...

    def hormone_history(self, limit: int, *, stimuli_only: bool = False) -> list[dict[str, Any]]:
        """The newest history rows, newest first."""
        ...

    def stimuli_between(self, since: str, until: str, limit: int) -> list[dict[str, Any]]:
        """Stimuli (rows with a hormone) after ``since`` up to ``until``, oldest first."""
        ...

    def stimulus_reasons(self, hormone: str, until: str, limit: int) -> list[str]:
        """Reasons of the newest positive stimuli of ``hormone`` up to ``until`` (non-empty)."""
        ...


class Journal(Protocol):
    """The dream journal and the scheduled runs."""

    def record_dream(self, row: Mapping[str, Any]) -> int:
        """Append one dream to the journal; return its id."""
        ...

    def dream_entries(self, limit: int = 20) -> list[dict[str, Any]]:
        """The newest dreams first: summary fields, consumed and critique counts."""
        ...

    def get_dream(self, dream_id: int) -> dict[str, Any]:
        """One dream, every field (JSON fields decoded), or DreamNotFound."""
        ...

    def dream_totals(self) -> dict[str, float | int]:
        """What every dream together used: dreams, input/output/cache tokens, cost in USD."""
        ...

    def latest_dream_id(self, outcomes: Sequence[str] = ("committed", "restored")) -> int | None:
        """The id of the newest dream with one of these outcomes."""
        ...

    def newest_dream(self) -> tuple[str, str, str | None] | None:
        """(started_at, outcome, reason) of the newest dream."""
        ...

    def record_run(
        self, job: str, started_at: str, finished_at: str, outcome: str, detail: str | None
    ) -> None:
        """Store one scheduled job run."""
        ...

    def last_run(self, job: str) -> tuple[str, str, str | None] | None:
        """(started_at, outcome, detail) of the newest run of ``job``."""
        ...

    def run_outcomes(self) -> list[tuple[str, str]]:
        """(job, outcome) of every recorded run, oldest first."""
        ...

    def run_counts(self, since: str) -> dict[str, dict[str, int]]:
        """{job: {outcome: how many runs}} of the runs started at or after ``since``."""
        ...


class History(Protocol):
    """A workspace's history as a report reads it (read-only)."""

    def activity_span(self) -> tuple[str, str] | None:
        """(first, last) time anything was recorded: a crystal, a hormone row or a dream."""
        ...

    def hormone_rows_between(self, since: str, until: str) -> list[dict[str, Any]]:
        """Hormone history rows (stimuli, decay snapshots) in [since, until], oldest first.

        Keys as ``hormone_history``: at, hormone, delta, reason, source and the three levels.
        """
        ...

    def lifecycle_by_day(self, since: str, until: str) -> dict[str, dict[str, int]]:
        """Per UTC day in [since, until]: crystals created, consolidated, archived, frozen."""
        ...

    def audit_action_counts(
        self, actions: Sequence[str], since: str | None = None
    ) -> dict[str, int]:
        """How many audit rows each of ``actions`` has (since ``since``, if given); 0 if none."""
        ...

    def dream_rows(self, since: str, until: str) -> list[dict[str, Any]]:
        """Journal rows started in [since, until], oldest first, with tokens, cost and counts.

        Counts: ``consumed`` crystals, ``critiques``, ``revisions``; ``has_text`` is 1 when the
        row holds a state or a candidate to diff. No state texts (see ``dream_states``).
        """
        ...

    def dream_states(self, ids: Sequence[int]) -> list[dict[str, Any]]:
        """id, outcome, old_state, new_state, draft and revisions (decoded) of these dreams."""
        ...


class Store(Protocol):
    """One workspace's storage: the connection's life, and one property per role.

    Each role is a small protocol (``store.crystals.get(id)``, ``store.journal.record_dream(row)``);
    a backend's object serves every role itself, so each property returns the store, typed as
    the role a caller may use. Times are ISO-8601 UTC text (``dreamer.support.times.iso``).
    """

    path: Path

    def close(self) -> None:
        """Release the connection."""
        ...

    def transaction(self) -> AbstractContextManager[None]:
        """Group writes so they land together or not at all (nested calls join the outer one)."""
        ...

    def change_mark(self) -> Any:
        """A value that differs whenever the store may have changed since it was taken (any
        writer, any process), so what was read before it may be kept while it stays equal;
        None when the backend cannot tell (nothing read before may be kept)."""
        ...

    def reading(self) -> AbstractContextManager[None]:
        """A stretch of reads (a search) that may all see the store as it was when it began:
        ``change_mark`` is read once for them, where reading it costs a round trip
        (PostgreSQL). A write of the store's own inside it takes the mark afresh."""
        ...

    @property
    def crystals(self) -> Crystals:
        """A workspace's crystals."""
        ...

    @property
    def forgetting(self) -> Forgetting:
        """What an explicit forget or a redaction does."""
        ...

    @property
    def vectors(self) -> Vectors:
        """The crystals' vectors, each marked with the embedder that made it."""
        ...

    @property
    def search(self) -> Search:
        """Full-text matching, what a search ranks and returns, the search log."""
        ...

    @property
    def records(self) -> Records:
        """The meta key/value table and the audit log."""
        ...

    @property
    def hormones(self) -> Hormones:
        """The hormone levels' history."""
        ...

    @property
    def journal(self) -> Journal:
        """The dream journal and the scheduled runs."""
        ...

    @property
    def history(self) -> History:
        """A workspace's history as a report reads it (read-only)."""
        ...


@runtime_checkable
class PairedMatch(Protocol):
    """A search role that can rank only the matches holding two of the query's words (SQLite and
    PostgreSQL): in a large store whose every query word is common, that ranks a fraction of
    what ``fts_match`` ranks."""

    def fts_match_paired(
        self, terms: Sequence[str], also: Sequence[str], limit: int
    ) -> list[tuple[int, float]]:
        """Like ``fts_match``, among the matches holding one of ``terms`` and one of ``also``;
        each with the score ``fts_match`` gives it."""
        ...


@runtime_checkable
class Leasing(Protocol):
    """A store shared across machines: the workspace lock as a lease with a fencing token, and
    MEMORY.md's state as a row only the current token may write (PostgreSQL). A SQLite store
    needs neither: its lock file cannot outlive its process."""

    def acquire_lease(self, holder: str, now: datetime, ttl: timedelta) -> int | None:
        """The lease's token if taken (free, expired or ours), else None."""
        ...

    def lease_holder(self) -> tuple[str | None, datetime | None, int]:
        """(holder, expires_at, token) of the lease."""
        ...

    def renew_lease(self, holder: str, token: int, now: datetime, ttl: timedelta) -> bool:
        """Extend a held lease; False when it was lost."""
        ...

    def release_lease(self, holder: str, token: int) -> None:
        """Give the lease up."""
        ...

    def write_state(self, text: str, token: int, at: datetime) -> bool:
        """Store the state if ``token`` is still the lease's; False (nothing written) if not."""
        ...

    def read_state(self) -> tuple[str, int, str] | None:
        """(text, token, written_at) of the newest state written."""
        ...


# (seq, at, importance, text, rotated_by, about, replaces)
ScratchRow = tuple[int, str, float, str, int | None, str | None, str | None]


@runtime_checkable
class ScratchRows(Protocol):
    """A store that keeps the scratch write-ahead log as rows (PostgreSQL), so the machines of
    a fleet need no shared folder. A SQLite workspace keeps ``memory/scratch.md``."""

    def scratch_append(
        self,
        text: str,
        at: datetime,
        importance: float,
        *,
        about: str | None = None,
        replaces: str | None = None,
    ) -> int:
        """Store one pending note, durably, before returning; its sequence number."""
        ...

    def scratch_rows(self, *, pending: bool = True, rotated: bool = True) -> list[ScratchRow]:
        """Pending and/or rotated notes, in order of arrival."""
        ...

    def scratch_rotate(self, token: int) -> list[ScratchRow]:
        """Mark every pending note as taken by the dream holding ``token``; those notes."""
        ...

    def scratch_restore(self, up_to_token: int | None) -> int:
        """Put back notes rotated with a token up to this one (all when None); how many."""
        ...

    def scratch_settle(self, token: int, keep: Iterable[int]) -> int:
        """Put back the kept (by seq) notes ``token`` took and delete the rest; how many back."""
        ...

    def scratch_rewrite(self, changes: Mapping[int, str | None]) -> None:
        """New texts for these notes (by seq); None deletes one. All or nothing."""
        ...

    def scratch_stamp(self) -> tuple[int, int, int]:
        """A value that changes whenever the pending notes do."""
        ...
