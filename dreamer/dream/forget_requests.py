"""Forget requests written as notes ("please forget the staging password I pasted earlier").

``parse`` recognises a request and names what it asks to forget, by its content words.
``resolve`` (used by the dream, which holds the workspace lock) finds the crystals written
before the request that hold every one of those words (a word no earlier crystal holds at all,
like "price" for a note that says "quoted 31.50 euros", cannot point anywhere and is left out
while two or more words remain): when there are one to ``MAX_TARGETS``
of them the request is unambiguous and they are forgotten for good (``memory.forgetting``);
otherwise nothing is deleted and the journal reports the request for the user to confirm
(``dream forget --search ...``). Either way, ``silence`` keeps the request and what it names
out of MEMORY.md, whichever synthesizer wrote the state.

Only imperative requests count: "forget X", "please forget X", "can you forget X", "don't
remember X", "stop remembering X", "delete/remove/erase the note about X". "Don't forget to
call Mia" and "I forgot my keys" are ordinary notes.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from dreamer.memory import forgetting
from dreamer.memory.state import WorkingMemory, section_keys
from dreamer.retrieval.embed import stem
from dreamer.store import Crystal

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
_WORD = re.compile(r"[^\W_]+")
# Words that say how or when something was written, not what it was.
_GENERIC = frozenset(
    "a an the my our your his her their this that these those it its i me we you he she they "
    "about of on in at to for from with by and or please pls kindly again ever earlier before "
    "previously yesterday today last week just now above here there what which who all any "
    "some everything anything thing things stuff note notes memory memories mention mentioned "
    "said told wrote written write pasted paste shared gave given sent typed put had have has "
    "was were is are be been did do does remember remembering keep keeping".split()
)


@dataclass(frozen=True)
class ForgetRequest:
    """What a note asks to forget: the phrase as written, its content words and their stems."""

    target: str
    words: tuple[str, ...]
    keywords: frozenset[str]


@dataclass
class Resolution:
    """What became of one request in a dream."""

    request_id: int | None
    target: str
    forgotten: list[int] = field(default_factory=list)
    ambiguous: int = 0  # how many crystals matched when too many (or none) did

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, for the journal (the target phrase names no secret value)."""
        return {
            "request_id": self.request_id,
            "target": self.target,
            "forgotten": self.forgotten,
            "outcome": "forgotten" if self.forgotten else "needs confirmation",
            "matches": len(self.forgotten) or self.ambiguous,
        }


def _stems(text: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(text.lower())}


def parse(text: str) -> ForgetRequest | None:
    """The forget request a note makes, if it makes one."""
    if _NOT_A_REQUEST.search(text):
        return None
    match = _REQUEST.search(text)
    if not match:
        return None
    target = _CLAUSE.split(match["target"], maxsplit=1)[0]
    target = " ".join(target.split()).strip(" ,")
    words = [w for w in _WORD.findall(target.lower()) if w not in _GENERIC and len(w) > 1]
    if not words:
        return None
    words = list(dict.fromkeys(words))
    return ForgetRequest(target, tuple(words), frozenset(stem(w) for w in words))


def _same_word(wanted: str, have: set[str]) -> bool:
    # Stems of one word can still differ ("weight" / "weighed" → "weigh"): a shared start of
    # five letters or more counts as the same word.
    return wanted in have or any(
        min(len(wanted), len(other)) >= 5 and (wanted.startswith(other) or other.startswith(wanted))
        for other in have
    )


def matches(request: ForgetRequest, text: str) -> bool:
    """Whether ``text`` holds every content word of the request (stems compared)."""
    have = _stems(text)
    return all(_same_word(wanted, have) for wanted in request.keywords)


def resolve(
    ws: Workspace, requests: list[tuple[Crystal, ForgetRequest]], now: datetime
) -> list[Resolution]:
    """Forget what each unambiguous request names; report every request."""
    store = ws.store
    out = []
    for asker, request in requests:
        found = store.fts_match(list(request.words), [], 200)
        # Full-text search matches whole stems ("weight" misses "weighed"): the newest
        # crystals are looked at as well, with word forms compared by ``matches``.
        ids = {crystal_id for crystal_id, _ in found}
        ids |= {c.id for c in store.crystals(newest_first=True, limit=RECENT)}
        earlier = [
            crystal
            for crystal in store.crystals_by_id(sorted(ids))
            if crystal.id != asker.id
            and crystal.created_at <= asker.created_at
            and parse(crystal.text) is None
        ]
        pointing = _pointing(request, earlier)
        candidates = [crystal for crystal in earlier if matches(pointing, crystal.text)]
        resolution = Resolution(asker.id, request.target)
        if 1 <= len(candidates) <= MAX_TARGETS:
            forgetting.forget(
                ws,
                [c.id for c in candidates],
                reason=f"forget request in note #{asker.id}",
                now=now,
            )
            resolution.forgotten = [c.id for c in candidates]
        else:
            resolution.ambiguous = len(candidates)
        out.append(resolution)
    return out


def _pointing(request: ForgetRequest, earlier: list[Crystal]) -> ForgetRequest:
    """The request without the words no earlier crystal holds, while two or more remain."""
    seen: set[str] = set()
    for crystal in earlier:
        seen |= _stems(crystal.text)
    held = frozenset(word for word in request.keywords if _same_word(word, seen))
    if len(held) < 2 or held == request.keywords:
        return request
    return dataclasses.replace(request, keywords=held)


def silence(state: WorkingMemory, requests: list[ForgetRequest], texts: list[str]) -> int:
    """Drop from every section the lines that state a request or what it names; count them."""
    dropped = 0
    for key in section_keys():
        lines = state.body(key).split("\n")
        kept = [
            line
            for line in lines
            if parse(line) is None
            and not any(matches(request, line) for request in requests)
            and not any(forgetting.carries(line, text) for text in texts)
        ]
        if len(kept) != len(lines):
            dropped += len(lines) - len(kept)
            state.bodies[key] = "\n".join(kept)
    return dropped
