"""Which crystals a forget query names: those that hold every word of it, never a neighbour.

``dream forget --search`` and the ``memory_forget`` tool's ``query`` take a query and forget
what it selects, so the selection must be exact where a search ranks: a crystal is selected
when the full-text index (stemmed, as a search matches words) finds each content word of the
query in it, and each phrase in double quotes appears in its text as written (case and spacing
aside). Vectors play no part: in a small workspace every crystal is some query's neighbour.
Nothing is logged: no search row, no access, no curiosity gap (the query may be the very text
being forgotten). More than ``FEW`` matches need the caller's explicit "all".

Three rules keep a forget from taking more than was named:

- a word found only inside a ``[secret:kind#hash]`` placeholder does not count (the query
  "secret" names no redacted note);
- a match is *exact* when it holds every word as written ("cats" in "two cats"); one that
  holds only another form ("the neighbour's cat") is shown apart, and every caller asks
  before taking it;
- a word written as part of two or more different names ("Kofi Mensah", "Kofi Boateng")
  is ambiguous: ``ambiguous_names`` says which, and the caller asks which one is meant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dreamer.errors import UsageError
from dreamer.store import Crystal, Store
from dreamer.support.secrets import PLACEHOLDER
from dreamer.support.words import WORD, stem, words

FEW = 3  # more matches than this need an explicit "all" (as a forget request in a note)
MIN_SHARED_PREFIX = 5  # word forms compared for marking: "address" / "addresses"
_PHRASE = re.compile(r"[\"“”]([^\"“”]+)[\"“”]")
# A capitalised word and the capitalised word after it: a name such as "Kofi Mensah('s)".
_NAME = re.compile(r"\b([^\W\d_][\w-]*)[ \t]+(?=([^\W\d_][\w-]*))")


@dataclass(frozen=True)
class Match:
    """A crystal a forget query selects, and the query's words and phrases as found in it."""

    crystal: Crystal
    marked: str  # the text with each matched word or phrase in [brackets]
    exact: bool = True  # False: it holds another form of a word only ("cat" for "cats")


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
    query_words, phrases = parse(query)
    everything = max(store.crystals.max_crystal_id(), 1)
    ids: set[int] | None = None
    for word in query_words:  # each word alone: a crystal must be among the matches of every one
        found = {crystal_id for crystal_id, _ in store.search.fts_match([word], [], everything)}
        ids = found if ids is None else ids & found
        if not ids:
            return []
    wanted = [_fold(phrase) for phrase in phrases]
    out = []
    for crystal in store.crystals.crystals_by_id(sorted(ids or ())):
        visible = PLACEHOLDER.sub(" ", crystal.text) if "[secret:" in crystal.text else None
        text = crystal.text if visible is None else visible
        if not text.strip() or not all(phrase in _fold(text) for phrase in wanted):
            continue
        if visible is not None and not all(
            _outside(word, crystal.text, visible) for word in query_words
        ):
            continue
        held = set(_words(text))
        exact = all(word in held for word in query_words)
        out.append(Match(crystal, mark(crystal.text, query_words, phrases), exact))
    return out


def _words(text: str) -> list[str]:
    return words(text.casefold())


def _outside(word: str, text: str, visible: str) -> bool:
    """Whether ``word`` is in ``text`` outside its placeholders (a placeholder never counts)."""
    stems = {stem(word)}
    if any(same_word(stem(w), stems) for w in _words(visible)):
        return True
    inside = " ".join(PLACEHOLDER.findall(text))
    return not any(same_word(stem(w), stems) for w in _words(inside))


def ambiguous_names(matches: list[Match], query: str) -> dict[str, list[str]]:
    """Each query word written in two or more different names across ``matches`` (as "Kofi"
    in "Kofi Mensah" and "Kofi Boateng"), with those names, when the query names neither."""
    return shared_names([match.crystal.text for match in matches], parse(query)[0])


def shared_names(texts: list[str], query_words: list[str]) -> dict[str, list[str]]:
    """Each of ``query_words`` that ``texts`` write in two or more different names."""
    out: dict[str, list[str]] = {}
    for word in sorted(set(query_words)):
        names = sorted({name for text in texts for name in _names_of(word, text)}, key=str.casefold)
        if len(names) >= 2:
            out[word] = names
    return out


def _names_of(word: str, text: str) -> set[str]:
    """The names ``word`` begins in ``text``: it written with a capital, and the capitalised
    word that follows it ("Kofi Mensah's phone" gives "Kofi Mensah")."""
    return {
        f"{found[1]} {found[2]}"
        for found in _NAME.finditer(text)
        if found[1].casefold() == word and found[1][:1].isupper() and found[2][:1].isupper()
    }


def only(matches: list[Match], name: str) -> list[Match]:
    """The matches that hold ``name`` as written (case and spacing aside)."""
    return [m for m in matches if _fold(name) in _fold(m.crystal.text.replace("’", "'"))]


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


def which_name(names: dict[str, list[str]], query: str, how: str) -> str:
    """The refusal when a word of ``query`` is part of several names (see ``ambiguous_names``)."""
    word, candidates = next(iter(names.items()))
    narrowed = re.sub(rf"\b{re.escape(word)}\b", candidates[0], query, count=1, flags=re.I)
    return (
        f"{word!r} is part of {len(candidates)} names here ({', '.join(candidates)}); nothing "
        f"was forgotten: say which one, {how} {narrowed!r}"
    )


def forms_only(others: list[Match], query: str, fix: str) -> str:
    """The refusal when the only matches hold another form of a word than the query's."""
    ids = ", ".join(f"#{m.crystal.id}" for m in others)
    return (
        f"no crystal holds every word of {query!r} as written; {len(others)} hold another form "
        f"of a word ({ids}); nothing was forgotten: {fix}"
    )
