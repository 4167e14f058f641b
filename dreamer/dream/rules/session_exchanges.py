"""Session captures: an exchange ingested from a transcript ("User: …", "Assistant: …", tool
markers) enters the state only as what it established: the outcome the reply states, never the
dialogue. An exchange that established nothing (a greeting, a question back) stays a searchable
crystal and enters no section."""

from __future__ import annotations

import re

from dreamer.dream.rules.gaps import questions
from dreamer.dream.rules.words import is_capture

_ASKER = r"(?:User|Task for subagent [\w-]+)"
_ANSWERER = r"(?:Assistant|Subagent [\w-]+)"
_REPLY = re.compile(rf"(?m)^{_ANSWERER}:\s*")
_ROLE = re.compile(rf"(?m)^(?:{_ASKER}|{_ANSWERER}):\s*")
_TOOL = re.compile(r"\[tool:[^\]\n]*\]")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
MIN_WORDS = 5  # a shorter reply sentence ("Looking at it.") establishes nothing
MAX_WORDS = 40


def established(text: str) -> str | None:
    """What an exchange established (its reply's last statement), the text itself when it is no
    capture, or None when the exchange established nothing."""
    if not is_capture(text):
        return text
    parts = _REPLY.split(text, maxsplit=1)
    reply = _TOOL.sub(" ", _ROLE.sub("", parts[1])) if len(parts) > 1 else ""
    statements = [
        " ".join(sentence.split())
        for sentence in _SENTENCE.findall(reply)
        if len(sentence.split()) >= MIN_WORDS and not questions(sentence)
    ]
    if not statements:
        return None
    words = statements[-1].split()
    return " ".join(words[:MAX_WORDS])
