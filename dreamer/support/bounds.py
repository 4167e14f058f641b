"""How much of one text the engine reads when it only needs the text's gist.

A note may be at most ``memory.note.maxChars`` long, but a crystal of megabytes can still be in
a store (written before notes had a limit, or straight into the store). Embedding it, or running
a dream's analyses over it, costs time and memory in proportion to its length, and a search or
a dream that never finishes retries it for ever. So those steps read a text's head: at most
``READ_MAX_CHARS`` characters, the default limit of a note, so any note a user can write today
is read whole. The text itself is kept whole in the store, found by all its words through the
full-text index, and returned whole by ``memory_get``.
"""

from __future__ import annotations

READ_MAX_CHARS = 32_000


def head(text: str, limit: int = READ_MAX_CHARS) -> str:
    """The first ``limit`` characters of text (text itself when it is not longer)."""
    return text if len(text) <= limit else text[:limit]
