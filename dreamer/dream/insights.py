"""What a dream learns before it writes: topics, contradictions, gaps, skills, fading topics.

Computed from the store, the rotated notes, the new crystals and the old state, with no LLM.
The shape of ``Insights.to_dict()`` is a contract (the Claude prompt formats it)::

    {
      "topics": [            # new crystals grouped by shared keywords, biggest first
        {"label": "acme report", "keywords": ["acme", "report", "deadline"],
         "crystal_ids": [3, 7], "size": 2}
      ],
      "contradictions": [    # a newer statement superseding an older one about the same thing
        {"kind": "preference" | "deadline", "subject": ["editor", "theme"],
         "older": {"id": 4 | None, "text": "...", "at": "2026-03-10T09:00:00Z" | None,
                   "source": "crystal" | "note" | "state"},
         "newer": {... same shape ...}}
      ],
      "curiosity_gaps": [    # open questions in notes, searches that found nothing
        {"question": "...", "source": "note" | "search", "at": "2026-03-12T10:00:00Z"}
      ],
      "emerging_skills": [   # repeated task patterns (occurrences, boosted by recall),
        {"skill": "Deploying staging", "occurrences": 3, "confidence": 70,
         "crystal_ids": [2, 5, 9]},                     # and searches repeated 3+ times
        {"skill": "Recalling deploy checklist", "occurrences": 4, "confidence": 60,
         "crystal_ids": []}
      ],
      "fading_topics": [     # old Active Context lines with no recent support
        {"topic": "Kitchen renovation quotes", "keywords": "kitchen renovation quotes",
         "line": "- Kitchen renovation quotes due", "last_seen": "2026-03-01T08:00:00Z" | None}
      ]
    }

Every list is deterministic for the same inputs (ties broken by id or text).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from dreamer.memory.scratch import Note
from dreamer.memory.state import WorkingMemory
from dreamer.retrieval.embed import _stem
from dreamer.store import Crystal, Store
from dreamer.support.times import iso, parse_iso

FADE_AFTER = timedelta(days=2)  # an Active Context line with no support this long fades
MAX_TOPICS = 12
MAX_GAPS = 10
MAX_SKILLS = 8
SKILL_SCAN = 500  # how many recent crystals the skill finder looks at
GAP_WINDOW = timedelta(days=14)
RECALL_REPEATS = 3  # the same search this often is a recurring need (an emerging skill)

_WORD = re.compile(r"[^\W_][\w'’-]*[^\W_]|[^\W_]", re.UNICODE)
STOP = frozenset(
    "a about above after again against all also am an and any are as at be because been before "
    "being below between both but by can could did do does doing done down during each else "
    "even ever few for from further get gets got had has have having he her here hers herself "
    "him himself his how i if in into is it its itself just let lets like me more most much must "
    "my myself need needs new no nor not now of off on once one only or other our ours out over "
    "own per please same she should so some still such than that the their theirs them then there "
    "these they this those through to too under until up upon us use very via was we were what "
    "when where which while who whom why will with within without would yet you your yours "
    "user users agent today tomorrow yesterday week weeks day days time times thing things "
    "really maybe already again said says told asked wants want wanted make made going "
    "next last first two three".split()
)
_PREFERENCE = re.compile(
    r"\b(prefers?|preferred|likes?|liked|dislikes?|hates?|loves?|wants?|favou?rite|"
    r"switch(?:ed|es)? to|instead|no longer|anymore|now uses?|call (?:me|him|her|them))\b",
    re.IGNORECASE,
)
_DEADLINE = re.compile(
    r"\b(deadline|due|moved to|postponed|pushed to|rescheduled|launch date|ship date|"
    r"by (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|\d))\b",
    re.IGNORECASE,
)
_KIND_WORDS = {
    "prefer",
    "prefers",
    "preferred",
    "like",
    "likes",
    "liked",
    "dislike",
    "dislikes",
    "hate",
    "hates",
    "love",
    "loves",
    "want",
    "wants",
    "favorite",
    "favourite",
    "switch",
    "switched",
    "instead",
    "longer",
    "anymore",
    "uses",
    "deadline",
    "due",
    "moved",
    "postponed",
    "pushed",
    "rescheduled",
    "launch",
    "date",
    "ship",
    "call",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
}
_QUESTION_LEAD = re.compile(
    r"^\s*(?:open question|question|todo|unknown|unclear|not sure|need to find out|"
    r"find out|ask (?:the user|them|him|her|about|whether|if)|figure out|investigate|"
    r"wonder(?:ing)?)\b[:\s-]*",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"[^.!?\n]+[?]|[^.!?\n]+[.!]?", re.UNICODE)
_IRREGULAR = {
    "wrote": "writing",
    "built": "building",
    "ran": "running",
    "made": "making",
    "set": "setting",
    "read": "reading",
    "sent": "sending",
    "found": "finding",
    "drew": "drawing",
    "did": "doing",
    "took": "taking",
    "gave": "giving",
    "led": "leading",
    "taught": "teaching",
    "bought": "buying",
    "paid": "paying",
    "met": "meeting",
    "fought": "fighting",
    "rebuilt": "rebuilding",
    "rewrote": "rewriting",
    "spent": "spending",
}
_NOT_VERBS = {
    "need",
    "seed",
    "feed",
    "speed",
    "red",
    "bed",
    "shed",
    "embed",
    "bing",
    "thing",
    "ring",
    "king",
    "spring",
    "string",
    "morning",
    "evening",
    "nothing",
    "something",
    "anything",
    "everything",
    "ceiling",
    "building",
    "meeting",
    "wedding",
    "pudding",
    "during",
    "interesting",
    "ongoing",
    "upcoming",
    "pending",
    "hundred",
    "bored",
    "tired",
    "scared",
    "excited",
    "worried",
    "pleased",
    "user",
    "agent",
    "again",
}
_SKILL_SOURCES = ("scratch", "auto", "sessions", "memory", "seed")


@dataclass
class Insights:
    """Everything a dream works out before it writes (see the module docstring for the shape)."""

    topics: list[dict[str, Any]] = field(default_factory=list)
    contradictions: list[dict[str, Any]] = field(default_factory=list)
    curiosity_gaps: list[dict[str, Any]] = field(default_factory=list)
    emerging_skills: list[dict[str, Any]] = field(default_factory=list)
    fading_topics: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict in the documented shape."""
        return asdict(self)

    def summary(self) -> dict[str, int]:
        """How many of each kind (for the journal and the CLI)."""
        return {key: len(value) for key, value in self.to_dict().items()}


