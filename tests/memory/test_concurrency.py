"""Several processes writing notes into one workspace at once lose nothing and double nothing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from dreamer import Workspace
from dreamer.memory import scratch

pytestmark = pytest.mark.slow

PROCESSES = 4
NOTES_EACH = 250

_WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from dreamer import Workspace

    root, writer, count, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    while not go.exists():  # start together, so the writers really overlap
        time.sleep(0.005)
    ws = Workspace.open(root)  # the workspace is new: the first opens race on the migration
    ids = [str(ws.note(f"writer {writer} note {i} ünïcode\\nsecond line {i}",
                       importance=0.5))
           for i in range(count)]
    ws.close()
    print(" ".join(ids))
    """
)


def test_parallel_notes_are_all_in_scratch_and_crystals_exactly_once(tmp_path):
    root = tmp_path / "ws"
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(root), str(n), str(NOTES_EACH), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(PROCESSES)
    ]
    time.sleep(0.5)  # let the interpreters import dreamer before the start signal
    started = time.monotonic()
    go.touch()
    outputs = [proc.communicate(timeout=120) for proc in procs]
    elapsed = time.monotonic() - started
    for proc, (_out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
    returned_ids = [int(i) for out, _ in outputs for i in out.split()]
    expected = {
        f"writer {n} note {i} ünïcode\nsecond line {i}"
        for n in range(PROCESSES)
        for i in range(NOTES_EACH)
    }
    total = PROCESSES * NOTES_EACH

    parsed = scratch.parse(root / "memory" / "scratch.md")
    assert parsed.stray == []
    assert len(parsed.notes) == total
    assert {note.text for note in parsed.notes} == expected

    ws = Workspace.open(root, create=False)
    try:
        rows = ws.store.db.execute("SELECT id, text FROM crystals").fetchall()
        assert len(rows) == total
        assert {text for _, text in rows} == expected
        assert sorted(returned_ids) == sorted(crystal_id for crystal_id, _ in rows)
        # Each writer's own notes are in its own order in the scratch.
        for n in range(PROCESSES):
            mine = [note.text for note in parsed.notes if note.text.startswith(f"writer {n} ")]
            assert mine == [
                f"writer {n} note {i} ünïcode\nsecond line {i}" for i in range(NOTES_EACH)
            ]
        created = ws.store.db.execute(
            "SELECT count(*) FROM audit WHERE action = 'created'"
        ).fetchone()[0]
        assert created == total
    finally:
        ws.close()
    # Speed is the benchmark's business (dream bench scale); here it is only reported.
    print(f"{total} notes from {PROCESSES} processes in {elapsed:.2f}s")


def test_threads_sharing_one_workspace_lose_nothing(tmp_path):
    """An in-process agent may call note() from several threads on one Workspace."""
    import threading

    ws = Workspace.open(tmp_path / "ws")
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(60):
                ws.note(f"thread {n} note {i}", importance=0.5)
                if i % 10 == 0:
                    ws.search(f"thread {n}")
        except BaseException as e:  # collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert errors == []
        expected = {f"thread {n} note {i}" for n in range(4) for i in range(60)}
        texts = [text for (text,) in ws.store.db.execute("SELECT text FROM crystals")]
        assert sorted(texts) == sorted(expected)
        assert sorted(note.text for note in scratch.parse(ws.scratch_path).notes) == sorted(
            expected
        )
    finally:
        ws.close()
