"""Text a store can hold: a Python string may carry a lone surrogate (a JSON ``\\ud800`` escape,
bytes decoded with ``surrogateescape``) that no UTF-8 file or database accepts, so it is
refused where it comes in, before it can wait in a log that every later write then fails on."""

from __future__ import annotations

from dreamer.errors import UsageError


def unencodable(text: str) -> int | None:
    """Where the first character UTF-8 cannot encode is (a lone surrogate), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        return e.start
    return None


def require_utf8(text: str, what: str, error: type[UsageError] = UsageError) -> None:
    """Raise ``error`` naming ``what`` when ``text`` holds a character UTF-8 cannot encode."""
    at = unencodable(text)
    if at is None:
        return
    point = ord(text[at])
    if 0xDC80 <= point <= 0xDCFF:  # a byte the command line or a file could not decode
        held = f"the byte 0x{point - 0xDC00:02X} (at character {at}), which is not UTF-8"
    else:
        held = (
            f"a lone surrogate (U+{point:04X} at character {at}), which UTF-8 cannot hold "
            "(surrogates are halves of a UTF-16 pair)"
        )
    raise error(f"the {what} holds {held}; pass valid UTF-8")
