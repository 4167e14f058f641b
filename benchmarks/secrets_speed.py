"""How fast the secret detector is: p50/p95 of redact() on notes and on a 100 KB transcript.

Run from the repository root: ``python benchmarks/secrets_speed.py``. The budget is a note append
of at most 5 ms p50 in total, so redact() of a ~200-character note must stay well under 1 ms.
It also times the notes of benchmarks/secrets/corpus.py (107 secret kinds, 300 ordinary notes)
and a cold start in fresh processes: the import, then the first and second note (each compiles
the rules its keywords call for). With detect-secrets installed it also times that library's
line scan on the same notes.
"""

from __future__ import annotations

import os
import platform
import random
import statistics
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dreamer.support.secrets import redact  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent / "secrets"))
import measure  # noqa: E402  (benchmarks/secrets/measure.py: the corpus and the cold start)

NOTES = [
    "Decided to move the crystal store to WAL mode after the lock timeouts; the user prefers "
    "short answers and works mostly on the billing service in Go. Next: check the retry budget.",
    "Merged 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 into main; crystal "
    "550e8400-e29b-41d4-a716-446655440000 archived. Dashboard https://grafana.internal:3000/d/x.",
    "The staging password is in 1Password; rotate the API key next week. max_tokens=4096, "
    "temperature=0.2, release v2.14.0-rc.1 planned for 2026-03-20, colours #1e90ff and #fafafa.",
    "Deploy needs DATABASE_URL=postgres://app:Blue-Sky-42@db.internal:5432/app and the token "
    "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5 in the runner; remove them after the test.",
]


def _transcript(size: int) -> str:
    """A Claude Code-like transcript: prose, code, paths, ids and a few secrets."""
    rng = random.Random(7)
    lines = [
        '{"role": "user", "content": "Why does test_dream_crash fail on CI?"}',
        '{"role": "assistant", "content": "Reading tests/dream/test_dream_crash.py and dream.py."}',
        "def rotate(scratch: Path, now: datetime) -> Path:\n    return scratch.with_suffix('.x')",
        "$ git log --oneline -3\n8876cf5 Offline dream\n510a398 Journal cost\na5b567b README",
        "token = get_token(session); password = getpass.getpass(); api_key = cfg['api_key']",
        'Traceback (most recent call last):\n  File "/work/main/dreamer/store.py", line 73',
    ]
    parts: list[str] = []
    total = 0
    while total < size:
        if rng.random() < 0.02:
            body = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
            line = f"export GITHUB_TOKEN=ghp_{body}"
        else:
            line = rng.choice(lines)
        parts.append(line)
        total += len(line) + 1
    return "\n".join(parts)[:size]


def _time(fn: Callable[[str], object], text: str, runs: int) -> tuple[float, float]:
    """p50 and p95 in milliseconds over ``runs`` calls."""
    fn(text)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn(text)
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def _detect_secrets_line_scan() -> Callable[[str], object] | None:
    """detect-secrets' 27 plugins run over each line, if it is installed.

    (Its own line pipeline, ``_process_line_based_plugins`` under ``default_settings()``, loads
    no plugin when called this way and returns nothing: an earlier version of this benchmark
    timed that empty scan.)
    """
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    except ImportError:
        return None
    plugins = [cls() for cls in get_mapping_from_secret_type_to_class().values()]

    def scan(text: str) -> object:
        return [v for line in text.splitlines() for p in plugins for v in p.analyze_string(line)]

    return scan


def main() -> None:
    """Print the machine and the figures."""
    print(
        f"machine: {platform.platform()}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    rows: list[tuple[str, str, int]] = [
        (f"note {i + 1} ({len(n)} chars)", n, 2000) for i, n in enumerate(NOTES)
    ]
    transcript = _transcript(100_000)
    rows.append(("transcript (100 KB)", transcript, 30))
    blob = "".join(random.Random(1).choice(string.ascii_letters + "+/") for _ in range(100_000))
    rows.append(("base64 blob, no spaces (100 KB)", blob, 10))
    print(f"{'input':38} {'p50 ms':>9} {'p95 ms':>9}  found")
    for label, text, runs in rows:
        p50, p95 = _time(redact, text, runs)
        print(f"{label:38} {p50:9.3f} {p95:9.3f}  {redact(text).count}")
    for label, notes in (
        ("corpus: secret notes", [c.note for c in measure.corpus.secrets()]),
        ("corpus: ordinary notes", measure.corpus.ordinary()),
    ):
        samples = [_time(redact, note, 50)[0] for note in notes]
        found = sum(redact(note).count for note in notes)
        print(
            f"{label:38} {statistics.median(samples):9.3f} "
            f"{sorted(samples)[int(len(samples) * 0.95)]:9.3f}  {found}"
        )
    cold = measure._cold()
    print(
        f"cold start (median of 11 processes): import {cold['import_ms']:.1f} ms, "
        f"first note {cold['first_note_ms']:.1f} ms, second note {cold['second_note_ms']:.1f} ms"
    )
    scan = _detect_secrets_line_scan()
    if scan is not None:
        print("detect-secrets, all plugins over each line (for comparison):")
        for label, text, runs in rows[: len(NOTES)] + [rows[len(NOTES)]]:
            p50, p95 = _time(scan, text, max(3, runs // 10))
            print(f"{label:38} {p50:9.3f} {p95:9.3f}")


if __name__ == "__main__":
    main()
