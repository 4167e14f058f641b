"""Atomic writes keep their promise at the file layer: temp file, fsync, rename, fsync the folder.

Observed through a recording fake of the ``os`` calls (``disk_faults``), and by killing the
write half-way: whatever happens, the file holds the whole old or the whole new content.
"""

from __future__ import annotations

import errno
import os
from datetime import datetime, timedelta

import pytest
from disk_faults import Disk, Killed

from dreamer.support.files import atomic_write, modified

OLD = b"old state, whole\n" * 64
NEW = b"new state, whole\n" * 64


@pytest.fixture
def disk(monkeypatch):
    return Disk(monkeypatch)


def test_the_new_content_is_synced_before_the_rename_and_the_rename_after(tmp_path, disk):
    path = tmp_path / "MEMORY.md"
    atomic_write(path, NEW)
    replaces = [e for e in disk.events if e.kind == "replace"]
    assert len(replaces) == 1 and replaces[0].target == str(path.resolve())
    temp = replaces[0].path
    assert temp != str(path.resolve())
    at = disk.events.index(replaces[0])
    before, after = disk.events[:at], disk.events[at + 1 :]
    writes = [i for i, e in enumerate(before) if e.kind == "write" and e.path == temp]
    syncs = [i for i, e in enumerate(before) if e.kind == "fsync" and e.path == temp]
    assert writes and syncs and syncs[-1] > writes[-1], "the temp file was renamed unsynced"
    # The rename itself is made durable: the folder is synced after it.
    assert any(e.kind == "fsync" and e.path == str(tmp_path.resolve()) for e in after)
    assert disk.unsynced() == set()
    assert path.read_bytes() == NEW


def test_the_target_is_never_opened_for_writing(tmp_path, disk):
    path = tmp_path / "MEMORY.md"
    path.write_bytes(OLD)
    atomic_write(path, NEW)
    assert str(path.resolve()) not in disk.opened_for_writing()
    assert path.read_bytes() == NEW


@pytest.mark.parametrize("kind", ["write", "fsync", "replace"])
@pytest.mark.parametrize("after", [False, True])
def test_a_kill_at_any_call_leaves_the_old_or_the_new_file_whole(tmp_path, disk, kind, after):
    path = tmp_path / "MEMORY.md"
    path.write_bytes(OLD)
    disk.crash_at(kind, 1, after=after)
    with pytest.raises(Killed):
        atomic_write(path, NEW)
    assert path.read_bytes() in (OLD, NEW)


def test_a_full_disk_mid_write_keeps_the_old_file_and_leaves_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "MEMORY.md"
    path.write_bytes(OLD)
    real_write = os.write

    def half_then_full(fd, data):
        if len(data) > 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(OSError, match="No space"):
        atomic_write(path, NEW)
    monkeypatch.undo()
    assert path.read_bytes() == OLD
    assert [p.name for p in tmp_path.iterdir()] == ["MEMORY.md"]


def test_a_files_modification_time_is_stated_in_utc(tmp_path):
    path = tmp_path / "scratch.md"
    path.write_bytes(OLD)
    os.utime(path, (1_773_325_800, 1_773_325_800))  # 2026-03-12T14:30:00Z
    stated = modified(path)
    assert stated == "2026-03-12T14:30:00+00:00"
    assert datetime.fromisoformat(stated).utcoffset() == timedelta(0)
    assert modified(tmp_path / "missing.md") is None