# --- words ------------------------------------------------------------------------------------


def keywords(text: str) -> list[str]:
    """The content words of text, lower-cased, in first-seen order, stop words removed."""
    out: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        word = word.strip("'’-")
        if len(word) < 3 or word in STOP or word.isdigit():
            continue
        out[word] = None
    return list(out)


def stems(text: str) -> set[str]:
    """Stemmed content words of text, for overlap tests."""
    return {_stem(word) for word in keywords(text)}


def _first_line(text: str, words: int = 10) -> str:
    line = text.strip().split("\n", 1)[0]
    parts = line.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


# --- topics -----------------------------------------------------------------------------------


def _topics(crystals: list[Crystal]) -> list[dict[str, Any]]:
    """Group crystals by shared keywords: greedy, most widely shared keyword first."""
    words = {c.id: keywords(c.text) for c in crystals}
    stemmed = {c.id: {_stem(w): w for w in words[c.id]} for c in crystals}
    frequency: dict[str, int] = {}
    for mapping in stemmed.values():
        for stem in mapping:
            frequency[stem] = frequency.get(stem, 0) + 1
    shared = sorted((s for s, n in frequency.items() if n >= 2), key=lambda s: (-frequency[s], s))
    # A word in nearly every crystal ("project") groups nothing useful when there are many.
    if len(crystals) >= 6:
        shared = [s for s in shared if frequency[s] <= 0.6 * len(crystals)] or shared
    unassigned = {c.id for c in crystals}
    groups: list[tuple[list[int], str]] = []
    for stem in shared:
        members = sorted(cid for cid in unassigned if stem in stemmed[cid])
        if len(members) >= 2:
            groups.append((members, stem))
            unassigned -= set(members)
    for cid in sorted(unassigned):
        groups.append(([cid], ""))
    topics: list[dict[str, Any]] = []
    for members, seed in groups:
        counts: dict[str, int] = {}
        surface: dict[str, str] = {}
        for cid in members:
            for stem, word in stemmed[cid].items():
                counts[stem] = counts.get(stem, 0) + 1
                surface.setdefault(stem, word)
        ranked = sorted(counts, key=lambda s: (s != seed, -counts[s], frequency.get(s, 0), s))
        top = [surface[s] for s in ranked[:4]]
        if not top:
            continue
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


# --- contradictions ---------------------------------------------------------------------------


def _kind(text: str) -> str | None:
    if _DEADLINE.search(text):
        return "deadline"
    if _PREFERENCE.search(text):
        return "preference"
    return None


_KIND_STEMS = frozenset(_stem(w) for w in _KIND_WORDS)


def _subject(text: str) -> set[str]:
    return stems(text) - _KIND_STEMS


