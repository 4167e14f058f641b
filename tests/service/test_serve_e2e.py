"""End to end: `dream serve` as a real process with intervals of seconds, stopped by SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dreamer import Workspace
from dreamer.memory import scratch
from dreamer.memory import state as wm
from dreamer.store import content_hash
from dreamer.support.times import utc_now

pytestmark = pytest.mark.slow

DREAM = str(Path(sys.executable).with_name("dream"))


def _dream(*args, env):
    done = subprocess.run([DREAM, *args], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _runs(root):
    with Workspace.open(root, create=False) as ws:
        return ws.store.db.execute(
            "SELECT job, outcome, detail, started_at FROM runs ORDER BY id"
        ).fetchall()


def _wait_for(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def test_serve_consolidates_dreams_and_stops_cleanly_on_sigterm(tmp_path):
    root = tmp_path / "agent"
    env = {
        **os.environ,
        "DREAM_SYNTHESIZER": "offline",
        "DREAM_CONSOLIDATION_INTERVAL_MINUTES": "0.03",  # 1.8 s
        "DREAM_DREAM_INTERVAL_MINUTES": "0.1",
    }  # 6 s
    env.pop("ANTHROPIC_API_KEY", None)
    with Workspace.open(root) as ws:
        ws.init()
        for i in range(6):
            ws.note(f"Falcon release step {i}: module {i} reviewed and merged", importance=0.6)
    # a second workspace, served by the same process, that never dreams
    quiet = tmp_path / "quiet"
    quiet.mkdir()
    (quiet / "dreamer.toml").write_text("[memory.dream]\nenabled = false\n")
    with Workspace.open(quiet) as ws:
        ws.init()
        for i in range(6):
            ws.note(f"Quiet note {i}")

    server = subprocess.Popen(
        [DREAM, "serve", "-w", str(root), "-w", str(quiet), "--grace", "5"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # the first dream is due at once and has six notes to consume
        assert _wait_for(
            lambda: ("dream", "committed") in [(r[0], r[1]) for r in _runs(root)], 20
        ), _runs(root)
        # a stressful moment while serving: the next consolidation notes the spike
        _dream(
            "feel",
            "cortisol",
            "0.9",
            "--reason",
            "the build server is on fire",
            "-w",
            str(root),
            env=env,
        )
        _dream(
            "note",
            "Deploy failed twice; urgent fix needed before the demo",
            "-w",
            str(root),
            env=env,
        )
        assert _wait_for(
            lambda: (
                sum(r[0] == "consolidate" for r in _runs(root)) >= 3
                and any("spikes: cortisol" in (r[2] or "") for r in _runs(root))
            ),
            15,
        ), _runs(root)
    finally:
        server.send_signal(signal.SIGTERM)
        _, stderr = server.communicate(timeout=15)  # a 5 s grace, then out: a hang fails here
    assert server.returncode == 0, stderr
    assert "stopped cleanly" in stderr or "interrupted" in stderr

    runs = _runs(root)
    consolidations = [r for r in runs if r[0] == "consolidate"]
    dreams = [r for r in runs if r[0] == "dream"]
    # "overrun": a tick slower than the 1.8 s interval (a loaded machine) is recorded as such
    assert sum(r[1] == "done" for r in consolidations) >= 3
    assert all(r[1] in ("done", "interrupted", "overrun") for r in consolidations)
    assert all(r[1] in ("committed", "skipped", "interrupted") for r in dreams)
    # every run is in stderr's log too
    assert stderr.count(" consolidate: ") >= len(consolidations)

    # dream log, dream status and the runs table tell the same story
    log = json.loads(_dream("log", "--json", "-w", str(root), env=env))
    status = json.loads(_dream("status", "--json", "-w", str(root), env=env))
    scheduled = [r for r in dreams if r[1] != "interrupted"]
    assert len(log) == len(scheduled)
    assert [entry["outcome"] for entry in reversed(log)] == [r[1] for r in scheduled]
    assert status["last_dream"]["id"] == log[0]["id"]
    assert status["last_dream"]["outcome"] == log[0]["outcome"]
    assert status["jobs"]["consolidate"]["last_at"] == max(r[3] for r in consolidations)
    assert status["jobs"]["dream"]["last_at"] == max(r[3] for r in dreams)
    newest = sorted(consolidations, key=lambda r: r[3])[-1]  # by start, as the schedule reads
    assert status["jobs"]["consolidate"]["last_outcome"] == newest[1]

    # the second workspace was consolidated too, and never dreamt
    assert {job for job, *_ in _runs(quiet)} == {"consolidate"}
    with Workspace.open(quiet, create=False) as ws:
        assert ws.store.journal.dream_entries() == [] and not ws.memory_md.exists()

    # the dream invariants hold after the stop
    with Workspace.open(root, create=False) as ws:
        assert not scratch.rotated_path(ws.scratch_path).exists() or any(
            r[1] == "interrupted" for r in dreams
        )
        state = wm.parse(ws.memory_md.read_text())
        assert state.last_dream
        texts = [n.text for n in scratch.parse(ws.scratch_path).notes]
        texts += [n.text for n in scratch.parse(scratch.rotated_path(ws.scratch_path)).notes]
        spike = [t for t in texts if "cortisol spike" in t] or [
            c.text for c in ws.store.crystals.select(sources=["auto"])
        ]
        assert spike and "the build server is on fire" in spike[0]
        for text in texts:  # every note is a crystal as well
            assert ws.store.crystals.find_by_hash(content_hash(text)) is not None


SLOW_SERVER = """
import sys, time
from pathlib import Path
from dreamer.service import schedule as scheduler
from dreamer.service.serve import Service

class Slow:
    name, model = "slow", None

    def synthesize(self, inputs, *, critique=None, previous=None):
        time.sleep(60)  # a model that takes far longer than the grace period

scheduler.log.addHandler(__import__("logging").StreamHandler())
scheduler.log.setLevel("INFO")
sys.exit(Service([Path(sys.argv[1])], synthesizer=Slow(), grace_seconds=1).serve())
"""


def test_sigterm_during_a_slow_dream_stops_within_seconds_and_loses_nothing(tmp_path):
    from dreamer.dream import cycle as dream

    root = tmp_path / "agent"
    notes = [f"Heron migration fact {i}: spotted at lake {i}" for i in range(6)]
    with Workspace.open(root) as ws:
        ws.init()
        for text in notes:
            ws.note(text)
        rotated = scratch.rotated_path(ws.scratch_path)
    env = {**os.environ, "DREAM_CONSOLIDATION_INTERVAL_MINUTES": "10"}
    server = subprocess.Popen(
        [sys.executable, "-c", SLOW_SERVER, str(root)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert _wait_for(rotated.exists, 20)  # the dream is inside its synthesis now
    finally:
        server.send_signal(signal.SIGTERM)
        _, stderr = server.communicate(timeout=15)  # a 1 s grace: a hang fails here
    assert server.returncode == 0, stderr
    assert [(r[0], r[1]) for r in _runs(root)] == [
        ("consolidate", "done"),
        ("dream", "interrupted"),
    ]
    with Workspace.open(root, create=False) as ws:
        assert not ws.memory_md.exists()  # the old state (none) is intact
        # the next dream puts the notes back and consumes them
        result = dream.run(ws, now=utc_now())
        assert result.outcome == "committed" and result.recovered == len(notes)
        assert not rotated.exists()
