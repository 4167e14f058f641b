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


def shown(text: str, whole: str, limit: int = READ_MAX_CHARS) -> str:
    """Text as a list of results shows it: its head, and past ``limit`` a marker saying how
    much more there is and where to read it whole (``whole``, e.g. "memory_get(12)")."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} … [{len(text) - limit:,} more characters; {whole} has it whole]"
