"""Issue 22, item 6: a hand edit of MEMORY.md made while a dream runs is never lost.

The model is slow; meanwhile a person appends a line to MEMORY.md. At commit the dream sees
that MEMORY.md is no longer what it read: it dreams again over the edited state (once), and if
MEMORY.md changes again it defers: the edit stays, the notes go back to the scratch, the journal
says "deferred" and ``dream run`` exits 4. The edits come from the fake Messages API answering
(the real SDK, the real cycle) or from a synthesizer whose call edits the file.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from fake_anthropic import FakeAnthropic, Recorded, Scripted, message_body

from dreamer import Workspace
from dreamer.cli import main
from dreamer.dream.cycle import run
from dreamer.dream.synth import Draft, Usage
from dreamer.dream.synth.claude import TOOL_NAME, ClaudeSynthesizer
from dreamer.dream.synth.offline import OfflineSynthesizer
from dreamer.errors import EXIT_DEFERRED, DreamDeferred, LeaseLost
from dreamer.memory import scratch
from dreamer.memory import state as wm
from dreamer.memory.workspace import LEASE_TTL
from dreamer.store import open_store
from dreamer.support.times import utc_now

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL

NOTES = [
    "Maya is the product lead at Acme and prefers short, direct answers",
    "Acme quarterly report is due 2026-03-20; Maya wants charts in section 2",
    "Deployed the staging build of the report generator; it worked first time",
    "Maya prefers tea over coffee and works from Lisbon",
    "Open question: which chart style does Maya like best?",
    "Wrote the outline of the Acme quarterly report with Maya",
]
LATER = [
    "Maya moved the Acme report deadline to 2026-03-24",
    "Finished section 1 of the Acme quarterly report",
    "Need to find out whether Acme wants the report as PDF or slides",
]
HAND = "- Ask Maya about the Lisbon office move (written by hand during the dream)"


def answer(request: Recorded) -> Scripted:
    """A model that writes Active Context and carries over every hand line it was shown."""
    sent = request.text()
    lines = ["- Acme report now due 2026-03-24; section 1 finished."]
    lines += [line for line in (HAND, HAND + " again") if line + "\n" in sent]
    body = {"active_context": "\n".join(lines)}
    block = {"type": "tool_use", "id": "toolu_fake", "name": TOOL_NAME, "input": body}
    return Scripted(200, message_body([block], stop_reason="tool_use"))


def append(ws, line: str) -> None:
    """What a person's editor does: add a line to Active Context and save."""
    text = ws.memory_md.read_text(encoding="utf-8")
    ws.memory_md.write_text(
        text.replace("## Active Context\n", f"## Active Context\n{line}\n", 1), encoding="utf-8"
    )


@pytest.fixture
def dreamt(ws, now):
    """A workspace with one committed offline dream and three newer notes waiting."""
    for i, text in enumerate(NOTES):
        ws.note(text, importance=0.7, at=now - timedelta(hours=30 - i))
    assert run(ws, now=now).committed
    for i, text in enumerate(LATER):
        ws.note(text, importance=0.7, at=now + timedelta(minutes=10 + i))
    return ws


def scratch_texts(ws) -> list[str]:
    return [note.text for note in scratch.parse(ws.scratch_path).notes]


def test_a_line_written_during_a_model_dream_is_kept_and_the_dream_says_so(dreamt, now):
    fake = FakeAnthropic()

    def slow_answer(request: Recorded) -> Scripted:
        append(dreamt, HAND)  # the person saves while the model is thinking
        return answer(request)

    fake.push(slow_answer).push(answer)
    synth = ClaudeSynthesizer(dreamt.settings, client=fake.client())
    result = run(dreamt, now=now + timedelta(hours=1), force=True, synthesizer=synth)

    assert result.committed
    memory = dreamt.memory_md.read_text(encoding="utf-8")
    assert HAND in memory
    assert "now due 2026-03-24" in memory
    assert len(fake.requests) == 2 and HAND in fake.requests[1].text()  # dreamt again over it
    assert "edited during the dream" in result.reason
    entry = dreamt.store.journal.get_dream(result.dream_id)
    assert entry["outcome"] == "committed" and "edited during the dream" in entry["reason"]
    assert HAND in entry["old_state"]  # the journal's "before" is the edited state
    assert entry["inputs"]["edited_during"] == 1
    assert scratch_texts(dreamt) == []


def test_an_edit_during_every_attempt_defers_the_dream_and_keeps_everything(dreamt, now):
    fake = FakeAnthropic()
    lines = iter([HAND, HAND + " again"])

    def editing_answer(request: Recorded) -> Scripted:
        append(dreamt, next(lines))
        return answer(request)

    fake.push(editing_answer).push(editing_answer)
    synth = ClaudeSynthesizer(dreamt.settings, client=fake.client())
    with pytest.raises(DreamDeferred) as caught:
        run(dreamt, now=now + timedelta(hours=1), force=True, synthesizer=synth)

    assert caught.value.exit_code == EXIT_DEFERRED == 4
    assert "MEMORY.md was edited during the dream" in str(caught.value)
    memory = dreamt.memory_md.read_text(encoding="utf-8")
    assert HAND in memory and HAND + " again" in memory
    assert scratch_texts(dreamt) == LATER  # the notes wait for the next dream
    assert not scratch.rotated_path(dreamt.scratch_path).exists()
    entry = dreamt.store.journal.get_dream(caught.value.dream_id)
    assert entry["outcome"] == "deferred" and "edited during the dream" in entry["reason"]
    # The next dream takes the edit in and commits.
    fake.push(answer)
    again = run(dreamt, now=now + timedelta(hours=2), force=True, synthesizer=synth)
    assert again.committed and again.notes == len(LATER)
    memory = dreamt.memory_md.read_text(encoding="utf-8")
    assert HAND in memory and HAND + " again" in memory


