"""heap.release gives back what a finished job's thread freed but its allocator kept."""

from __future__ import annotations

import sys
import threading

import pytest

from dreamer.support import heap


def resident_mb() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) // 1024 for line in status if line.startswith("VmRSS"))


@pytest.mark.skipif(heap._TRIM is None, reason="glibc's malloc_trim only (Linux)")
def test_memory_a_thread_freed_between_live_objects_goes_back_to_the_system():
    kept: list[bytearray] = []

    def job() -> None:  # 150 MB of work, a small object kept after each block (a fragment)
        work = []
        for _ in range(1500):
            work.append(bytearray(100_000))
            kept.append(bytearray(200))
        del work

    worker = threading.Thread(target=job)
    worker.start()
    worker.join()
    held = resident_mb()
    heap.release()
    assert resident_mb() < held - 100  # the freed blocks no longer count as the process's


def test_release_is_harmless_anywhere():
    heap.release()
    assert sys.platform.startswith("linux") or heap._TRIM is None
