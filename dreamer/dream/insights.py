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
      "fading_topics": [     # old Active Context lines with no recent support and no date
        {"topic": "Kitchen renovation quotes", "keywords": "kitchen renovation quotes",
         "line": "- Kitchen renovation quotes due", "last_seen": "2026-03-01T08:00:00Z" | None}
      ],
      "answered_questions": [  # open questions a later note answered (no longer gaps)
        {"question": "...", "answer": "...", "at": "2026-03-14T11:00:00Z"}
      ],
      "upcoming": [          # new notes and state lines with a date still ahead
        {"text": "...", "date": "2026-03-16", "at": "2026-03-08T10:30:00Z" | None}
      ],
      "people": [            # someone named once with a role, linked to later role mentions
        {"name": "Priya Raman", "role": "manager", "text": "...", "mentions": 2}
      ]
    }

Insights are suggestions: the Claude prompt says so, and a synthesizer may reject any.

Every list is deterministic for the same inputs (ties broken by id or text).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from dreamer.dream import dates
from dreamer.memory.scratch import Note
from dreamer.memory.state import WorkingMemory
from dreamer.retrieval.embed import _stem
from dreamer.store import Crystal, Store
from dreamer.support.bounds import head
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
    r"\b(deadline|due|moved to|moves to|moving to|changed to|postponed|pushed to|rescheduled|"
    r"launch date|ship date|"
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
    "moves",
    "moving",
    "changed",
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
    answered_questions: list[dict[str, Any]] = field(default_factory=list)
    upcoming: list[dict[str, Any]] = field(default_factory=list)
    people: list[dict[str, Any]] = field(default_factory=list)

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


LABELS = frozenset(
    "past friction breakthrough deadline goal task note decided decision update todo done open "
    "question upcoming auto hormonal event spike peaked correction clipped characters memory_get "
    "whole".split()
)


def _nameable(word: str) -> bool:
    """A word that may name a topic: not a label, a date, a number or a generic word."""
    lower = word.lower()
    return not (
        lower in LABELS
        or lower in dates.MONTHS
        or lower.rstrip("s") in dates.WEEKDAYS
        or any(ch.isdigit() for ch in lower)
        or lower in STOP
    )


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
        top = [surface[s] for s in ranked if _nameable(surface[s])][:4]
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


# --- contradictions ---------------------------------------------------------------------------


def _kind(text: str) -> str | None:
    if _DEADLINE.search(text):
        return "deadline"
    if _PREFERENCE.search(text):
        return "preference"
    return None


_KIND_STEMS = frozenset(_stem(w) for w in _KIND_WORDS)


def _subject(text: str) -> set[str]:
    """What a statement is about: its content stems, without kind words, names or roles
    (two notes that both name the user's manager are not about the same thing)."""
    names = {w.lower() for w in re.findall(r"\b[A-Z][a-z][\w'’-]*", text)}
    return stems(text) - _KIND_STEMS - {_stem(w) for w in names | set(ROLES)}


_CHANGED = re.compile(
    r"\b(no longer|anymore|instead|now|switched|switches|moved|moves|changed|changes|postponed|"
    r"pushed|rescheduled|correction|corrected|from now on|new|replaced|replaces|rather than)\b",
    re.IGNORECASE,
)


