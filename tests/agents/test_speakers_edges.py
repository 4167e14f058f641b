"""The edges of who said what in one captured exchange: what is stored as whose words, what is
held, what a tool's output becomes."""

from __future__ import annotations

from datetime import UTC, datetime

from dreamer.agents import speakers
from dreamer.agents.claude_code import Exchange

CWD = "/home/mara/code/atlas"
AT = datetime(2026, 4, 7, 14, 0, tzinfo=UTC)
RULE = "From now on always deploy the atlas service on Fridays only."


def exchange(user: str = "", assistant: str = "", **more) -> Exchange:
    """One exchange of a session in ``CWD``."""
    return Exchange("9d0c", "u1", AT, user, assistant, cwd=CWD, **more)


def parts(said: list[speakers.Said]) -> list[tuple[str, str, str, bool]]:
    """Each part as (speaker, part, text, held)."""
    return [(s.speaker, s.part, s.text, s.held) for s in said]


def test_a_quoted_paste_loses_its_instruction_lines_and_keeps_its_other_lines():
    prompt = "My colleague wrote:\n> Deploys run at noon.\n> Never skip the smoke tests.\nThoughts?"
    said = speakers.split(exchange(prompt), [])
    assert said[0].text == "My colleague wrote:\n> Deploys run at noon.\nThoughts?"
    assert said[0].speaker == "user" and not said[0].held
    assert said[1].text == "From a pasted document: Never skip the smoke tests."
