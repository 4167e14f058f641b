"""Forget requests written as notes ("please forget the staging password I pasted earlier").

``parse`` recognises a request and names what it asks to forget, by its content words.
``resolve`` (used by the dream, which holds the workspace lock) finds the crystals written
before the request that hold every one of those words (a word no earlier crystal holds at all,
like "price" for a note that says "quoted 31.50 euros", cannot point anywhere and is left out
while two or more words remain): when there are one to ``MAX_TARGETS``
of them the request is unambiguous and they are forgotten for good (``memory.forgetting``);
otherwise nothing is deleted: the journal reports the request and it waits for the user
(``memory.forget_pending``: ``dream status``, the report and the session-start block say so;
``dream forget --pending`` lists it). A request is unclear, too, when a word of it is part of
two names ("forget Kofi's phone" with Kofi Mensah and Kofi Boateng) or when a match holds only
another form of a word ("cats" and "the neighbour's cat"): a note never widens a forget.
Either way, ``silence`` keeps the request and what it names
out of MEMORY.md, whichever synthesizer wrote the state.

Two kinds of request count. A *direct* one names what to forget after an imperative: "forget
X", "please forget X", "can you forget X", "don't remember X", "stop remembering X",
"delete/remove/erase the note about X"; its words find the target as above. An *indirect* one
says it in other words: "scrap what I told you about my lipid results", "let that go", "I'd
rather none of that was kept", "he'd like no trace of it kept": a cue of ``CUES`` (data, one
test per entry) recognises it, and its target is found by meaning: the embedder's nearest
earlier crystal, forgotten only when it is one clear target (``MIN_SIMILARITY`` and
``MARGIN`` over the next). A direct request whose words no earlier crystal holds at all is
looked up by meaning the same way. A request whose words point at several crystals is unclear:
nothing is forgotten by vectors then. "Don't forget to call Mia" and "I forgot my keys" are
ordinary notes.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from dreamer.memory import forget_pending, forget_search, forgetting
from dreamer.retrieval.embed import clearly_nearest, for_rules
from dreamer.store import Crystal
from dreamer.support.secrets import PLACEHOLDER
from dreamer.support.times import iso
from dreamer.support.words import FORGET_ASKING_WORDS, FORGET_STOP_WORDS, WORD, stem

if TYPE_CHECKING:
    from dreamer.memory.workspace import Workspace

MAX_TARGETS = 3  # more matches than this: ambiguous, ask the user
RECENT = 500  # newest crystals a request is also compared with, word forms and all
_LEAD = r"(?:^|[.!?;:\n]\s*|\b(?:please|pls|kindly|(?:can|could|would) you|and|also|so)\s+)"
_REQUEST = re.compile(
    _LEAD + r"(?:forget(?:\s+about)?|(?:do\s+not|don'?t|stop)\s+(?:remember(?:ing)?|keep(?:ing)?)"
    r"|(?:delete|remove|erase|drop|purge)\s+(?:the\s+|any\s+|all\s+|my\s+)?"
    r"(?:notes?|memor(?:y|ies)|everything|things?)\s+(?:about|of|on|with|mentioning))"
    r"\s+(?P<target>[^.!?\n]+)",
    re.IGNORECASE,
)
# What follows a clause break is a reason or an aside, not part of what to forget:
# "forget my weight, I don't want it stored" asks to forget "my weight".
_CLAUSE = re.compile(r"[,;:—–()\"“”]|\s-\s|\s+(?:because|since|as|it's|it is|it has)\s", re.I)
_NOT_A_REQUEST = re.compile(r"\b(?:don'?t|do not|never|not)\s+forget\b|\bforget\s+to\b", re.I)


@dataclass(frozen=True)
class ForgetRequest:
    """What a note asks to forget: the phrase as written, its content words and their stems."""

    target: str
    words: tuple[str, ...]
    keywords: frozenset[str]
    direct: bool = True  # False: said in other words; its target is found by meaning


# Cues of a request said in other words. Each entry has a test in
# tests/memory/test_forget_requests.py.
CUES: dict[str, str] = {
    "a removal verb on what was said": r"\b(?:forget|drop|scrap|remove|delete|erase|purge|wipe|"
    r"discard)\s+(?:what|the bit|everything|all of (?:it|that)|that|it)\b",
    "let it go": r"\blet (?:that|it|this|what\b[^.;!?]{1,60}?) go\b",
    "not kept": r"(?:\bnot|n't|\bnever|\bno|\bnone of (?:that|it))(?:\s+[\w']+){0,4}?\s+"
    r"(?:keep|kept|stay|stayed|stays|stick|sticks|linger|lingers|remain|remains|stored|store|"
    r"on record|remember|remembered|written down)\b",
    "no trace": r"\bno trace\b",
}
_CUE = re.compile("|".join(f"(?:{cue})" for cue in CUES.values()), re.IGNORECASE)
# An indirect request refers to what was said or kept (so "we don't keep bread overnight" is not
# one). Each entry has a test in tests/memory/test_forget_requests.py.
REFERENCES = (
    "told",
    "said",
    "mentioned",
    "wrote",
    "written",
    "noted",
    "shared",
    "bit about",
    "on record",
    "trace",
    "with us",
    "anywhere",
    "in memory",
    "in here",
    "none of that",
    "notes",
    "memory",
)
_REFERS = re.compile(r"\b(?:" + "|".join(map(re.escape, REFERENCES)) + r")\b", re.IGNORECASE)
MIN_SIMILARITY = 0.25  # cosine of the target's words and a crystal, with the default embedder
MARGIN = 0.08  # the nearest must beat the next by this much to be one clear target


@dataclass
class Resolution:
    """What became of one request in a dream."""

    request_id: int | None
    target: str
    forgotten: list[int] = field(default_factory=list)
    ambiguous: int = 0  # how many crystals matched when too many (or none) did
    why: str = ""  # why it waits for the user (no text of a memory)
    names: list[str] = field(default_factory=list)  # the names a word of it is part of

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, for the journal (the target phrase names no secret value)."""
        return {
            "request_id": self.request_id,
            "target": self.target,
            "forgotten": self.forgotten,
            "outcome": "forgotten" if self.forgotten else "needs confirmation",
            "matches": len(self.forgotten) or self.ambiguous,
            **({"why": self.why} if self.why else {}),
        }


