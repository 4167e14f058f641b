"""A forget request in a note that a dream cannot take on its own waits for the user, and every
place the user looks says so, with the command that answers it."""

from __future__ import annotations

import html
import io
import json
from datetime import timedelta

import pytest
from click.testing import CliRunner

from dreamer import Workspace, run_dream
from dreamer.agents import hooks
from dreamer.cli import main
from dreamer.memory.forget_pending import pending_forget_requests

KOFIS = [
    "Kofi Mensah's phone number is 024 555 0101",
    "Kofi Boateng's phone number is 020 777 0202",
    "Ama prefers tea to coffee in the mornings",
]
WAITING = "forget request(s) need the user's confirmation"


def _dream_over(root, texts, request, now):
    with Workspace.open(root) as ws:
        for i, text in enumerate(texts):
            ws.note(text, at=now - timedelta(hours=10 - i))
        ws.note(request, at=now - timedelta(hours=1))
        result = run_dream(ws, now=now, force=True)
        assert result.committed
        [resolution] = ws.store.journal.get_dream(result.dream_id)["inputs"]["forget_requests"]
        assert ws.store.forgetting.tombstone_count() == 0
        return resolution, pending_forget_requests(ws)


def test_a_note_asking_to_forget_kofis_phone_forgets_neither_and_asks(tmp_path, now):
    root = tmp_path / "ws"
    resolution, waiting = _dream_over(root, KOFIS, "Please forget Kofi's phone number", now)
    assert resolution["outcome"] == "needs confirmation"
    assert resolution["why"] == "'kofi' is part of 2 names (Kofi Boateng, Kofi Mensah)"
    [item] = waiting
    assert item.request_id == 4 and item.matches == [1, 2]
    assert item.names == ["Kofi Boateng", "Kofi Mensah"]
    runner, w = CliRunner(), ["-w", str(root)]
    listed = runner.invoke(main, ["forget", "--pending", *w])
    assert listed.exit_code == 0, listed.output
    assert "Request 4" in listed.output and "#1  Kofi Mensah's phone" in listed.output
    refused = runner.invoke(main, ["forget", "--confirm", "4", *w])
    assert refused.exit_code == 2 and refused.output.count("\n") == 1
    assert refused.output.startswith("Error: request 4 names one of 2 people or things")
    assert runner.invoke(main, ["forget", "2", *w]).exit_code == 0  # the user chose Boateng
    assert runner.invoke(main, ["forget", "--dismiss", "4", *w]).exit_code == 0
    with Workspace.open(root) as ws:
        assert pending_forget_requests(ws) == []
        assert [c.id for c in ws.store.crystals.select()] == [1, 3, 4]


def test_a_request_with_many_matches_is_shown_everywhere_until_confirmed(tmp_path, now):
    root = tmp_path / "ws"
    builds = [f"Checkout build {i} was flaky on the payments runner" for i in range(5)]
    resolution, waiting = _dream_over(
        root, [*builds, *KOFIS[2:]], "forget all the flaky checkout builds", now
    )
    assert resolution["outcome"] == "needs confirmation" and resolution["matches"] == 5
    [item] = waiting
    runner, w = CliRunner(), ["-w", str(root)]
    for command in (["status"], ["log"], ["report"]):
        shown = runner.invoke(main, [*command, *w])
        assert shown.exit_code == 0, shown.output
        assert WAITING in shown.output and "dream forget --pending" in shown.output, command
    assert WAITING in html.unescape((root / "memory" / "report.html").read_text())
    assert WAITING in _session_start(root, now)
    done = runner.invoke(main, ["forget", "--confirm", str(item.request_id), *w])
    assert done.exit_code == 0, done.output
    assert done.output.startswith("Forgot 5 crystal(s) (#1, #2, #3, #4, #5)")
    assert "forget requests  1 waiting request(s) answered or cleaned" in done.output
    with Workspace.open(root) as ws:
        assert pending_forget_requests(ws) == []
        receipts = [e for e in ws.store.records.audit_entries() if e["action"] == "forget receipt"]
        assert receipts[0]["detail"]["forgotten"] == [1, 2, 3, 4, 5]
    assert WAITING not in runner.invoke(main, ["status", *w]).output
    assert WAITING not in _session_start(root, now)
    again = runner.invoke(main, ["forget", "--confirm", str(item.request_id), *w])
    assert again.exit_code == 2 and "no forget request" in again.output


def test_a_request_whose_matches_hold_another_form_asks(tmp_path, now):
    pets = ["Our two cats sleep on the red sofa", "The neighbour's cat climbs the fence"]
    resolution, [item] = _dream_over(tmp_path / "ws", pets, "Please forget the cats", now)
    assert resolution["outcome"] == "needs confirmation"
    assert resolution["why"] == "1 of 2 match only by another form of a word"
    assert item.matches == [1, 2]


def test_forgetting_the_matches_by_hand_answers_the_request_and_cleans_its_words(tmp_path, now):
    root = tmp_path / "ws"
    _dream_over(root, KOFIS, "Please forget Kofi's phone number", now)
    result = CliRunner().invoke(main, ["forget", "1", "2", "-w", str(root)])
    assert result.exit_code == 0, result.output
    assert "forget requests  1 waiting request(s) answered or cleaned" in result.output
    with Workspace.open(root) as ws:
        assert pending_forget_requests(ws) == []
        stored = json.dumps(ws.store.records.meta_items("forget_request."))
    assert "Kofi" not in stored and "phone" not in stored


@pytest.mark.parametrize("flags", [["--pending", "1"], ["--confirm", "1", "--dismiss", "1"]])
def test_pending_confirm_and_dismiss_go_alone(tmp_path, flags):
    Workspace.open(tmp_path / "ws").close()
    result = CliRunner().invoke(main, ["forget", *flags, "-w", str(tmp_path / "ws")])
    assert result.exit_code == 2 and result.output.startswith("Error: --pending, --confirm")


def _session_start(root, now) -> str:
    payload = {
        "hook_event_name": "SessionStart",
        "source": "startup",
        "cwd": str(root),
        "session_id": "s1",
        "transcript_path": str(root / "none.jsonl"),
    }
    out = io.StringIO()
    hooks.run(
        "session-start",
        io.StringIO(json.dumps(payload)),
        out,
        now,
        environ={"DREAM_WORKSPACE": str(root)},
    )
    return json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]
