"""Dates, amounts and counts a draft writes are checked against the memory (issue 35, item 5)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from dreamer.dream import numbers
from dreamer.dream.cycle import run
from dreamer.dream.synth.offline import OfflineSynthesizer
from dreamer.memory.state import WorkingMemory

NOW = datetime(2026, 3, 9, 23, 0, tzinfo=UTC)


class Adding(OfflineSynthesizer):
    """The offline synthesizer, with a model's lines added to a section of every draft."""

    def __init__(self, section: str, *lines: str) -> None:
        super().__init__()
        self.section, self.lines = section, lines

    def synthesize(self, inputs, *, critique=None, previous=None):
        draft = super().synthesize(inputs, critique=critique, previous=previous)
        bodies = dict(draft.state.bodies)
        bodies[self.section] = "\n".join([*self.lines, bodies.get(self.section, "")])
        return dataclasses.replace(draft, state=dataclasses.replace(draft.state, bodies=bodies))


def _notes(ws) -> None:
    for number, text in enumerate(
        [
            "The invoice export for Northwind is due Friday March 13.",
            "The Q2 cloud budget is $4,000.",
            "Reviewed the export templates with Dana.",
            "Set up the staging database for the export.",
            "Dana wants status updates in Slack.",
        ]
    ):
        ws.note(text, at=NOW - timedelta(hours=6 - number))


def test_a_date_or_amount_no_note_gives_is_left_out_and_named(ws):
    _notes(ws)
    wrong = Adding(
        "active_context",
        "- The invoice export is due March 30.",
        "- The Q2 cloud budget is $40,000.",
        "- The invoice export is due March 13.",
    )
    result = run(ws, now=NOW, force=True, synthesizer=wrong)
    memory = ws.memory_md.read_text(encoding="utf-8")
    assert "March 30" not in memory and "$40,000" not in memory
    assert "due March 13" in memory  # a value the notes give stays
    reasons = {d["line"]: d["reason"] for d in result.dropped}
    assert reasons["- The invoice export is due March 30."] == "the date 03-30 is in no note"
    assert {d["line"] for d in result.dropped} >= {
        "- The invoice export is due March 30.",
        "- The Q2 cloud budget is $40,000.",
    }


def test_a_made_up_skill_count_is_left_out_and_named(ws):
    _notes(ws)
    made_up = Adding("emerging_skills", "- Exporting invoices → Confidence: 80% | Occurrences: 12")
    result = run(ws, now=NOW, force=True, synthesizer=made_up)
    assert "Occurrences: 12" not in ws.memory_md.read_text(encoding="utf-8")
    assert any("the count 12" in d["reason"] for d in result.dropped)


def test_the_check_reads_only_new_lines_and_known_values():
    old = WorkingMemory({"active_context": "- Launch on April 2."})
    state = WorkingMemory(
        {"active_context": "- Launch on April 2.\n- Demo on May 5 for $300.\n- Demo prep."}
    )
    found = numbers.check(state, old, ["The demo costs $300."], [])
    assert [(u.line, u.value) for u in found] == [("- Demo on May 5 for $300.", "the date 05-05")]
    offered = [{"skill": "Exporting invoices", "occurrences": 3}]
    skills = WorkingMemory(
        {"emerging_skills": "- Exporting invoices → Confidence: 80% | Occurrences: 3"}
    )
    assert numbers.check(skills, WorkingMemory(), [], offered) == []


def _new(section: str, *lines: str) -> WorkingMemory:
    return WorkingMemory({section: "\n".join(lines)})


def test_each_way_of_writing_a_date_is_checked_against_the_others():
    evidence = ["Launch moved: due March 14", "The trip starts March 20", "and ends April 3"]
    ok = _new(
        "active_context",
        "- Launch on 2026-03-14",
        "- Launch on 14 March",
        "- Trip from March 20 to April 3",
        "- Trip March 20-3",  # day two of the same month: March 3
    )
    assert [u.value for u in numbers.check(ok, WorkingMemory(), evidence, [])] == ["the date 03-03"]
    wrong = _new("active_context", "- Launch on 2026-03-15", "- Launch on 15 March")
    found = numbers.check(wrong, WorkingMemory(), evidence, [])
    assert [u.value for u in found] == ["the date 03-15", "the date 03-15"]


def test_the_old_state_and_recalled_memories_count_as_known():
    old = WorkingMemory({"active_context": "- Launch on April 2.\n- Budget $5,000 for Q3."})
    state = WorkingMemory(
        {"active_context": "- Launch on April 2.\n- Spend the $5,000 on April 2 ads."}
    )
    assert numbers.check(state, old, [], []) == []
    line = "- Review on May 5 at the office"
    state = _new("active_context", line, "- Pay $7,500 for the venue")
    found = numbers.check(state, WorkingMemory(), [], [], recall=lambda _: ["due May 5", "x"])
    assert found == [
        numbers.Unsupported("active_context", "- Pay $7,500 for the venue", "the amount $7,500")
    ]


def test_a_skill_count_is_the_offered_one_or_at_most_the_texts_holding_its_words():
    def skill(name: str, count: int) -> str:
        return f"- {name} → Confidence: 80% | Occurrences: {count}"

    offered = [{"skill": "Exporting invoices", "occurrences": 3}]
    evidence = ["writing migrations", "Writing migrations again today", "Lunch with Dana"]
    state = _new(
        "emerging_skills",
        skill("Exporting invoices", 4),
        skill("Writing migrations", 2),
        skill("Writing migrations daily", 2),
        skill("Reading logs", 1),
    )
    found = numbers.check(state, WorkingMemory(), evidence, offered)
    assert found == [
        numbers.Unsupported("emerging_skills", skill("Exporting invoices", 4), "the count 4"),
        numbers.Unsupported("emerging_skills", skill("Writing migrations daily", 2), "the count 2"),
    ]
    more = _new("emerging_skills", skill("Writing migrations", 3))
    assert [u.value for u in numbers.check(more, WorkingMemory(), evidence, offered)] == [
        "the count 3"
    ]


def test_dropping_says_where_each_line_was_and_why():
    state = _new("active_context", "- Demo on May 5", "- Demo prep")
    found = numbers.check(state, WorkingMemory(), [], [])
    assert numbers.drop(state, found) == [
        {
            "section": "active_context",
            "line": "- Demo on May 5",
            "reason": "the date 05-05 is in no note",
        }
    ]
    assert state.body("active_context") == "- Demo prep"


def test_a_skill_line_the_old_state_had_is_not_checked_again():
    line = "- Reading logs → Confidence: 80% | Occurrences: 5"
    old = WorkingMemory(
        {"emerging_skills": f"{line}\n- Writing tests → Confidence: 70% | Occurrences: 4"}
    )
    state = _new("emerging_skills", line)
    assert numbers.check(state, old, [], []) == []
