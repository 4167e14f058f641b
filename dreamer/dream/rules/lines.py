"""State lines: normalising, clipping, bulleting and fitting lines into a token budget."""

from __future__ import annotations

import re
from collections.abc import Callable

from dreamer.support import tokens
from dreamer.support.secrets import redact

LINE_WORDS = 40


LABEL_PREFIX = re.compile(r"^(?:Friction|Breakthrough|Deadline|Goal|Task|Note):\s*")


def norm(text: str) -> str:
    return " ".join(text.split()).lower()


def clip(text: str, words: int = LINE_WORDS) -> str:
    flat = " ".join(text.split())
    parts = flat.split(" ")
    return flat if len(parts) <= words else " ".join(parts[:words]) + " …"


def fit(lines: list[str], budget: int) -> str:
    """As many whole lines as fit in budget tokens, in order, without duplicates."""
    kept: list[str] = []
    seen: set[str] = set()
    for line in lines:
        key = norm(LABEL_PREFIX.sub("", line.lstrip("-*• ").strip()))
        if not key or key in seen:
            continue
        if tokens.count("\n".join([*kept, line])) > budget:
            continue
        kept.append(line)
        seen.add(key)
    return "\n".join(kept)


def bullet(text: str) -> str:
    return "- " + clip(text)


def same(line: str, texts: set[str]) -> bool:
    body = norm(re.sub(r"^\s*([-*•]|\d+[.)])\s+", "", line))
    body = LABEL_PREFIX.sub("", body)
    return body in texts or norm(clip(body)) in {norm(clip(t)) for t in texts}


def readable_head(
    head: str, render: Callable[[str], str], read: Callable[[str], str | None]
) -> str | None:
    """``head`` (a pointer's topic, a skill's name) on one line, cut back word by word from its
    end until the line ``render`` makes of it reads back (``read``: its head, or None) as that
    head, also after redaction: a head ending in "password" makes "password → search: …" read
    as a password and its value, and the dream's redaction would eat the line's structure.
    None when no word of it is left (the line is not written)."""
    words = head.replace("`", "'").split()
    while words:
        kept = " ".join(words)
        line = render(kept)
        if read(line) == kept and read(redact(line).text) == redact(kept).text:
            return kept
        words.pop()
    return None
