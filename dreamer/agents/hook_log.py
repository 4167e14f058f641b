"""``memory/hooks.log``: what the Claude Code hooks did, one timestamped line per event, bounded.

Every line reads ``[2026-11-25T15:40:00Z] session-start: ...``. The hooks' detached jobs
(``dream ingest --live``, ``dream tick``) are started through this module
(``python -m dreamer.agents.hook_log EVENT ROOT ARGS...``): it runs the job, waits for it, and
logs one line for it (its summary, or its error lines when it failed), so a session start in a
project of 300 transcripts adds one line, not 300. When the log passes ``MAX_BYTES`` it is
moved to ``hooks.log.1`` (the one before that is dropped), so it never grows without bound.

Light on purpose (no workspace, no SDK): the detached runner starts with each hook.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from dreamer.support.times import iso

NAME = "hooks.log"
MAX_BYTES = 256 * 1024


def path(root: Path) -> Path:
    return root / "memory" / NAME


def write(root: Path | None, event: str, text: str, now: datetime) -> None:
    """Append ``[time] event: text`` (one line per line of text); silent when there is no
    workspace or the disk refuses: a hook must never fail the agent."""
    if root is None or not (root / "memory").is_dir():
        return
    lines = [line for line in text.rstrip().splitlines() if line.strip()] or [""]
    entry = "".join(f"[{iso(now)}] {event}: {line}\n" for line in lines)
    log = path(root)
    try:
        if log.stat().st_size > MAX_BYTES:
            os.replace(log, log.with_name(NAME + ".1"))
    except OSError:
        pass  # no log yet, or another hook rotated it first
    try:
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(entry)
    except OSError:
        pass  # nowhere left to tell; the agent still goes on


def start(event: str, root: Path, args: list[str], stdin: str | None = None) -> None:
    """Start ``dream ARGS`` detached (its own session: Claude Code ending the hook must not end
    it), logged through this module; do not wait. The log exists from here on (empty until
    the job has something to say)."""
    try:
        os.close(os.open(path(root), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600))
    except OSError:
        pass  # the job still runs; its line will try again
    child = subprocess.Popen(
        [sys.executable, "-m", "dreamer.agents.hook_log", event, str(root), *args],
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    if child.stdin is not None:
        with child.stdin:  # a hook's JSON is a few hundred bytes: the pipe takes it at once
            child.stdin.write((stdin or "").encode("utf-8"))


def summary(code: int, out: str, err: str) -> str | None:
    """What a finished job leaves in the log: its last line of output (None when it said
    nothing), or why it failed."""
    said = [line for line in out.splitlines() if line.strip()]
    errors = [line for line in err.splitlines() if line.strip()]
    if code == 0:
        return said[-1] if said else None
    return "\n".join(errors or said[-1:] or [f"exited {code}"])


def main(argv: list[str]) -> int:
    event, root, *args = argv
    stdin = None if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    done = subprocess.run(
        [sys.executable, "-m", "dreamer.cli", *args],
        input=stdin or "",
        capture_output=True,
        text=True,
    )
    said = summary(done.returncode, done.stdout, done.stderr)
    if said is not None:
        write(Path(root), event, said, datetime.now(UTC))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
