"""One contract for every model backend: the prompts, the schema, the checks of an answer.

Every synthesizer that asks a model (``claude``, ``claude-code``, ``openai``) builds its request
from these pieces and turns the answer into a ``Draft`` through ``draft_from``, so each backend
sends the same system prompt, the same delimited data (``dreamer.dream.inputs``) within the same
input budget, the same revision prompt, with every string redacted on the way out, and every
answer is checked against ``schemas/working_memory.json`` the same way: a miss is
``ModelOutputInvalid`` carrying the raw answer. No client library is imported here.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from functools import cache
from typing import Any

import jsonschema

from dreamer.config import Settings
from dreamer.dream import inputs as data
from dreamer.dream.synth import Draft, DreamInputs, Usage
from dreamer.errors import ModelOutputInvalid
from dreamer.memory.hormone_summary import DOMINANCE
from dreamer.memory.state import (
    WorkingMemory,
    from_fields,
    section_keys,
    sections,
    total_budget,
)
from dreamer.support import prompts
from dreamer.support.resources import schema
from dreamer.support.secrets import redact
from dreamer.support.times import iso

TOOL_NAME = "write_working_memory"
TOOL_DESCRIPTION = (
    "Write the new working-memory state. Send only the sections you change; "
    "a section left out is kept exactly as it is."
)
TIE = 0.005  # lifts closer than this are a tie (they are shown to two decimals)
MAX_TOKENS = 8192  # the state is <= 4,500 tokens; JSON quoting needs room on top

# Which sections each hormone steers (issue 3): the dominant one's sections change most.
HORMONE_SECTIONS: dict[str, tuple[str, ...]] = {
    "dopamine": ("active_context", "emerging_skills"),
    "cortisol": ("active_context", "curiosity_gaps"),
    "oxytocin": ("bond", "phenotype"),
}
HORMONE_MEANING = {
    "dopamine": "reward: progress, breakthroughs, things that worked",
    "cortisol": "stress: deadlines, failures, unresolved problems",
    "oxytocin": "bonding: closeness, trust and care with the user",
}


# --- the schema ---------------------------------------------------------------------------------


def _strip(node: Any) -> Any:
    """The schema without the keys the API does not need ($schema, $id, x-...)."""
    if isinstance(node, dict):
        return {
            key: _strip(value)
            for key, value in node.items()
            if not key.startswith("x-") and key not in ("$schema", "$id")
        }
    if isinstance(node, list):
        return [_strip(item) for item in node]
    return node


@cache
def input_schema() -> dict[str, Any]:
    """The working-memory schema as the tool's input schema, each section's budget stated."""
    spec = _strip(copy.deepcopy(schema("working_memory")))
    for section in sections():
        field = spec["properties"][section.key]
        field["description"] = (
            f"{section.title}: {section.purpose} {field.get('description', '')} "
            f"Budget: about {section.budget_tokens} tokens. Leave out to keep it unchanged."
        ).strip()
    return spec


def validate(answer: Any) -> list[str]:
    """Schema violations of a tool input, as 'path: message' lines (empty when valid)."""
    validator = jsonschema.Draft202012Validator(schema("working_memory"))
    errors = sorted(validator.iter_errors(answer), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in errors]


# --- the prompt ---------------------------------------------------------------------------------


neutralise = data.neutralise


def dominant_hormone(levels: Mapping[str, float], rest: Mapping[str, float]) -> str | None:
    """The hormone furthest above its resting level, if any is at least DOMINANCE above."""
    lifts = {name: levels.get(name, 0.0) - rest.get(name, 0.0) for name in HORMONE_SECTIONS}
    name = max(lifts, key=lambda n: (lifts[n], n))
    return name if lifts[name] >= DOMINANCE else None


def _titles(keys: tuple[str, ...]) -> str:
    by_key = {s.key: s.title for s in sections()}
    return " and ".join(by_key[key] for key in keys)


def system_prompt(tool_name: str = TOOL_NAME) -> str:
    """The cached system prompt (the same for every dream)."""
    section_lines = "\n".join(
        f"- `{s.key}`: **{s.title}** (about {s.budget_tokens} tokens). {s.purpose}"
        for s in sections()
    )
    hormone_lines = "\n".join(
        f"- **{name}** ({HORMONE_MEANING[name]}) → update {_titles(keys)} most."
        for name, keys in HORMONE_SECTIONS.items()
    )
    return prompts.render(
        "dream_system",
        tool_name=tool_name,
        sections=section_lines,
        total_budget=total_budget(),
        hormone_table=hormone_lines,
    )


def weighting(inputs: DreamInputs, rest: Mapping[str, float]) -> str:
    """Where this dream should spend its effort: the hormone that peaked since the last dream.

    Levels at dream time say little (a stimulus of the morning has decayed to rest by night),
    so the period's peaks decide; without a period (a direct call), the levels now.
    """
    period = inputs.period or {}
    dominant = period.get("dominant") if period else dominant_hormone(inputs.hormones, rest)
    if not dominant:
        return "No hormone stands out: weigh all sections evenly."
    peaks = period.get("peaks") or {}
    lifts = (
        {name: peak["lift"] for name, peak in peaks.items()}
        if period
        else {n: inputs.hormones.get(n, 0.0) - rest.get(n, 0.0) for n in HORMONE_SECTIONS}
    )
    tied = sorted(n for n in HORMONE_SECTIONS if abs(lifts.get(n, -9) - lifts[dominant]) < TIE)
    if len(tied) > 1:
        # A tie is never broken silently (by name): both hormones lead, and the request says so.
        keys = tuple(dict.fromkeys(key for name in tied for key in HORMONE_SECTIONS[name]))
        names = " and ".join(f"**{name}** ({HORMONE_MEANING[name]})" for name in tied)
        return (
            f"Tied hormones: {names} rose by the same {lifts[dominant]:+.2f}; neither leads, "
            f"so spend this dream on {_titles(keys)} alike; keep what caused them (see "
            "<hormones>), and change the other sections only where the data requires it."
        )
    why = ""
    peak = peaks.get(dominant)
    if peak:
        reasons = "; ".join(dict.fromkeys(c["reason"] for c in peak["causes"]))
        why = f" It peaked at {peak['peak']:.2f} at {peak['at']} ({neutralise(reasons)})."
    return (
        f"Dominant hormone: **{dominant}** ({HORMONE_MEANING[dominant]}).{why} Spend this "
        f"dream on {_titles(HORMONE_SECTIONS[dominant])}; keep what caused it (see <hormones>), "
        "and change the other sections only where the data requires it."
    )


def user_prompt(
    inputs: DreamInputs,
    rest: Mapping[str, float],
    budget: int | None = None,
    tool_name: str = TOOL_NAME,
) -> str:
    """The first user message of a dream: instructions, hormones, then delimited data."""
    levels = ", ".join(
        f"{name} {inputs.hormones.get(name, 0.0):.2f} (rest {rest.get(name, 0.0):.2f})"
        for name in HORMONE_SECTIONS
    )
    blocks = inputs.blocks or data.blocks_for(inputs, budget or Settings().input_tokens)
    return prompts.render(
        "dream_user",
        now=iso(inputs.now),
        tool_name=tool_name,
        hormones=levels,
        mood=inputs.mood or "unknown",
        weighting=weighting(inputs, rest),
        instructions=blocks["instructions"],
        current_state=blocks["state"],
        period=blocks["hormones"],
        note_count=len(inputs.crystals) or len(inputs.notes),
        notes=blocks["notes"],
        left_pending=blocks["left"],
        insights=blocks["insights"],
        niche=blocks["niche"],
    )


def revise_prompt(critique: list[str], previous: Draft, tool_name: str = TOOL_NAME) -> str:
    """The tool_result that sends a rejected draft back with the guards' reasons."""
    reasons = "\n".join(f"- {neutralise(reason)}" for reason in critique) or "- (no reason given)"
    return prompts.render("dream_revise", critiques=reasons, tool_name=tool_name)