def _stems(text: str) -> set[str]:
    return {stem(w) for w in WORD.findall(text.lower())}


def parse(text: str) -> ForgetRequest | None:
    """The forget request a note makes, if it makes one."""
    if _NOT_A_REQUEST.search(text):
        return None
    match = _REQUEST.search(text)
    if not match:
        return _indirect(text)
    target = _CLAUSE.split(match["target"], maxsplit=1)[0]
    target = " ".join(target.split()).strip(" ,")
    words = [w for w in WORD.findall(target.lower()) if w not in FORGET_STOP_WORDS and len(w) > 1]
    if not words:
        return None
    words = list(dict.fromkeys(words))
    return ForgetRequest(target, tuple(words), frozenset(stem(w) for w in words))


def _indirect(text: str) -> ForgetRequest | None:
    """A request said in other words: a cue and a reference to what was said (see CUES)."""
    if _CUE.search(text) is None or not _REFERS.search(text):
        return None
    about = re.search(r"\babout\s+(?P<what>[^.!?;\n]+)", text, re.IGNORECASE)
    words = _asked(_CLAUSE.split(about["what"], maxsplit=1)[0]) if about else []
    words = words or _asked(text)  # "about him": the sentence names what it is about
    target = " ".join(words) if words else " ".join(text.split())
    return ForgetRequest(target, tuple(words), frozenset(stem(w) for w in words), direct=False)


def _asked(text: str) -> list[str]:
    """The words of ``text`` that name what is asked about (no asking words, no stop words)."""
    skip = FORGET_STOP_WORDS | FORGET_ASKING_WORDS
    found = [w for w in WORD.findall(text.lower()) if w not in skip and len(w) > 1]
    return list(dict.fromkeys(found))


def _same_word(wanted: str, have: set[str]) -> bool:
    # Stems of one word can still differ ("weight" / "weighed" → "weigh"): a shared start of
    # five letters or more counts as the same word.
    return wanted in have or any(
        min(len(wanted), len(other)) >= 5 and (wanted.startswith(other) or other.startswith(wanted))
        for other in have
    )


def matches(request: ForgetRequest, text: str) -> bool:
    """Whether ``text`` holds every content word of the request (stems compared)."""
    if not request.keywords:
        return False  # a request that names nothing matches nothing
    have = _stems(PLACEHOLDER.sub(" ", text))  # a placeholder's words are no memory's words
    return all(_same_word(wanted, have) for wanted in request.keywords)


