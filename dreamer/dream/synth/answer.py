"""How much of a model's answer a dream reads, and how much of it the journal keeps.

A state is a few thousand tokens; its answer (the CLI's JSON envelope, an API response) a few
tens of kilobytes. A backend reads at most ``MAX_BYTES`` of it and fails the dream, in one
line, on an answer that says more: a runaway CLI or a broken proxy would otherwise be read
whole, redacted (about a second a megabyte) under the workspace lock, and kept in the journal,
which every later ``dream log``, ``show`` and export carries. What is kept of a raw answer is
its head, at most ``KEPT_CHARS`` characters, with a marker saying how much more there was.
"""

from __future__ import annotations

from collections.abc import Iterable

MAX_BYTES = 1_000_000  # of one answer: over 30 times the largest state a dream may write
KEPT_CHARS = 64_000  # of a raw answer, in the journal: every answer that fits a state is whole


class Capped:
    """Bytes read from a stream up to ``limit``: ``over`` when the stream had more."""

    def __init__(self, limit: int = MAX_BYTES) -> None:
        self.limit = limit
        self.data = bytearray()
        self.over = False

    def add(self, chunk: bytes) -> bool:
        """Keep ``chunk``; False (and nothing more is kept) once past the limit."""
        room = self.limit - len(self.data)
        if len(chunk) > room:
            self.data += chunk[: max(room, 0)]
            self.over = True
            return False
        self.data += chunk
        return True

    def read(self, chunks: Iterable[bytes]) -> Capped:
        """Read ``chunks`` until they end or pass the limit (the rest is never read)."""
        for chunk in chunks:
            if not self.add(chunk):
                break
        return self

    def text(self) -> str:
        """What was read, as text (a character cut at the limit is replaced)."""
        return self.data.decode("utf-8", "replace")


def excerpt(raw: str, limit: int = KEPT_CHARS) -> str:
    """``raw`` as the journal keeps it: whole up to ``limit`` characters, else its head."""
    if len(raw) <= limit:
        return raw
    return f"{raw[:limit]}\n[… {len(raw) - limit:,} more characters of the answer not kept]"


def too_large(who: str, limit: int = MAX_BYTES) -> str:
    """The one line a dream fails with when ``who`` answered more than ``limit`` bytes."""
    return (
        f"{who} answered more than {limit / 1_000_000:g} MB (a state is a few kilobytes), so "
        "the dream stopped reading it; the journal keeps its head: check what it prints, then "
        "run 'dream run' again"
    )
