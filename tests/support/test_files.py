"""atomic_write: owner-only, whole old or whole new file, safe with concurrent writers."""

from __future__ import annotations

import stat
import threading

from dreamer.support.files import atomic_write


def test_atomic_write_replaces_whole_and_owner_only(tmp_path):
    path = tmp_path / "MEMORY.md"
    atomic_write(path, "old state\n")
    atomic_write(path, "new state é\n")
    assert path.read_text(encoding="utf-8") == "new state é\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["MEMORY.md"]  # no temp file left
    atomic_write(path, b"\x00bytes")
    assert path.read_bytes() == b"\x00bytes"


def test_threads_writing_one_file_never_clash(tmp_path):
    path = tmp_path / "state.md"
    errors: list[BaseException] = []
    payloads = [f"writer {n}\n".encode() * 200 for n in range(6)]

    def writer(data: bytes) -> None:
        try:
            for _ in range(15):
                atomic_write(path, data)
        except BaseException as e:  # collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(data,)) for data in payloads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert path.read_bytes() in payloads
    assert [p.name for p in tmp_path.iterdir()] == ["state.md"]
