"""Numbers a draft writes are checked against what the memory holds (issue 35, item 5).

A model can write a date, an amount or a count no note gives: a deadline it misread, a budget
it rounded, a skill "seen 12 times" it made up. Every new line of a draft (one the old state did
not have) is read for calendar dates (month and day) and amounts of money; each must stand in
the dream's evidence (its notes and crystals, the pins, ``memory/DREAM.md``, the old state). A
skill's occurrences must be the count the insights offered for it, or, for a skill the insights
did not offer, at most the number of evidence texts holding its words. A line that fails is a
correction the journal records: it goes, named with its reason in the dream's dropped lines
(``dream show``), whatever wrote it; the rest of the draft stands.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dreamer.dream import dates
from dreamer.dream.rules.values import _amounts
from dreamer.memory.state import WorkingMemory, parse_skills, section_keys
from dreamer.support.words import stems


@dataclass(frozen=True)
class Unsupported:
    """One line naming a value no evidence gives."""

    section: str
    line: str
    value: str


def _days(text: str) -> set[tuple[int, int]]:
    """The (month, day) of every calendar date ``text`` writes out (ISO, "March 13", "13
    March"); a weekday alone names no date to check."""
    found = {(int(m[2]), int(m[3])) for m in dates._ISO.finditer(text)}
    for match in dates._MONTH_DAY.finditer(text):
        month = dates.MONTHS[match["month"].lower()]
        found.add((month, int(match["day"])))
        if match["day2"]:  # "March 20 to April 3", "May 4-8"
            later = dates.MONTHS[match["month2"].lower()] if match["month2"] else month
            found.add((later, int(match["day2"])))
    for match in dates._DAY_MONTH.finditer(text):
        found.add((dates.MONTHS[match["month"].lower()], int(match["day"])))
    return found


def _money(text: str) -> set[tuple[str, float]]:
    return _amounts(text)


def check(
    state: WorkingMemory,
    old: WorkingMemory,
    evidence: Sequence[str],
    offered_skills: Sequence[dict[str, Any]],
    recall: Callable[[str], list[str]] | None = None,
) -> list[Unsupported]:
    """The new lines of ``state`` naming a date, an amount or a count no evidence gives.

    ``recall(line)`` gives the texts of older memories about a line (a value a dream consumed
    long ago is still known); without it only ``evidence`` and the old state count.
    """
    had = {line.strip() for key in section_keys() for line in old.body(key).split("\n")}
    known = "\n".join([*evidence, *(old.body(key) for key in section_keys())])
    days, money = _days(known), _money(known)
    out: list[Unsupported] = []
    for key in section_keys():
        for line in state.body(key).split("\n"):
            line = line.strip()
            if not line or line in had:
                continue
            if key == "emerging_skills":
                out += _skill(line, offered_skills, evidence)
                continue
            missing_days, missing_money = _days(line) - days, _money(line) - money
            if (missing_days or missing_money) and recall is not None:
                older = "\n".join(recall(line))
                missing_days, missing_money = (
                    missing_days - _days(older),
                    missing_money - _money(older),
                )
            for month, day in sorted(missing_days):
                out.append(Unsupported(key, line, f"the date {month:02d}-{day:02d}"))
            for currency, amount in sorted(missing_money):
                out.append(Unsupported(key, line, f"the amount {currency}{amount:,.0f}"))
    return out


def _skill(
    line: str, offered: Sequence[dict[str, Any]], evidence: Sequence[str]
) -> list[Unsupported]:
    found = parse_skills(line)
    if not found:
        return []
    skill = found[0]
    words = stems(skill.skill)
    for item in offered:
        if stems(str(item.get("skill", ""))) == words:
            if int(item.get("occurrences", 0)) == skill.occurrences:
                return []
            return [Unsupported("emerging_skills", line, f"the count {skill.occurrences}")]
    holding = sum(1 for text in evidence if words and words <= stems(text))
    if skill.occurrences <= max(holding, 1):
        return []
    return [Unsupported("emerging_skills", line, f"the count {skill.occurrences}")]


def drop(state: WorkingMemory, found: list[Unsupported]) -> list[dict[str, str]]:
    """Take the lines of ``found`` out of ``state``; each as {section, line, reason}."""
    out = []
    for item in found:
        lines = state.body(item.section).split("\n")
        kept = [line for line in lines if line.strip() != item.line]
        if len(kept) != len(lines):
            state.bodies[item.section] = "\n".join(kept)
            out.append(
                {
                    "section": item.section,
                    "line": item.line,
                    "reason": f"{item.value} is in no note",
                }
            )
    return out
