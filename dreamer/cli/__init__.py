"""The ``dream`` command. Thin: parse, call the core, turn DreamError into a one-line message.

Each area of commands lives in its own module; ``COMMANDS`` says where each command is, and a
command's module is imported only when that command runs (or ``--help`` lists them all), so
``dream note`` does not pay for the scheduler, the benchmarks or the MCP SDK. ``main`` is the
click group (``dreamer.cli.group``); ``run`` is what the ``dream`` script and ``python -m
dreamer.cli`` call.
"""

from __future__ import annotations

import os

from dreamer.cli.group import build

# numpy's OpenBLAS starts a thread per core at import, a large part of a short command's
# start on a small machine, for vector sums that are quick on one thread. A user's own
# setting wins; the Python API (an agent's process) is left alone.
for _blas in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_blas, "1")

COMMANDS = {
    "init": "memory:init",
    "note": "memory:note",
    "search": "memory:search",
    "get": "memory:get",
    "reindex": "memory:reindex",
    "config": "memory:config",
    "run": "dreaming:run_command",
    "log": "dreaming:log_command",
    "show": "dreaming:show_command",
    "diff": "dreaming:diff_command",
    "restore": "dreaming:restore_command",
    "export": "dreaming:export_command",
    "import": "dreaming:import_command",
    "review": "controls:review_command",
    "adopt": "controls:adopt_command",
    "discard": "controls:discard_command",
    "pin": "controls:pin_command",
    "unpin": "controls:unpin_command",
    "pins": "controls:pins_command",
    "held": "controls:held_command",
    "demo": "dreaming:demo_command",
    "forget": "forgetting:forget",
    "redact": "forgetting:redact",
    "serve": "service:serve",
    "door": "service:door_command",
    "tick": "service:tick",
    "consolidate": "service:consolidate",
    "status": "service:status",
    "retry": "service:retry",
    "hormones": "service:hormones_command",
    "report": "report:report",
    "feel": "service:feel",
    "migrate": "intake:migrate",
    "bootstrap": "intake:bootstrap",
    "ingest": "intake:ingest",
    "mcp": "integrations:mcp",
    "hook": "integrations:hook",
    "claude": "claude:claude",
    "codex": "codex:codex",
    "gemini": "gemini:gemini",
    "opencode": "opencode:opencode",
    "worker": "worker:worker",
    "ui": "ui:ui",
}


main = build(COMMANDS)


def run() -> None:
    """The ``dream`` command line."""
    main()
