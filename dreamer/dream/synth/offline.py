"""The offline synthesizer: a deterministic dream with no network and no model.

Each rule lives in its own module of ``dreamer.dream.rules`` (bond, active, pointers,
supersession, people, gaps, skills, ageing); this module gathers the evidence and calls them.
How it writes each section:

- **The Phenotype**: the old body, plus notes the agent wrote about itself ("I ...", "My ...");
  on a first dream, one line of temperament from the hormone snapshot.
- **The Bond**: the old lines, plus user traits and directives from the new evidence. On a
  contradiction the newest statement wins: the superseded line (old or new) is left out.
- **The Niche**: ``memory/niche.json`` as bullets when present; the old body otherwise.
- **Active Context**: the recent goals, open tasks, frictions and breakthroughs (labelled),
  newest and most important first, then old lines still supported; fading lines leave.
- **Crystal Pointers**: fading topics and lines that no longer fit, then the old pointers.
- **Curiosity Gaps**: new open questions and empty searches, then the old ones.
- **Emerging Skills**: repeated task patterns from the insights, merged with the old skills.

Every section is cut to its token budget at line boundaries. Given a critique, it revises
conservatively: it starts from the old bodies and only adds, with slightly tighter budgets.
"""

from __future__ import annotations

import json
import re
from typing import Any

from dreamer.dream import forget_requests, keep_instructions
from dreamer.dream.rules.active import chatter, still_open, write_active
from dreamer.dream.rules.bond import SELF, write_bond
from dreamer.dream.rules.context import Context, line_key
from dreamer.dream.rules.gaps import write_gaps
from dreamer.dream.rules.insight_results import Insights
from dreamer.dream.rules.lines import bullet, clip, fit, norm
from dreamer.dream.rules.people import linked
from dreamer.dream.rules.pointers import past_pointers, write_pointers
from dreamer.dream.rules.routine_notes import is_routine
from dreamer.dream.rules.session_exchanges import established
from dreamer.dream.rules.skills import write_skills
from dreamer.dream.rules.supersession import current, restated
from dreamer.dream.rules.words import context_lines
from dreamer.dream.synth import Draft, DreamInputs, Usage
from dreamer.memory.provenance import may_set_rules
from dreamer.memory.state import WorkingMemory, sections
from dreamer.support.times import iso, parse_iso

_HEADING_HINTS = (
    ("past", re.compile(r"journal|log|history|archive|diary|done|past", re.I)),
    (
        "bond",
        re.compile(
            r"who|about|user|\bme\b|\bi\b|prefer|like|how i|personal|family|"
            r"people|contact|rules|directive|style",
            re.I,
        ),
    ),
    (
        "active",
        re.compile(
            r"project|current|task|todo|now|focus|goal|deadline|milestone|"
            r"remind|open|plan|work",
            re.I,
        ),
    ),
)


# Of Active Context's budget, what the offline dream fills: it copies notes as written and cannot
# condense them, so the whole budget would go to the newest day verbatim; what does not fit
# leaves as a day digest (rules.digest), which carries more of what happened per character.
ACTIVE_SHARE = 0.6


