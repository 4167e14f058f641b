"""The vocabularies: crystal semantic types, sources and lifecycle stages; stimulus sources;
search types."""

from __future__ import annotations

import re

SEMANTIC_TYPES = ("experience", "directive", "world_fact", "mental_model")
CRYSTAL_SOURCES = ("scratch", "auto", "seed", "sessions", "memory", "insight")
LIFECYCLES = ("generated", "consolidated", "archived", "frozen", "forgotten")
# Who caused a hormone stimulus (or a decay snapshot).
STIMULUS_SOURCES = ("api", "cli", "note", "auto", "decay", "tool")
# What a search looks in: session transcripts, everything else, or both.
SEARCH_TYPES = ("conversations", "facts", "both")
MAX_SEARCH_LIMIT = 1000  # hits a search returns at most: nobody reads more; SQLite also caps
# how many ids one query binds

_DIRECTIVE = re.compile(
    r"\b(always|never|prefers?|don'?t|do not|please|must|should|wants?|likes?|dislikes?|"
    r"hates?|call me|remember to)\b",
    re.IGNORECASE,
)
_MODEL = re.compile(r"\b(because|means that|so that|pattern|tends to|usually|whenever)\b", re.I)
_FACT = re.compile(r"\b(is|are|was|lives?|works? (at|for|on)|born|located|costs?|runs? on)\b", re.I)


def infer_type(text: str) -> str:
    """A best guess at a note's semantic type when the writer gave none."""
    if _DIRECTIVE.search(text):
        return "directive"
    if _MODEL.search(text):
        return "mental_model"
    if _FACT.search(text) and not re.search(r"\b(today|yesterday|just|now)\b", text, re.I):
        return "world_fact"
    return "experience"
