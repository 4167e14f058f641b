"""Forgetting is real: by id, by search, by tool, by a request in a note; and redact --scan."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from click.testing import CliRunner

from dreamer import Workspace, run_dream
from dreamer.agents import tools
from dreamer.agents.bootstrap import bootstrap_block
from dreamer.cli import main
from dreamer.dream.forget_requests import parse
from dreamer.errors import CrystalNotFound
from dreamer.memory import scratch

SECRET = "stg-Vault-9931!"
PASSWORD_NOTE = f"The staging password is {SECRET} until Friday"
OTHER = [
    "Maya prefers concise answers with the code first",
    "The billing service deploys on Tuesdays",
    "Priya is Maya's manager and approves releases",
    "The analytics report is due on April 3",
]


def raw_workspace(tmp_path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "dreamer.toml").write_text("[memory.secrets]\nredact = false\n")
    return Workspace.open(root)


def on_disk(root) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


@pytest.mark.slow
def test_dream_forget_by_id_removes_the_text_everywhere(tmp_path, now):
    with raw_workspace(tmp_path) as ws:
        for i, text in enumerate([PASSWORD_NOTE, *OTHER]):
            ws.note(text, at=now - timedelta(hours=5 - i))
        assert run_dream(ws, now=now, force=True).committed
        assert SECRET in ws.memory_md.read_text()
        target = ws.search("staging password", now=now)[0].id
        ws.note("Pending: the staging password rotates Friday", at=now)  # still in the scratch
    runner = CliRunner()
    result = runner.invoke(main, ["forget", str(target), "-w", str(tmp_path / "ws")])
    assert result.exit_code == 0, result.output
    assert f"Forgot 1 crystal(s) (#{target})" in result.output
    with Workspace.open(tmp_path / "ws") as ws:
        assert all(SECRET not in hit.text for hit in ws.search("staging password", now=now))
        assert SECRET not in ws.memory_md.read_text()
        assert "Maya prefers concise answers" in ws.memory_md.read_text()  # only its lines
        with pytest.raises(CrystalNotFound, match="was forgotten"):
            ws.get(target)
        audit = ws.store.records.audit_entries(target)
        assert audit[0]["action"] == "forgotten" and SECRET not in json.dumps(audit)
        assert ws.store.forgetting.tombstone_count() == 1
        assert [n.text for n in scratch.parse(ws.scratch_path).notes] == [
            "Pending: the staging password rotates Friday"
        ]  # it names no secret: kept
    blob = on_disk(tmp_path / "ws")  # crystals.db, -wal, -shm, journal, scratch
    assert SECRET.encode() not in blob and PASSWORD_NOTE.encode() not in blob
    log = runner.invoke(main, ["log", "-w", str(tmp_path / "ws")])
    assert "forgotten" in log.output


def test_forget_by_search_shows_first_and_needs_a_yes(tmp_path, now):
    with raw_workspace(tmp_path) as ws:
        for text in [PASSWORD_NOTE, *OTHER]:
            ws.note(text, at=now)
    runner = CliRunner()
    args = ["forget", "--search", "staging password", "-w", str(tmp_path / "ws")]
    refused = runner.invoke(main, args)
    assert refused.exit_code == 2 and "pass --yes" in refused.output
    assert "#1" in refused.output  # shown, not forgotten
    with Workspace.open(tmp_path / "ws") as ws:
        assert ws.get(1).text == PASSWORD_NOTE
    done = runner.invoke(main, [*args, "--yes"])
    assert done.exit_code == 0, done.output
    with Workspace.open(tmp_path / "ws") as ws, pytest.raises(CrystalNotFound):
        ws.get(1)


def test_forget_refuses_unknown_ids_and_forgets_nothing(tmp_path, now):
    with raw_workspace(tmp_path) as ws:
        ws.note(PASSWORD_NOTE, at=now)
    result = CliRunner().invoke(main, ["forget", "1", "99", "-w", str(tmp_path / "ws")])
    assert result.exit_code == 2 and result.output.startswith("Error: no crystal with id 99")
    with Workspace.open(tmp_path / "ws") as ws:
        assert ws.get(1).text == PASSWORD_NOTE


def test_the_memory_forget_tool(ws, now):
    crystal_id = ws.note("My old phone number is 555-0100", at=now)
    result = tools.handle(
        ws,
        {
            "id": "t",
            "name": "memory_forget",
            "input": {"ids": [crystal_id], "reason": "user asked"},
        },
        now=now,
    )
    assert not result["is_error"], result["content"]
    assert json.loads(result["content"])["forgotten"] == [crystal_id]
    missing = tools.handle(ws, {"id": "t2", "name": "memory_forget", "input": {"ids": [999]}})
    assert missing["is_error"] and "nothing was forgotten" in missing["content"]


def test_the_same_words_can_be_noted_again_after_a_forget(ws, now):
    first = ws.note("Temporary: the spare desk is B-12 on floor 4", at=now)
    ws.forget([first], now=now)
    again = ws.note("Temporary: the spare desk is B-12 on floor 4", at=now)
    assert again != first and ws.get(again).text == "Temporary: the spare desk is B-12 on floor 4"


def test_a_forget_request_in_a_note_is_honoured_by_the_dream(tmp_path, now):
    with raw_workspace(tmp_path) as ws:
        for i, text in enumerate([PASSWORD_NOTE, *OTHER]):
            ws.note(text, at=now - timedelta(days=1, hours=5 - i))
        assert run_dream(ws, now=now - timedelta(days=1), force=True).committed
        assert SECRET in ws.memory_md.read_text()
        ws.note("Please forget the staging password I pasted earlier", at=now - timedelta(hours=1))
        ws.note("Maya moved the analytics report to April 7", at=now - timedelta(minutes=30))
        result = run_dream(ws, now=now, force=True)
        assert result.committed
        memory = ws.memory_md.read_text()
        block = bootstrap_block(ws, context_window=200_000)
        entry = ws.store.journal.get_dream(result.dream_id)
    assert SECRET not in memory and SECRET not in block
    assert "forget" not in memory.lower()  # the request itself is not stated either
    assert "April 7" in memory
    [resolution] = entry["inputs"]["forget_requests"]
    assert resolution["outcome"] == "forgotten" and len(resolution["forgotten"]) == 1
    assert SECRET.encode() not in on_disk(tmp_path / "ws")


def test_an_ambiguous_forget_request_deletes_nothing_but_is_kept_out_and_reported(tmp_path, now):
    with raw_workspace(tmp_path) as ws:
        notes = [f"Deploy note {i}: the deploy checklist step {i} is done" for i in range(5)]
        for i, text in enumerate([*notes, *OTHER]):
            ws.note(text, at=now - timedelta(hours=9 - i))
        ws.note("forget the deploy checklist", at=now - timedelta(minutes=5))
        result = run_dream(ws, now=now, force=True)
        memory = ws.memory_md.read_text()
        entry = ws.store.journal.get_dream(result.dream_id)
        assert ws.store.forgetting.tombstone_count() == 0
    [resolution] = entry["inputs"]["forget_requests"]
    assert resolution["outcome"] == "needs confirmation" and resolution["matches"] == 5
    assert "checklist step" not in memory and "Deploy note" not in memory


@pytest.mark.slow
@pytest.mark.parametrize(
    "request_text, forgotten",
    [
        ("Please forget the boiler repair cost", True),  # "cost": in no note; the rest points
        ("Please forget the boiler invoice", False),  # one word left: too little to act on
    ],
)
def test_a_word_no_note_holds_does_not_stop_a_request(tmp_path, now, request_text, forgotten):
    repair = "Our plumber charged 180 euros for the boiler repair on Monday"
    with raw_workspace(tmp_path) as ws:
        for i, text in enumerate([repair, "The boiler is serviced every October", *OTHER]):
            ws.note(text, at=now - timedelta(hours=9 - i))
        ws.note(request_text, at=now - timedelta(minutes=5))
        result = run_dream(ws, now=now, force=True)
        memory = ws.memory_md.read_text()
        [resolution] = ws.store.journal.get_dream(result.dream_id)["inputs"]["forget_requests"]
        found = [hit.text for hit in ws.search("plumber charged euros")]
    assert resolution["outcome"] == ("forgotten" if forgotten else "needs confirmation")
    assert (repair in found) is not forgotten
    if forgotten:
        assert "180 euros" not in memory


@pytest.mark.parametrize(
    "text, target",
    [
        (
            "Please forget the staging password I pasted earlier",
            "the staging password I pasted earlier",
        ),
        ("can you forget about my old address?", "my old address"),
        ("Don't remember my salary figure.", "my salary figure"),
        ("Delete the notes about the Lisbon trip", "the Lisbon trip"),
        ("ok. forget it", None),  # nothing named
        ("Don't forget to call Mia at 5", None),
        ("I forgot my keys at the office", None),
        ("Remember to forget nothing", None),
    ],
)
def test_what_counts_as_a_forget_request(text, target):
    request = parse(text)
    assert (request.target if request else None) == target


@pytest.mark.slow
def test_redact_scan_cleans_a_workspace_written_without_redaction(tmp_path, now):
    key = "ghp_" + "R8kD2mQ7vX4bN9cL1tY6wH3sJ5pF0gZa8eUq"
    with raw_workspace(tmp_path) as ws:
        for i, text in enumerate([f"CI token {key} for the release job", PASSWORD_NOTE, *OTHER]):
            ws.note(text, at=now - timedelta(hours=6 - i))
        assert run_dream(ws, now=now, force=True).committed
        ws.note(f"again: {key}", at=now)  # pending in the scratch
    (tmp_path / "ws" / "dreamer.toml").unlink()  # redaction back on, as by default
    runner = CliRunner()
    dry = runner.invoke(main, ["redact", "--scan", "--dry-run", "-w", str(tmp_path / "ws")])
    assert dry.exit_code == 0 and dry.output.startswith("Would redact")
    assert key.encode() in on_disk(tmp_path / "ws")  # a dry run changes nothing
    done = runner.invoke(main, ["redact", "--scan", "--json", "-w", str(tmp_path / "ws")])
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert report["crystals"] >= 3 and report["scratch_lines"] >= 1
    blob = on_disk(tmp_path / "ws")
    assert key.encode() not in blob and SECRET.encode() not in blob
    with Workspace.open(tmp_path / "ws") as ws:
        assert "[secret:github-token#" in ws.search("CI token release", now=now)[0].text
        assert "[secret:" in ws.memory_md.read_text()


def test_a_claude_dream_never_states_what_a_request_asked_to_forget(tmp_path, now):
    from fake_anthropic import FakeAnthropic

    from dreamer.dream.synth.claude import TOOL_NAME, ClaudeSynthesizer

    fake = FakeAnthropic()
    with raw_workspace(tmp_path) as ws:
        for i, text in enumerate([PASSWORD_NOTE, *OTHER]):
            ws.note(text, at=now - timedelta(hours=5 - i))
        ws.note("Please forget the staging password", at=now - timedelta(minutes=5))
        # A careless model states it anyway, and repeats the request: neither may land.
        fake.tool_use(
            TOOL_NAME,
            {
                "bond": "- Maya prefers concise answers with the code first.\n"
                "- Priya is Maya's manager and approves releases.",
                "active_context": f"- The staging password is {SECRET}.\n"
                "- User asked to forget the staging password.\n"
                "- The analytics report is due on April 3.",
            },
        )
        result = run_dream(
            ws,
            now=now,
            force=True,
            synthesizer=ClaudeSynthesizer(ws.settings, client=fake.client()),
        )
        memory = ws.memory_md.read_text()
    assert result.committed
    assert SECRET not in memory and "staging password" not in memory.lower()
    assert "April 3" in memory and "Priya" in memory
    assert SECRET not in json.dumps(fake.last.json)  # and the request itself never carried it