class OfflineSynthesizer:
    """Deterministic synthesizer: rules over the inputs, no network."""

    name = "offline"
    model: str | None = None

    def synthesize(
        self,
        inputs: DreamInputs,
        *,
        critique: list[str] | None = None,
        previous: Draft | None = None,
    ) -> Draft:
        """Write a candidate state; with a critique, a more conservative revision.

        Revision 1 fades only the older half of the fading lines and puts the old Bond first;
        revision 2 and later keep every old line (nothing fades, nothing is superseded).
        """
        level = _level(previous) + 1 if critique else 0
        conservative = level >= 2
        squeeze = (
            0.9 if critique and any("budget" in c or "pointers" in c for c in critique) else 1.0
        )
        budgets = {s.key: int(s.budget_tokens * squeeze) for s in sections()}
        budgets["active_context"] = int(budgets["active_context"] * ACTIVE_SHARE)
        ins: Insights = inputs.insights if isinstance(inputs.insights, Insights) else Insights()
        ctx = Context.of(inputs, ins)
        evidence = _evidence(inputs, ins, ctx)
        old = inputs.old

        # Old Active Context lines come newest first, so the older half is the tail.
        fade_from = {0: 0, 1: (len(ins.fading_topics) + 1) // 2}.get(level, len(ins.fading_topics))
        fading = [
            f
            for f in ins.fading_topics[fade_from:]
            if not keep_instructions.pinned(f["line"], ctx.rules) and not still_open(f, ctx)
        ]
        bond = write_bond(old, evidence, ctx, budgets["bond"], level)
        phenotype = _phenotype(inputs, evidence, ins, budgets["phenotype"])
        niche = _niche(inputs, budgets["niche"])
        active, overflow = write_active(
            old, evidence, fading, ctx, budgets["active_context"], conservative
        )
        # What each new note weighs if its line leaves at once (the newest note of a text wins).
        known = {
            line_key(clip(i["text"])): {"importance": i["importance"], "age_days": _age(i, ctx)}
            for i in reversed(evidence)
        }
        pointers = write_pointers(
            old, fading, overflow, past_pointers(evidence), ctx, budgets["crystal_pointers"], known
        )
        gaps = write_gaps(old, ins, ctx, budgets["curiosity_gaps"])
        skills = write_skills(old, ins, budgets["emerging_skills"])
        state = WorkingMemory(
            bodies={
                "phenotype": phenotype,
                "bond": bond,
                "niche": niche,
                "active_context": active,
                "crystal_pointers": pointers,
                "curiosity_gaps": gaps,
                "emerging_skills": skills,
            },
            last_dream=old.last_dream,
            mood=old.mood,
            preamble=old.preamble,
            extra=list(old.extra),
        )
        keep_instructions.silence(state, ctx.rules)
        raw = json.dumps(
            {"revision": level, "fields": state.to_fields()}, ensure_ascii=False, indent=1
        )
        return Draft(state=state, raw=raw, usage=Usage())


def _age(item: dict[str, Any], ctx: Context) -> float:
    """Days since a statement was written (0 for a hand-written line, which has no time)."""
    at = item["at"]
    try:
        return max(0.0, (ctx.now - parse_iso(at)).total_seconds() / 86400) if at else 0.0
    except ValueError:
        return 0.0


def _level(previous: Draft | None) -> int:
    """Which revision the previous draft was (0 = the first draft, or not ours)."""
    if previous is None:
        return 0
    try:
        return int(json.loads(previous.raw).get("revision", 0))
    except (ValueError, AttributeError, TypeError):
        return 0


def _evidence(inputs: DreamInputs, ins: Insights, ctx: Context) -> list[dict[str, Any]]:
    """New statements (crystals, notes not indexed, then hand-written lines), newest first."""
    items: dict[str, dict[str, Any]] = {}
    for crystal in inputs.crystals:
        if crystal.source in ("insight", "seed", "auto"):
            # The dream's own output is never fresh evidence, seeds come whole below, and a
            # hormone spike note is folded into the notes that caused it (ctx.causes).
            continue
        items[norm(crystal.text)] = {
            "text": crystal.text,
            "at": crystal.created_at,
            "importance": crystal.importance,
            "type": crystal.semantic_type,
            "hint": None,
            "cause": ctx.causes.get(crystal.id),
            "speaker": crystal.speaker,
            "source": crystal.source,
        }
    for note in inputs.notes:
        if note.text.startswith("[AUTO]"):
            continue
        items.setdefault(
            norm(note.text),
            {
                "text": note.text,
                "at": iso(note.at),
                "importance": note.importance,
                "type": None,
                "hint": None,
                "cause": None,
            },
        )
    for item in hand_written(inputs.old.preamble):
        items.setdefault(norm(item["text"]), item)
    out = [item for item in items.values() if forget_requests.parse(item["text"]) is None]
    # A captured exchange is evidence only for what it established, never as dialogue.
    for item in out:
        item["text"] = established(item["text"]) or ""
    out = [item for item in out if item["text"]]
    for item in out:
        item["original"] = item["text"]
        item["text"] = current(linked(item["text"], ctx.people))
        older = ctx.replaced.get(norm(item["original"]))
        if older and norm(item["original"]) not in ctx.superseded:
            item["text"] = restated(item["text"], older)  # the old value it names is the past
        # A routine note that happened to move a hormone ("it passed") is still routine.
        step = chatter(item)
        item["routine"] = (
            (is_routine(item["text"], item["importance"]) if step is None else step)
            and not item.get("hint")
            and not keep_instructions.pinned(item["text"], ctx.rules)
        )
        if item["routine"]:
            item["cause"] = None
    # Newest first; hand-written lines (no time) last, in their original order.
    return sorted(out, key=lambda i: (i["at"], i["importance"], i.get("seq", 0)), reverse=True)


def hand_written(preamble: str) -> list[dict[str, Any]]:
    """Lines of a hand-written MEMORY.md (text above the state), each hinted by its heading.

    They are older than any note, so they rank last; a heading says where a line belongs
    ("Who I am" → bond, "Projects" → active, "Journal" → pointer only).
    """
    text = preamble.split("<!--", 1)[0]
    items: list[dict[str, Any]] = []
    hint: str | None = None
    heading = ""
    current: dict[str, Any] | None = None
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped == "---" or stripped.startswith("#"):
            current = None  # a blank line or a heading ends an item
            if stripped.startswith("#"):
                heading = stripped.lstrip("#").strip()
                hint = next(
                    (name for name, pattern in _HEADING_HINTS if pattern.search(heading)), None
                )
            continue
        bullet = re.match(r"^([-*•]|\d+[.)])\s+", stripped)
        if current is not None and not bullet:
            current["text"] += " " + stripped  # a wrapped line continues its item
            continue
        current = {
            "text": stripped[bullet.end() :] if bullet else stripped,
            "at": "",
            "importance": 0.6,
            "type": None,
            "hint": hint,
            "heading": heading if hint else None,
            "seq": -len(items),
        }
        items.append(current)
    return [item for item in items if len(item["text"]) >= 12]


_GENERATED = ("- Temperament lately:", "- Mostly busy with:")


def _phenotype(
    inputs: DreamInputs, evidence: list[dict[str, Any]], ins: Insights, budget: int
) -> str:
    """Self-observations, then two lines rewritten every dream: temperament and focus."""
    mine = [
        bullet(i["text"])
        for i in evidence
        if not i.get("hint")
        and SELF.match(i["text"])
        and may_set_rules(i.get("speaker"))
        and i.get("speaker") != "user"  # "I ..." or "My ..." in a session: the user, not me
    ]
    old = [
        line
        for line in context_lines(inputs.old.body("phenotype"))
        if not line.startswith(_GENERATED)
    ]
    fresh = [f"{_GENERATED[0]} {inputs.mood or 'steady'} (from the hormone levels)."]
    busy = [t["label"] for t in ins.topics if t["size"] >= 2][:3]
    if busy:
        fresh.append(f"{_GENERATED[1]} {', '.join(busy)}.")
    return fit(mine + old + fresh, budget)


def _niche(inputs: DreamInputs, budget: int) -> str:
    if not inputs.niche:
        return fit(context_lines(inputs.old.body("niche")), budget)
    lines = []
    for key, value in inputs.niche.items():
        label = str(key).replace("_", " ").capitalize()
        if isinstance(value, dict):
            value = ", ".join(f"{k}: {v}" for k, v in value.items())
        elif isinstance(value, list):
            value = ", ".join(
                ", ".join(f"{k}: {v}" for k, v in item.items())
                if isinstance(item, dict)
                else str(item)
                for item in value
            )
        lines.append(f"- {label}: {clip(str(value), 30)}")
    return fit(lines, budget)
