"""People: someone named once with a role, and later mentions of that role."""

from __future__ import annotations

import re
from typing import Any

from dreamer.dream import dates
from dreamer.dream.rules.words import context_lines
from dreamer.memory.provenance import may_set_rules
from dreamer.memory.scratch import Note
from dreamer.memory.state import WorkingMemory
from dreamer.store import Crystal
from dreamer.support.times import iso
from dreamer.support.words import NOTE_STOP_WORDS

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


# A person's name: capitalised words, with the lower-case particles of many surnames
# ("Pieter de Wit", "Ana da Silva"); a title before it ("Prof.", "Dr.") is left out.
_PARTICLE = r"(?:de|van|von|der|den|da|di|du|le|la|del|dos|ter)"
_NAME = rf"[A-Z][\w'’-]+(?:\s(?:{_PARTICLE}\s)?[A-Z][\w'’-]+){{0,2}}"
_OWNER = r"(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Tt]heir|[Tt]he|[A-Z][\w-]*(?:\s[A-Z][\w-]*)?['’]s)"
# The role is whatever the sentence calls them: one to three lower-case words after the owner
# ("the practice manager", "Byte Club's safeguarding lead", "the huismeester").
_ROLE_WORDS = r"(?P<role>[a-z][\w-]*(?:\s[a-z][\w-]*){0,2})"
# Where someone works, beside their name or their role ("Helen Marsh at Kestrel Books is my
# editor", "my editor at Kestrel"): kept with the person, never taken for the person.
_AT = r"(?:\s+(?:at|of|from|with)\s+(?P<org>[A-Z][\w'’&-]+(?:\s[A-Z][\w'’&-]+)*))?"
_NAME_ROLE = re.compile(
    rf"(?P<name>{_NAME})(?:,\s+|\s*\(\s*)(?P<owner>{_OWNER})\s+{_ROLE_WORDS}{_AT}\s*[,;.)]"
)
_NAME_IS_ROLE = re.compile(
    rf"(?P<name>{_NAME}){_AT}\s+(?:is|will be|was)\s+(?P<owner>{_OWNER})\s+{_ROLE_WORDS}\b"
)
_ROLE_NAME = re.compile(
    rf"\b(?P<owner>{_OWNER})\s+{_ROLE_WORDS}{_AT},\s+(?P<name>{_NAME})\s*[,;.)]"
)
# Someone named with what they are in charge of ("Tomás Reyes runs the night shift; he ...",
# "loop in Priya Raman, she leads QA"): the verb gives the role a later "my manager" points at.
# A personal pronoun must follow, so a company that "runs" something is no person. Each verb
# has a test in tests/dream/test_rules_people.py.
IN_CHARGE = {
    "manages": "manager",
    "leads": "lead",
    "heads": "head",
    "runs": "lead",
    "supervises": "supervisor",
    "oversees": "supervisor",
    "coordinates": "coordinator",
    "chairs": "chair",
}
_NAME_DOES = re.compile(
    rf"(?P<name>{_NAME})(?:,\s+(?:she|he)\s+|\s+)(?P<verb>{'|'.join(IN_CHARGE)})\s+"
    r"(?P<what>(?:the\s+|our\s+|my\s+)?[\w&/-]+(?:\s+[\w&/-]+){0,5}?)\s*(?=[;,.!]|\s+and\b|$)"
)
_PRONOUN = re.compile(r"\b(?:she|he|her|his|him)\b", re.IGNORECASE)
# A name right after one of these is a place or an organisation ("at Fernleaf Press"), not
# someone's name beginning a clause.
_AFTER_PLACE = re.compile(r"\b(?:at|of|from)\s+$", re.IGNORECASE)
_NOT_NAMES = NOTE_STOP_WORDS | {"please", "correction", "decided", "open", "question", "deadline"}
_TITLES = frozenset("prof prof. dr dr. mr mr. mrs mrs. ms ms. father sister".split())


def _role(words: str) -> str:
    """The role phrase up to its first stop word ("huismeester of the" → "huismeester")."""
    out: list[str] = []
    for word in words.split():
        if word in NOTE_STOP_WORDS:
            break
        out.append(word)
    return " ".join(out)