def draft_changes(previous: Draft, old: WorkingMemory) -> dict[str, Any]:
    """The draft as the tool input that makes it from the old state: its changed sections.

    The replayed call carries each changed section once; what it leaves out is the old state's,
    which the first message holds. A draft identical to the old state replays as ``{}``.
    """
    fields, before = previous.state.to_fields(), old.to_fields()
    return {key: value for key, value in fields.items() if value != before.get(key)}


def redacted(value: Any) -> Any:
    """``value`` with every string in it passed through the secret detector."""
    if isinstance(value, str):
        return redact(value).text
    if isinstance(value, list):
        return [redacted(item) for item in value]
    if isinstance(value, dict):
        return {key: redacted(item) for key, item in value.items()}
    return value


def draft_from(
    answer: Any, raw: str, inputs: DreamInputs, usage: Usage, previous: Draft | None
) -> Draft:
    """The draft an answer makes, or ModelOutputInvalid (raw kept) when it breaks the schema.

    A section the answer leaves out carries over: from the old state on a first draft, from
    the draft being revised on a revision (its other changes are not lost).
    """
    problems = validate(answer)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise unusable(
            f"the model's answer does not fit the working-memory schema ({problems[0]}"
            f"{more}); run 'dream run' again",
            raw,
            usage,
        )
    base = previous.state if previous is not None else inputs.old
    state = from_fields(answer, base=base)
    for key in section_keys():
        # A section absent from both the answer and the old state is empty, not missing.
        state.bodies.setdefault(key, "")
    state.last_dream, state.mood = iso(inputs.now), inputs.mood
    return Draft(state=state, raw=raw, usage=usage)


def as_raw(answer: Any) -> str:
    """An answer as the journal keeps it."""
    return json.dumps(answer, indent=2, ensure_ascii=False)


def unusable(message: str, raw: str, usage: Usage) -> ModelOutputInvalid:
    """A ModelOutputInvalid carrying the raw answer and what the call cost."""
    return ModelOutputInvalid(message, raw, usage)
