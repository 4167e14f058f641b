"""Which modules a fresh ``dream`` process loads: run a command in a child and list sys.modules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = """
import json, runpy, sys
sys.argv = ["dream", *sys.argv[1:]]
try:
    runpy.run_module("dreamer.cli", run_name="__main__")
except SystemExit as e:
    code = e.code
print()  # after whatever the command printed without a newline
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def modules_loaded(*args: str, stdin: str = "") -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["code"] in (0, None), done.stderr
    return found["modules"]