def find_people(
    notes: list[Note], crystals: list[Crystal], old: WorkingMemory
) -> list[dict[str, Any]]:
    """People named once with a role ("Priya Raman, my manager", "Declan Foley, the practice
    manager", "Pieter de Wit is the huismeester", "Tomás Reyes runs the night shift; he ...")
    and later mentions of that role.

    The role is the sentence's own words, so no list limits who counts. The old Bond counts too
    (with no time, so before every note): a person named in an earlier dream is still linked
    when a later note says "my manager". Only words that may set a fact about the user count:
    an answer or a tool naming someone is not the user saying who is around them.
    """
    texts = [(re.sub(r"^\s*[-*•]\s+", "", line), "") for line in context_lines(old.body("bond"))]
    texts += [(c.text, c.created_at) for c in crystals if may_set_rules(c.speaker)]
    texts += [(n.text, iso(n.at)) for n in notes]
    texts.sort(key=lambda pair: pair[1])
    found: dict[str, dict[str, Any]] = {}
    for text, at in texts:
        for person in named(text):
            found.setdefault(person["name"], {**person, "text": text, "at": at})
    for person in found.values():
        mention = _mention(person)
        person["mentions"] = sum(
            1
            for text, at in texts
            if at > person["at"] and mention.search(text) and person["name"] not in text
        )
    return sorted(found.values(), key=lambda p: (p["at"], p["name"]))


def named(text: str) -> list[dict[str, Any]]:
    """Each person ``text`` names with a role: name, role, owner ("my", "the", "Kwame's"),
    where they work (``org``) and, when a verb gave the role, what they do (``does``)."""
    out: list[dict[str, Any]] = []
    for pattern in (_NAME_ROLE, _NAME_IS_ROLE, _ROLE_NAME, _NAME_DOES):
        for match in pattern.finditer(text):
            name = match["name"].strip()
            first = name.split()[0].lower()
            if first in _NOT_NAMES or first in dates.MONTHS or first in dates.WEEKDAYS:
                continue
            if _AFTER_PLACE.search(text[: match.start("name")]):
                continue  # "at Fernleaf Press is my editor": the place, not the person
            groups = match.groupdict()
            if pattern is _NAME_DOES:
                if not _PRONOUN.search(text[match.start() :]):
                    continue  # no "she" or "he" follows: maybe a company that runs something
                does = f"{match['verb']} {match['what']}"
                out.append({"name": name, "role": IN_CHARGE[match["verb"]], "owner": "the",
                            "does": does, "org": None})  # fmt: skip
                continue
            role = _role(match["role"])
            if not role or role.split()[-1] in dates.WEEKDAYS:
                continue
            owner = match["owner"]
            out.append(
                {
                    "name": name,
                    "role": ROLES.get(role, role),
                    "owner": owner.lower() if owner.lower() in ("my", "our", "the") else owner,
                    "org": groups.get("org"),
                }
            )
    return out


def _mention(person: dict[str, Any]) -> re.Pattern[str]:
    """A later mention of the person's role: "my manager", "the caretaker", "our lead"."""
    words = [w for w, r in ROLES.items() if r == person["role"]] or [re.escape(person["role"])]
    return re.compile(rf"\b(?:{_OWNER})\s+(?:{'|'.join(words)})\b", re.IGNORECASE)


def described(person: dict[str, Any]) -> str:
    """A Bond line for someone named with a role: "Declan Foley is the practice manager"."""
    who = person["name"] + (f" ({person['org']})" if person.get("org") else "")
    if person.get("does"):
        return f"{who} {person['does']}."
    owner = person.get("owner", "my")
    if owner in ("my", "our"):
        return f"{who} is the user's {person['role']}."
    return f"{who} is {owner} {person['role']}."


def linked(text: str, people: list[dict[str, Any]]) -> str:
    """'my manager' → 'my manager (Priya Raman)' for a person named once with that role."""
    for person in people:
        if person["name"] in text:
            continue
        words = [w for w, r in ROLES.items() if r == person["role"]] or [re.escape(person["role"])]
        pattern = re.compile(
            r"\b((?:my|her|his|their|our|the|[A-Z][\w-]+['’]s)\s+(?:" + "|".join(words) + r"))\b"
        )
        text = pattern.sub(r"\1 (" + person["name"].replace("\\", "") + ")", text, count=1)
    return text