def resolve(
    ws: Workspace, requests: list[tuple[Crystal, ForgetRequest]], now: datetime
) -> list[Resolution]:
    """Forget what each unambiguous request names; report every request."""
    store = ws.store
    out = []
    for asker, request in requests:
        found = store.search.fts_match(list(request.words), [], 200) if request.words else []
        # Full-text search matches whole stems ("weight" misses "weighed"): the newest
        # crystals are looked at as well, with word forms compared by ``matches``.
        ids = {crystal_id for crystal_id, _ in found}
        ids |= {c.id for c in store.crystals.select(newest_first=True, limit=RECENT)}
        earlier = [
            crystal
            for crystal in store.crystals.crystals_by_id(sorted(ids))
            if crystal.id != asker.id
            and crystal.created_at <= asker.created_at
            and parse(crystal.text) is None
        ]
        pointing = _pointing(request, earlier)
        candidates = [crystal for crystal in earlier if matches(pointing, crystal.text)]
        by_words = request.direct and any(_held(request, crystal) for crystal in earlier)
        if not by_words:
            # Said in other words, or in words no earlier note holds: by meaning, one clear
            # target or none. (A request whose words point at several notes is unclear.)
            candidates = _by_meaning(ws, request, earlier)
        resolution = Resolution(asker.id, request.target)
        resolution.why, resolution.names = _unclear(request, pointing, candidates, by_words)
        if 1 <= len(candidates) <= MAX_TARGETS and not resolution.why:
            forgetting.forget(
                ws,
                [c.id for c in candidates],
                reason=f"forget request in note #{asker.id}",
                now=now,
                asking=[asker.text],
            )
            resolution.forgotten = [c.id for c in candidates]
        else:
            resolution.ambiguous = len(candidates)
            resolution.why = resolution.why or (
                f"{len(candidates)} memories match" if candidates else "no memory matches clearly"
            )
            forget_pending.record(
                store,
                forget_pending.Pending(
                    asker.id,
                    request.target,
                    [c.id for c in candidates],
                    resolution.why,
                    iso(now),
                    names=resolution.names,
                ),
            )
        out.append(resolution)
    return out


def _unclear(
    request: ForgetRequest, pointing: ForgetRequest, candidates: list[Crystal], by_words: bool
) -> tuple[str, list[str]]:
    """Why these candidates are not one clear target (a shared name, another word form)."""
    texts = [c.text for c in candidates]
    names = forget_search.shared_names(texts, list(request.words))
    if names:
        word, people = next(iter(names.items()))
        return f"{word!r} is part of {len(people)} names ({', '.join(people)})", people
    written = [w for w in request.words if stem(w) in pointing.keywords]
    other = [c for c in candidates if not set(written) <= set(WORD.findall(c.text.lower()))]
    if by_words and written and other:
        return f"{len(other)} of {len(candidates)} match only by another form of a word", []
    return "", []


def _held(request: ForgetRequest, crystal: Crystal) -> bool:
    have = _stems(crystal.text)
    return any(_same_word(word, have) for word in request.keywords)


def _by_meaning(ws: Workspace, request: ForgetRequest, earlier: list[Crystal]) -> list[Crystal]:
    """The one earlier crystal nearest the request's target in meaning, if it is clearly so."""
    pool = [
        c
        for c in sorted(earlier, key=lambda c: c.id, reverse=True)[:RECENT]
        if c.source not in ("insight", "auto", "seed")
    ]
    if not pool or not request.words:
        return []
    embedder, target = for_rules(ws.embedder), " ".join(request.words)
    nearest = clearly_nearest(embedder, target, [c.text for c in pool], MIN_SIMILARITY, MARGIN)
    return [pool[nearest]] if nearest is not None else []


def _pointing(request: ForgetRequest, earlier: list[Crystal]) -> ForgetRequest:
    """The request without the words no earlier crystal holds, while two or more remain."""
    seen: set[str] = set()
    for crystal in earlier:
        seen |= _stems(crystal.text)
    held = frozenset(word for word in request.keywords if _same_word(word, seen))
    if len(held) < 2 or held == request.keywords:
        return request
    return dataclasses.replace(request, keywords=held)