def _contradictions(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pairs (older, newer) of same-kind statements about the same subject that differ.

    Only a newer statement that says something changed ("no longer", "moved to", "now",
    "Correction:") supersedes: two directives about one subject may both hold.
    """
    typed = [(item, _kind(item["text"])) for item in items]
    typed = [(item, kind) for item, kind in typed if kind]
    typed.sort(key=lambda pair: (pair[0]["at"] or "", pair[0]["text"]))
    subjects = [_subject(item["text"]) for item, _ in typed]
    found: list[dict[str, Any]] = []
    superseded: set[str] = set()
    for j, (newer, kind) in enumerate(typed):
        if not _CHANGED.search(newer["text"]):
            continue
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


_ANSWER = re.compile(
    r"\b(decided|decision|decide|found|answer(?:ed)?|resolved|chose|chosen|going with|settled|"
    r"turns out|confirmed|agreed|approved|we will|we'll|will use|booked|done)\b",
    re.IGNORECASE,
)
_QUESTION_WORDS = frozenset(
    _stem(w) for w in "open question find out need figure whether why ask unclear".split()
)


def answer_to(question: str, asked: str, statements: list[tuple[str, str]]) -> tuple[str, str]:
    """(text, at) of the first statement after ``asked`` that answers ``question``, or ("", "")."""
    wanted = stems(question) - _QUESTION_WORDS
    if len(wanted) < 2:
        return "", ""
    for text, at in sorted(statements, key=lambda pair: pair[1]):
        if (asked and at <= asked) or questions(text):
            continue
        shared = wanted & stems(text)
        if len(shared) >= 2 and len(shared) >= 0.3 * len(wanted):
            if _ANSWER.search(text) or len(shared) >= 0.6 * len(wanted):
                return text, at
    return "", ""


def _gaps(
    store: Store,
    notes: list[Note],
    crystals: list[Crystal],
    now: datetime,
    old: WorkingMemory,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(open questions, answered questions): a later note that answers one closes it."""
    seen: set[str] = set()
    gaps: list[dict[str, Any]] = []
    answered: list[dict[str, Any]] = []
    texts = [(n.text, iso(n.at)) for n in notes] + [(c.text, c.created_at) for c in crystals]
    statements = [(text, at) for text, at in texts if not questions(text)]

    def add(question: str, source: str, at: str) -> None:
        key = " ".join(question.lower().split())
        if key in seen:
            return
        seen.add(key)
        reply, when = answer_to(question, at, statements) if source != "search" else ("", "")
        if reply:
            answered.append({"question": question, "answer": reply, "at": when})
        elif source != "state":
            gaps.append({"question": question, "source": source, "at": at})

    for text, at in sorted(texts, key=lambda pair: pair[1], reverse=True):
        for question in questions(text):
            add(question, "note", at)
    for line in context_lines(old.body("curiosity_gaps")):
        add(re.sub(r"^\s*([-*•]|\d+[.)])\s+", "", line).strip(), "state", "")
    # A gap stays open until a later search for the same words found something (a search
    # that finds nothing writes a gap row at the same moment).
    for query, at in store.open_gaps(iso(now - GAP_WINDOW), MAX_GAPS):
        add(f"What is known about “{query}”? (a search found nothing)", "search", at)
    return gaps[:MAX_GAPS], answered


# --- upcoming and people ----------------------------------------------------------------------


def _when(stamp: str | None, fallback: datetime) -> datetime:
    try:
        return parse_iso(stamp) if stamp else fallback
    except ValueError:
        return fallback


def written_at(store: Store, line: str, old: WorkingMemory, now: datetime) -> datetime:
    """When a state line was first written: its newest crystal, else the last dream."""
    words = keywords(re.sub(r"^\s*([-*•]|\d+[.)])\s+", "", line))[:3]
    said = store.last_mention(words) if words else None
    return _when(said or old.last_dream, now)


def _upcoming(
    store: Store, notes: list[Note], crystals: list[Crystal], old: WorkingMemory, now: datetime
) -> list[dict[str, Any]]:
    """New notes and Active Context lines naming a date that is still ahead."""
    items: list[tuple[str, str | None]] = [(n.text, iso(n.at)) for n in notes]
    items += [(c.text, c.created_at) for c in crystals]
    items += [(line.strip(), None) for line in context_lines(old.body("active_context"))]
    out: dict[str, dict[str, Any]] = {}
    for text, at in items:
        written = _when(at, now) if at else written_at(store, text, old, now)
        when = dates.ahead(text, written, now)
        if when is not None:
            out.setdefault(
                " ".join(text.split()), {"text": text, "date": when.isoformat(), "at": at}
            )
    return sorted(out.values(), key=lambda item: (item["date"], item["text"]))


ROLES = {
    "manager": "manager",
    "boss": "manager",
    "lead": "lead",
    "mother": "mother",
    "mom": "mother",
    "mum": "mother",
    "father": "father",
    "dad": "father",
    "husband": "husband",
    "wife": "wife",
    "partner": "partner",
    "son": "son",
    "daughter": "daughter",
    "sister": "sister",
    "brother": "brother",
    "teacher": "teacher",
    "therapist": "therapist",
    "doctor": "doctor",
    "colleague": "colleague",
    "friend": "friend",
    "neighbour": "neighbour",
    "neighbor": "neighbour",
    "contact": "contact",
    "coach": "coach",
    "cofounder": "cofounder",
    "co-founder": "cofounder",
    "accountant": "accountant",
    "landlord": "landlord",
    "advisor": "advisor",
    "supervisor": "supervisor",
}
_ROLE = "|".join(sorted(ROLES, key=len, reverse=True))
_NAME = r"[A-Z][\w'’-]+(?:\s[A-Z][\w'’-]+){0,2}"
_OWNER = r"(?:my|our|his|her|their|the|[A-Z][\w-]+['’]s)"
_NAME_ROLE = re.compile(rf"(?P<name>{_NAME}),\s+{_OWNER}\s+(?P<role>{_ROLE})\b")
_ROLE_NAME = re.compile(rf"\b{_OWNER}\s+(?P<role>{_ROLE}),?\s+(?P<name>{_NAME})")
_NOT_NAMES = STOP | {"please", "correction", "decided", "open", "question", "deadline"}


def _people(notes: list[Note], crystals: list[Crystal], old: WorkingMemory) -> list[dict[str, Any]]:
    """People named once with a role ("Priya Raman, my manager") and later role mentions.

    The old Bond counts too (with no time, so before every note): a person named in an
    earlier dream is still linked when a later note says "my manager".
    """
    texts = [(re.sub(r"^\s*[-*•]\s+", "", line), "") for line in context_lines(old.body("bond"))]
    texts += [(c.text, c.created_at) for c in crystals] + [(n.text, iso(n.at)) for n in notes]
    texts.sort(key=lambda pair: pair[1])
    found: dict[str, dict[str, Any]] = {}
    for text, at in texts:
        for pattern in (_NAME_ROLE, _ROLE_NAME):
            for match in pattern.finditer(text):
                name = match["name"].strip()
                first = name.split()[0].lower()
                if first in _NOT_NAMES or first in dates.MONTHS or first in dates.WEEKDAYS:
                    continue
                role = ROLES[match["role"].lower()]
                found.setdefault(name, {"name": name, "role": role, "text": text, "at": at})
    for person in found.values():
        words = [w for w, r in ROLES.items() if r == person["role"]]
        mention = re.compile(rf"\b{_OWNER}\s+(?:{'|'.join(words)})\b", re.IGNORECASE)
        person["mentions"] = sum(
            1
            for text, at in texts
            if at > person["at"] and mention.search(text) and person["name"] not in text
        )
    return sorted(found.values(), key=lambda p: (p["at"], p["name"]))


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


_DETERMINERS = frozenset(
    "the a an our my their his her its this that these those some all two three every each up "
    "out".split()
)
_SUBJECTS = frozenset("i we also then finally again".split())
_PREPOSITIONS = frozenset(
    "with for from to in on at by of into after before about between during against via "
    "while because so".split()
)


def task_action(text: str) -> tuple[str, list[str]] | None:
    """(verb in -ing form, content words of its object) when a note reports doing something.

    Only a verb that leads the note counts ("Refactored the payments module", "I deployed
    staging"); a word ending in -ing counts only when an object follows it ("Reviewing the
    PR"), so "Billing API returns 500" is no action: skills come from repeated actions, not
    nouns.
    """
    tokens = [w.strip("'’-").lower() for w in _WORD.findall(text.split("\n", 1)[0])][:12]
    position = 1 if len(tokens) > 1 and tokens[0] in _SUBJECTS else 0
    if position >= len(tokens):
        return None
    token = tokens[position]
    verb = _gerund(token)
    if verb is None:
        return None
    following = tokens[position + 1 : position + 7]
    if token.endswith("ing") and not (following and following[0] in _DETERMINERS):
        return None
    # The object ends at the first preposition: "Decided with Dana" has none.
    end = next((i for i, w in enumerate(following) if w in _PREPOSITIONS), len(following))
    words = [
        w
        for w in following[:end]
        if len(w) >= 3 and w not in STOP and not w.isdigit() and _nameable(w)
    ]
    return (verb, words) if words else None


def task_pattern(text: str) -> tuple[str, str] | None:
    """(verb in -ing form, first object keyword) of a note that reports a task, if it does."""
    action = task_action(text)
    return (action[0], action[1][0]) if action else None


def _plural(word: str) -> str:
    if word.endswith("s"):
        return word
    if word.endswith(("x", "sh", "ch")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


ROUTINE_BELOW = 0.4  # a note rated below this is routine chatter: a crystal, never a skill


def _skills(store: Store, now: datetime) -> list[dict[str, Any]]:
    recent = store.crystals(sources=_SKILL_SOURCES, newest_first=True, limit=SKILL_SCAN)
    by_verb: dict[str, list[tuple[Crystal, list[str]]]] = {}
    for crystal in recent:
        if crystal.importance < ROUTINE_BELOW:
            continue  # emptying a bin twice is a chore, not an emerging skill
        action = task_action(head(crystal.text))  # a crystal of megabytes: its head
        if action:
            by_verb.setdefault(action[0], []).append((crystal, action[1]))
    searches = [query.lower() for query in store.search_queries(iso(now - timedelta(days=30)))]
    skills: list[dict[str, Any]] = []
    for verb, members in by_verb.items():
        # Greedy: the object word most of the verb's notes share makes one skill, and so on.
        left = list(members)
        while len(left) >= 2:
            counts: dict[str, int] = {}
            wording: dict[str, str] = {}
            for _, words in left:
                for word in dict.fromkeys(_stem(w) for w in words[:2]):
                    counts[word] = counts.get(word, 0) + 1
                for w in words:
                    wording.setdefault(_stem(w), w)
            best = max(counts, key=lambda w: (counts[w], w), default=None)
            if best is None or counts[best] < 2:
                break
            group = [(c, w) for c, w in left if best in {_stem(x) for x in w[:2]}]
            left = [(c, w) for c, w in left if best not in {_stem(x) for x in w[:2]}]
            crystals = [c for c, _ in group]
            heads = {_stem(words[0]) for _, words in group}
            obj = wording[best] if len(heads) == 1 else _plural(wording[best])
            recall = sum(min(c.access_count, 3) for c in crystals)
            recall += sum(1 for query in searches if best in {_stem(w) for w in keywords(query)})
            confidence = min(95, 35 + 15 * (len(crystals) - 1) + 5 * min(recall, 4))
            skills.append(
                {
                    "skill": f"{verb.capitalize()} {obj}",
                    "occurrences": len(crystals),
                    "confidence": confidence,
                    "crystal_ids": sorted(c.id for c in crystals),
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
    # MEMORY.md's own lines kept as crystals (hand edits, overflow) are not news about
    # themselves: only a search that found one since makes it support.
    recent = [
        c
        for c in store.touched_since(since, limit=400)
        if c.source != "memory" or c.access_count > 0
    ]
    # Heads only: a crystal (or a query) of megabytes costs no more than a long note.
    evidence = [stems(head(n.text)) for n in notes]
    evidence += [stems(head(c.text)) for c in crystals + recent]
    evidence += [stems(head(query)) for query in store.search_queries(since)]
    fading = []
    for line in lines:
        line_stems = stems(line)
        if not line_stems or _supported(line_stems, evidence):
            continue
        if dates.ahead(line, written_at(store, line, old, now), now) is not None:
            continue  # an event or deadline still ahead never fades before its date
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
    gaps, answered = _gaps(store, notes, crystals, now, old)
    contradictions = _contradictions(_evidence(notes, crystals, old))
    for pair in contradictions:
        _date_state_sides(store, pair, old)
    return Insights(
        topics=_topics(crystals),
        contradictions=contradictions,
        curiosity_gaps=gaps,
        emerging_skills=_skills(store, now),
        fading_topics=_fading(store, old, notes, crystals, now),
        answered_questions=answered,
        upcoming=_upcoming(store, notes, crystals, old, now),
        people=_people(notes, crystals, old),
    )


def _date_state_sides(store: Store, pair: dict[str, Any], old: WorkingMemory) -> None:
    """A side that came from the old state is dated when it was said, not at the last dream."""
    for side, other in (("older", "newer"), ("newer", "older")):
        item = pair[side]
        if item["source"] != "state":
            continue
        own = [w for w in keywords(item["text"]) if w not in set(keywords(pair[other]["text"]))]
        said = store.last_mention(own[:3]) if own else None
        pair[side] = {**item, "at": said, "in_state_since": old.last_dream}
