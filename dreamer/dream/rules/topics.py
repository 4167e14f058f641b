"""Topics: new crystals grouped by the keywords they share."""

from __future__ import annotations

from typing import Any

from dreamer.dream.rules.words import nameable
from dreamer.store import Crystal
from dreamer.support.words import keywords, stem

MAX_TOPICS = 12


def find_topics(crystals: list[Crystal]) -> list[dict[str, Any]]:
    """Group crystals by shared keywords: greedy, most widely shared keyword first."""
    words = {c.id: keywords(c.text) for c in crystals}
    stemmed = {c.id: {stem(w): w for w in words[c.id]} for c in crystals}
    frequency: dict[str, int] = {}
    for mapping in stemmed.values():
        for word_stem in mapping:
            frequency[word_stem] = frequency.get(word_stem, 0) + 1
    shared = sorted((s for s, n in frequency.items() if n >= 2), key=lambda s: (-frequency[s], s))
    # A word in nearly every crystal ("project") groups nothing useful when there are many.
    if len(crystals) >= 6:
        shared = [s for s in shared if frequency[s] <= 0.6 * len(crystals)] or shared
    unassigned = {c.id for c in crystals}
    groups: list[tuple[list[int], str]] = []
    for word_stem in shared:
        members = sorted(cid for cid in unassigned if word_stem in stemmed[cid])
        if len(members) >= 2:
            groups.append((members, word_stem))
            unassigned -= set(members)
    for cid in sorted(unassigned):
        groups.append(([cid], ""))
    topics: list[dict[str, Any]] = []
    for members, seed in groups:
        counts: dict[str, int] = {}
        surface: dict[str, str] = {}
        for cid in members:
            for word_stem, word in stemmed[cid].items():
                counts[word_stem] = counts.get(word_stem, 0) + 1
                surface.setdefault(word_stem, word)
        ranked = sorted(counts, key=lambda s: (s != seed, -counts[s], frequency.get(s, 0), s))
        top = [surface[s] for s in ranked if nameable(surface[s])][:4]
        if len(top) < 2:
            continue  # a topic is never one word, a label or a date
        topics.append(
            {
                "label": " ".join(top[:2]),
                "keywords": top,
                "crystal_ids": members,
                "size": len(members),
            }
        )
    topics.sort(key=lambda t: (-t["size"], t["crystal_ids"][0]))
    return topics[:MAX_TOPICS]
