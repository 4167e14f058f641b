"""The README is the contract with users: its quickstart and settings table must match the code."""

from __future__ import annotations

import re
from pathlib import Path

from dreamer import config

README = Path(__file__).resolve().parents[2] / "README.md"


def _text() -> str:
    return README.read_text(encoding="utf-8")


def test_quickstart_has_exactly_two_commands_that_ci_runs():
    block = re.search(r"<!-- quickstart -->(.*?)<!-- /quickstart -->", _text(), re.S)
    assert block, "README lost its quickstart markers (.ci/run reads between them)"
    commands = [line for line in block.group(1).splitlines() if line.startswith("pip install ")]
    assert len(commands) == 2
    assert "dream demo" in commands[0]
    assert "pytest" in commands[1]


def test_settings_table_lists_every_setting():
    text = _text()
    for spec in config._SPECS:
        key = re.sub(r"\.(dopamine|cortisol|oxytocin)\.", ".<name>.", spec.key)
        env = re.sub(r"_(DOPAMINE|CORTISOL|OXYTOCIN)_", "_<NAME>_", spec.env)
        assert f"`{key}`" in text, f"README settings table misses {key}"
        assert f"`{env}`" in text, f"README settings table misses {env}"
