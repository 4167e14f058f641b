"""The ``dream`` command. Thin: parse, call the core, turn DreamError into a one-line message.

Each area of commands lives in its own module; ``COMMANDS`` says where each command is, and a
command's module is imported only when that command runs (or ``--help`` lists them all), so
``dream note`` does not pay for the scheduler, the benchmarks or the MCP SDK.

``run`` is what the ``dream`` script and ``python -m dreamer.cli`` call: the commands an agent
starts most (``note``, ``search``, ``hook``) with plain arguments run through
``dreamer.cli.fast`` without importing click (a fifth of a cold ``dream note``); anything
else, ``--help`` and every mistake included, goes to the click group ``main``
(``dreamer.cli.group``), which is loaded on first use.
"""

from __future__ import annotations

import gc
import os
import sys

TYPE_CHECKING = False  # as typing's, without importing typing (~2 ms of a fresh note)
if TYPE_CHECKING:
    from typing import Any

# numpy's OpenBLAS starts a thread per core at import (nothing above imports numpy): ~90 ms
# of a fresh `dream note` on a 2-core machine, for vector sums that take microseconds on one
# thread. A user's own setting wins; the Python API (an agent's process) is left alone.
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
    "demo": "dreaming:demo_command",
    "forget": "forgetting:forget",
    "redact": "forgetting:redact",
    "serve": "service:serve",
    "door": "service:door_command",
    "tick": "service:tick",
    "consolidate": "service:consolidate",
    "status": "service:status",
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
    "worker": "worker:worker",
}


def run() -> None:
    """The ``dream`` command line: the fast path when it applies, else click."""
    if sys.argv[1:2] in (["note"], ["search"], ["hook"]):  # the others need not load it
        # A note or a search is one short command: no collection for reference cycles while
        # it loads its modules and runs (~16 collections, ~2-3 ms of a fresh note). A hook may
        # ingest a long transcript, so it keeps the collector; so does anything click runs.
        if sys.argv[1] != "hook":
            gc.disable()
        from dreamer.cli import fast

        code = fast.run(sys.argv[1:])
        if code is not None:
            # The process ends here: its shutdown need not search all it loaded for reference
            # cycles (full collections of some 10,000 objects: ~5 ms of a fresh note). What
            # must be closed was closed by the command; atexit handlers still run.
            gc.freeze()
            sys.exit(code)
        gc.enable()
    __getattr__("main")()


def __getattr__(name: str) -> Any:
    # ``from dreamer.cli import main`` gives the click group, built on first use.
    if name == "main":
        from dreamer.cli.group import build

        main = globals()["main"] = build(COMMANDS)
        return main
    raise AttributeError(f"module 'dreamer.cli' has no attribute {name!r}")
