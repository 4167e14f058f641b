"""Lines a rule takes out of a draft, each with its reason: nothing leaves MEMORY.md unseen.

A model's (or a person's) line may be dropped by four rules, and only by them: it states what
a forget request asked to forget; ``memory/DREAM.md`` says never to keep it; it is a rule in
The Bond or The Phenotype that only repeats held words (a tool, page, file or other agent said
it, not the user; ``dreamer.memory.held``); or it is a new rule there that no words of the
user's or the agent's own state (a line the state had is never judged again). Every dropped
line is returned with its section and reason, for the journal and ``dream show``. A line is
never read as a forget request itself: requests come only from what the user (or the agent's
note) said.
"""

from __future__ import annotations

from dreamer.dream import forget_requests, keep_instructions
from dreamer.memory.provenance import echoes, instruction_shaped, traces
from dreamer.memory.state import WorkingMemory, section_keys

RULE_SECTIONS = ("bond", "phenotype")  # where a standing rule or a fact about the user lives


def _reason(
    key: str,
    line: str,
    requests: list[forget_requests.ForgetRequest],
    rules: list[keep_instructions.Rule],
    held: list[str],
    trusted: list[str] | None,
) -> str | None:
    for request in requests:
        if forget_requests.matches(request, line):
            return f'a forget request asked to forget "{request.target}"'
    if keep_instructions.dropped(line, rules, section=key):
        return "memory/DREAM.md says never to keep it"
    if key in RULE_SECTIONS and held and instruction_shaped(line) and echoes(line, held):
        return (
            "a rule only a tool, page, file or other agent stated (held: 'dream held' lists it, "
            "'dream held accept ID' makes it the user's)"
        )
    if key in RULE_SECTIONS and trusted is not None and instruction_shaped(line):
        if not traces(line, trusted):
            return "a rule that no words of the user's (or the agent's own notes) state"
    return None


def drop_lines(
    state: WorkingMemory,
    requests: list[forget_requests.ForgetRequest],
    rules: list[keep_instructions.Rule],
    held: list[str],
    trusted: list[str] | None = None,
    old: WorkingMemory | None = None,
) -> list[dict[str, str]]:
    """Take the lines the rules forbid out of ``state``; each as {section, line, reason}.

    ``trusted``: the texts a new rule must trace back to (the user's words, the agent's own
    notes, pins, the user's dream instructions); None judges no rule by its source. A line
    ``old`` already had is new to no one and is not judged by its source.
    """
    had = {
        line.strip()
        for key in section_keys()
        for line in (old.body(key) if old else "").split("\n")
    }
    out: list[dict[str, str]] = []
    for key in section_keys():
        lines = state.body(key).split("\n")
        kept = []
        for line in lines:
            known = trusted if line.strip() not in had else None
            reason = _reason(key, line, requests, rules, held, known) if line.strip() else None
            if reason is None:
                kept.append(line)
            else:
                out.append({"section": key, "line": line.strip(), "reason": reason})
        if len(kept) != len(lines):
            state.bodies[key] = "\n".join(kept)
    return out
