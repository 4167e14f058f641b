"""The small interface hormones and lifecycle take instead of the whole Workspace.

A Workspace satisfies it; so does anything else with these four parts (a test double, a
fleet worker's view of one workspace). Taking it keeps ``hormones`` and ``lifecycle`` below
``workspace`` with no import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: taking Parts loads none of them (dream note)
    from pathlib import Path

    from dreamer.config import Settings
    from dreamer.retrieval.embed import Embedder
    from dreamer.store import Store


class Parts(Protocol):
    """Settings, store, memory folder and embedder of one workspace."""

    @property
    def settings(self) -> Settings:
        """The workspace's settings."""
        ...

    @property
    def store(self) -> Store:
        """The open store."""
        ...

    @property
    def memory_dir(self) -> Path:
        """``<root>/memory``."""
        ...

    @property
    def embedder(self) -> Embedder:
        """The embedder that made the stored vectors."""
        ...
