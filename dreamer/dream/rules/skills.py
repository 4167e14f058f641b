"""Emerging skills: repeated actions on one object, and searches repeated; their section."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from dreamer.dream.rules.insight_results import Insights
from dreamer.dream.rules.lines import fit, readable_head
from dreamer.dream.rules.words import nameable
from dreamer.memory.repeats import SEEN
from dreamer.memory.state import Skill, WorkingMemory, parse_skills
from dreamer.store import Crystal, Store
from dreamer.support.bounds import head
from dreamer.support.times import iso
from dreamer.support.words import (
    DETERMINERS,
    NOTE_STOP_WORDS,
    NOTE_WORD,
    PREPOSITIONS,
    keywords,
    stem,
)

MAX_SKILLS = 8


SKILL_SCAN = 500  # how many recent crystals the skill finder looks at


RECALL_REPEATS = 3  # the same search this often is a recurring need (an emerging skill)


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


_SUBJECTS = frozenset("i we also then finally again".split())


def task_action(text: str) -> tuple[str, list[str]] | None:
    """(verb in -ing form, content words of its object) when a note reports doing something.

    Only a verb that leads the note counts ("Refactored the payments module", "I deployed
    staging"); a word ending in -ing counts only when an object follows it ("Reviewing the
    PR"), so "Billing API returns 500" is no action: skills come from repeated actions, not
    nouns.
    """
    tokens = [w.strip("'’-").lower() for w in NOTE_WORD.findall(text.split("\n", 1)[0])][:12]
    position = 1 if len(tokens) > 1 and tokens[0] in _SUBJECTS else 0
    if position >= len(tokens):
        return None
    token = tokens[position]
    verb = _gerund(token)
    if verb is None:
        return None
    following = tokens[position + 1 : position + 7]
    if token.endswith("ing") and not (following and following[0] in DETERMINERS):
        return None
    # The object ends at the first preposition: "Decided with Dana" has none.
    end = next((i for i, w in enumerate(following) if w in PREPOSITIONS), len(following))
    words = [
        w
        for w in following[:end]
        if len(w) >= 3 and w not in NOTE_STOP_WORDS and not w.isdigit() and nameable(w)
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


WRITTEN_HISTORY = 1_000  # audit rows of one crystal read for its sightings and first importance


def written(store: Store, crystal: Crystal) -> tuple[float, int]:
    """(the importance a crystal was written with, how many times its text was written).

    Fading lowers ``importance`` in place; the first audited change of it keeps the value the
    note came with. A repeated identical note is the same crystal plus a ``seen`` audit row.
    """
    importance, seen = crystal.importance, 1
    for row in store.records.audit_entries(crystal.id, WRITTEN_HISTORY):  # newest first
        if row["action"] == SEEN:
            seen += 1
        change = (row["detail"] or {}).get("importance")
        if isinstance(change, list) and len(change) == 2:
            importance = float(change[0])  # the oldest change read last: its "before" wins
    return importance, seen


def find_skills(store: Store, now: datetime) -> list[dict[str, Any]]:
    recent = store.crystals.select(sources=_SKILL_SOURCES, newest_first=True, limit=SKILL_SCAN)
    by_verb: dict[str, list[tuple[Crystal, list[str]]]] = {}
    times: dict[int, int] = {}
    for crystal in recent:
        action = task_action(head(crystal.text))  # a crystal of megabytes: its head
        if not action:
            continue
        importance, times[crystal.id] = written(store, crystal)
        if importance < ROUTINE_BELOW:
            continue  # emptying a bin twice is a chore, not an emerging skill (as written)
        by_verb.setdefault(action[0], []).append((crystal, action[1]))
    # Each search's stems, made once: every skill below is looked for in all of them.
    searches = [
        {stem(w) for w in keywords(query.lower())}
        for query in store.search.search_queries(iso(now - timedelta(days=30)))
    ]
    skills: list[dict[str, Any]] = []
    for verb, members in by_verb.items():
        # Greedy: the object word most of the verb's notes share makes one skill, and so on.
        left = list(members)
        while sum(times[c.id] for c, _ in left) >= 2:
            counts: dict[str, int] = {}
            wording: dict[str, str] = {}
            for _, words in left:
                for word in dict.fromkeys(stem(w) for w in words[:2]):
                    counts[word] = counts.get(word, 0) + 1
                for w in words:
                    wording.setdefault(stem(w), w)
            best = max(counts, key=lambda w: (counts[w], w), default=None)
            if best is None:
                break
            group = [(c, w) for c, w in left if best in {stem(x) for x in w[:2]}]
            left = [(c, w) for c, w in left if best not in {stem(x) for x in w[:2]}]
            crystals = [c for c, _ in group]
            seen = sum(times[c.id] for c in crystals)  # every writing, repeats included
            if seen < 2:
                continue
            obj = _object(group, best, wording)
            recall = sum(min(c.access_count, 3) for c in crystals)
            recall += sum(1 for query in searches if best in query)
            confidence = min(95, 35 + 15 * (seen - 1) + 5 * min(recall, 4))
            skills.append(
                {
                    "skill": f"{verb.capitalize()} {obj}",
                    "occurrences": seen,
                    "confidence": confidence,
                    "crystal_ids": sorted(c.id for c in crystals),
                }
            )
    skills += _recalled(store, now)
    skills.sort(key=lambda s: (-s["occurrences"], -s["confidence"], s["skill"]))
    return skills[:MAX_SKILLS]


def _object(group: list[tuple[Crystal, list[str]]], best: str, wording: dict[str, str]) -> str:
    """The object a group of actions shares, in its own words: the object words at least half
    of the notes name, in the order the first names them ("dbt staging models"), the last one
    plural when the notes act on several things."""
    counts: dict[str, int] = {}
    for _, words in group:
        for word_stem in dict.fromkeys(stem(w) for w in words):
            counts[word_stem] = counts.get(word_stem, 0) + 1
    order = [stem(w) for _, words in group for w in words]
    shared = [s for s in dict.fromkeys(order) if counts[s] * 2 >= len(group)][:3] or [best]
    phrase = [wording[s] for s in shared]
    heads = {stem(words[0]) for _, words in group}
    if len(heads) > 1 and len(shared) == 1:
        phrase[-1] = _plural(phrase[-1])
    return " ".join(phrase)


def _recalled(store: Store, now: datetime) -> list[dict[str, Any]]:
    """Searches repeated often (same words, RECALL_REPEATS+ times in 30 days): a recurring need."""
    counts: dict[frozenset[str], list[str]] = {}
    for query in store.search.search_queries(iso(now - timedelta(days=30)), found_only=True):
        key = frozenset(stem(w) for w in keywords(query))
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


MAX_SKILLS_SHOWN = 8


def write_skills(old: WorkingMemory, ins: Insights, budget: int) -> str:
    merged: dict[str, Skill] = {}
    for found in ins.emerging_skills:
        merged[found["skill"].lower()] = Skill(
            found["skill"], found["confidence"], found["occurrences"]
        )
    for skill in old.skills():
        merged.setdefault(skill.skill.lower(), skill)
    ranked = sorted(merged.values(), key=lambda s: (-s.confidence, -s.occurrences, s.skill))
    stray = [
        line
        for line in old.body("emerging_skills").split("\n")
        if line.strip() and not parse_skills(line)
    ]
    readable = [r for r in (_readable(s) for s in ranked[:MAX_SKILLS_SHOWN]) if r is not None]
    return fit([s.render() for s in readable] + stray, budget)


def _readable(skill: Skill) -> Skill | None:
    """The skill as a line that parses back as itself, redacted or not (see readable_head)."""

    def read(line: str) -> str | None:
        found = parse_skills(line)
        return found[0].skill if len(found) == 1 else None

    name = readable_head(
        skill.skill, lambda n: Skill(n, skill.confidence, skill.occurrences).render(), read
    )
    return None if name is None else Skill(name, skill.confidence, skill.occurrences)
