"""The Bond: who the user is, the people around them, their standing rules and preferences."""

from __future__ import annotations

import re
from typing import Any

from dreamer.dream import dates
from dreamer.dream.rules import conventions
from dreamer.dream.rules.context import Context
from dreamer.dream.rules.gaps import questions
from dreamer.dream.rules.lines import LINE_WORDS, bullet, fit, norm, same
from dreamer.dream.rules.people import ROLES, described
from dreamer.dream.rules.words import context_lines
from dreamer.memory.provenance import may_set_rules, sentences
from dreamer.memory.state import WorkingMemory

# The agent speaking of itself. "My accountant wants..." quotes the user about their people:
# that is not the agent's self.
SELF = re.compile(
    r"^\s*(?:I|I'm|I've|I'll|Me|The agent|Agent|My(?!\s+(?:"
    + "|".join(sorted(map(re.escape, ROLES), key=len, reverse=True))
    + r")\b))\b",
    re.IGNORECASE,
)


_PREFERENCE = re.compile(
    r"\b(prefers?|preferred|likes?|loves?|hates?|dislikes?|no longer wants?|favou?rite|"
    r"allergic|allergy|call me|never|always|from now on|every time|switched to|now uses?)\b",
    re.IGNORECASE,
)


_PERSONAL = re.compile(
    r"\b(lives?|born|is an? |works? (?:at|as|for|on)|married|husband|wife|partner|mother|"
    r"father|mom|dad|kids?|children|son|daughter|manager|allergic|birthday|name is|"
    r"owns?|runs? (?:a|an|the|her|his|their)|founded|founder|owner|"
    # what the user can or cannot eat or do: needs every later suggestion must respect
    r"coeliac|celiac|vegetarian|vegan|diabetic|lactose|intolerant|gluten|halal|kosher|"
    r"wheelchair|pregnant)\b",
    re.IGNORECASE,
)


# A standing rule the user set ("wants invoices as PDF, never on paper"): The Bond, even when
# it mentions an action word that would otherwise make it a task ("sent").
_RULE = re.compile(r"\b(never|always|from now on|every time|no longer|any more|anymore)\b", re.I)


# A rule is about every case, not one errand: "nothing gets booked until...", "no calls before
# 10:00", "any budget line above...". Each entry has a test in tests/dream/test_rules_bond.py.
STANDING_CUES = ("never", "always", "nothing", "no", "any", "every", "whenever", "rule")
STANDING = re.compile(r"\b(" + "|".join(STANDING_CUES) + r")\b", re.IGNORECASE)


_WANTS = re.compile(r"\b(wants?|would like|prefers?|asks? (?:us|me|you|the agent) to)\b", re.I)


_NOT_BOND = re.compile(
    r"\b(open question|decided|booked|started|reserved|bought|asked for|wants? a list|"
    r"deadline|due|went well|passed|sent|ordered|paid|moved again|uat|audit|ticket)\b",
    re.IGNORECASE,
)


def is_bond(item: dict[str, Any], ctx: Context) -> bool:
    """Whether a statement says who the user is, who is around them or what they prefer."""
    if item.get("hint"):
        return item["hint"] == "bond"
    text = item["text"]
    if item.get("cause") == "oxytocin":
        return True  # a moment of closeness reaches The Bond
    if item["routine"] or questions(text):
        return False
    if ctx.date_of(text) is not None:
        return False  # an event ahead: Active Context
    if item.get("speaker") == "user":
        return _users_own(item, ctx)  # "I ..." is the user here, not the agent
    if SELF.match(text):
        return False
    if any(norm(person["text"]) == norm(item.get("original", text)) for person in ctx.people):
        return True  # someone named with their role: who is around the user
    if _RULE.search(text) and (item["type"] == "directive" or _WANTS.search(text)):
        return True  # a standing rule of the user's
    if item["type"] == "directive" and STANDING.search(text):
        return True  # a rule that holds for every case, whatever action it names
    if _NOT_BOND.search(text):
        return False  # a task or a project event
    if item["type"] == "directive":
        return True  # a preference or instruction: it holds until contradicted
    if _PREFERENCE.search(text):
        return True
    return item["type"] == "world_fact" and bool(_PERSONAL.search(text))


# The user speaking of themselves: only then is "live", "like" or "manager" about the user
# ("I live in Leeds"), not about a thing ("sessions will live in Postgres", "sounded like").
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|me|my)\b", re.IGNORECASE)


def _users_own(item: dict[str, Any], ctx: Context) -> bool:
    """Whether the user's own words in a session set a standing rule, a convention or a fact
    about themselves. Someone they named with a role comes in as a line of its own
    (``described``), not as the errand that named them; a decision is news (Active Context)."""
    text = item["text"]
    if item["type"] == "directive":
        return True  # a rule the user set, in their own words (any language)
    if conventions.stated(text):
        return not dates.mentioned(text, ctx.now)  # "every chapter by June 1" is a deadline
    if conventions.changes(text) or not _FIRST_PERSON.search(text):
        return False
    if _PREFERENCE.search(text) or _OWN_FACT.match(text):
        return True
    return item["type"] == "world_fact" and bool(_PERSONAL.search(text))


# The user stating a fact of their own: "My working hours are 9 to 5", "My timezone is Lisbon".
_OWN_FACT = re.compile(r"\s*my\s+(?:\w+\s+){0,3}?(?:is|are)\b", re.IGNORECASE)


def write_bond(
    old: WorkingMemory,
    evidence: list[dict[str, Any]],
    ctx: Context,
    budget: int,
    level: int,
) -> str:
    new = [
        line
        for i in evidence
        if is_bond(i, ctx)
        and norm(i["text"]) not in ctx.superseded
        and may_set_rules(i.get("speaker"))  # an answer or a tool never sets a rule
        and (line := _line(i)) is not None
    ]
    kept = [
        line
        for line in context_lines(old.body("bond"))
        if level >= 2 or not same(line, ctx.superseded)
    ]
    # Someone named with their role belongs here even when the note naming them was about an
    # errand with a date ("Rui Matos, my accountant, needs the receipts by Friday").
    named = " ".join(new + kept)
    new += [bullet(described(person)) for person in ctx.people if person["name"] not in named]
    # Who the user is first (what a small context window keeps), then newest first, so a fresh
    # directive outlives a stale one; a revision (answering e.g. Bond drift) keeps the old first.
    lines = kept + new if level else _who_first(new + kept)
    return fit(lines, budget)


def _line(item: dict[str, Any]) -> str | None:
    """The Bond line of a statement. The user's words are kept in whole sentences (of a
    convention, the ones that state it), as many as fit a line: never cut mid-sentence (or
    inside a path), and left out when none fits."""
    text = item["text"]
    if item.get("speaker") != "user":
        return bullet(text)
    if item["type"] != "directive" and (convention := conventions.stated(text)):
        text = convention  # the sentences that state it, not the talk around them
    if len(text.split()) <= LINE_WORDS:
        return bullet(text)
    kept: list[str] = []
    for sentence in sentences(text):
        if len(" ".join([*kept, sentence]).split()) > LINE_WORDS:
            break
        kept.append(sentence)
    return bullet(" ".join(kept)) if kept else None


def _who_first(lines: list[str]) -> list[str]:
    who = [line for line in lines if _PERSONAL.search(line) and not _PREFERENCE.search(line)]
    return who + [line for line in lines if line not in who]
