"""A crash between any two steps of the dream leaves MEMORY.md whole and every note safe.

Two ways to crash, at every step of ``dreamer.dream.cycle.STEPS`` (the ``step`` hook is the seam):
an exception raised in-process, and a real process exit (``os._exit``: no ``finally`` runs, no
handler journals anything) at each step from the rotation on. Afterwards MEMORY.md is the old
state or a whole new one, every note is in the scratch (after the next start's recovery) or a
crystal, and the next dream commits cleanly with nothing lost.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import timedelta

import pytest

from dreamer import Workspace
from dreamer.dream import cycle as dream
from dreamer.memory import scratch
from dreamer.memory import state as wm
from dreamer.store import content_hash

FIRST = [
    "User prefers concise answers with code first",
    "Acme report deadline is Friday",
    "Deployed the staging server after the nginx change",
    "CI keeps failing on the flaky payment test",
    "Deployed staging again with new flags",
    "What timezone is the Acme client in?",
]
SECOND = [
    "Acme report deadline moved to Wednesday",
    "Fixed the flaky payment test",
    "User now prefers longer explanations for design reviews",
    "Deployed staging for the Acme demo",
    "Need to find out the demo room number",
]
RAW_ONLY = "Appended straight to the scratch, never indexed (a crash after the append)"


class Crash(RuntimeError):
    pass


def prepare(ws, now):
    """A committed first dream, then new notes (one of them only in the scratch file)."""
    for i, text in enumerate(FIRST):
        ws.note(text, at=now - timedelta(hours=30 - i))
    dream.run(ws, now=now - timedelta(hours=4))
    for i, text in enumerate(SECOND):
        ws.note(text, at=now - timedelta(hours=3 - i * 0.1))
    scratch.append(
        ws.scratch_path, scratch.Note(text=RAW_ONLY, at=now - timedelta(minutes=5), importance=0.6)
    )
    return ws.memory_md.read_bytes()


def assert_safe(ws, before: bytes, now) -> None:
    text = ws.memory_md.read_bytes()
    if text != before:
        state = wm.parse(text.decode())
        assert set(state.bodies) == set(wm.section_keys()) and state.mood
    scratch.restore(ws.scratch_path)  # what the next start does
    in_scratch = {n.text for n in scratch.parse(ws.scratch_path).notes}
    for note in [*FIRST, *SECOND, RAW_ONLY]:
        assert note in in_scratch or ws.store.crystals.find_by_hash(content_hash(note)), note
    result = dream.run(ws, now=now + timedelta(hours=1), force=True)
    assert result.committed
    assert scratch.parse(ws.scratch_path).notes == []
    for note in [*FIRST, *SECOND, RAW_ONLY]:
        assert ws.store.crystals.find_by_hash(content_hash(note)), note


AFTER_COMMIT = dream.STEPS[dream.STEPS.index("write") + 1 :]


@pytest.mark.slow
@pytest.mark.parametrize("step", dream.STEPS)
def test_an_exception_at_any_step(ws, now, step):
    before = prepare(ws, now)

    def hook(name):
        if name == step:
            raise Crash(f"injected at {name}")

    if step in AFTER_COMMIT:
        # MEMORY.md holds the new state: the dream is committed, and says what failed after
        result = dream.run(ws, now=now, force=True, step=hook)
        assert result.outcome == "committed"
        assert f"the {step} step after it failed (Crash: injected at {step})" in result.reason
    else:
        with pytest.raises(Crash):
            dream.run(ws, now=now, force=True, step=hook)
    assert_safe(ws, before, now)


SCRIPT = textwrap.dedent("""
    import os, sys
    from datetime import datetime
    from dreamer import Workspace
    from dreamer.dream import cycle as dream
    root, step, now = sys.argv[1], sys.argv[2], datetime.fromisoformat(sys.argv[3])
    def hook(name):
        if name == step:
            os._exit(9)
    with Workspace.open(root) as ws:
        dream.run(ws, now=now, force=True, step=hook)
    sys.exit(0)
""")


# Before "rotate" nothing has moved; a kill there is the exception case without a handler.
KILL_STEPS = dream.STEPS[dream.STEPS.index("rotate") :]


@pytest.mark.slow
@pytest.mark.parametrize("step", [s for s in KILL_STEPS if s not in ("pointers", "guards")])
def test_a_killed_process_at_each_step_after_rotation(tmp_path, now, step):
    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        before = prepare(ws, now)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(root), step, now.isoformat()],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 9, done.stderr
    with Workspace.open(root) as ws:
        assert_safe(ws, before, now)
