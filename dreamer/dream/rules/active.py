"""Active Context: what is happening now, labelled, ranked, and what no longer fits."""

from __future__ import annotations

import re
from typing import Any

from dreamer.dream import keep_instructions
from dreamer.dream.rules.bond import SELF, is_bond
from dreamer.dream.rules.context import Context
from dreamer.dream.rules.gaps import questions
from dreamer.dream.rules.lines import LABEL_PREFIX, bullet, clip, fit, norm, same
from dreamer.dream.rules.words import context_lines
from dreamer.memory.state import WorkingMemory
from dreamer.support.words import stems

_LABELS = (
    (
        "Friction",
        re.compile(
            r"\b(error|errors|fail(?:ed|s|ing|ure)?|bug|bugs|blocked|stuck|"
            r"broke|broken|crash(?:ed|es)?|frustrat\w*|problem|issue|annoy\w*|"
            r"slow|timeout|regression|angry|upset|worried)\b",
            re.I,
        ),
    ),
    (
        "Breakthrough",
        re.compile(
            r"\b(fixed|solved|resolved|works now|working now|shipped|"
            r"deployed|released|launched|merged|finally|breakthrough|"
            r"success(?:ful)?|"
            r"finished|completed|passed|won|landed)\b",
            re.I,
        ),
    ),
    (
        "Deadline",
        re.compile(
            r"\b(deadline|due|by (?:monday|tuesday|wednesday|thursday|friday|"
            r"saturday|sunday|tomorrow)|moved to|postponed)\b",
            re.I,
        ),
    ),
    (
        "Goal",
        re.compile(
            r"\b(goal|aim|plan(?:s|ning)? to|want(?:s)? to|hope to|objective|"
            r"milestone)\b",
            re.I,
        ),
    ),
    (
        "Task",
        re.compile(
            r"\b(todo|to do|need(?:s)? to|must|should|will|next|follow up|"
            r"remember to|pending|open task|waiting)\b",
            re.I,
        ),
    ),
)


_OWN_LABEL = re.compile(r"^\s*([A-Z][\w ]{0,20}|SEV\d):\s", re.UNICODE)


def _label(text: str) -> str:
    for label, pattern in _LABELS:
        if pattern.search(text):
            return label
    return "Note"


def _line(item: dict[str, Any]) -> str:
    """An Active Context line: the note, labelled unless it names its own kind."""
    text = item["text"]
    label = {"cortisol": "Friction", "dopamine": "Breakthrough"}.get(item.get("cause") or "")
    label = label or _label(text)
    if _OWN_LABEL.match(text) or label == "Note":
        return bullet(text)
    return f"- {label}: {clip(text)}"


def write_active(
    old: WorkingMemory,
    evidence: list[dict[str, Any]],
    fading_topics: list[dict],
    ctx: Context,
    budget: int,
    conservative: bool,
) -> tuple[str, list[str]]:
    """The Active Context body and the lines that did not fit (future pointers).

    Order (a small context window keeps the top): what is pinned by DREAM.md or dated ahead
    (soonest first), what moved a hormone since the last dream, then the new notes by
    importance, then the old lines that still hold. Routine notes and what a never-keep rule
    names stay out; answered questions and superseded values leave.
    """
    fresh = [
        i
        for i in evidence
        if not i["routine"]
        and norm(i["text"]) not in ctx.superseded
        and not is_bond(i, ctx)
        and i.get("hint") != "past"
        and (i.get("hint") or not SELF.match(i["text"]))
        and not questions(i["text"])
        and not keep_instructions.dropped(i["text"], ctx.rules)
    ]
    fixes = [(i["at"], stems(i["text"])) for i in fresh if _label(i["text"]) == "Breakthrough"]
    resolved = [
        i
        for i in fresh
        if _label(i["text"]) == "Friction"
        and not i.get("cause")
        and ctx.date_of(i["text"]) is None
        and any(at > i["at"] and _resolves(fix, stems(i["text"])) for at, fix in fixes)
    ]
    fresh = [i for i in fresh if i not in resolved]
    fading = {f["line"] for f in fading_topics}
    carried = [
        line.rstrip()
        for line in context_lines(old.body("active_context"))
        if line.strip() not in fading
        and (conservative or not same(line, ctx.superseded))
        and not same(line, ctx.answered)
        and not keep_instructions.dropped(line, ctx.rules)
    ]
    stale = [
        line
        for line in carried
        if line.lstrip("- ").startswith("Friction:")
        and ctx.date_of(line) is None
        and any(_resolves(fix, stems(LABEL_PREFIX.sub("", line.lstrip("- ")))) for _, fix in fixes)
    ]
    carried = [line for line in carried if line not in stale]

    def tier(line: str, item: dict[str, Any] | None) -> tuple[int, str]:
        date = ctx.date_of(item["text"] if item else line)
        if keep_instructions.pinned(line, ctx.rules):
            return 0, date or ""
        if date:
            return 1, date
        if item is not None and item.get("cause") in ("cortisol", "dopamine"):
            return 2, ""
        return (3, "") if item is not None else (4, "")

    ranked_new = sorted(fresh, key=lambda i: (-round(i["importance"], 1), _neg(i["at"])))
    rows = [(tier(_line(i), i), n, _line(i)) for n, i in enumerate(ranked_new)]
    rows += [(tier(line, None), len(rows) + n, line) for n, line in enumerate(carried)]
    rows.sort(key=lambda row: (row[0], row[1]))
    lines = [line for _, _, line in rows]
    body = fit(lines, budget)
    kept = set(body.split("\n"))
    past = [_line(i) for i in resolved] + stale
    overflow = [line for line in lines if line not in kept] + past
    return body, overflow


def _resolves(fix: set[str], friction: set[str]) -> bool:
    """True when a breakthrough shares enough content words with a friction to close it."""
    shared = len(fix & friction)
    return shared >= 2 and shared >= 0.3 * len(friction)


def _neg(at: str) -> str:
    # Sort helper: newest first inside an ascending sort.
    return "".join(chr(0x10FFFF - ord(ch)) for ch in at)
