"""dreamer: a memory-consolidation engine (dream worker) for long-lived LLM agents."""

from .config import Settings
from .errors import DreamError
from .search import Hit
from .store import Crystal
from .workspace import Workspace

__all__ = ["Crystal", "DreamError", "Hit", "Settings", "Workspace"]
__version__ = "0.1.0"
