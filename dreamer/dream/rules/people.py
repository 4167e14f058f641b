"""People: someone named once with a role, and later mentions of that role."""

from __future__ import annotations

import re
from typing import Any

from dreamer.dream import dates
from dreamer.dream.rules.words import STOP, context_lines
from dreamer.memory.scratch import Note
from dreamer.memory.state import WorkingMemory
from dreamer.store import Crystal
from dreamer.support.times import iso

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


def find_people(
    notes: list[Note], crystals: list[Crystal], old: WorkingMemory
) -> list[dict[str, Any]]:
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


def linked(text: str, people: list[dict[str, Any]]) -> str:
    """'my manager' → 'my manager (Priya Raman)' for a person named once with that role."""
    for person in people:
        if person["name"] in text:
            continue
        words = [w for w, r in ROLES.items() if r == person["role"]]
        pattern = re.compile(
            r"\b((?:my|her|his|their|our|[A-Z][\w-]+['’]s)\s+(?:" + "|".join(words) + r"))\b"
        )
        text = pattern.sub(r"\1 (" + person["name"].replace("\\", "") + ")", text, count=1)
    return text
