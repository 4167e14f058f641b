"""Which crystals a forget query names: those that hold every word of it, never a neighbour.

``dream forget --search`` and the ``memory_forget`` tool's ``query`` take a query and forget
what it selects, so the selection must be exact where a search ranks: a crystal is selected
when the full-text index (stemmed, as a search matches words) finds each content word of the
query in it, and each phrase in double quotes appears in its text as written (case and spacing
aside). Vectors play no part: in a small workspace every crystal is some query's neighbour.
Nothing is logged: no search row, no access, no curiosity gap (the query may be the very text
being forgotten). More than ``FEW`` matches need the caller's explicit "all".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dreamer.errors import UsageError
from dreamer.store import Crystal, Store
from dreamer.support.words import WORD, stem

FEW = 3  # more matches than this need an explicit "all" (as a forget request in a note)
MIN_SHARED_PREFIX = 5  # word forms compared for marking: "address" / "addresses"
_PHRASE = re.compile(r"[\"“”]([^\"“”]+)[\"“”]")


@dataclass(frozen=True)
class Match:
    """A crystal a forget query selects, and the query's words and phrases as found in it."""

    crystal: Crystal
    marked: str  # the text with each matched word or phrase in [brackets]


def _query_terms(text: str) -> list[str]:
    from dreamer.retrieval.search import query_terms  # numpy: only when forgetting

    return query_terms(text)


def parse(query: str) -> tuple[list[str], list[str]]:
    """(content words, quoted phrases) of a forget query; UsageError when it names nothing."""
    if not isinstance(query, str):
        raise UsageError(f"a forget query is text (str), not {type(query).__name__}")
    phrases = [" ".join(p.split()) for p in _PHRASE.findall(query) if p.strip()]
    words = _query_terms(_PHRASE.sub(" ", query))
    for phrase in phrases:
        words += [w for w in _query_terms(phrase) if w not in words]
    if not words:
        raise UsageError(f"{query!r} has no word to match; name what to forget, e.g. 'old address'")
    return words, phrases


def select(store: Store, query: str) -> list[Match]:
    """The crystals that hold every word (and quoted phrase) of ``query``, by id."""
    words, phrases = parse(query)
    everything = max(store.crystals.max_crystal_id(), 1)
    ids: set[int] | None = None
    for word in words:  # each word alone: a crystal must be among the matches of every one
        found = {crystal_id for crystal_id, _ in store.search.fts_match([word], [], everything)}
        ids = found if ids is None else ids & found
        if not ids:
            return []
    wanted = [_fold(phrase) for phrase in phrases]
    return [
        Match(crystal, mark(crystal.text, words, phrases))
        for crystal in store.crystals.crystals_by_id(sorted(ids or ()))
        if crystal.text and all(phrase in _fold(crystal.text) for phrase in wanted)
    ]


def mark(text: str, words: list[str], phrases: list[str]) -> str:
    """``text`` with the words and phrases of a query in [brackets] (word forms compared)."""
    for phrase in phrases:
        pattern = r"\s+".join(re.escape(part) for part in phrase.split())
        text = re.sub(pattern, lambda m: f"[{m.group(0)}]", text, flags=re.IGNORECASE)
    stems = {stem(word) for word in words}

    def bracket(found: re.Match[str]) -> str:
        word = found.group(0)
        return f"[{word}]" if same_word(stem(word.lower()), stems) else word

    # Words already inside a marked phrase stay as they are.
    parts = re.split(r"(\[[^\]]*\])", text)
    return "".join(
        part if part.startswith("[") and part.endswith("]") else WORD.sub(bracket, part)
        for part in parts
    )


def same_word(candidate: str, stems: set[str]) -> bool:
    """Whether a stemmed word is one of ``stems``, or shares its first five letters or more."""
    return candidate in stems or any(
        min(len(candidate), len(other)) >= MIN_SHARED_PREFIX
        and (candidate.startswith(other) or other.startswith(candidate))
        for other in stems
    )


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


def too_many(count: int, query: str, what: str, fix: str) -> str:
    """The refusal when more than ``FEW`` crystals match and the caller did not say "all"."""
    return (
        f"{count} {what} hold every word of {query!r}; nothing was forgotten: {fix}, "
        "or narrow the query"
    )
