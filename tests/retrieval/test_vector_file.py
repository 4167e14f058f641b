"""The vector file: a fresh process scans it as found, it follows the store, a crash never
leaves it wrong, and a forget leaves none of its bytes.

Crashes are a kill (``disk_faults.Killed``) at a chosen write to ``memory/vectors.bin``; what
the file holds afterwards is checked row by row against the store, the source of truth.
"""

from __future__ import annotations

import contextlib
import os
from datetime import timedelta

import numpy as np
import pytest
from disk_faults import Disk, Killed

from dreamer import Workspace
from dreamer.retrieval import vector_file, vectors
from dreamer.retrieval.embed import to_blob
from dreamer.retrieval.reindex import embed_waiting
from dreamer.retrieval.vector_file import (
    HEADER_BYTES,
    NOTE,
    SESSION,
    SLOT_BYTES,
    VectorFile,
    projection,
    sketch_of,
)

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL

NOTES = [
    "Ada is allergic to peanuts and shellfish",
    "The invoice run for the bakery is every Friday",
    "Standup moved to 9:30 from next Monday",
    "Marco prefers short answers with the code first",
    "The greenhouse vents open at 24 degrees",
    "Tomato seedlings moved to the cold frame",
    "Renew the car insurance before April",
    "The billing service deploys on Tuesdays",
]


STATIC = {"embedder": "wordllama"}


@pytest.fixture
def ws(tmp_path):
    """A workspace whose notes get their vectors as they are written (the static vectors; the
    default sentence model leaves them waiting for the next search), so a test says when a
    vector is late."""
    workspace = Workspace.open(tmp_path / "ws", overrides=STATIC)
    yield workspace
    workspace.close()


@pytest.fixture(autouse=True, params=[None, 3], ids=["blocks", "tiny-blocks"])
def _fresh_cache(request, monkeypatch):
    """Every test twice: with the real block size, and with blocks of 3 rows, so appends,
    scans, repairs and forgets cross block boundaries."""
    if request.param:
        monkeypatch.setattr(vector_file, "BLOCK_ROWS", request.param)
    vectors.clear_cache()
    yield
    vectors.clear_cache()


def _note_all(ws, now, texts):
    return [
        ws.note(text, at=now - timedelta(minutes=len(texts) - i)) for i, text in enumerate(texts)
    ]


def _path(ws):
    return ws.memory_dir / vectors.FILE_NAME


def _index(ws):
    return vectors.index_for(ws.store, ws.embedder)


def _in_a_fresh_process(ws):
    """The index as a new process finds it: nothing of this one's cached."""
    vectors.clear_cache()
    return _index(ws)


