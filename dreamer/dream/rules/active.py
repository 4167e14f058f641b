"""Active Context: what is happening now, labelled, ranked, and what no longer fits."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from dreamer.dream import keep_instructions
from dreamer.dream.rules import conventions, verbs
from dreamer.dream.rules.bond import SELF, is_bond
from dreamer.dream.rules.context import Context
from dreamer.dream.rules.gaps import questions
from dreamer.dream.rules.lines import LABEL_PREFIX, bullet, clip, fit, norm, same
from dreamer.dream.rules.values import CALENDAR
from dreamer.dream.rules.words import context_lines
from dreamer.memory.provenance import may_set_rules
from dreamer.memory.state import WorkingMemory
from dreamer.support.times import parse_iso
from dreamer.support.words import stems

_LABELS = (
    (
        "Friction",
        re.compile(
            r"\b(error|errors|fail(?:ed|s|ing|ure)?|bug|bugs|blocked|stuck|"
            r"broke|broken|crash(?:ed|es)?|frustrat\w*|problem|issue|annoy\w*|"
            r"slow|timeout|regression|angry|upset|worried|"
            # A problem said as it is lived: each entry has a test in test_rules_active.py.
            r"flaky|tim(?:es|ed|ing) out|keeps? \w+ing|still can(?:'|no)t|can(?:'|no)t get|"
            r"won't (?:start|build|load|run|connect|compile|deploy|pass)|"
            r"(?:doesn't|does not|isn't|is not|stopped) work(?:ing)?|not working|"
            r"duplicat\w* (?:rows|records)|duplicated)\b",
            re.I,
        ),
    ),
    (
        "Breakthrough",
        re.compile(
            r"\b(fixed|solved|resolved|works now|working now|shipped|"
            r"deployed|released|launched|merged|finally|breakthrough|"
            r"success(?:ful)?|"
            r"finished|completed|passed|won|landed|"
            r"(?:works?|builds?|runs?|pass(?:es)?|loads?|deploys?|starts?) (?:fine )?again)\b",
            re.I,
        ),
    ),
    (
        "Deadline",
        re.compile(
            r"\b(deadline|due|by (?:monday|tuesday|wednesday|thursday|friday|"
            r"saturday|sunday|tomorrow)|moved to|postponed|slip(?:s|ped)? to|pushed (?:back )?to|"
            r"now due)\b",
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
# A tool's outcome appended to an answer ("(Bash \"make\": 0 error)") says how a step went,
# not what the line is about.
_OUTCOME = re.compile(r"^\([^()\n]*\)$|\([\w.-]+ \"[^\"\n]*\": [^()\n]*\)", re.MULTILINE)

# A choice made or reversed ("we'll go with X instead of Y", "scrap X, use Y", "X after all"):
# what a line establishes beyond a step of work. Each entry has a test in test_rules_active.py.
DECISIONS = (
    r"decided",
    r"decision",
    r"(?:go|going|went) with",
    r"instead",
    r"after all",
    r"no longer",
    r"switch(?:ed|ing)? to",
    r"scrap(?:ped|ping)?",
    r"stay(?:ing)? (?:on|with)",
    r"stick(?:ing)? with",
    r"from now on",
    r"settled",
    r"chose|chosen",
    r"rather than",
    r"now (?:uses?|says|reads|runs on|lives in)",
    r"(?:we|we'll|we will) call it",
    r"will live in",
)
_DECISION = re.compile(r"\b(?:" + "|".join(DECISIONS) + r")\b", re.IGNORECASE)
ESTABLISHING = ("Friction", "Deadline", "Goal")
OPEN_PROBLEM_DAYS = 14  # an unfixed problem stays in view this long without another word


# A problem said as fixed ("found it: the flaky test leaked ...", "no longer times out") is
# a fix, whatever problem words it repeats. Each entry has a test in test_rules_active.py.
_FIXED = re.compile(
    r"\b(?:fixed|solved|resolved|found it|works now|working now|no longer|"
    r"(?:works?|builds?|runs?|pass(?:es)?|loads?|deploys?|starts?) (?:fine )?again)\b",
    re.IGNORECASE,
)


def label(text: str) -> str:
    """What a line is: Friction, Breakthrough, Deadline, Goal, Task, or Note (nothing of those)."""
    text = _OUTCOME.sub(" ", text)
    if _FIXED.search(text):
        return "Breakthrough"
    for label, pattern in _LABELS:
        if pattern.search(text):
            return label
    return "Note"


def establishes(text: str, speaker: str | None = None) -> bool:
    """Whether a line establishes something to hold in mind: a problem, a date, a goal or a
    choice made, or (in the person's own words) a fix; not a step of work or its report."""
    kind = label(text)
    if kind in ESTABLISHING or _DECISION.search(_OUTCOME.sub(" ", text)):
        return True
    if CALENDAR.search(text):
        return True
    return kind == "Breakthrough" and speaker not in ("assistant", "subagent")


def chatter(item: dict[str, Any]) -> bool | None:
    """For a step of work in a captured session (a request, a report), whether it is chatter:
    it establishes nothing ("Run the API tests.", "Added the index."), so it stays a searchable
    crystal and takes no line, however it is weighed; None for anything else (a note, a rule,
    a fact), which is routine by its weight."""
    if item.get("source") != "sessions" or item.get("type") not in (None, "experience"):
        return None
    if item.get("speaker") == "user" and (
        not verbs.task(item["text"])
        or conventions.stated(item["text"])
        or conventions.habit(item["text"])
    ):
        return False  # the user's own statement, or a habit they ask for: kept, not chatter
    return not establishes(item["text"], item.get("speaker"))


def still_open(fading: dict[str, Any], ctx: Context) -> bool:
    """Whether a fading Active Context line is a problem not yet fixed and said within
    ``OPEN_PROBLEM_DAYS``: it stays in view until its fix arrives (a fix closes it)."""
    line = LABEL_PREFIX.sub("", fading["line"].lstrip("- "))
    if fading.get("passed") or label(line) != "Friction":
        return False
    try:
        said = parse_iso(fading["last_seen"]) if fading.get("last_seen") else None
    except ValueError:
        return False
    return said is not None and ctx.now - said <= timedelta(days=OPEN_PROBLEM_DAYS)


def _line(item: dict[str, Any]) -> str:
    """An Active Context line: the note, labelled unless it names its own kind."""
    text = item["text"]
    kind = {"cortisol": "Friction", "dopamine": "Breakthrough"}.get(item.get("cause") or "")
    kind = kind or label(text)
    if _OWN_LABEL.match(text) or kind == "Note":
        return bullet(text)
    return f"- {kind}: {clip(text)}"


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
        # What The Bond takes; an answer shaped like a preference ("sessions now use X") is
        # no rule of the user's and stays here.
        and not (is_bond(i, ctx) and may_set_rules(i.get("speaker")))
        and i.get("hint") != "past"
        and (i.get("hint") or not SELF.match(i["text"]))
        and not questions(i["text"])
        and not keep_instructions.dropped(i["text"], ctx.rules)
    ]
    fixes = [(i["at"], stems(i["text"])) for i in fresh if label(i["text"]) == "Breakthrough"]
    resolved = [
        i
        for i in fresh
        if label(i["text"]) == "Friction"
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
        # What establishes a problem, a choice or a date outranks the steps of work, new and
        # carried: an open problem is not crowded out by the day's requests.
        said = LABEL_PREFIX.sub("", (item["text"] if item else line).lstrip("- "))
        if establishes(said, item.get("speaker") if item else None):
            return (3, "") if item is not None else (4, "")
        return (5, "") if item is not None else (6, "")

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
