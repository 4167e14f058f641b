"""Which crystals bear out each insight: their ids, who said them and when, added to each item."""

from __future__ import annotations

from collections.abc import Callable

from dreamer.dream.rules.insight_results import Insights
from dreamer.store import Crystal, Store, content_hash

# The words of each kind's items that a crystal says, in the order their ids are listed.
SAID = {
    "answered_questions": ("question", "answer"),
    "curiosity_gaps": ("question",),
    "upcoming": ("text",),
    "people": ("text",),
    "fading_topics": ("line", "outcome"),
}
LAST_NOTE_LOOKUP = 20  # full-text matches of a fading line's keywords read for its last note


def _plain(text: str) -> str:
    return " ".join(text.lstrip("-*• ").split()).lower()


def _finder(store: Store, crystals: list[Crystal]) -> Callable[[str], Crystal | None]:
    """A lookup: words -> the crystal that says them (exactly, else the first new one holding
    them), or None."""
    held = [(_plain(c.text), c) for c in crystals]
    known = {c.id: c for c in crystals}

    def find(words: str) -> Crystal | None:
        found = store.crystals.find_by_hash(content_hash(words))
        if found is not None:
            return known.get(found) or next(iter(store.crystals.crystals_by_id([found])), None)
        plain = _plain(words)
        return next((c for text, c in held if plain and plain in text), None)

    return find


def _last_note(store: Store, words: list[str], last_seen: str) -> list[int]:
    """The note a fading line was last written in: the crystal its keywords find that was
    created when the line was last seen."""
    ids = [crystal_id for crystal_id, _ in store.search.fts_match(words, [], LAST_NOTE_LOOKUP)]
    return [c.id for c in store.crystals.crystals_by_id(ids) if c.created_at == last_seen][:1]


def _speakers(store: Store, ids: list[int]) -> dict[int, str]:
    return {c.id: c.speaker or "unknown" for c in store.crystals.crystals_by_id(ids)}


def attach(store: Store, crystals: list[Crystal], found: Insights) -> None:
    """Give each item of the kinds in ``SAID`` the ids of the crystals saying its words, and
    each item that has ids the speaker of its first crystal (``said_by``)."""
    find = _finder(store, crystals)
    for kind, keys in SAID.items():
        for item in getattr(found, kind):
            said = [find(item[key]) for key in keys if isinstance(item.get(key), str)]
            ids = list(dict.fromkeys(c.id for c in said if c is not None))
            item["crystal_ids"] = ids
            first = next((c for c in said if c is not None), None)
            if first is not None:
                item["said_by"] = first.speaker or "unknown"
                item.setdefault("at", first.created_at)
    for item in found.fading_topics:
        if not item["crystal_ids"] and item.get("last_seen") and item.get("keywords"):
            item["crystal_ids"] = _last_note(store, item["keywords"].split(), item["last_seen"])
            item["said_by"] = _speakers(store, item["crystal_ids"]).get(item["crystal_ids"][0])
    sides = [pair.get(side) or {} for pair in found.contradictions for side in ("older", "newer")]
    ids = [part["id"] for part in sides if part.get("id")]
    speakers = _speakers(store, ids)
    for part in sides:
        if part.get("id") in speakers:
            part["said_by"] = speakers[part["id"]]
