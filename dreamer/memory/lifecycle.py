"""Crystal ageing, in the consolidation tick: fading, use, archiving and merging. Never deletion.

**Fading.** A crystal's importance decays exponentially from the moment it last changed
(``updated_at``)::

    importance' = importance * 0.5 ** (days since updated_at / half_life)
    half_life   = 30 days * TYPE_FACTOR[semantic_type]   (directive 4, fact/model 2, experience 1)
                          * (1 + 2 * emotion)            (emotion = the largest distance of a
                                                          hormone from rest at creation, 0..1)
                          * (1 + ln(1 + access_count))   (crystals that are used fade slower)

**Use.** A crystal found by a search since its last change gains ``USE_BOOST`` (0.1, capped at 1).

A change is written only once it amounts to ``STEP`` (0.05) or more, so a tick does not rewrite
every crystal every 30 minutes and the audit log stays readable; the fade keeps accumulating from
``updated_at`` until it does. (Any other change to a crystal, such as a dream marking it
consolidated, restarts the clock; the cost is under one ``STEP`` of fading, in memory's favour.)

**Archiving.** A crystal whose importance falls below ``ARCHIVE_FLOOR`` (0.1) and that is at least
``MIN_ARCHIVE_AGE_DAYS`` (7) old moves to ``archived``: out of the dream's inputs, still searchable.

**Merging.** A crystal not yet checked (id above the ``lifecycle.merge_checked_id`` meta key) is
compared, by cosine of embeddings, with every older non-archived crystal of the same kind
(session transcripts with session transcripts, the rest with the rest), streamed from the
database in blocks, so a tick costs O(new × all), never O(all²). At ``MERGE_SIMILARITY`` (0.92)
or above the two are near-duplicates: the one with lower importance (on a tie, the newer one) is
archived with ``parent_id`` pointing at the winner, which takes the higher importance and the
summed access count. A frozen crystal never loses a merge.

Frozen crystals never change. Every change goes through ``Store.update_crystal`` (audited), in
transactions of ``BATCH`` changes; a tick makes at most ``MAX_CHANGES_PER_TICK`` fading changes
(oldest first) so that, after a long pause, catching up is spread over several ticks.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from dreamer.config import HORMONES
from dreamer.memory.parts import Parts
from dreamer.store import Store
from dreamer.store.base import VectorRow
from dreamer.support.bounds import READ_MAX_CHARS
from dreamer.support.times import as_utc, iso, parse_iso
from dreamer.support.words import words

BASE_HALF_LIFE_DAYS = 30.0
TYPE_FACTOR = {"directive": 4.0, "world_fact": 2.0, "mental_model": 2.0, "experience": 1.0}
EMOTION_WEIGHT = 2.0
USE_BOOST = 0.1
STEP = 0.05
ARCHIVE_FLOOR = 0.1
MIN_ARCHIVE_AGE_DAYS = 7.0
MERGE_SIMILARITY = 0.92  # vectors shortlist near-duplicates ...
SAME_WORDS = 0.9  # ... and the words confirm them (difflib ratio of the word sequences)
_ARTICLES = frozenset({"a", "an", "the"})
MAX_NEW_PER_TICK = 500  # a backlog (e.g. after a big import) is merged over several ticks
BLOCK = 20_000
BATCH = 500  # crystal changes per write transaction
MAX_CHANGES_PER_TICK = 5_000  # bounds a tick after a long pause; the rest waits for the next

# The fastest any crystal can fade by STEP (importance 1, the shortest half-life): rows changed
# more recently than this cannot be due, so SQL skips them.
_MIN_DUE_DAYS = BASE_HALF_LIFE_DAYS * min(TYPE_FACTOR.values()) * -math.log2(1 - STEP)


@dataclass
class LifecycleReport:
    """What one lifecycle pass changed, by crystal id."""

    faded: list[int] = field(default_factory=list)
    used: list[int] = field(default_factory=list)
    archived: list[int] = field(default_factory=list)
    merged: list[tuple[int, int]] = field(default_factory=list)  # (loser, winner)

    def to_dict(self) -> dict[str, Any]:
        """Counts and ids, JSON-ready."""
        return {
            "faded": len(self.faded),
            "used": len(self.used),
            "archived": len(self.archived),
            "merged": len(self.merged),
            "archived_ids": self.archived,
            "merged_pairs": [list(p) for p in self.merged],
        }

    def summary(self) -> str:
        """One line: what changed."""
        return (
            f"{len(self.faded)} faded, {len(self.used)} used, {len(self.archived)} archived,"
            f" {len(self.merged)} merged"
        )


def half_life_days(semantic_type: str, emotion: float, access_count: int) -> float:
    """The fading half-life of a crystal, in days (see the module docstring)."""
    return (
        BASE_HALF_LIFE_DAYS
        * TYPE_FACTOR.get(semantic_type, 1.0)
        * (1.0 + EMOTION_WEIGHT * emotion)
        * (1.0 + math.log1p(max(0, access_count)))
    )


def emotion(levels: dict[str, float | None], rest: dict[str, float]) -> float:
    """Emotional weight at creation: the largest distance of a hormone from its rest level."""
    distances = [
        abs(level - rest[name]) for name in HORMONES if (level := levels.get(name)) is not None
    ]
    return min(1.0, max(distances, default=0.0))


def faded_importance(importance: float, days: float, half_life: float) -> float:
    """Importance after ``days`` of fading with ``half_life``."""
    return importance * 0.5 ** (max(0.0, days) / half_life)


def run(ws: Parts, now: datetime) -> LifecycleReport:
    """One lifecycle pass: merge near-duplicates among new crystals, then fade/use/archive."""
    now = as_utc(now)
    report = LifecycleReport()
    store = ws.store
    with store.transaction():
        _merge(ws, store, now, report)
    changes = _fade(ws, store, now, report)
    # Short transactions, so an agent's note never waits long behind a big tick.
    for start in range(0, len(changes), BATCH):
        with store.transaction():
            for crystal_id, change, action, why in changes[start : start + BATCH]:
                store.crystals.update_crystal(crystal_id, change, action=action, at=now, reason=why)
    return report


def _fade(
    ws: Parts, store: Store, now: datetime, report: LifecycleReport
) -> list[tuple[int, dict[str, Any], str, str]]:
    rest = {name: float(ws.settings.hormone_rest[name]) for name in HORMONES}
    due_before = iso(now - timedelta(days=_MIN_DUE_DAYS))
    out: list[tuple[int, dict[str, Any], str, str]] = []
    for row in store.crystals.fade_candidates(due_before):
        crystal_id, importance, semantic_type = row.id, row.importance, row.semantic_type
        created_at, updated_at, accessed_at = row.created_at, row.updated_at, row.last_accessed_at
        access_count = row.access_count
        changed = parse_iso(updated_at)
        weight = emotion(row.levels, rest)
        days = (now - changed).total_seconds() / 86400.0
        new = faded_importance(
            importance, days, half_life_days(semantic_type, weight, access_count)
        )
        used = accessed_at is not None and accessed_at > updated_at
        if used:
            new = min(1.0, new + USE_BOOST)
        old_enough = (now - parse_iso(created_at)).total_seconds() >= MIN_ARCHIVE_AGE_DAYS * 86400
        archive = new < ARCHIVE_FLOOR and old_enough
        if not (used or archive or importance - new >= STEP):
            continue
        changes: dict[str, Any] = {"importance": round(new, 4)}
        if archive:
            changes["lifecycle"] = "archived"
            action, why = "archived", f"importance {new:.3f} below {ARCHIVE_FLOOR}"
            report.archived.append(crystal_id)
        elif used:
            action, why = "used", "found by a search since its last change"
            report.used.append(crystal_id)
        else:
            action, why = "faded", f"{days:.1f} days since its last change"
            report.faded.append(crystal_id)
        out.append((crystal_id, changes, action, why))
        if len(out) >= MAX_CHANGES_PER_TICK:
            break  # the rest stay due (fading counts from updated_at) and go next tick
    return out


def _merge(ws: Parts, store: Store, now: datetime, report: LifecycleReport) -> None:
    from dreamer.retrieval.reindex import embed_waiting

    # Notes written without a vector (the default sentence model defers it) get one first:
    # the watermark below passes each crystal once, and one with no vector is never compared.
    embed_waiting(store, ws.embedder, limit=MAX_NEW_PER_TICK)
    checked = int(store.records.get_meta("lifecycle.merge_checked_id", "0") or 0)
    rows = store.vectors.vectors_after(checked, MAX_NEW_PER_TICK)
    if not rows:
        return
    dim, name = ws.embedder.dim, ws.embedder.name
    fresh = [
        row
        for row in rows
        if row.lifecycle != "archived"
        and row.embedding is not None
        and row.embedder == name
        and len(row.embedding) == 2 * dim
    ]
    if fresh:
        _apply_merges(store, fresh, _nearest(store, fresh, dim, name), now, report)
    store.records.set_meta("lifecycle.merge_checked_id", str(rows[-1].id))


def _vectors(blobs: list[bytes], dim: int) -> np.ndarray:
    return (
        np.frombuffer(b"".join(blobs), dtype=np.float16).reshape(len(blobs), dim).astype(np.float32)
    )


def _nearest(store: Store, fresh: list[VectorRow], dim: int, name: str) -> list[tuple[float, int]]:
    """For each fresh crystal, (similarity, id) of its closest older same-kind crystal."""
    ids = np.array([row.id for row in fresh], dtype=np.int64)
    kinds = np.array([row.source == "sessions" for row in fresh])
    matrix = _vectors([row.embedding for row in fresh], dim)
    best_sim = np.full(len(fresh), -1.0, dtype=np.float32)
    best_id = np.zeros(len(fresh), dtype=np.int64)
    for block in store.vectors.vector_blocks(int(ids.max()), name, BLOCK):
        block_ids = np.array([row.id for row in block], dtype=np.int64)
        block_kinds = np.array([row.source == "sessions" for row in block])
        sims = _vectors([row.embedding for row in block], dim) @ matrix.T  # (block, fresh)
        # only older crystals of the same kind are candidates
        sims[(block_ids[:, None] >= ids[None, :]) | (block_kinds[:, None] != kinds[None, :])] = -1
        top = sims.argmax(axis=0)
        top_sim = sims[top, np.arange(len(fresh))]
        better = top_sim > best_sim
        best_sim[better] = top_sim[better]
        best_id[better] = block_ids[top[better]]
    return list(zip(best_sim.tolist(), best_id.tolist(), strict=True))


def same_words(first: str, second: str) -> bool:
    """Near-duplicates by their words: the same numbers, and the words nearly all in order.

    Vectors only shortlist: a bag of word vectors cannot tell "prefers tabs over spaces" from
    "prefers spaces over tabs", nor a deadline of April 3 from April 7.
    """
    if max(len(first), len(second)) > READ_MAX_CHARS:
        # The comparison costs the product of the lengths (hours for two 10 MB crystals, so
        # every tick would hang on it), and a head alone cannot prove a duplicate: a crystal
        # longer than any note is never merged.
        return False
    a, b = words(first), words(second)
    if [w for w in a if w.isdigit()] != [w for w in b if w.isdigit()]:
        return False
    a, b = [w for w in a if w not in _ARTICLES], [w for w in b if w not in _ARTICLES]
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= SAME_WORDS


def _apply_merges(
    store: Store,
    fresh: list[VectorRow],
    best: list[tuple[float, int]],
    now: datetime,
    report: LifecycleReport,
) -> None:
    parent: dict[int, int] = {}  # archived in this pass -> its winner
    for row, (similarity, other_id) in zip(fresh, best, strict=True):
        new_id = row.id
        if similarity < MERGE_SIMILARITY or new_id in parent:
            continue
        while other_id in parent:
            other_id = parent[other_id]
        if other_id == new_id:
            continue
        new, other = store.crystals.get(new_id), store.crystals.get(other_id)
        if new.lifecycle == "archived" or other.lifecycle == "archived":
            continue
        if not same_words(new.text, other.text):
            continue  # close in meaning is not a duplicate: "tabs over spaces" is not the reverse
        if new.lifecycle == "frozen" and other.lifecycle == "frozen":
            continue
        # the newer one loses unless it matters more, and a frozen crystal never loses
        if other.lifecycle == "frozen" or (
            new.lifecycle != "frozen" and other.importance >= new.importance
        ):
            winner, loser = other, new
        else:
            winner, loser = new, other
        reason = f"near-duplicate (cosine {similarity:.3f})"
        store.crystals.update_crystal(
            loser.id,
            {"lifecycle": "archived", "parent_id": winner.id},
            action="merged",
            at=now,
            reason=f"{reason} of #{winner.id}",
        )
        if winner.lifecycle != "frozen":
            store.crystals.update_crystal(
                winner.id,
                {
                    "importance": max(winner.importance, loser.importance),
                    "access_count": winner.access_count + loser.access_count,
                },
                action="absorbed",
                at=now,
                reason=f"{reason}: absorbed #{loser.id}",
            )
        parent[loser.id] = winner.id
        report.merged.append((loser.id, winner.id))
