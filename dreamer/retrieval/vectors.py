"""Crystal vectors in memory: an incrementally loaded index and cosine look-ups.

Crystal text never changes, so neither does its vector: the index of a database is loaded once
per process and extended with the crystals added since. A crystal written without a vector (a
fresh ``dream note`` leaves it to the next search or tick) is remembered as waiting and loaded
when its vector arrives, so late vectors need no reload of the whole index. A search scans a
random-projection sketch of every vector and scores only a shortlist exactly (``nearest``), or
scores a given set of crystals when the words already found candidates: from the index when
this process holds one (``index_cosines``), else straight from the store (``cosines``).
"""

from __future__ import annotations

import threading

import numpy as np

from dreamer.retrieval.embed import Embedder
from dreamer.store import Store

SKETCH_DIM = 96  # the projection a search scans; exact cosines only for the shortlist
SKETCH_SEED = 20260312
RESCORE = 8
LOAD_BATCH = 20000
MIN_SIMILARITY = 0.08  # below this a vector match is noise, not a candidate


# Bumped by whoever gives old crystals new vectors (a reindex): indexes built before reload.
GENERATION_KEY = "vectors.generation"


class VectorIndex:
    """Crystal vectors of one database, loaded once and extended as crystals are added.

    Kept twice: the stored float16 vectors (for exact cosines) and a float32 random-projection
    sketch of ``SKETCH_DIM`` dimensions, which a search scans in full; only the best
    ``RESCORE ×`` wanted rows are scored exactly. Arrays grow by doubling, so a search after a
    new note does not copy the whole matrix.
    """

    def __init__(self, dim: int, embedder: str):
        self.dim = dim
        self.embedder = embedder  # only vectors this embedder made are loaded
        self._reset()

    def _reset(self) -> None:
        """Empty the index (and draw the sketch projection again, the same every time)."""
        dim = self.dim
        self.size = 0
        self.max_id = 0
        self.waiting: dict[int, bool] = {}  # ids loaded past without a vector: is a session
        self.generation: str | None = None
        self.ids = np.zeros(0, dtype=np.int64)
        self.sessions = np.zeros(0, dtype=bool)
        self.vectors = np.zeros((0, dim), dtype=np.float16)
        self.sketch = np.zeros((0, SKETCH_DIM), dtype=np.float32)
        self.projection = sketch_projection(dim)

    def _reserve(self, extra: int) -> None:
        needed = self.size + extra
        if needed <= len(self.ids):
            return
        capacity = max(needed, 2 * len(self.ids), 1024)

        def grown(array: np.ndarray) -> np.ndarray:
            bigger = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
            bigger[: self.size] = array[: self.size]
            return bigger

        self.ids, self.sessions = grown(self.ids), grown(self.sessions)
        self.vectors, self.sketch = grown(self.vectors), grown(self.sketch)

    def refresh(self, store: Store) -> None:
        """Load the vectors of crystals added since the last call."""
        newest = store.max_crystal_id()
        generation = store.get_meta(GENERATION_KEY)
        # The database was replaced under us, or old crystals got new vectors: start over.
        if newest < self.max_id or generation != self.generation:
            self._reset()
            self.generation = generation
        if self.waiting:
            self._load_late(store)
        if newest == self.max_id:
            return
        # Asked before the vectors are read: a vector that lands in between is loaded twice
        # at worst (and dropped from waiting below), never missed.
        for crystal_id, source, _ in store.unembedded(self.max_id, newest):
            self.waiting[crystal_id] = source == "sessions"
        # In slices: a bounded peak of memory.
        for block in store.vectors_between(self.max_id, newest, self.embedder, LOAD_BATCH):
            rows = [(r.id, r.source == "sessions", r.embedding) for r in block]
            self._append([row for row in rows if len(row[2]) == 2 * self.dim])
        self.max_id = newest

    def _load_late(self, store: Store) -> None:
        """Load the vectors that arrived for waiting crystals."""
        ids = list(self.waiting)
        for at in range(0, len(ids), 500):
            found = store.vectors_of(ids[at : at + 500], self.embedder)
            self._append(
                [(i, self.waiting[i], blob) for i, blob in found if len(blob) == 2 * self.dim]
            )

    def _append(self, rows: list[tuple[int, bool, bytes]]) -> None:
        """Add (id, is a session, float16 vector) rows."""
        for crystal_id, _, _ in rows:
            self.waiting.pop(crystal_id, None)
        if not rows:
            return
        self._reserve(len(rows))
        start, end = self.size, self.size + len(rows)
        vectors = np.frombuffer(b"".join(row[2] for row in rows), dtype=np.float16)
        vectors = vectors.reshape(len(rows), self.dim)
        self.ids[start:end] = [row[0] for row in rows]
        self.sessions[start:end] = [row[1] for row in rows]
        self.vectors[start:end] = vectors
        self.sketch[start:end] = vectors.astype(np.float32) @ self.projection
        self.size = end


def sketch_projection(dim: int) -> np.ndarray:
    """The random projection of the sketch: signs (±1/√SKETCH_DIM) from a fixed integer hash.

    A sign matrix sketches as well as a Gaussian one (Achlioptas), and needs no numpy.random,
    whose import is ~15 ms of a cold ``dream search``; the same in every process.
    """
    # splitmix64 of each cell's index: well-mixed bits, the same on every machine
    mixed = np.arange(dim * SKETCH_DIM, dtype=np.uint64) + np.uint64(SKETCH_SEED)
    mixed *= np.uint64(0x9E3779B97F4A7C15)
    mixed ^= mixed >> np.uint64(30)
    mixed *= np.uint64(0xBF58476D1CE4E5B9)
    mixed ^= mixed >> np.uint64(27)
    mixed *= np.uint64(0x94D049BB133111EB)
    mixed ^= mixed >> np.uint64(31)
    signs = np.where(mixed >> np.uint64(63), 1.0, -1.0).astype(np.float32)
    return (signs / np.sqrt(SKETCH_DIM)).reshape(dim, SKETCH_DIM).astype(np.float32)


