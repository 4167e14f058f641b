"""A dream interrupted by Ctrl-C or a SIGTERM handler puts the notes back before it leaves.

``KeyboardInterrupt`` and ``SystemExit`` are not ``Exception``s: a handler that only catches
``Exception`` would leave the notes in the rotated file until some later dream recovers them.
Here they must be back in the scratch the moment the interrupted dream returns control.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from dreamer.dream import cycle as dream
from dreamer.memory import scratch

NOTES = [
    "User prefers concise answers with code first",
    "Acme report deadline is Friday",
    "Deployed the staging server after the nginx change",
    "CI keeps failing on the flaky payment test",
    "What timezone is the Acme client in?",
]
INTERRUPTED_AT = [s for s in dream.STEPS[dream.STEPS.index("index") : dream.STEPS.index("write")]]


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, SystemExit])
@pytest.mark.parametrize("step", INTERRUPTED_AT)
def test_an_interrupted_dream_puts_the_notes_back_at_once(ws, now, interrupt, step):
    for n, text in enumerate(NOTES):
        ws.note(text, at=now - timedelta(hours=5 - n))
    before = ws.memory_md.read_bytes() if ws.memory_md.exists() else None

    def hook(name):
        if name == step:
            raise interrupt()

    with pytest.raises(interrupt):
        dream.run(ws, now=now, force=True, step=hook)
    assert not scratch.rotated_path(ws.scratch_path).exists()
    assert [note.text for note in scratch.parse(ws.scratch_path).notes] == NOTES
    assert (ws.memory_md.read_bytes() if ws.memory_md.exists() else None) == before
    # Left at once: no journal row claims the interrupted dream failed or was rejected.
    assert ws.store.journal.latest_dream_id(("failed", "rejected", "committed")) is None


def test_the_next_dream_recovers_the_notes_a_killed_dream_left_rotated(ws, now):
    for n, text in enumerate(NOTES):
        ws.note(text, at=now - timedelta(hours=5 - n))
    scratch.rotate(ws.scratch_path)  # what a dream killed after its rotation leaves behind
    ws.note("written after the crash", at=now - timedelta(minutes=5))
    result = dream.run(ws, now=now, force=True)
    assert result.committed and result.recovered == len(NOTES)
    assert not scratch.rotated_path(ws.scratch_path).exists()
    assert scratch.parse(ws.scratch_path).notes == []  # all of them dreamed, none lost


def test_a_dry_run_leaves_a_rotated_file_for_the_real_dream(ws, now):
    for n, text in enumerate(NOTES):
        ws.note(text, at=now - timedelta(hours=5 - n))
    scratch.rotate(ws.scratch_path)
    result = dream.run(ws, now=now, force=True, dry_run=True)
    assert result.outcome == "dry-run" and result.recovered == 0
    assert [n.text for n in scratch.parse(scratch.rotated_path(ws.scratch_path)).notes] == NOTES
