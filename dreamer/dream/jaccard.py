"""Word overlap (Jaccard) between one word set and many, without comparing it to every one.

A dream compares each pending memory with the state's lines (for novelty) and with the
memories already chosen (near-duplicates). Compared pairwise, that grows with the square of
what is pending; here the sets are indexed by word, so a set is compared only with those that
share a word with it, and, for a threshold, only with those sharing a word of its *prefix*:

    Two sets with Jaccard ≥ t share a word among the first |x| - ⌈t·|x|⌉ + 1 words of each,
    the words of both taken in one global order (the prefix filter of similarity joins).

Proof: the common words number at least ⌈t·|x|⌉; the first of them in the order has at most
|x| - ⌈t·|x|⌉ words of x before it, so it lies in x's prefix, and likewise in y's. The prefix
is taken one word longer than that bound needs (float rounding of t·|x| can only lengthen it),
and every candidate is then checked with the same expression as a pairwise comparison, so the
answers are exactly the pairwise ones. Rare words first in the order keep the candidates few.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def jaccard(a: set[str], b: set[str]) -> float:
    """|a ∩ b| / |a ∪ b| (``a`` not empty)."""
    return len(a & b) / len(a | b)


class WordIndex:
    """Word sets indexed by word: the best overlap with any of them, or whether one reaches a
    threshold, found among the sets that share a word (``order``: how often each word occurs
    among everything that will be indexed or asked about, rarest first in the prefixes)."""

    def __init__(self, order: dict[str, int] | None = None) -> None:
        self.order = order or {}
        self.sets: list[set[str]] = []
        self._all: dict[str, list[int]] = {}  # word -> sets holding it
        self._prefix: dict[str, list[int]] = {}  # word -> sets holding it in their prefix

    @staticmethod
    def frequencies(sets: Iterable[set[str]]) -> dict[str, int]:
        """How many of ``sets`` hold each word: the order that keeps prefixes rare."""
        out: dict[str, int] = {}
        for words in sets:
            for word in words:
                out[word] = out.get(word, 0) + 1
        return out

    def _head(self, words: set[str], threshold: float) -> list[str]:
        ranked = sorted(words, key=lambda w: (self.order.get(w, 0), w))
        return ranked[: len(words) - math.ceil(threshold * len(words)) + 2]

    def add(self, words: set[str], threshold: float | None = None) -> None:
        """Index one more set (with ``threshold``: also by its prefix for ``reaches``)."""
        n = len(self.sets)
        self.sets.append(words)
        for word in words:
            self._all.setdefault(word, []).append(n)
        if threshold is not None:
            for word in self._head(words, threshold):
                self._prefix.setdefault(word, []).append(n)

    def best(self, words: set[str]) -> float:
        """The highest overlap of ``words`` with an indexed set (0 when none shares a word)."""
        if not words:
            return 0
        near = {n for word in words for n in self._all.get(word, ())}
        return max((jaccard(words, self.sets[n]) for n in near), default=0)

    def reaches(self, words: set[str], threshold: float) -> bool:
        """Whether ``words`` overlaps a set added with ``threshold`` by at least that much."""
        if not words:
            return False
        near = {n for word in self._head(words, threshold) for n in self._prefix.get(word, ())}
        return any(jaccard(words, self.sets[n]) >= threshold for n in sorted(near))
