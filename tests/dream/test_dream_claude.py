"""Issue 3, "Must show": whole dreams written by Claude through the real SDK and a fake API.

A good answer commits; a collapsed answer is critiqued, and when the revisions are still bad
MEMORY.md is unchanged byte for byte and the notes are back in the scratch (exit code 3 through
``dream run``); API errors fail clearly with nothing lost (exit code 1).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from fake_anthropic import FakeAnthropic, Scripted, message_body

from dreamer.cli import main
from dreamer.dream.cycle import run
from dreamer.dream.synth.claude import TOOL_NAME, ClaudeSynthesizer
from dreamer.errors import (
    DreamRejected,
    ModelAuthError,
    ModelOutputInvalid,
    ModelOverloaded,
    ModelRateLimited,
    ModelTimeout,
)
from dreamer.memory import scratch
from dreamer.memory.state import parse

FIRST_NOTES = [
    "Maya is the product lead at Acme and prefers short, direct answers",
    "Acme quarterly report is due 2026-03-20; Maya wants charts in section 2",
    "Deployed the staging build of the report generator; it worked first time",
    "Maya prefers tea over coffee and works from Lisbon",
    "Open question: which chart style does Maya like best?",
    "Wrote the outline of the Acme quarterly report with Maya",
]
LATER_NOTES = [
    "Maya moved the Acme report deadline to 2026-03-24",
    "Finished section 1 of the Acme quarterly report",
    "Maya asked for a bar chart of regional revenue in section 2",
    "Deployed the report generator to staging again after a font fix",
    "Maya said the tone of section 1 is exactly right",
    "Need to find out whether Acme wants the report as PDF or slides",
]
GOOD = {
    "phenotype": "- Careful, concise collaborator; checks the numbers before sending.",
    "bond": "- Maya: product lead at Acme, works from Lisbon.\n"
    "- Prefers short, direct answers; tea over coffee.",
    "niche": "",
    "active_context": "- Acme quarterly report due 2026-03-20; outline done with Maya.\n"
    "- Section 2 needs charts.\n- Staging build of the report generator works.",
    "crystal_pointers": [],
    "curiosity_gaps": "- Which chart style does Maya like best?",
    "emerging_skills": [{"skill": "Deploying staging", "confidence": 40, "occurrences": 1}],
}
COLLAPSED = {
    key: "" for key in ("phenotype", "bond", "niche", "active_context", "curiosity_gaps")
} | {"crystal_pointers": [], "emerging_skills": []}


def write_notes(ws, texts, start):
    """Append notes one hour apart from start."""
    for i, text in enumerate(texts):
        ws.note(text, importance=0.7, at=start + timedelta(hours=i))


def claude(ws, fake: FakeAnthropic) -> ClaudeSynthesizer:
    """The workspace's Claude synthesizer, talking to the fake."""
    return ClaudeSynthesizer(ws.settings, client=fake.client())


def scratch_texts(ws) -> list[str]:
    """The texts of the notes in the scratch now."""
    return [note.text for note in scratch.parse(ws.scratch_path).notes]


@pytest.fixture
def fake() -> FakeAnthropic:
    """A fresh scripted Messages API."""
    return FakeAnthropic()


@pytest.fixture
def dreamt(ws, now, fake):
    """A workspace whose first dream Claude wrote; six newer notes wait in the scratch."""
    write_notes(ws, FIRST_NOTES, now - timedelta(days=1))
    fake.tool_use(TOOL_NAME, GOOD)
    first = run(ws, now=now, synthesizer=claude(ws, fake))
    assert first.committed
    write_notes(ws, LATER_NOTES, now + timedelta(minutes=10))
    return ws


@pytest.mark.slow
def test_a_good_answer_commits(ws, now, fake):
    write_notes(ws, FIRST_NOTES, now - timedelta(days=1))
    fake.tool_use(
        TOOL_NAME,
        GOOD,
        usage={"input_tokens": 3000, "output_tokens": 400, "cache_creation_input_tokens": 1800},
    )
    result = run(ws, now=now, synthesizer=claude(ws, fake))

    assert result.committed and result.revisions == 0
    memory = ws.memory_md.read_text()
    assert memory.startswith("# Working Memory State\n\n_Last dream: 2026-03-12T14:30:00Z")
    assert "- Maya: product lead at Acme, works from Lisbon." in memory
    assert "- Deploying staging → Confidence: 40% | Occurrences: 1" in memory
    assert memory.count("\n## ") == 7
    assert scratch_texts(ws) == []  # consumed: they are crystals now
    assert all(c.lifecycle == "consolidated" for c in ws.store.crystals.select(sources=["scratch"]))
    # What went to the model: every note, as data.
    sent = fake.last.json["messages"][0]["content"][0]["text"]
    notes_block = sent.split("<notes", 1)[1].split("</notes>", 1)[0]
    assert all(text in notes_block for text in FIRST_NOTES)
    entry = ws.store.journal.get_dream(result.dream_id)
    assert (entry["outcome"], entry["synthesizer"], entry["model"]) == (
        "committed",
        "claude",
        "claude-sonnet-5-5",
    )
    assert (entry["input_tokens"], entry["output_tokens"]) == (3000, 400)
    assert entry["cost_usd"] == pytest.approx((3000 * 3 + 1800 * 3.75 + 400 * 15) / 1e6)