class Collapsing:
    """A synthesizer whose first draft collapses; the person edits during its revision."""

    name, model = "collapsing", "fake-1"

    def __init__(self, ws):
        self.ws, self.calls = ws, 0

    def synthesize(self, inputs, *, critique=None, previous=None):
        self.calls += 1
        bodies = {key: "" for key in wm.section_keys()}
        if self.calls == 2:
            append(self.ws, HAND)  # saved while the revision is being written
        if critique is not None or self.calls > 2:
            bodies = dict(inputs.old.bodies)
            bodies["active_context"] = (
                inputs.old.body("active_context") + "\n- Acme report now due 2026-03-24."
            ).strip()
        state = wm.WorkingMemory(bodies, extra=list(inputs.old.extra))
        return Draft(state, raw="", usage=Usage(input_tokens=10, output_tokens=5))


@pytest.mark.slow
def test_an_edit_during_a_revision_is_kept(dreamt, now):
    synth = Collapsing(dreamt)
    result = run(dreamt, now=now + timedelta(hours=1), force=True, synthesizer=synth)
    assert result.committed and synth.calls == 3  # draft, revision, then again over the edit
    assert HAND in dreamt.memory_md.read_text(encoding="utf-8")
    assert "edited during the dream" in dreamt.store.journal.get_dream(result.dream_id)["reason"]


@pytest.mark.slow
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_dream_run_says_deferred_and_exits_4(dreamt, runner, monkeypatch, as_json):
    fake = FakeAnthropic()
    lines = iter([HAND, HAND + " again"])

    def editing_answer(request: Recorded) -> Scripted:
        append(dreamt, next(lines))
        return answer(request)

    fake.push(editing_answer).push(editing_answer)
    args = ["run", "--force", "-w", str(dreamt.root)] + (["--json"] if as_json else [])
    with fake.serve() as base_url:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-cli-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
        result = runner.invoke(main, args)
    assert result.exit_code == 4, result.output
    if as_json:
        data = json.loads(result.output)
        assert data["outcome"] == "deferred"
        assert "MEMORY.md was edited during the dream" in data["error"]
    else:
        assert result.output.startswith("Error: deferred: MEMORY.md was edited during the dream")
        assert result.output.count("\n") == 1  # one line
    assert HAND + " again" in dreamt.memory_md.read_text(encoding="utf-8")
    log = runner.invoke(main, ["log", "-w", str(dreamt.root)], catch_exceptions=False)
    assert "deferred" in log.output


@pytest.mark.slow
def test_dream_run_says_it_dreamt_again_over_an_edit(dreamt, runner, monkeypatch):
    fake = FakeAnthropic()

    def slow_answer(request: Recorded) -> Scripted:
        append(dreamt, HAND)
        return answer(request)

    fake.push(slow_answer).push(answer)
    with fake.serve() as base_url:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-cli-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
        result = runner.invoke(main, ["run", "--force", "-w", str(dreamt.root)])
    assert result.exit_code == 0, result.output
    assert "committed" in result.output
    assert "MEMORY.md was edited during the dream: dreamt again over the edited state" in (
        result.output
    )
    assert HAND in dreamt.memory_md.read_text(encoding="utf-8")


def test_on_postgres_a_state_row_written_by_another_worker_is_a_lost_lease_not_a_redream(
    pg_database, tmp_path, now
):
    # Only the lease's holder writes the state row: a row changed during the dream means the
    # lease passed on. The dream must stop at once (LeaseLost), not pay for a second draft.
    ws = Workspace.open(tmp_path / "ws", environ={"DREAM_STORE_URL": pg_database})
    other = open_store(tmp_path / "o.db", url=pg_database, key=str(ws.root.resolve()))
    try:
        ws.init()
        for i, text in enumerate(NOTES):
            ws.note(text, importance=0.7, at=now - timedelta(hours=30 - i))
        assert run(ws, now=now).committed
        for text in LATER:
            ws.note(text, importance=0.7, at=now + timedelta(minutes=10))
        synth = Counting()

        def take_over(step: str) -> None:
            if step == "write":
                token = other.acquire_lease("other", utc_now() + timedelta(hours=1), LEASE_TTL)
                assert other.write_state("# the other worker's state", token, now)

        with pytest.raises(LeaseLost):
            run(ws, now=now + timedelta(hours=1), force=True, synthesizer=synth, step=take_over)
        assert synth.calls == 1
        assert other.read_state()[0] == "# the other worker's state"
        assert ws.store.journal.dream_entries(1)[0]["outcome"] == "failed"
    finally:
        other.close()
        ws.close()


class Counting(OfflineSynthesizer):
    """The offline synthesizer, counting its calls."""

    calls = 0

    def synthesize(self, inputs, *, critique=None, previous=None):
        self.calls += 1
        return super().synthesize(inputs, critique=critique, previous=previous)
