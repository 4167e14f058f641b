"""How much a 10 MB crystal slows a later dream: the same dream with and without one.

Run from the repository root: ``python benchmarks/huge_crystal.py``. Every step of a dream reads
a crystal by its head, also the crystals a search touched (the fading check once stemmed a
10 MB crystal whole at every later dream). The dream measured follows a first dream and a search
that touched every crystal; the promise is that the huge workspace's dream costs a small
multiple of the plain one's (it was moved here from tests/dream/test_bounded_inputs.py: tests assert
behaviour, not wall-clock time).
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dreamer import Workspace
from dreamer.dream.cycle import run  # noqa: E402
from dreamer.memory.scratch import Note  # noqa: E402
from dreamer.store import NewCrystal  # noqa: E402

TEN_MB = "A pasted build log. " + "compile step ok " * 655_360
NOW = datetime(2026, 3, 12, 14, 30, tzinfo=UTC)
HASHING = {"DREAM_EMBEDDER": "hashing"}


def later_dream_seconds(root: Path, *, huge: bool) -> float:
    """Seconds of a dream after a first dream and a search touched every crystal."""
    with Workspace.open(root, environ=HASHING) as ws:
        ws.init()
        if huge:
            ws.store.crystals.add_crystal(
                NewCrystal(
                    TEN_MB,
                    source="scratch",
                    semantic_type="experience",
                    importance=0.9,
                    at=NOW,
                )
            )
            ws.scratch.append(Note(text="Second paste. " + TEN_MB, at=NOW, importance=0.9))
        for i in range(5):
            ws.note(f"Deploy {i} of the billing service went out", at=NOW + timedelta(minutes=i))
    with Workspace.open(root, environ=HASHING) as ws:
        assert run(ws, now=NOW + timedelta(hours=1), force=True).committed
        ws.search("build log billing deploy", now=NOW + timedelta(hours=1), limit=20)
        started = time.perf_counter()
        assert run(ws, now=NOW + timedelta(hours=2), force=True).committed
        return time.perf_counter() - started


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        plain = later_dream_seconds(Path(folder) / "plain", huge=False)
        huge = later_dream_seconds(Path(folder) / "huge", huge=True)
    print(f"later dream: plain {plain:.2f} s, with a 10 MB crystal {huge:.2f} s")
    print(f"budget 3 x plain + 2 s: {'ok' if huge < 3 * plain + 2 else 'OVER'}")


if __name__ == "__main__":
    main()
