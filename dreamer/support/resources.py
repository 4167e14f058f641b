"""Files that ship with dreamer: ``schemas/`` and ``prompts/``.

In a wheel they sit inside the package (``dreamer/schemas``); in a source checkout they sit at
the top of the repository. Either way they are found here, and only here.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

_PACKAGE = Path(__file__).resolve().parent.parent  # dreamer/


def resource_dir(name: str) -> Path:
    """The folder of a shipped resource set (``schemas`` or ``prompts``)."""
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"dreamer's {name}/ folder is missing; reinstall dreamer")


@functools.cache
def schema(name: str) -> dict[str, Any]:
    """A JSON schema from ``schemas/``, e.g. ``schema("working_memory")``."""
    path = resource_dir("schemas") / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def plugin_dir() -> Path:
    """The Claude Code plugin folder dreamer ships (``plugin/dreamer`` in the repository)."""
    for candidate in (_PACKAGE / "plugin", _PACKAGE.parent / "plugin" / "dreamer"):
        if (candidate / ".claude-plugin" / "plugin.json").is_file():
            return candidate
    raise FileNotFoundError("dreamer's Claude Code plugin folder is missing; reinstall dreamer")