def test_a_note_written_while_claude_answers_stays_in_the_scratch(ws, now, fake):
    write_notes(ws, FIRST_NOTES, now - timedelta(days=1))
    late = "Maya called during the dream: the client meeting moved to Friday"

    def answer_slowly(request):
        # The agent keeps writing while the API call is in flight.
        ws.note(late, importance=0.8, at=now)
        return Scripted(
            200,
            message_body(
                [{"type": "tool_use", "id": "toolu_slow", "name": TOOL_NAME, "input": GOOD}],
                stop_reason="tool_use",
            ),
        )

    fake.push(answer_slowly)
    result = run(ws, now=now, synthesizer=claude(ws, fake))
    assert result.committed
    assert scratch_texts(ws) == [late]
    assert late not in fake.last.text()


def test_sections_claude_leaves_out_carry_over_into_memory_md(dreamt, now, fake):
    before = dreamt.memory_md.read_text()
    fake.tool_use(
        TOOL_NAME,
        {
            "active_context": "- Acme report now due 2026-03-24; "
            "section 1 finished, section 2 needs a bar chart."
        },
    )
    result = run(dreamt, now=now + timedelta(hours=8), synthesizer=claude(dreamt, fake))
    assert result.committed
    after = dreamt.memory_md.read_text()
    for section in ("## The Bond\n", "## The Phenotype\n", "## Curiosity Gaps\n"):
        block = before.split(section, 1)[1].split("\n## ", 1)[0]
        assert section + block in after
    assert "now due 2026-03-24" in after


def test_a_collapsed_answer_is_critiqued_and_a_good_revision_commits(dreamt, now, fake):
    before = parse(dreamt.memory_md.read_text())
    fake.tool_use(TOOL_NAME, COLLAPSED)
    # A revision builds on the draft: it must resend what the draft emptied.
    fake.tool_use(
        TOOL_NAME,
        {
            "bond": before.body("bond"),
            "phenotype": before.body("phenotype"),
            "active_context": "- Acme report now due 2026-03-24; section 1 finished, bar chart "
            "next.",
        },
    )
    result = run(dreamt, now=now + timedelta(hours=8), synthesizer=claude(dreamt, fake))
    assert result.committed and result.revisions == 1
    assert any("empty synthesis" in c for c in result.critiques[0])
    revision = fake.last.json["messages"]
    # The replayed call is the draft's changes from the old state (each section once).
    replayed = revision[1]["content"][0]["input"]
    assert replayed and all(COLLAPSED[key] == value for key, value in replayed.items())
    assert "empty synthesis" in revision[2]["content"][0]["content"]
    assert "works from Lisbon" in dreamt.memory_md.read_text()


@pytest.mark.slow
def test_a_revision_that_is_still_bad_leaves_memory_md_and_the_notes_alone(dreamt, now, fake):
    before = dreamt.memory_md.read_bytes()
    waiting = scratch_texts(dreamt)
    fake.requests.clear()  # forget the first dream's request
    for _ in range(3):  # the draft and both revisions collapse
        fake.tool_use(TOOL_NAME, COLLAPSED)

    with pytest.raises(DreamRejected) as caught:
        run(dreamt, now=now + timedelta(hours=8), synthesizer=claude(dreamt, fake))

    assert dreamt.memory_md.read_bytes() == before
    assert scratch_texts(dreamt) == waiting == LATER_NOTES
    assert not scratch.rotated_path(dreamt.scratch_path).exists()
    assert len(fake.requests) == 3  # one draft, two revisions, then it stops
    assert any("empty synthesis" in reason for reason in caught.value.reasons)
    entry = dreamt.store.journal.get_dream(dreamt.store.journal.dream_entries(1)[0]["id"])
    assert entry["outcome"] == "rejected"
    assert len(entry["critiques"]) == 3 and len(entry["revisions"]) == 2
    # The notes are not marked consumed: the next dream sees them again.
    fake.tool_use(TOOL_NAME, {"active_context": "- Acme report due 2026-03-24."})
    again = run(dreamt, now=now + timedelta(hours=10), synthesizer=claude(dreamt, fake))
    assert again.committed and again.notes == len(LATER_NOTES)


