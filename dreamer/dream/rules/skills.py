"""Emerging skills: actions repeated on one object or one kind of object, searches repeated."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from dreamer.dream.rules.actions import Action, actions
from dreamer.dream.rules.insight_results import Insights
from dreamer.dream.rules.lines import fit, readable_head
from dreamer.dream.rules.verbs import GENERIC, gerund
from dreamer.dream.rules.words import nameable
from dreamer.memory.repeats import SEEN
from dreamer.memory.state import Skill, WorkingMemory, parse_skills
from dreamer.store import Crystal, Store
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


_SKILL_SOURCES = ("scratch", "auto", "sessions", "memory", "seed")


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
    verb = gerund(token)
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

MIN_OCCURRENCES = 3  # an action done twice may be a redo; three times is a habit

_JOINERS = frozenset({"and", "or"})

NAMES_SHOWN = 4  # a skill over differently named things names this many of them

WRITTEN_HISTORY = 1_000  # audit rows of one crystal read for its sightings and first importance


def written(store: Store, crystal: Crystal) -> tuple[float, list[str]]:
    """(the importance a crystal was written with, every time its text was written).

    Fading lowers ``importance`` in place; the first audited change of it keeps the value the
    note came with. A repeated identical note is the same crystal plus a ``seen`` audit row.
    """
    importance, times = crystal.importance, [crystal.created_at]
    for row in store.records.audit_entries(crystal.id, WRITTEN_HISTORY):  # newest first
        if row["action"] == SEEN:
            times.append(row["at"])
        change = (row["detail"] or {}).get("importance")
        if isinstance(change, list) and len(change) == 2:
            importance = float(change[0])  # the oldest change read last: its "before" wins
    return importance, times


def find_skills(store: Store, now: datetime) -> list[dict[str, Any]]:
    """Actions done MIN_OCCURRENCES times or more, one object or one kind of object, and
    searches repeated; each with its count, a confidence and the crystals that show it."""
    recent = store.crystals.select(sources=_SKILL_SOURCES, newest_first=True, limit=SKILL_SCAN)
    by_verb: dict[str, list[Action]] = {}
    for action in actions(recent, lambda c: written(store, c), ROUTINE_BELOW):
        if action.said.verb not in GENERIC:
            by_verb.setdefault(action.said.verb, []).append(action)
    access = {c.id: c.access_count for c in recent}
    # Each search's stems, made once: every skill below is looked for in all of them.
    searches = [
        {stem(w) for w in keywords(query.lower())}
        for query in store.search.search_queries(iso(now - timedelta(days=30)))
    ]
    skills: list[dict[str, Any]] = []
    for verb, members in by_verb.items():
        for group, name, keys in _groups(members):
            ids = sorted({a.crystal_id for a in group})
            recall = sum(min(access.get(i, 0), 3) for i in ids)
            recall += sum(1 for query in searches if keys & query)
            seen = len(group)
            skills.append(
                {
                    "skill": f"{verb.capitalize()} {name}",
                    "occurrences": seen,
                    "confidence": min(95, 35 + 15 * (seen - 1) + 5 * min(recall, 4)),
                    "crystal_ids": ids,
                }
            )
    skills += _recalled(store, now)
    skills.sort(key=lambda s: (-s["occurrences"], -s["confidence"], s["skill"]))
    return skills[:MAX_SKILLS]


def _groups(members: list[Action]) -> list[tuple[list[Action], str, set[str]]]:
    """(actions, the object they share named, its stems) of one verb's repeated actions.

    Greedy: the object word most of the actions share makes one group ("the orders table",
    "the refunds table"), and so on. What is left and names one thing each, with a value after
    it ("zod to 3.23", "pino to 9.2"), is one kind of thing: those names make the last group.
    """
    out: list[tuple[list[Action], str, set[str]]] = []
    left, single = list(members), []
    while left:
        counts: dict[str, int] = {}
        for action in left:
            for word in dict.fromkeys(stem(w.lower()) for w in action.said.words[:2]):
                counts[word] = counts.get(word, 0) + 1
        best = max(counts, key=lambda w: (counts[w], w))
        group = [a for a in left if best in {stem(w.lower()) for w in a.said.words[:2]}]
        left = [a for a in left if a not in group]
        if len(group) >= MIN_OCCURRENCES:
            out.append((group, _object(group, best), {best}))
        else:
            single += [a for a in group if len(a.said.tokens) == 1 and a.said.valued]
    if len(single) >= MIN_OCCURRENCES:
        names = list(dict.fromkeys(a.said.tokens[0] for a in sorted(single, key=_when)))
        if len(names) > 1:
            out.append((single, _listed(names), {stem(n.lower()) for n in names}))
    return out


def _when(action: Action) -> tuple[str, int]:
    return action.day, action.crystal_id


def _listed(names: list[str]) -> str:
    """'zod, fastify, pino and vitest'; past NAMES_SHOWN, 'zod, fastify, pino and others'."""
    if len(names) > NAMES_SHOWN:
        names = [*names[: NAMES_SHOWN - 1], "others"]
    return ", ".join(names[:-1]) + " and " + names[-1]


def _object(group: list[Action], best: str) -> str:
    """The object a group of actions shares, as one of them words it: the words more than half
    of the actions name, where one action says them side by side ("dbt staging model"), the last
    one plural when the actions were on different things ("chapter 3", "chapter 4")."""
    counts: dict[str, int] = {}
    for action in group:
        for word_stem in dict.fromkeys(stem(w.lower()) for w in action.said.words):
            counts[word_stem] = counts.get(word_stem, 0) + 1
    shared = {s for s, n in counts.items() if n * 2 > len(group)} | {best}
    phrase: list[str] = []
    for action in sorted(group, key=_when):
        run = _run(action.said.tokens, shared)
        if len(run) > len(phrase):
            phrase = run
    if not phrase:
        phrase = [next(w for a in group for w in a.said.words if stem(w.lower()) == best)]
    things = {_thing(a.said.tokens, phrase) for a in group}
    if len(things) > 1:
        phrase[-1] = _plural(phrase[-1])
    return " ".join(phrase)


def _run(tokens: tuple[str, ...], shared: set[str]) -> list[str]:
    """The longest run of side-by-side tokens that are all shared object words ("and" may
    join two of them: "varroa and nosema")."""
    best: list[str] = []
    run: list[str] = []
    for token in tokens:
        if stem(token.lower()) in shared:
            run = [*run, token]
        elif token.lower() in _JOINERS and run and run[-1].lower() not in _JOINERS:
            run = [*run, token]
            continue
        else:
            run = []
        if len(run) > len(best):
            best = run
    return best


def _thing(tokens: tuple[str, ...], phrase: list[str]) -> str:
    """Which thing an action was on: the words before the shared phrase and any number."""
    lower = [t.lower() for t in tokens]
    first = lower.index(phrase[0].lower()) if phrase[0].lower() in lower else len(lower)
    return " ".join(lower[:first] + [t for t in lower[first:] if t.isdigit()])


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
    """The Emerging Skills body: the skills found now, then the old ones no found one grew out
    of ("Bumping zod and pino" grown into "Bumping zod, pino and vitest")."""
    merged: dict[str, Skill] = {}
    for found in ins.emerging_skills:
        merged[found["skill"].lower()] = Skill(
            found["skill"], found["confidence"], found["occurrences"]
        )
    grown = [_stems(name) for name in merged]
    for skill in old.skills():
        if not any(_stems(skill.skill) < stems for stems in grown):
            merged.setdefault(skill.skill.lower(), skill)
    ranked = sorted(merged.values(), key=lambda s: (-s.confidence, -s.occurrences, s.skill))
    stray = [
        line
        for line in old.body("emerging_skills").split("\n")
        if line.strip() and not parse_skills(line)
    ]
    readable = [r for r in (_readable(s) for s in ranked[:MAX_SKILLS_SHOWN]) if r is not None]
    return fit([s.render() for s in readable] + stray, budget)


def _stems(name: str) -> frozenset[str]:
    return frozenset(stem(w.lower()) for w in NOTE_WORD.findall(name))


def _readable(skill: Skill) -> Skill | None:
    """The skill as a line that parses back as itself, redacted or not (see readable_head)."""

    def read(line: str) -> str | None:
        found = parse_skills(line)
        return found[0].skill if len(found) == 1 else None

    name = readable_head(
        skill.skill, lambda n: Skill(n, skill.confidence, skill.occurrences).render(), read
    )
    return None if name is None else Skill(name, skill.confidence, skill.occurrences)