def _assert_matches_the_store(ws):
    """Every row the header counts is what the store says, and nothing lies past them."""
    index = _index(ws)
    file, rows = index.file, index.header.rows
    assert rows == ws.store.crystals.max_crystal_id()
    stored = dict(ws.store.vectors.vectors_of(list(range(1, rows + 1)), ws.embedder.name))
    sessions = {row[0] for row in ws.store.search.rank_rows(list(stored)) if row[1] == "sessions"}
    flags = file.flags(rows)
    for crystal_id in range(1, rows + 1):
        expected = (SESSION if crystal_id in sessions else NOTE) if crystal_id in stored else None
        if expected is None:
            assert flags[crystal_id - 1] not in (NOTE, SESSION), crystal_id
            continue
        assert flags[crystal_id - 1] == expected, crystal_id
        row = np.array([crystal_id - 1])
        assert file.vectors(row).tobytes() == stored[crystal_id], crystal_id
    # past the counted rows: nothing (an append cut short is cut off before the next write)
    whole_blocks = -(-rows // file.block_rows)
    data = _path(ws).read_bytes()[HEADER_BYTES + whole_blocks * file.block_bytes :]
    assert not data.strip(b"\0")


def _kill_at_write(disk, path, number):
    """Kill the process at the number-th write to path (1-based) from now on."""
    seen = []

    def check(event):
        if event.kind == "write" and event.path == str(path.resolve()):
            seen.append(event)
            if len(seen) == number:
                raise Killed(f"killed before write #{number} to {path.name}")

    disk.checks.append(check)
    return seen


def test_a_fresh_process_scans_the_file_it_finds_without_writing_it(ws, now):
    ids = _note_all(ws, now, NOTES)
    first = _index(ws)
    seq, stat = first.header.seq, os.stat(_path(ws))
    again = _in_a_fresh_process(ws)
    assert again.header.seq == seq and os.stat(_path(ws)).st_mtime_ns == stat.st_mtime_ns
    query = ws.embedder.embed(["nut allergy"])[0]
    found, best = vectors.nearest(again, query, True, True, 3)
    cosines = dict(found)
    assert ids[0] in cosines and best == max(cosines.values())
    (blob,) = [b for i, b in ws.store.vectors.vectors_of([ids[0]], ws.embedder.name)]
    exact = float(np.frombuffer(blob, dtype=np.float16).astype(np.float32) @ query)
    assert abs(cosines[ids[0]] - exact) < 1e-6  # the stored float16 vector, exactly


def test_new_notes_are_appended_and_a_late_vector_fills_its_waiting_row(ws, now):
    _note_all(ws, now, NOTES[:4])
    before = os.stat(_path(ws)) if _path(ws).exists() else None
    _index(ws)
    inode = os.stat(_path(ws)).st_ino
    assert before is None or before.st_ino == inode
    late = ws.note(NOTES[4], at=now, embed=False)
    added = ws.note(NOTES[5], at=now)
    index = _in_a_fresh_process(ws)
    assert late in index.waiting and added in set(index.ids.tolist())
    assert embed_waiting(ws.store, ws.embedder) == 1
    index = _in_a_fresh_process(ws)
    assert late in set(index.ids.tolist()) and not index.waiting
    assert os.stat(_path(ws)).st_ino == inode  # appended and filled in place, not rebuilt
    _assert_matches_the_store(ws)


def test_new_vectors_for_old_crystals_rebuild_the_file_and_leave_no_temp_file(ws, now):
    ids = _note_all(ws, now, NOTES)
    inode = os.stat(_path(ws) if _path(ws).exists() else _index(ws).path).st_ino
    other = ws.embedder.embed(["something else entirely"])[0]
    ws.store.vectors.set_vectors([(ids[1], to_blob(other))], ws.embedder.name)
    ws.store.records.set_meta(vectors.GENERATION_KEY, "1")  # as a reindex does
    _in_a_fresh_process(ws)
    assert os.stat(_path(ws)).st_ino != inode
    assert [p.name for p in ws.memory_dir.iterdir() if p.name.endswith(".tmp")] == []
    _assert_matches_the_store(ws)


@pytest.mark.parametrize("number", range(1, 6))  # four sections, then the header
def test_an_append_killed_at_any_write_is_repaired_on_the_next_open(ws, now, monkeypatch, number):
    _note_all(ws, now, NOTES[:4])
    counted = _index(ws).header.rows
    _note_all(ws, now + timedelta(hours=1), NOTES[4:])
    disk = Disk(monkeypatch)
    _kill_at_write(disk, _path(ws), number)
    with pytest.raises(Killed):
        _in_a_fresh_process(ws)
    disk.checks.clear()
    fd = os.open(_path(ws), os.O_RDONLY)
    try:
        head = VectorFile(fd, ws.embedder.dim).header()
    finally:
        os.close(fd)
    assert head.rows == counted  # the header never counts rows a crash cut short
    _assert_matches_the_store(ws)


def test_a_torn_header_falls_back_to_the_other_slot(ws, now):
    _note_all(ws, now, NOTES[:4])
    older = _index(ws).header
    _note_all(ws, now + timedelta(hours=1), NOTES[4:])
    newer = _in_a_fresh_process(ws).header
    assert newer.seq == older.seq + 1 and newer.rows > older.rows
    with open(_path(ws), "r+b") as handle:  # a write of the newer slot cut short
        handle.seek((newer.seq % 2) * SLOT_BYTES + 40)
        handle.write(b"\xff" * 16)
    fd = os.open(_path(ws), os.O_RDONLY)
    try:
        assert VectorFile(fd, ws.embedder.dim).header().seq == older.seq
    finally:
        os.close(fd)
    _assert_matches_the_store(ws)  # the rows past the older header written again


def _holds(ws, blob, pattern="*"):
    """The files under the workspace (matching pattern) that hold the vector or its sketch."""
    vector = np.frombuffer(blob, dtype=np.float16).reshape(1, -1)
    sketch = sketch_of(vector, projection(vector.shape[1]))[0].tobytes()  # no refresh
    found = []
    for path in ws.root.rglob(pattern):
        if path.is_file():
            data = path.read_bytes()
            found += [
                f"{path.name}: {what}"
                for what, b in (("vector", blob), ("sketch", sketch))
                if b in data
            ]
    return found


def test_a_forget_zeroes_the_row_at_once(ws, now):
    ids = _note_all(ws, now, NOTES)
    _index(ws)
    (blob,) = [b for i, b in ws.store.vectors.vectors_of([ids[2]], ws.embedder.name)]
    assert _holds(ws, blob)
    ws.forget([ids[2]], now=now + timedelta(minutes=5))
    assert _holds(ws, blob) == []
    index = _index(ws)
    assert ids[2] not in set(index.ids.tolist())
    query = ws.embedder.embed([NOTES[2]])[0]
    assert ids[2] not in dict(vectors.nearest(index, query, True, True, 8)[0])
    _assert_matches_the_store(ws)


def test_a_forget_killed_before_the_file_is_repaired_on_the_next_open(ws, now):
    ids = _note_all(ws, now, NOTES)
    _index(ws)
    (blob,) = [b for i, b in ws.store.vectors.vectors_of([ids[2]], ws.embedder.name)]
    # what a forget killed right after the store's commit leaves: the row still in the file
    ws.store.forgetting.forget_crystal(ids[2], reason="test", at=now)
    assert _holds(ws, blob, "vectors.*")
    _in_a_fresh_process(ws)
    assert _holds(ws, blob, "vectors.*") == []  # (the database's own purge is not run here)
    _assert_matches_the_store(ws)


@pytest.mark.parametrize("number", [1, 2, 4])
def test_a_forget_killed_while_zeroing_is_finished_on_the_next_open(ws, now, monkeypatch, number):
    ids = _note_all(ws, now, NOTES)
    _index(ws)
    (blob,) = [b for i, b in ws.store.vectors.vectors_of([ids[2]], ws.embedder.name)]
    disk = Disk(monkeypatch)
    _kill_at_write(disk, _path(ws), number)
    with pytest.raises(Killed):
        ws.forget([ids[2]], now=now + timedelta(minutes=5))
    disk.checks.clear()
    _in_a_fresh_process(ws)
    assert _holds(ws, blob) == []
    _assert_matches_the_store(ws)


def test_an_append_that_died_holding_a_since_forgotten_vector_leaves_no_trace(ws, now, monkeypatch):
    _note_all(ws, now, NOTES[:4])
    _index(ws)
    (late,) = _note_all(ws, now + timedelta(hours=1), NOTES[4:5])
    (blob,) = [b for i, b in ws.store.vectors.vectors_of([late], ws.embedder.name)]
    disk = Disk(monkeypatch)
    _kill_at_write(disk, _path(ws), 5)  # the new row's four sections written, not the header
    with pytest.raises(Killed):
        _in_a_fresh_process(ws)
    disk.checks.clear()
    assert _holds(ws, blob)  # past the counted rows, but in the file
    ws.forget([late], now=now + timedelta(hours=2))
    assert _holds(ws, blob) == []


def test_a_shared_store_keeps_no_vector_file_in_the_workspace(pg_database, tmp_path, now):
    with Workspace.open(
        tmp_path / "ws", environ={"DREAM_STORE_URL": pg_database}, overrides=STATIC
    ) as ws:
        ws.init()
        ids = _note_all(ws, now, NOTES)
        index = _index(ws)
        query = ws.embedder.embed(["nut allergy"])[0]
        assert ids[0] in dict(vectors.nearest(index, query, True, True, 3)[0])
        ws.forget([ids[0]], now=now + timedelta(minutes=5))
        assert ids[0] not in dict(vectors.nearest(_index(ws), query, True, True, 3)[0])
        assert not list(ws.memory_dir.glob("vectors.bin*"))


def test_a_consolidation_tick_brings_the_file_up_to_date(ws, now):
    from dreamer.service import consolidation

    _note_all(ws, now, NOTES)
    consolidation.tick(ws, now)
    fd = os.open(_path(ws), os.O_RDONLY)
    try:
        head = VectorFile(fd, ws.embedder.dim).header()
    finally:
        os.close(fd)
    assert head.rows == ws.store.crystals.max_crystal_id() and head.embedder == ws.embedder.name


def test_a_forget_committed_while_the_file_is_rebuilt_is_not_undone(ws, now, monkeypatch):
    ids = _note_all(ws, now, NOTES)
    _index(ws)
    (blob,) = [b for i, b in ws.store.vectors.vectors_of([ids[3]], ws.embedder.name)]
    ws.store.records.set_meta(vectors.GENERATION_KEY, "2")  # a rebuild is due
    disk, forgot = Disk(monkeypatch), []

    def forget_meanwhile(event):
        # another process forgets after the rebuild read the vectors, before it is renamed
        if event.kind == "write" and event.path.endswith(".tmp") and not forgot:
            forgot.append(ws.store.forgetting.forget_crystal(ids[3], reason="test", at=now))

    disk.checks.append(forget_meanwhile)
    _in_a_fresh_process(ws)
    disk.checks.clear()
    assert forgot and _holds(ws, blob, "vectors.*") == []
    _assert_matches_the_store(ws)


def test_a_redaction_writes_the_new_vectors_over_the_old(tmp_path, now):
    from dreamer.memory import redaction

    root = tmp_path / "ws"
    root.mkdir()
    (root / "dreamer.toml").write_text("[memory.secrets]\nredact = false\n")
    key = "ghp_" + "R8kD2mQ7vX4bN9cL1tY6wH3sJ5pF0gZa8eUq"
    with Workspace.open(root, overrides=STATIC) as ws:
        (secret, *_) = _note_all(ws, now, [f"CI token {key} for the release job", *NOTES])
        _index(ws)
        (old,) = [b for i, b in ws.store.vectors.vectors_of([secret], ws.embedder.name)]
    (root / "dreamer.toml").unlink()  # redaction back on, as by default
    with Workspace.open(root, overrides=STATIC) as ws:
        assert redaction.scan(ws, now=now).crystals == 1
        assert _holds(ws, old, "vectors.*") == []
        _assert_matches_the_store(ws)


def _open_vector_files(folder_of_workspaces):
    """How many file descriptors of this process point at a vector file in that folder."""
    folder = "/proc/self/fd"
    targets = []
    for fd in os.listdir(folder):
        with contextlib.suppress(OSError):
            targets.append(os.readlink(f"{folder}/{fd}"))
    return sum(
        1
        for target in targets
        if target.startswith(str(folder_of_workspaces)) and target.endswith(vectors.FILE_NAME)
    )


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_file_descriptors_stay_bounded_across_many_workspaces(tmp_path, now):
    from dreamer.service import consolidation

    for n in range(vectors.MAX_OPEN + 4):
        with Workspace.open(tmp_path / f"ws{n}", overrides=STATIC) as ws:
            _note_all(ws, now, NOTES[:2])
            query = ws.embedder.embed(["nut allergy"])[0]
            assert vectors.nearest(_index(ws), query, True, True, 3)[0]  # a scan: file open
    assert _open_vector_files(tmp_path) == vectors.MAX_OPEN
    vectors.clear_cache()
    with Workspace.open(tmp_path / "ticked", overrides=STATIC) as ws:
        _note_all(ws, now, NOTES[:2])
        consolidation.tick(ws, now)  # as a service does for each of its workspaces
        assert _path(ws).is_file() and _open_vector_files(tmp_path) == 0


def test_what_a_process_keeps_between_scans_follows_every_change(ws, now):
    ids = _note_all(ws, now, NOTES)
    query = ws.embedder.embed([NOTES[2]])[0]

    def found():
        return dict(vectors.nearest(_index(ws), query, True, True, 8)[0])

    assert ids[2] in found() and ids[2] in found()  # streamed, then from what was kept
    ws.forget([ids[2]], now=now + timedelta(minutes=5))
    assert ids[2] not in found()
    (again,) = _note_all(ws, now + timedelta(hours=1), [NOTES[2] + " (noted again)"])
    assert again in found()


def test_picked_rows_are_the_rows_read_one_by_one(tmp_path):
    """Any ascending set of rows (runs, gaps, block edges, the empty and the waiting) reads as
    the flags and vectors of each row read alone."""
    import random

    dim, rows = 8, 40
    rng = random.Random(3)
    fd = os.open(tmp_path / "v.bin", os.O_RDWR | os.O_CREAT)
    try:
        file = VectorFile(fd, dim)
        flags = np.array([rng.choice((0, 1, 2, 3, 4)) for _ in range(rows)], dtype=np.uint8)
        values = np.array([[rng.uniform(-1, 1) for _ in range(dim)] for _ in range(rows)])
        file.write_rows(0, flags, values.astype(np.float16), vector_file.projection(dim))
        for _ in range(30):
            picked = np.array(sorted(rng.sample(range(rows), rng.randrange(1, rows))))
            found, vectors_found = file.pick(picked)
            assert found.tolist() == file.flags(rows)[picked].tolist()
            assert np.array_equal(vectors_found, file.vectors(picked))
            given = file.pick(picked, file.flags(rows)[picked])
            assert np.array_equal(given[1], vectors_found)
        assert file.pick(np.array([], dtype=np.int64))[1].shape == (0, dim)
    finally:
        os.close(fd)