@pytest.mark.slow
def test_dream_run_exits_3_when_claude_keeps_collapsing(dreamt, fake, runner, monkeypatch):
    before = dreamt.memory_md.read_bytes()
    fake.requests.clear()  # forget the first dream's request
    for _ in range(3):
        fake.tool_use(TOOL_NAME, COLLAPSED)
    with fake.serve() as base_url:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-cli-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
        result = runner.invoke(main, ["run", "-w", str(dreamt.root)])

    assert result.exit_code == 3, result.output
    assert "rejected" in result.output and "empty synthesis" in result.output
    assert dreamt.memory_md.read_bytes() == before
    assert scratch_texts(dreamt) == LATER_NOTES
    assert len(fake.requests) == 3
    assert fake.requests[0].json["tool_choice"] == {"type": "tool", "name": TOOL_NAME}


@pytest.mark.slow
@pytest.mark.parametrize(
    "script, error",
    [
        (lambda f: f.error(401), ModelAuthError),
        (lambda f: f.error(429), ModelRateLimited),
        (lambda f: f.error(529), ModelOverloaded),
        (lambda f: f.error(500), ModelOverloaded),
        (lambda f: f.timeout(), ModelTimeout),
        (lambda f: f.tool_use(TOOL_NAME, {"bond": ["not", "text"]}), ModelOutputInvalid),
    ],
    ids=["auth", "rate-limit", "overloaded", "server-error", "timeout", "bad-output"],
)
def test_api_errors_fail_clearly_with_nothing_lost(dreamt, now, fake, script, error):
    before = dreamt.memory_md.read_bytes()
    script(fake)
    with pytest.raises(error):
        run(dreamt, now=now + timedelta(hours=8), synthesizer=claude(dreamt, fake))
    assert dreamt.memory_md.read_bytes() == before
    assert scratch_texts(dreamt) == LATER_NOTES
    entry = dreamt.store.journal.get_dream(dreamt.store.journal.dream_entries(1)[0]["id"])
    assert entry["outcome"] == "failed"
    assert error.__name__ in entry["error"]


def test_the_raw_answer_of_a_bad_output_is_journaled(dreamt, now, fake):
    fake.tool_use(
        TOOL_NAME,
        {"bond": ["not", "text"]},
        usage={"input_tokens": 1200, "output_tokens": 80, "cache_read_input_tokens": 900},
    )
    with pytest.raises(ModelOutputInvalid):
        run(dreamt, now=now + timedelta(hours=8), synthesizer=claude(dreamt, fake))
    entry = dreamt.store.journal.get_dream(dreamt.store.journal.dream_entries(1)[0]["id"])
    assert '"not"' in entry["raw"] and '"text"' in entry["raw"]
    # The unusable answer was still billed: its tokens and cost are in the journal.
    assert (entry["input_tokens"], entry["output_tokens"]) == (1200, 80)
    assert entry["cache_read_tokens"] == 900 and entry["cost_usd"] > 0


def test_a_committed_dream_journals_its_cache_tokens(dreamt, now, fake):
    fake.tool_use(
        TOOL_NAME, GOOD, usage={"cache_creation_input_tokens": 1800, "cache_read_input_tokens": 0}
    )
    result = run(dreamt, now=now + timedelta(hours=8), synthesizer=claude(dreamt, fake))
    entry = dreamt.store.journal.get_dream(result.dream_id)
    assert entry["cache_write_tokens"] == 1800 and entry["cache_read_tokens"] == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "status, says",
    [(529, "overloaded"), (401, "ANTHROPIC_API_KEY or memory.dream.apiKey"), (429, "rate-limited")],
)
def test_dream_run_reports_an_api_error_in_one_line(
    dreamt, fake, runner, monkeypatch, status, says
):
    before = dreamt.memory_md.read_bytes()
    fake.error(status)
    with fake.serve() as base_url:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-cli-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
        result = runner.invoke(main, ["run", "-w", str(dreamt.root)])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1 and says in lines[0]
    assert "Traceback" not in result.output
    assert dreamt.memory_md.read_bytes() == before
    assert scratch_texts(dreamt) == LATER_NOTES


def test_dream_log_and_status_show_tokens_and_cost_to_date(ws, now, fake, runner):
    from dreamer.cli import main

    write_notes(ws, FIRST_NOTES, now - timedelta(days=1))
    fake.tool_use(TOOL_NAME, GOOD, usage={"input_tokens": 3000, "output_tokens": 400})
    assert run(ws, now=now, synthesizer=claude(ws, fake)).committed
    log = runner.invoke(main, ["log", "-w", str(ws.root)], catch_exceptions=False)
    expected = (3000 * 3 + 400 * 15) / 1e6
    assert "3000/400 tok" in log.output and f"${expected:.4f}" in log.output
    assert "total: 1 dream, 3000 input and 400 output tokens" in log.output
    status = runner.invoke(main, ["status", "-w", str(ws.root)], catch_exceptions=False)
    assert f"LLM to date: ${expected:.4f} over 1 dream (3000 input, 400 output tokens)" in (
        status.output
    )
    assert ws.store.journal.dream_totals()["cost_usd"] == pytest.approx(expected)
