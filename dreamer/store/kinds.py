"""The vocabularies: crystal semantic types, sources, speakers and lifecycle stages; stimulus
sources; search types."""

from __future__ import annotations

import functools
import re

SEMANTIC_TYPES = ("experience", "directive", "world_fact", "mental_model")
CRYSTAL_SOURCES = ("scratch", "auto", "seed", "sessions", "memory", "insight")
# Who said a crystal's words (DESIGN.md, "Who said what"): the user; the agent's own note; the
# assistant's answer in a captured session; a tool result, file or page; another agent (a
# subagent's run); an import of files; dreamer itself (automatic notes, insights). NULL on the
# crystals stored before speakers were recorded.
SPEAKERS = ("user", "agent", "assistant", "tool", "subagent", "import", "dreamer")
# The speakers whose words may set a standing rule or a fact about the user.
RULE_SPEAKERS = frozenset({"user", "agent"})
# Who said a crystal's words when its writer did not say: a note is the agent's, an automatic
# note or an insight dreamer's, a seeded MEMORY.md the user's own file, ingested files an import.
SOURCE_SPEAKERS = {
    "scratch": "agent",
    "auto": "dreamer",
    "seed": "user",
    "memory": "import",
    "insight": "dreamer",
}
# ``held``: instruction-shaped words from a speaker that may not set rules, kept (searchable,
# marked with their source) and never promoted until the user accepts or forgets them.
LIFECYCLES = ("generated", "consolidated", "archived", "frozen", "forgotten", "held")
# Who caused a hormone stimulus (or a decay snapshot).
STIMULUS_SOURCES = ("api", "cli", "note", "auto", "decay", "tool", "capture")
# What a search looks in: session transcripts, everything else, or both.
SEARCH_TYPES = ("conversations", "facts", "both")
MAX_SEARCH_LIMIT = 1000  # hits a search returns at most: nobody reads more; SQLite also caps
# how many ids one query binds
DEFAULT_IMPORTANCE = 0.7  # a note's importance when its writer gives none

# Compiled on a note's first guess: a search (or any command that guesses no type) loads this
# module for its vocabularies only. Each pattern comes with what every match of it holds, in
# lowercase: in ASCII text (where ignoring case is lowercasing) a pattern none of whose stems
# is in the lowercased text cannot match, and is neither compiled nor run.
_PATTERNS = (
    (
        "directive",
        r"\b(always|never|prefers?|don'?t|do not|please|must|should|wants?|likes?|dislikes?|"
        r"hates?|call me|remember to)\b",
        (
            "always", "never", "prefer", "don", "do not", "please", "must", "should", "want",
            "like", "hate", "call me", "remember to",
        ),
    ),
    (
        "mental_model",
        r"\b(because|means that|so that|pattern|tends to|usually|whenever)\b",
        ("because", "means that", "so that", "pattern", "tends to", "usually", "whenever"),
    ),
    (
        "world_fact",
        r"\b(is|are|was|lives?|works? (at|for|on)|born|located|costs?|runs? on)\b",
        ("is", "are", "was", "live", "work", "born", "located", "cost", "run"),
    ),
)  # fmt: skip
_NOW = r"\b(today|yesterday|just|now)\b"


@functools.cache
def _compiled(kind: str) -> re.Pattern[str]:
    return re.compile(next(p for k, p, _ in _PATTERNS if k == kind), re.IGNORECASE)


def infer_type(text: str) -> str:
    """A best guess at a note's semantic type when the writer gave none."""
    lowered = text.lower() if text.isascii() else None
    for kind, _, stems in _PATTERNS:
        if lowered is not None and not any(stem in lowered for stem in stems):
            continue  # no match is possible (see _PATTERNS)
        if _compiled(kind).search(text) and not (
            kind == "world_fact" and re.search(_NOW, text, re.I)
        ):
            return kind
    return "experience"
