"""No secret reaches the scratch file or a request to the model, including a revision's replay.

Two paths earlier tests could not see: the scratch file right after a note (a dream later
consumes and deletes it), and the draft a revision request replays to the model (a sound first
draft never needs one).
"""

from __future__ import annotations

import json
from datetime import timedelta

from click.testing import CliRunner
from fake_anthropic import FakeAnthropic
from secret_cases import NOTES, SECRETS, assert_no_secret

from dreamer import Workspace, run_dream
from dreamer.cli import main
from dreamer.dream.synth.claude import TOOL_NAME, ClaudeSynthesizer
from dreamer.memory import scratch


def test_a_note_reaches_the_scratch_file_redacted(tmp_path, now):
    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        for n, text in enumerate(NOTES[:4]):
            ws.note(text, at=now - timedelta(minutes=10 - n))
    done = CliRunner().invoke(main, ["note", "-w", str(root), NOTES[5]], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    data = (root / "memory" / "scratch.md").read_bytes()
    assert_no_secret(data, "memory/scratch.md")
    texts = [note.text for note in scratch.parse(root / "memory" / "scratch.md").notes]
    assert len(texts) == 5 and all("[secret:" in text for text in texts)


def test_a_revision_request_replays_the_draft_redacted(tmp_path, now):
    leaked = SECRETS["github-token"]
    fake = FakeAnthropic()
    # A first draft that quotes a secret and is far over budget: the revision replays it.
    padding = "".join(f"\n- detail {n} of the deploy bot set-up, in full" for n in range(300))
    fake.tool_use(TOOL_NAME, {"bond": f"- CI token {leaked}{padding}"})
    fake.tool_use(
        TOOL_NAME,
        {
            "bond": "- Maya prefers concise answers with the code first, then a short why.",
            "active_context": "- Deploy bot set up; backups on AWS; CI pushes with a token.",
        },
    )
    with Workspace.open(tmp_path / "ws") as ws:
        for n, text in enumerate(NOTES):
            ws.note(text, at=now - timedelta(hours=6 - n))
        synth = ClaudeSynthesizer(ws.settings, client=fake.client())
        result = run_dream(ws, now=now, force=True, synthesizer=synth)
    assert result.revisions == 1 and result.committed
    assert len(fake.requests) == 2
    for number, request in enumerate(fake.requests, start=1):
        assert_no_secret(json.dumps(request.json), f"request {number} to the Messages API")
    replay = json.dumps(fake.requests[1].json["messages"][1:])
    assert "[secret:github-token#" in replay  # the draft was replayed, with its placeholder
