"""Crystal vectors for search: the vector file kept in step with the store, and cosine look-ups.

The store stays the source of truth; ``memory/vectors.bin`` beside ``crystals.db`` is what a
scan reads (``dreamer.retrieval.vector_file``: blocks of int8 sketches and float16 vectors,
row ``id - 1`` for crystal ``id``). So the first scan of a fresh process reads about 100 bytes a
crystal from the file, not every vector out of SQLite into Python objects, and memory stays
flat whatever the size.

Before a scan, ``index_for`` brings the file up to date with what the store says, holding the
store's write transaction as the writers' lock (readers take no lock; a stale file is rare, so
a search rarely waits):

- crystals added since the file's last row are appended; a crystal with no vector yet (a fresh
  ``dream note``) gets a *waiting* row, filled when its vector arrives (in any process);
- crystals forgotten since (the store's tombstone count moved) are zeroed, bytes included; the
  forget itself does that at once (``forgotten``), the count repairs a forget that crashed
  before it could;
- a change of embedder, a re-embedding (``GENERATION_KEY`` bumped), a database replaced by
  an older one or more than ``BIG_APPEND`` new crystals rebuild the file beside the old one,
  outside the lock, then catch up under it and rename it into place.

A store shared across machines (PostgreSQL) or a workspace on a read-only file system gets a
private, unnamed file instead, filled from the store once per process as before: nothing of it
stays on disk.

A search scans every sketch and scores only a shortlist exactly (``nearest``), or scores a given
set of crystals (``cosines``) when the words already found candidates: from the file this
process holds open if it is current (``held``: the store's change mark has not moved since the
file was found current, or the file's header still matches the store), else straight from the
store, so a one-shot ``dream search`` never opens the file.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from dreamer.retrieval.embed import Embedder
from dreamer.retrieval.vector_file import (
    EMPTY,
    NOTE,
    SESSION,
    SKETCH_DIM,
    SLOT_BYTES,
    WAITING_NOTE,
    WAITING_SESSION,
    Header,
    VectorFile,
    projection,
    stamp,
)
from dreamer.store import Store
from dreamer.store.base import Leasing
from dreamer.support.files import FILE_MODE, fsync_dir, open_no_follow

RESCORE = 8
CACHE_ROWS = 131072  # a file of at most this many rows stays in memory between scans (≤ 51 MB)
CACHE_VECTOR_ROWS = 32768  # ... and its vectors too, as float32, up to this many (≤ 34 MB)
WINDOW = 16384  # crystal ids read from the store and written per step of an append
MIN_SIMILARITY = 0.08  # below this a vector match is noise, not a candidate
FILE_NAME = "vectors.bin"
BIG_APPEND = 50_000  # rows: more are written into a new file, outside the store's write lock

# Bumped by whoever gives old crystals new vectors (a reindex): vector files are rebuilt.
GENERATION_KEY = "vectors.generation"

# Full scans run in this process and their time, with bringing the file up to date (``dream
# bench scale`` checks that its probe scanned, and reports how long that took of the search).
scans = 0
scan_seconds = 0.0


class _Stale(Exception):
    """A rebuilt file is already out of date: vectors changed while it was written."""


class VectorIndex:
    """The vector file of one store and embedder, as one process reads and updates it."""

    def __init__(self, path: Path | None, dim: int, embedder: str):
        self.path = path  # None: a private file (shared store, read-only workspace)
        self.dim = dim
        self.embedder = embedder
        self.projection = projection(dim)
        self.header: Header | None = None
        self._file: VectorFile | None = None
        self._inode: tuple[int, int] | None = None
        self._cache: tuple[Any, ...] | None = None  # see cached()
        self._scanned = False
        self._lock = threading.RLock()
        # The store's change mark when the file was last found current (``held``).
        self.mark: Any = None

    # --- opening -----------------------------------------------------------------------------

    @property
    def file(self) -> VectorFile:
        """The open file (opened, or reopened after another process replaced it)."""
        if self._file is not None and self.path is not None:
            with contextlib.suppress(FileNotFoundError):
                stat = os.stat(self.path)
                if (stat.st_dev, stat.st_ino) != self._inode:
                    self._close()
        if self._file is None:
            if self.path is None:
                import tempfile  # only for a private file: a cold `dream search` needs none

                handle = tempfile.TemporaryFile(prefix="dreamer-vectors-")
                fd = os.dup(handle.fileno())
                handle.close()  # unnamed: gone with the process
            else:
                fd = open_no_follow(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0))
            stat = os.fstat(fd)
            self._inode = (stat.st_dev, stat.st_ino)
            self._file = VectorFile(fd, self.dim)
        return self._file

    def _close(self) -> None:
        with self._lock:  # never under a scan's feet
            self._cache = None
            self.mark = None
            if self._file is not None:
                self._file.close()
                self._file = None
                if self.path is None:
                    self.header = None  # a private file is gone with its descriptor

    @contextlib.contextmanager
    def _writing(self, store: Store) -> Iterator[VectorFile]:
        """Hold the writers' lock; the file, current.

        For a named file the lock is the store's own write transaction (``BEGIN IMMEDIATE``):
        every writer of the file takes it, a forget commits under it, and a search needs no
        lock file of its own. A private file has one process: its thread lock suffices.
        """
        with self._lock:
            if self.path is None:
                yield self.file
                return
            with store.transaction():
                yield self.file

    # --- keeping up with the store -------------------------------------------------------------

    def refresh(self, store: Store) -> None:
        """Bring the file up to date with the store (see the module doc)."""
        with self._lock:
            # Taken before anything is read: a change after it moves the mark (``held``).
            mark = store.change_mark()
            if mark is not None and self._file is not None:
                _ = self.file  # reopens a file another process replaced, forgetting the mark
                if mark == self.mark:
                    return  # found current, and the store has not changed since
            self.mark = None
            if self._current(store, self.file.header()):
                self.mark = mark
                return
            with self._writing(store) as file:
                if self._update(store, file):
                    return
            self.header = self._rebuild(store)

    def _update(self, store: Store, file: VectorFile) -> bool:
        """Append, fill and clear rows in place (under the lock); False if a rebuild is due."""
        # Read before any vector: a forget committed after this count is repaired by the next
        # refresh (or by the forget itself), never missed.
        tombstones = store.forgetting.tombstone_count()
        generation = store.records.get_meta(GENERATION_KEY) or ""
        head = file.header()
        newest = store.crystals.max_crystal_id()
        if (
            head is None
            or head.embedder != stamp(self.embedder)
            or head.generation != generation
            or newest < head.rows
            or (newest - head.rows > BIG_APPEND and self.path is not None)
        ):
            return False
        file.repair(head.rows)
        head = self._clear_forgotten(store, file, head, tombstones)
        head = self._append(store, file, head, newest)
        head = self._fill_waiting(store, file, head)
        self.header = file.write_header(head)
        return True

    def _current(self, store: Store, head: Header | None) -> bool:
        if head is None or head.embedder != stamp(self.embedder):
            return False
        current = (
            head.waiting == 0
            and head.rows == store.crystals.max_crystal_id()
            and head.tombstones == store.forgetting.tombstone_count()
            and head.generation == (store.records.get_meta(GENERATION_KEY) or "")
        )
        if current:
            self.header = head
        return current

    def _rebuild(self, store: Store) -> Header:
        """Write every row again: into a new file, outside the lock (a million rows take
        seconds), then, under it, catch up with what changed meanwhile and rename it into
        place. A private file is written again in place."""
        tombstones = store.forgetting.tombstone_count()  # before any vector, as in _update
        generation = store.records.get_meta(GENERATION_KEY) or ""
        empty = Header(0, 0, self.dim, SKETCH_DIM, self.file.block_rows, tombstones, 0, "", "")
        empty = replace(empty, generation=generation, embedder=self.embedder)
        if self.path is None:
            self._cache = None
            self.file.reset()
            head = self._append(store, self.file, empty, store.crystals.max_crystal_id())
            return self.file.write_header(head)
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = open_no_follow(temp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        try:
            fresh = VectorFile(fd, self.dim)
            head = self._append(store, fresh, empty, store.crystals.max_crystal_id())
            with self._writing(store):
                if (store.records.get_meta(GENERATION_KEY) or "") != generation:
                    raise _Stale  # vectors changed again meanwhile: the next search retries
                head = self._clear_forgotten(store, fresh, head, store.forgetting.tombstone_count())
                head = self._append(store, fresh, head, store.crystals.max_crystal_id())
                head = fresh.write_header(self._fill_waiting(store, fresh, head))
                os.replace(temp, self.path)
                fsync_dir(self.path.parent)
        except BaseException as e:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            if isinstance(e, _Stale):
                return empty
            raise
        finally:
            os.close(fd)
        self._close()
        return head

    def _append(self, store: Store, file: VectorFile, head: Header, newest: int) -> Header:
        """Write the rows of crystals head.rows+1 .. newest (empty ones too: a torn append's
        bytes must not survive as a row)."""
        waiting = head.waiting
        for start in range(head.rows, newest, WINDOW):
            end = min(start + WINDOW, newest)  # rows start..end-1: ids start+1..end
            flags = np.zeros(end - start, dtype=np.uint8)
            vectors = np.zeros((end - start, self.dim), dtype=np.float16)
            for block in store.vectors.vectors_between(start, end, self.embedder, WINDOW):
                for row in block:
                    if len(row.embedding) == 2 * self.dim:
                        at = row.id - 1 - start
                        flags[at] = SESSION if row.source == "sessions" else NOTE
                        vectors[at] = np.frombuffer(row.embedding, dtype=np.float16)
            for crystal_id, source, _ in store.vectors.unembedded(start, end):
                if flags[crystal_id - 1 - start] == EMPTY:
                    flags[crystal_id - 1 - start] = (
                        WAITING_SESSION if source == "sessions" else WAITING_NOTE
                    )
                    waiting += 1
            file.write_rows(start, flags, vectors, self.projection)
        return replace(head, rows=max(newest, head.rows), waiting=waiting)

    def _fill_waiting(self, store: Store, file: VectorFile, head: Header) -> Header:
        """Write the vectors that arrived for waiting rows; the rest keep waiting."""
        if not head.waiting:
            return head
        flags = file.flags(head.rows)
        rows = np.flatnonzero((flags == WAITING_NOTE) | (flags == WAITING_SESSION))
        arrived = 0
        for at in range(0, len(rows), 500):
            part = rows[at : at + 500]
            found = dict(store.vectors.vectors_of([int(r) + 1 for r in part], self.embedder))
            for row in part.tolist():
                blob = found.get(row + 1)
                if blob is None or len(blob) != 2 * self.dim:
                    continue
                vector = np.frombuffer(blob, dtype=np.float16).reshape(1, self.dim)
                flag = SESSION if flags[row] == WAITING_SESSION else NOTE
                file.write_rows(row, np.array([flag], dtype=np.uint8), vector, self.projection)
                arrived += 1
        return replace(head, waiting=len(rows) - arrived)

    def _clear_forgotten(
        self, store: Store, file: VectorFile, head: Header, tombstones: int
    ) -> Header:
        """Zero the rows of every forgotten crystal, if the forget count moved."""
        if head.tombstones == tombstones:
            return head
        rows = sorted(
            row["crystal_id"] - 1
            for row in store.forgetting.tombstones()
            if row["crystal_id"] <= head.rows
        )
        flags = file.flags(head.rows)
        waiting = sum(1 for r in rows if flags[r] in (WAITING_NOTE, WAITING_SESSION))
        file.clear_rows(rows)
        return replace(head, tombstones=tombstones, waiting=head.waiting - waiting)

    def forget(self, store: Store) -> None:
        """Zero the rows of crystals forgotten in the store, now (and any torn tail)."""
        with self._writing(store) as file:
            tombstones = store.forgetting.tombstone_count()
            head = file.header()
            if head is None:
                return
            file.repair(head.rows)
            self.header = file.write_header(self._clear_forgotten(store, file, head, tombstones))

    def rewrite(self, store: Store, ids: list[int]) -> None:
        """Write these crystals' rows again from the store (their vectors changed)."""
        with self._writing(store) as file:
            head = file.header()
            if head is None:
                return
            file.repair(head.rows)
            ids = sorted(i for i in set(ids) if 0 < i <= head.rows)
            found = dict(store.vectors.vectors_of(ids, self.embedder))
            sources = {row[0]: row[1] for row in store.search.rank_rows(ids)}
            flags = file.flags(head.rows)
            waiting = head.waiting
            for crystal_id in ids:
                row, blob = crystal_id - 1, found.get(crystal_id)
                waiting -= int(flags[row] in (WAITING_NOTE, WAITING_SESSION))
                if blob is None or len(blob) != 2 * self.dim:
                    file.clear_rows([row])
                    continue
                vector = np.frombuffer(blob, dtype=np.float16).reshape(1, self.dim)
                flag = SESSION if sources.get(crystal_id) == "sessions" else NOTE
                file.write_rows(row, np.array([flag], dtype=np.uint8), vector, self.projection)
            self.header = file.write_header(replace(head, waiting=waiting))

    def cached(self, file: VectorFile, head: Header) -> tuple[Any, ...] | None:
        """(flags, scales, float32 sketches, float32 vectors or None) of every row, kept
        between scans of a small file (``CACHE_ROWS``, ``CACHE_VECTOR_ROWS``): read again
        only after a change (any change writes a new header). The vectors are kept as float32,
        so a search does not widen its candidates again."""
        if head.rows > CACHE_ROWS or not self._scanned:
            # The first scan of a process streams: a one-shot search keeps nothing.
            self._cache, self._scanned = None, True
            return None
        key = (self._inode, head)
        if self._cache is None or self._cache[0] != key:
            buffer = np.empty(file.head_bytes, dtype=np.uint8)
            parts = []
            for block in range(-(-head.rows // file.block_rows)):
                take = min(file.block_rows, head.rows - block * file.block_rows)
                flags, scales, sketches = file.head(block, take, buffer)
                parts.append((flags.copy(), scales.copy(), sketches.astype(np.float32)))
            whole: list[Any] = [np.concatenate(part) for part in zip(*parts, strict=True)]
            # the vectors too, in a small file: a shortlist then needs no read at all
            small = head.rows <= CACHE_VECTOR_ROWS
            # widened once (numpy's own conversion: the same numbers, faster than ``widen``
            # on a whole file, which wins on a few hundred rows)
            whole.append(file.all_vectors(head.rows).astype(np.float32) if small else None)
            self._cache = (key, *whole)
        return self._cache[1:]

    def vectors_of(self, ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """(ids, float32 vectors) of those of ``ids`` whose vector the file holds, by id: from
        the vectors kept in memory if a scan kept them (``cached``), else read from the file
        and widened."""
        # sorted(set()) rather than np.unique, whose check for masked arrays imports numpy.ma
        # (a noticeable part of a fresh search's start)
        rows = np.array(sorted(set(ids)), dtype=np.int64) - 1
        rows = rows[(rows >= 0) & (rows < (self.header.rows if self.header else 0))]
        cache = self._cache
        if cache is None or cache[0] != (self._inode, self.header):
            flags, vectors = self.file.pick(rows)
        elif cache[4] is None:
            flags, vectors = self.file.pick(rows, cache[1][rows])
        else:
            flags = cache[1][rows]
            keep = (flags == NOTE) | (flags == SESSION)
            return rows[keep] + 1, cache[4][rows[keep]]
        keep = (flags == NOTE) | (flags == SESSION)
        return rows[keep] + 1, widen(vectors[keep])

    # --- what tests and callers look at ----------------------------------------------------------

    @property
    def size(self) -> int:
        """How many rows hold a vector."""
        return len(self.ids)

    @property
    def ids(self) -> np.ndarray:
        """The ids of the crystals whose vector the file holds."""
        rows = self.header.rows if self.header else 0
        flags = self.file.flags(rows)
        return np.flatnonzero((flags == NOTE) | (flags == SESSION)) + 1

    @property
    def waiting(self) -> set[int]:
        """The ids of crystals the file waits for a vector of."""
        rows = self.header.rows if self.header else 0
        flags = self.file.flags(rows)
        waiting = np.flatnonzero((flags == WAITING_NOTE) | (flags == WAITING_SESSION))
        return set((waiting + 1).tolist())

    @property
    def generation(self) -> str | None:
        """The store generation the file was built under."""
        return self.header.generation if self.header else None


# The indexes of the stores this process searched lately, each with its file open; one process
# may serve hundreds of workspaces, so file descriptors stay bounded: the oldest is closed.
MAX_OPEN = 16
_indexes: OrderedDict[tuple[str, str], VectorIndex] = OrderedDict()
_indexes_lock = threading.Lock()


def _file_path(store: Store) -> Path | None:
    """Where a store's vector file lives: beside a local database that can be written."""
    if isinstance(store, Leasing):
        return None  # shared across machines: each process keeps its own, unnamed
    folder = store.path.parent
    if not os.access(folder, os.W_OK):
        return None  # a read-only workspace: a private copy
    return folder / FILE_NAME


_WHERE_LIMIT = 64
_where: dict[int, tuple[Path, str]] = {}


def _where_is(store: Store) -> str:
    """The store's database path, resolved once per store object: the file its connection
    opened does not move with a later symlink change or ``chdir`` (and resolving costs a
    system call per part of the path, every search)."""
    path = store.path
    found = _where.get(id(store))
    if found is not None and found[0] is path:  # the same object, not one reusing its id
        return found[1]
    resolved = str(path.resolve())
    if len(_where) >= _WHERE_LIMIT:
        _where.clear()
    _where[id(store)] = (path, resolved)
    return resolved


def index_for(store: Store, embedder: Embedder) -> VectorIndex:
    """The vector index of store's crystals, brought up to date."""
    global scan_seconds
    started = time.perf_counter()
    key = (_where_is(store), embedder.name)
    with _indexes_lock:
        index = _indexes.get(key)
        if index is None or index.dim != embedder.dim:
            index = _indexes[key] = VectorIndex(_file_path(store), embedder.dim, embedder.name)
        _indexes.move_to_end(key)
        while len(_indexes) > MAX_OPEN:
            _indexes.popitem(last=False)[1]._close()
    index.refresh(store)
    scan_seconds += time.perf_counter() - started
    return index


def held(store: Store, embedder: Embedder) -> VectorIndex | None:
    """The vector index of store and embedder this process holds open, if it is current (the
    store unchanged since it was found so, or found so again now); else None. Never opens a
    file: a one-shot search reads its candidates' vectors from the store."""
    mark = store.change_mark()
    if mark is None:
        return None
    with _indexes_lock:
        index = _indexes.get((_where_is(store), embedder.name))
    if index is None or index.dim != embedder.dim:
        return None
    with index._lock:
        if index._file is None:
            return None
        file = index.file  # reopens a file another process replaced, forgetting the mark
        if index.mark != mark:
            # Something changed: is the file still current?
            if not index._current(store, file.header()):
                return None
            index.mark = mark
        return index


def keep_up(store: Store, embedder: Embedder) -> None:
    """Bring a workspace's own vector file up to date (a tick does, so a search need not)."""
    if _file_path(store) is not None:
        index_for(store, embedder)._close()  # a service ticks many workspaces: no fd kept


def forgotten(store: Store) -> None:
    """Zero the vectors of crystals just forgotten from this store's vector file, if any."""
    _drop_private(store)
    index = _named(store)
    if index is None:
        return
    try:
        index.forget(store)
    finally:
        index._close()


def rewritten(store: Store, ids: list[int]) -> None:
    """Write again the rows of crystals whose text and vector changed (a redaction)."""
    _drop_private(store)
    index = _named(store)
    if index is None:
        if ids and isinstance(store, Leasing):
            # Other processes hold private copies with the old vectors: they read them again.
            store.records.set_meta(
                GENERATION_KEY, str(int(store.records.get_meta(GENERATION_KEY) or 0) + 1)
            )
        return
    try:
        index.rewrite(store, ids)
    finally:
        index._close()


def _drop_private(store: Store) -> None:
    """Drop this process's private copies of store's vectors: read again when next needed."""
    with _indexes_lock:
        for key in [key for key in _indexes if key[0] == _where_is(store)]:
            index = _indexes[key]
            if index.path is None:
                index._close()
                del _indexes[key]


def _named(store: Store) -> VectorIndex | None:
    """The store's vector file, opened as its header says (None when it has none)."""
    path = _file_path(store)
    if path is None:
        return None
    for leftover in path.parent.glob(f".{FILE_NAME}.*.tmp"):
        with contextlib.suppress(OSError):
            leftover.unlink()  # a rebuild that crashed: it may hold what was forgotten since
    try:
        with open(path, "rb") as handle:
            data = handle.read(2 * SLOT_BYTES)
    except FileNotFoundError:
        return None
    found = [Header.unpack(data[i * SLOT_BYTES : (i + 1) * SLOT_BYTES]) for i in (0, 1)]
    heads = [h for h in found if h is not None]
    if not heads:
        path.unlink()  # no whole header: nothing in it counts, and it may hold what is gone
        return None
    head = max(heads, key=lambda h: h.seq)
    return VectorIndex(path, head.dim, head.embedder)


def clear_cache() -> None:
    """Close every open vector file of this process (they reopen on the next search)."""
    with _indexes_lock:
        for index in _indexes.values():
            index._close()
        _indexes.clear()


def matvec(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix @ vector`` on this thread, never through BLAS's thread pool.

    A search's products are memory-bound and take well under a millisecond on one core, but
    numpy hands ``@`` to OpenBLAS, which splits it over a thread per core: on a busy machine
    those threads wait for each other, and a product became many times slower than on one
    thread. ``einsum`` without ``optimize`` uses numpy's own
    loop, so no thread count needs changing in the host process, where an agent's own numpy
    work may want every core.
    """
    return np.einsum("ij,j->i", matrix, vector)


_WIDE: np.ndarray | None = None  # every float16's float32, by its 16 bits (256 KB)


def widen(vectors: np.ndarray) -> np.ndarray:
    """float16 vectors as float32, the same numbers as ``astype`` gives, about twice as fast
    (a look-up of each value's 16 bits: numpy converts float16 one value at a time)."""
    global _WIDE
    if _WIDE is None:
        _WIDE = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)
    return _WIDE.take(np.ascontiguousarray(vectors).view(np.uint16))


def nearest(
    index: VectorIndex, vector: np.ndarray, sessions: bool, facts: bool, limit: int
) -> tuple[list[tuple[int, float]], float]:
    """(crystal id, cosine) of the closest `limit` crystals above MIN_SIMILARITY; the best."""
    global scan_seconds
    started = time.perf_counter()
    with index._lock:  # one scan at a time: a reopened file must not close under a scan
        found = _scan(index, vector, sessions, facts, limit)
    scan_seconds += time.perf_counter() - started
    return found


def _scan(
    index: VectorIndex, vector: np.ndarray, sessions: bool, facts: bool, limit: int
) -> tuple[list[tuple[int, float]], float]:
    global scans
    head = index.header
    if head is None or not head.rows or not vector.any():
        return [], 0.0
    scans += 1
    file = index.file
    query = matvec(index.projection.T, vector.astype(np.float32)).astype(np.float32)
    wanted = np.zeros(256, dtype=bool)  # by flag: whether a row of it is a candidate
    wanted[NOTE], wanted[SESSION] = facts, sessions
    rows = head.rows
    cached = index.cached(file, head)
    kept = None
    if cached is not None:
        flags, scales, sketches, kept = cached
        rough = matvec(sketches, query) * scales
        rough[~wanted[flags]] = -np.inf
    else:
        rough = np.full(rows, -np.inf, dtype=np.float32)
        widened = np.empty((file.block_rows, SKETCH_DIM), dtype=np.float32)
        buffer = np.empty(file.head_bytes, dtype=np.uint8)
        for block in range(-(-rows // file.block_rows)):
            start = block * file.block_rows
            take = min(file.block_rows, rows - start)
            flags, scales, sketches = file.head(block, take, buffer)
            np.copyto(widened[:take], sketches)
            scores = matvec(widened[:take], query) * scales
            rough[start : start + take] = np.where(wanted[flags], scores, -np.inf)
    take = min(limit * RESCORE, rows)
    shortlist = np.argpartition(rough, rows - take)[rows - take :]  # the best, no negated copy
    shortlist = np.sort(shortlist[np.isfinite(rough[shortlist])])
    if not len(shortlist):
        return [], 0.0
    chosen = kept[shortlist] if kept is not None else widen(file.vectors(shortlist))
    exact = matvec(chosen, vector)
    order = np.argsort(-exact, kind="stable")[:limit]
    order = order[exact[order] > MIN_SIMILARITY]
    best = float(exact[order[0]]) if len(order) else 0.0
    found = zip((shortlist[order] + 1).tolist(), exact[order].tolist(), strict=True)
    return list(found), best


def cosines(
    store: Store,
    vector: np.ndarray,
    ids: list[int],
    embedder: Embedder,
    index: VectorIndex | None = None,
) -> tuple[list[tuple[int, float]], float]:
    """(crystal id, cosine) of the given crystals above MIN_SIMILARITY; the best cosine.

    The vectors come from ``index`` (just brought up to date), else from the index this
    process holds if it is current (``held``), else from the store."""
    if not ids or not vector.any():
        return [], 0.0
    index = index or held(store, embedder)
    if index is not None:
        with index._lock:  # a reopened file must not close under the read
            found, matrix = index.vectors_of(ids)
    else:
        dim = embedder.dim
        rows = [
            row for row in store.vectors.vectors_of(ids, embedder.name) if len(row[1]) == 2 * dim
        ]
        found = np.array([row[0] for row in rows], dtype=np.int64)
        matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float16)
        matrix = widen(matrix.reshape(len(rows), dim))
    if not len(found):
        return [], 0.0
    exact = matvec(matrix, vector)
    # Compared in float64, as the Python floats were: ``c > MIN_SIMILARITY`` for each.
    keep = exact > np.float64(MIN_SIMILARITY)
    similar = list(zip(found[keep].tolist(), exact[keep].tolist(), strict=True))
    return similar, float(exact.max())
