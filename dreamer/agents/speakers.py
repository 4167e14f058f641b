"""A captured exchange split by who said what (DESIGN.md, "Who said what").

One exchange of a Claude Code session or a Codex rollout becomes:

- the person's words, harness markup gone (``speaker`` ``user``; a subagent's task comes from
  the main agent: ``assistant``), typed and weighed by what they establish;
- the assistant's answer for what it established: its promises and offers dropped, each tool
  call kept only with its outcome ("Bash "pytest -q": 3 failed"), never a dump (``assistant``;
  a subagent's answer ``subagent``);
- held: every instruction-shaped sentence of a tool's output (a README, a fetched page, a
  subagent's report) or of a document the person pasted (a fenced or quoted block: the person
  passed it on, they did not say it), and each sentence of the answer that only repeats one
  (the assistant steered by what it read).

Machine paths (the project's folder, the user's home) are made relative on the way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dreamer.agents import harness
from dreamer.agents.claude_code import Exchange
from dreamer.agents.confirmations import bare_reply, confirmed_rule
from dreamer.memory.provenance import (
    echoes,
    instruction_shaped,
    instructions,
    sentences,
    source_instruction,
)
from dreamer.store.kinds import infer_type

_TOOL_LINE = re.compile(r"^\[tool: ([^\]\s\"]+)(?: \"(.*)\")?\]$")
_PASTED = re.compile(r"```[^\n]*\n.*?(?:```|\Z)|(?:^>[^\n]*(?:\n|\Z))+", re.DOTALL | re.MULTILINE)
_SUBAGENT_TOOLS = ("Task", "Agent")
HELD_CHARS = 400
SOURCE_SENTENCES = 400  # of one tool output, looked at for what the answer repeats
CHATTER_WORDS = 4  # a prompt this short establishes nothing on its own ("ok, do it")
IMPORTANCE = {"directive": 0.75, "world_fact": 0.6, "mental_model": 0.6, "experience": 0.5}
CHATTER_IMPORTANCE = 0.3
RULE_IMPORTANCE = 0.8
USER_IMPORTANCE = 0.6


@dataclass(frozen=True)
class Said:
    """One part of an exchange, with who said it."""

    text: str
    speaker: str
    part: str  # the origin's suffix: "" (the prompt), "a" (the answer), "c" (a rule the
    # prompt confirmed), "h1".. (held)
    semantic_type: str | None
    importance: float
    held: bool = False


def split(
    exchange: Exchange, read: list[str], seen: list[str] | None = None, before: str = ""
) -> list[Said]:
    """The parts of ``exchange``; ``read`` holds the session's instructions read so far, and
    grows by the ones this exchange's tools returned; ``seen``, the other sentences they
    returned, grows the same way. ``before`` is the session's answer just before this
    exchange, for a rule it offered that this prompt confirms."""
    seen = [] if seen is None else seen
    cwd = exchange.cwd
    asker, answerer = ("assistant", "subagent") if exchange.subagent else ("user", "assistant")
    out: list[Said] = []
    held: list[tuple[str, str]] = []
    prompt = harness.clean(exchange.user, cwd)
    for block in _PASTED.findall(prompt):
        passed_on = instructions(block.strip("`> \n"))
        if passed_on:
            read.extend(passed_on)
            held.extend(("tool", f"From a pasted document: {s}"[:HELD_CHARS]) for s in passed_on)
            rest = "\n".join(_without(block, passed_on))
            # a quoted block ends with its newline: keep it, or the next line joins its last
            prompt = prompt.replace(block, rest + "\n" if block.endswith("\n") else rest)
    prompt = prompt.strip()
    if prompt and bare_reply(prompt):  # "yes, always": the rule it confirms, if any, speaks
        out.append(Said(prompt, asker, "", "experience", CHATTER_IMPORTANCE))
    elif prompt:
        out.append(_prompt(prompt, asker))
    offered = harness.clean(before, cwd) if prompt and before and asker == "user" else ""
    if offered and (rule := confirmed_rule(prompt, offered)):
        out.append(Said(rule, "user", "c", "directive", RULE_IMPORTANCE))
    outcomes: list[str] = []
    for call, output, failed in exchange.results:
        name, argument = _call(call)
        label = f'{name} "{harness.relative(argument, cwd)}"' if argument else name
        said_by = "subagent" if name in _SUBAGENT_TOOLS else "tool"
        for sentence in sentences(harness.clean(output, cwd))[:SOURCE_SENTENCES]:
            if source_instruction(sentence):
                read.append(sentence)
                held.append((said_by, f"From {label}: {sentence}"[:HELD_CHARS]))
            else:
                seen.append(sentence)
        if (found := harness.outcome(output, failed)) is not None:
            outcomes.append(f"{label}: {found}")
    kept: list[str] = []
    for line in exchange.assistant.split("\n"):
        if _TOOL_LINE.match(line.strip()):
            continue
        for sentence in sentences(harness.clean(line, cwd)):
            if harness.promise(sentence):
                continue
            # Repeating an instruction a tool, page or subagent returned, or relaying any of
            # their words as a rule, is that source speaking: kept (searchable) but held. A
            # finding the answer reports from them ("the coupon test timed out") stays.
            relayed = seen and instruction_shaped(sentence) and echoes(sentence, seen)
            if (read and echoes(sentence, read)) or relayed:
                held.append((answerer, sentence[:HELD_CHARS]))
                continue
            kept.append(sentence)
    answer = " ".join(kept)
    if outcomes:
        answer = (answer + "\n" if answer else "") + "\n".join(f"({o})" for o in outcomes)
    if answer:
        out.append(Said(answer, answerer, "a", "experience", IMPORTANCE["experience"]))
    for number, (speaker, text) in enumerate(dict.fromkeys(held), start=1):
        out.append(Said(text, speaker, f"h{number}", "directive", 0.5, held=True))
    return out


def _prompt(prompt: str, asker: str) -> Said:
    """The person's words, typed and weighed by what they establish: a rule they set
    (instruction-shaped, in any language of ``provenance.CUES``) is a directive; a one-off
    request ("check the setup, please") is a task, not a rule; a few words are chatter."""
    if instruction_shaped(prompt):
        return Said(prompt, asker, "", "directive", RULE_IMPORTANCE)
    kind = infer_type(prompt)
    if kind == "directive":
        kind = "experience"  # asked once, for now: no standing rule
    if len(prompt.split()) < CHATTER_WORDS:
        return Said(prompt, asker, "", kind, CHATTER_IMPORTANCE)
    # The person's own words outweigh anything said about them: kept as said, past routine.
    return Said(prompt, asker, "", kind, max(IMPORTANCE[kind], USER_IMPORTANCE))


def _without(block: str, taken: list[str]) -> list[str]:
    """The lines of a pasted block, without the sentences held from it."""
    lines = []
    for line in block.split("\n"):
        for sentence in taken:
            line = line.replace(sentence, "")
        if line.strip("`> "):
            lines.append(line)
    return lines


def _call(line: str) -> tuple[str, str]:
    found = _TOOL_LINE.match(line.strip())
    return (found.group(1), found.group(2) or "") if found else ("tool", "")