def _contradictions(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pairs (older, newer) of same-kind statements about the same subject that differ."""
    typed = [(item, _kind(item["text"])) for item in items]
    typed = [(item, kind) for item, kind in typed if kind]
    typed.sort(key=lambda pair: (pair[0]["at"] or "", pair[0]["text"]))
    subjects = [_subject(item["text"]) for item, _ in typed]
    found: list[dict[str, Any]] = []
    superseded: set[str] = set()
    for j, (newer, kind) in enumerate(typed):
        newer_subject = subjects[j]
        for i in range(j - 1, -1, -1):
            older, older_kind = typed[i]
            if older_kind != kind or older["text"] in superseded:
                continue
            if " ".join(older["text"].split()).lower() == " ".join(newer["text"].split()).lower():
                continue
            older_subject = subjects[i]
            common = newer_subject & older_subject
            smaller = min(len(newer_subject), len(older_subject)) or 1
            if len(common) >= 2 or (len(common) == 1 and smaller <= 2):
                found.append(
                    {"kind": kind, "subject": sorted(common), "older": older, "newer": newer}
                )
                superseded.add(older["text"])
                break
    return found


# --- curiosity gaps ---------------------------------------------------------------------------


def questions(text: str) -> list[str]:
    """Open questions in a note: sentences ending in '?' or led by 'find out', 'TODO' ..."""
    out = []
    for line in text.split("\n"):
        stripped = line.strip().lstrip("-*• ").strip()
        if not stripped:
            continue
        lead = _QUESTION_LEAD.match(stripped)
        if lead and len(stripped) > lead.end() + 3:
            out.append(stripped[0].upper() + stripped[1:])
            continue
        for sentence in _SENTENCE.findall(stripped):
            sentence = sentence.strip()
            if sentence.endswith("?") and len(sentence) > 8:
                out.append(sentence)
    return out


def _gaps(
    store: Store, notes: list[Note], crystals: list[Crystal], now: datetime
) -> list[dict[str, Any]]:
    seen: set[str] = set()
    gaps: list[dict[str, Any]] = []

    def add(question: str, source: str, at: str) -> None:
        key = " ".join(question.lower().split())
        if key not in seen:
            seen.add(key)
            gaps.append({"question": question, "source": source, "at": at})

    texts = [(n.text, iso(n.at)) for n in notes] + [(c.text, c.created_at) for c in crystals]
    for text, at in sorted(texts, key=lambda pair: pair[1], reverse=True):
        for question in questions(text):
            add(question, "note", at)
    # A gap stays open until a later search for the same words found something (a search
    # that finds nothing writes a gap row at the same moment).
    for query, at in store.open_gaps(iso(now - GAP_WINDOW), MAX_GAPS):
        add(f"What is known about “{query}”? (a search found nothing)", "search", at)
    return gaps[:MAX_GAPS]


# --- emerging skills --------------------------------------------------------------------------


def _gerund(word: str) -> str | None:
    """'deployed' -> 'deploying', 'debugging' -> 'debugging'; None if not a verb form."""
    word = word.lower()
    if word in _NOT_VERBS or len(word) < 4:
        return None
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("ing"):
        return word
    if word.endswith("ied"):
        return word[:-3] + "ying"
    if word.endswith("ed"):
        return word[:-2] + "ing" if not word.endswith("eed") else None
    return None


def task_pattern(text: str) -> tuple[str, str] | None:
    """(verb in -ing form, object keyword) of a note that reports a task, if it does."""
    tokens = [w.strip("'’-").lower() for w in _WORD.findall(text.split("\n", 1)[0])]
    for position, token in enumerate(tokens[:4]):
        verb = _gerund(token)
        if verb is None:
            continue
        for following in tokens[position + 1 : position + 6]:
            if len(following) >= 3 and following not in STOP and not following.isdigit():
                return verb, following
        return None
    return None


def _skills(store: Store, now: datetime) -> list[dict[str, Any]]:
    recent = store.crystals(sources=_SKILL_SOURCES, newest_first=True, limit=SKILL_SCAN)
    groups: dict[tuple[str, str], list[Crystal]] = {}
    wording: dict[tuple[str, str], str] = {}  # the newest wording of each group's object
    for crystal in recent:
        pattern = task_pattern(crystal.text)
        if pattern:
            key = (pattern[0], _stem(pattern[1]))
            groups.setdefault(key, []).append(crystal)
            wording.setdefault(key, pattern[1])
    searches = [query.lower() for query in store.search_queries(iso(now - timedelta(days=30)))]
    skills: list[dict[str, Any]] = []
    for (verb, stem), members in groups.items():
        if len(members) < 2:
            continue
        obj = wording[(verb, stem)]
        recall = sum(min(c.access_count, 3) for c in members)
        recall += sum(1 for query in searches if _stem(obj) in {_stem(w) for w in keywords(query)})
        confidence = min(95, 35 + 15 * (len(members) - 1) + 5 * min(recall, 4))
        skills.append(
            {
                "skill": f"{verb.capitalize()} {obj}",
                "occurrences": len(members),
                "confidence": confidence,
                "crystal_ids": sorted(c.id for c in members),
            }
        )
    skills += _recalled(store, now)
    skills.sort(key=lambda s: (-s["occurrences"], -s["confidence"], s["skill"]))
    return skills[:MAX_SKILLS]


def _recalled(store: Store, now: datetime) -> list[dict[str, Any]]:
    """Searches repeated often (same words, RECALL_REPEATS+ times in 30 days): a recurring need."""
    counts: dict[frozenset[str], list[str]] = {}
    for query in store.search_queries(iso(now - timedelta(days=30)), found_only=True):
        key = frozenset(_stem(w) for w in keywords(query))
        if key:
            counts.setdefault(key, []).append(query)
    out = []
    for queries in counts.values():
        if len(queries) >= RECALL_REPEATS:
            words = " ".join(keywords(queries[-1])[:4])
            out.append(
                {
                    "skill": f"Recalling {words}",
                    "occurrences": len(queries),
                    "confidence": min(80, 20 + 10 * len(queries)),
                    "crystal_ids": [],
                }
            )
    return out


# --- fading topics ----------------------------------------------------------------------------


def context_lines(body: str) -> list[str]:
    """The items of an Active Context body: bullet lines, else non-empty lines."""
    lines = [line for line in body.split("\n") if line.strip()]
    bullets = [line for line in lines if re.match(r"^\s*([-*•]|\d+[.)])\s+", line)]
    return bullets or lines


def topic_of(line: str) -> str:
    """A short topic name for an Active Context line."""
    text = re.sub(r"^\s*([-*•]|\d+[.)])\s+", "", line).strip()
    text = re.sub(r"[*_`]+", "", text)
    text = re.sub(r"^(Friction|Breakthrough|Deadline|Goal|Task|Note):\s*", "", text)
    text = re.split(r"\s+[—–-]\s+|:\s|;\s|\.\s", text, maxsplit=1)[0].strip().rstrip(".:")
    return _first_line(text, 8)


def _supported(line_stems: set[str], evidence: list[set[str]]) -> bool:
    need = 1 if len(line_stems) <= 2 else 2
    return any(len(line_stems & other) >= need for other in evidence)


def _fading(
    store: Store, old: WorkingMemory, notes: list[Note], crystals: list[Crystal], now: datetime
) -> list[dict[str, Any]]:
    lines = context_lines(old.body("active_context"))
    if not lines:
        return []
    since = iso(now - FADE_AFTER)
    recent = store.touched_since(since, limit=400)
    evidence = [stems(n.text) for n in notes] + [stems(c.text) for c in crystals + recent]
    evidence += [stems(query) for query in store.search_queries(since)]
    fading = []
    for line in lines:
        line_stems = stems(line)
        if not line_stems or _supported(line_stems, evidence):
            continue
        words = keywords(topic_of(line)) or keywords(line)
        last = store.last_mention(words[:3])
        fading.append(
            {
                "topic": topic_of(line),
                "keywords": " ".join(words[:4]),
                "line": line.strip(),
                "last_seen": last,
            }
        )
    return fading


# --- all together -----------------------------------------------------------------------------


def _evidence(
    notes: list[Note], crystals: list[Crystal], old: WorkingMemory
) -> list[dict[str, Any]]:
    """Statements with a time, oldest state lines included, de-duplicated by text."""
    items: dict[str, dict[str, Any]] = {}
    for line in context_lines(old.body("bond")) + context_lines(old.body("active_context")):
        text = re.sub(r"^\s*([-*•]|\d+[.)])\s+", "", line).strip()
        if text:
            items.setdefault(
                text, {"id": None, "text": text, "at": old.last_dream or "", "source": "state"}
            )
    for crystal in crystals:
        items[crystal.text] = {
            "id": crystal.id,
            "text": crystal.text,
            "at": crystal.created_at,
            "source": "crystal",
        }
    for note in notes:
        items.setdefault(
            note.text, {"id": None, "text": note.text, "at": iso(note.at), "source": "note"}
        )
    return list(items.values())


def compute(
    store: Store,
    notes: list[Note],
    crystals: list[Crystal],
    now: datetime,
    old_state: WorkingMemory | None,
) -> Insights:
    """Work out the dream's insights from the new evidence, the store and the old state."""
    old = old_state or WorkingMemory()
    if old.last_dream:
        try:
            parse_iso(old.last_dream)
        except ValueError:
            old = WorkingMemory(dict(old.bodies), None, old.mood, old.preamble, list(old.extra))
    return Insights(
        topics=_topics(crystals),
        contradictions=_contradictions(_evidence(notes, crystals, old)),
        curiosity_gaps=_gaps(store, notes, crystals, now),
        emerging_skills=_skills(store, now),
        fading_topics=_fading(store, old, notes, crystals, now),
    )
