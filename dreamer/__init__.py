"""dreamer: a memory-consolidation engine (dream worker) for long-lived LLM agents.

The public API is what this module exports; everything else is internal and may move.

    from dreamer import Workspace, run_dream, bootstrap_block, tools

Names load on first use, so ``import dreamer`` stays cheap for a one-shot command.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from dreamer.support.version import __version__

# name -> (module, attribute or None for the module itself)
_EXPORTS: dict[str, tuple[str, str | None]] = {
    "Workspace": ("dreamer.memory.workspace", "Workspace"),
    "Settings": ("dreamer.config", "Settings"),
    "Crystal": ("dreamer.store.base", "Crystal"),
    "Hit": ("dreamer.retrieval.search", "Hit"),
    "DreamError": ("dreamer.errors", "DreamError"),
    "DreamRejected": ("dreamer.errors", "DreamRejected"),
    "LockHeld": ("dreamer.errors", "LockHeld"),
    "SynthesisError": ("dreamer.errors", "SynthesisError"),
    "DreamResult": ("dreamer.dream.cycle", "DreamResult"),
    "run_dream": ("dreamer.dream.cycle", "run"),
    "tick": ("dreamer.service.consolidation", "tick"),
    "bootstrap": ("dreamer.agents.bootstrap", "bootstrap"),
    "bootstrap_block": ("dreamer.agents.bootstrap", "bootstrap_block"),
    "tools": ("dreamer.agents.tools", None),
}

__all__ = [
    "__version__",
    "Crystal",
    "DreamError",
    "DreamRejected",
    "DreamResult",
    "Hit",
    "LockHeld",
    "Settings",
    "SynthesisError",
    "Workspace",
    "bootstrap",
    "bootstrap_block",
    "run_dream",
    "tick",
    "tools",
]

if TYPE_CHECKING:
    from dreamer.agents import tools
    from dreamer.agents.bootstrap import bootstrap, bootstrap_block
    from dreamer.config import Settings
    from dreamer.dream.cycle import DreamResult
    from dreamer.dream.cycle import run as run_dream
    from dreamer.errors import DreamError, DreamRejected, LockHeld, SynthesisError
    from dreamer.memory.workspace import Workspace
    from dreamer.retrieval.search import Hit
    from dreamer.service.consolidation import tick
    from dreamer.store.base import Crystal


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'dreamer' has no attribute {name!r}") from None
    value = importlib.import_module(module)
    if attribute is not None:
        value = getattr(value, attribute)
    globals()[name] = value
    return value