def matvec(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix @ vector`` on this thread, never through BLAS's thread pool.

    A search's products are memory-bound and take well under a millisecond on one core, but
    numpy hands ``@`` to OpenBLAS, which splits it over a thread per core: on a busy machine
    those threads wait for each other (a 10k x 96 product measured 40 ms against 0.9 ms on
    one thread, load average 12 on 2 cores). ``einsum`` without ``optimize`` uses numpy's own
    loop, so no thread count needs changing in the host process, where an agent's own numpy
    work may want every core.
    """
    return np.einsum("ij,j->i", matrix, vector)


_indexes: dict[tuple[str, str], VectorIndex] = {}
_indexes_lock = threading.Lock()


def index_for(store: Store, embedder: Embedder) -> VectorIndex:
    """The in-process vector index of store's crystals, brought up to date."""
    key = (str(store.path.resolve()), embedder.name)
    with _indexes_lock:
        index = _indexes.get(key)
        if index is None:
            index = _indexes[key] = VectorIndex(embedder.dim, embedder.name)
        index.refresh(store)
    return index


def loaded_index(store: Store, embedder: Embedder) -> VectorIndex | None:
    """The in-process index of store's vectors, up to date, if this process built one."""
    key = (str(store.path.resolve()), embedder.name)
    with _indexes_lock:
        index = _indexes.get(key)
        if index is not None:
            index.refresh(store)
    return index


def clear_cache() -> None:
    """Forget every in-process vector matrix (they reload on the next search)."""
    with _indexes_lock:
        _indexes.clear()


def nearest(
    index: VectorIndex, vector: np.ndarray, sessions: bool, facts: bool, limit: int
) -> tuple[list[tuple[int, float]], float]:
    """(crystal id, cosine) of the closest `limit` crystals above MIN_SIMILARITY; the best."""
    size = index.size
    if not size or not vector.any():
        return [], 0.0
    rough = matvec(index.sketch[:size], matvec(index.projection.T, vector))
    if not (sessions and facts):
        rough = np.where(index.sessions[:size] == sessions, rough, -np.inf)
    take = min(limit * RESCORE, size)
    shortlist = np.argpartition(-rough, take - 1)[:take]
    shortlist = shortlist[np.isfinite(rough[shortlist])]
    exact = matvec(index.vectors[shortlist].astype(np.float32), vector)
    order = np.argsort(-exact, kind="stable")[:limit]
    order = order[exact[order] > MIN_SIMILARITY]
    best = float(exact[order[0]]) if len(order) else 0.0
    return [(int(index.ids[shortlist[i]]), float(exact[i])) for i in order], best


def cosines(
    store: Store, vector: np.ndarray, ids: list[int], embedder: Embedder
) -> tuple[list[tuple[int, float]], float]:
    """(crystal id, cosine) of the given crystals above MIN_SIMILARITY; the best cosine."""
    if not ids or not vector.any():
        return [], 0.0
    dim = embedder.dim
    rows = [row for row in store.vectors_of(ids, embedder.name) if len(row[1]) == 2 * dim]
    if not rows:
        return [], 0.0
    matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float16)
    exact = matvec(matrix.reshape(len(rows), dim).astype(np.float32), vector)
    similar = [
        (row[0], c) for row, c in zip(rows, exact.tolist(), strict=True) if c > MIN_SIMILARITY
    ]
    return similar, float(exact.max())


def index_cosines(
    index: VectorIndex, vector: np.ndarray, ids: list[int]
) -> tuple[list[tuple[int, float]], float]:
    """What ``cosines`` gives, from an index already in memory instead of the store."""
    size = index.size
    if not ids or not size or not vector.any():
        return [], 0.0
    order, ordered = _by_id(index)
    wanted = np.array(sorted(set(ids)), dtype=np.int64)
    at = np.clip(np.searchsorted(ordered, wanted), 0, size - 1)
    rows = order[at[ordered[at] == wanted]]
    if not len(rows):
        return [], 0.0
    exact = matvec(index.vectors[rows].astype(np.float32), vector)
    similar = [
        (crystal_id, c)
        for crystal_id, c in zip(index.ids[rows].tolist(), exact.tolist(), strict=True)
        if c > MIN_SIMILARITY
    ]
    return similar, float(exact.max())


_orders: dict[int, tuple[tuple[int, int, int, str | None], np.ndarray, np.ndarray]] = {}


def _by_id(index: VectorIndex) -> tuple[np.ndarray, np.ndarray]:
    """(rows in id order, their ids) of the index (late vectors are appended out of order),
    kept until the index changes: sorting 100k ids costs more than the rest of a search."""
    key = (index.size, index.max_id, id(index.ids), index.generation)
    known = _orders.get(id(index))
    if known is None or known[0] != key:
        held = index.ids[: index.size]
        order = np.argsort(held, kind="stable")
        known = (key, order, held[order])
        if len(_orders) > 16:
            _orders.clear()
        _orders[id(index)] = known
    return known[1], known[2]
