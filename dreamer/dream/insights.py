"""What a dream learns before it writes: topics, contradictions, gaps, skills, fading topics.

Computed from the store, the rotated notes, the new crystals and the old state, with no LLM.
The shape of ``Insights.to_dict()`` is a contract (the Claude prompt formats it)::

    {
      "topics": [            # new crystals grouped by shared keywords, biggest first
        {"label": "acme report", "keywords": ["acme", "report", "deadline"],
         "crystal_ids": [3, 7], "size": 2}
      ],
      "contradictions": [    # a newer statement superseding an older one about the same thing
        {"kind": "preference" | "deadline" | "replaces" | "value", "subject": ["editor", "theme"],
         "older": {"id": 4 | None, "text": "...", "at": "2026-03-10T09:00:00Z" | None,
                   "source": "crystal" | "note" | "state"},
         "newer": {... same shape ...}}
      ],
      "curiosity_gaps": [    # open questions in notes, searches that found no close match
        {"question": "...", "source": "note" | "search", "at": "2026-03-12T10:00:00Z"}
      ],
      "emerging_skills": [   # repeated task patterns (occurrences, boosted by recall),
        {"skill": "Deploying staging", "occurrences": 3, "confidence": 70,
         "crystal_ids": [2, 5, 9]},                     # and searches repeated 3+ times
        {"skill": "Recalling deploy checklist", "occurrences": 4, "confidence": 60,
         "crystal_ids": []}
      ],
      "fading_topics": [     # old Active Context lines with no recent support and no date,
                             # and lines whose date has passed (with "passed" and "outcome")
        {"topic": "Kitchen renovation quotes", "keywords": "kitchen renovation quotes",
         "line": "- Kitchen renovation quotes due", "last_seen": "2026-03-01T08:00:00Z" | None},
        {"topic": "...", "keywords": "...", "line": "- Inspector visits on March 17",
         "last_seen": "...", "passed": "2026-03-17",
         "outcome": "The inspector signed off the foundations." | None}
      ],
      "answered_questions": [  # open questions a later note answered (no longer gaps)
        {"question": "...", "answer": "...", "at": "2026-03-14T11:00:00Z"}
      ],
      "upcoming": [          # new notes and state lines with a date still ahead
        {"text": "...", "date": "2026-03-16", "at": "2026-03-08T10:30:00Z" | None}
      ],
      "people": [            # someone named once with a role, linked to later role mentions
        {"name": "Priya Raman", "role": "manager", "text": "...", "mentions": 2}
      ]
    }

Each item of curiosity_gaps, answered_questions, upcoming, people and fading_topics also
carries ``crystal_ids``, the crystals saying its words (a question and its answer; a fading
line's last note), and, when it has any, ``said_by``, the speaker of the first; a contradiction's
side with an id carries ``said_by`` (``dreamer.dream.rules.evidence``). A model is handed only
the kinds in ``dreamer.dream.inputs.SENT_KINDS``, and of those only items naming a crystal.

Insights are suggestions: the Claude prompt says so, and a synthesizer may reject any.

Every list is deterministic for the same inputs (ties broken by id or text).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from dreamer.dream.rules.ageing import Written, find_fading, find_upcoming, weigh_pointers
from dreamer.dream.rules.evidence import attach as evidence_of
from dreamer.dream.rules.gaps import find_gaps
from dreamer.dream.rules.insight_results import Insights
from dreamer.dream.rules.people import find_people
from dreamer.dream.rules.replaces import find_replaced, find_same_about
from dreamer.dream.rules.skills import find_skills, task_action, task_pattern
from dreamer.dream.rules.supersession import date_state_sides, find_contradictions
from dreamer.dream.rules.topics import find_topics
from dreamer.dream.rules.values import find_changed_values, find_changed_words
from dreamer.dream.rules.words import context_lines
from dreamer.memory.scratch import Note
from dreamer.memory.state import WorkingMemory
from dreamer.retrieval.embed import Embedder
from dreamer.store import Crystal, Store

__all__ = [
    "Insights",
    "compute",
    "context_lines",
    "task_action",
    "task_pattern",
]
from dreamer.support.times import iso, parse_iso


def _evidence(
    notes: list[Note], crystals: list[Crystal], old: WorkingMemory
) -> list[dict[str, Any]]:
    """Statements with a time, oldest state lines included, de-duplicated by text."""
    items: dict[str, dict[str, Any]] = {}
    for line in context_lines(old.body("bond")) + context_lines(old.body("active_context")):
        text = re.sub(r"^\s*([-*•]|\d+[.)])\s+", "", line).strip()
        if text:
            items.setdefault(
                text, {"id": None, "text": text, "at": old.last_dream or "", "source": "state"}
            )
    for crystal in crystals:
        items[crystal.text] = {
            "id": crystal.id,
            "text": crystal.text,
            "at": crystal.created_at,
            "source": "crystal",
        }
    for note in notes:
        items.setdefault(
            note.text, {"id": None, "text": note.text, "at": iso(note.at), "source": "note"}
        )
    return list(items.values())


def compute(
    store: Store,
    notes: list[Note],
    crystals: list[Crystal],
    now: datetime,
    old_state: WorkingMemory | None,
    embedder: Embedder | None = None,
    sentences: Embedder | None = None,
) -> Insights:
    """Work out the dream's insights from the new evidence, the store and the old state.

    With an embedder, meaning decides what words cannot: ``embedder`` compares words and short
    statements (one subject, a changed value), ``sentences`` (default: the same) whether a
    later note answers a question in other words.
    """
    old = old_state or WorkingMemory()
    if old.last_dream:
        try:
            parse_iso(old.last_dream)
        except ValueError:
            old = WorkingMemory(dict(old.bodies), None, old.mood, old.preamble, list(old.extra))
    gaps, answered = find_gaps(store, notes, crystals, now, old, sentences or embedder)
    evidence = _evidence(notes, crystals, old)
    # What a note says it replaces is exact; the guesses only add pairs for other statements.
    contradictions = find_replaced(store, crystals, notes, evidence)
    contradictions += find_same_about(store, crystals)
    named = {pair["older"]["text"] for pair in contradictions}
    contradictions += [
        pair for pair in find_contradictions(evidence) if pair["older"]["text"] not in named
    ]
    named |= {pair["older"]["text"] for pair in contradictions}
    contradictions += [
        pair
        for pair in find_changed_values(evidence, embedder)
        if pair["older"]["text"] not in named
    ]
    named |= {pair["older"]["text"] for pair in contradictions}
    contradictions += [
        pair
        for pair in find_changed_words(evidence, embedder)
        if pair["older"]["text"] not in named
    ]
    for pair in contradictions:
        date_state_sides(store, pair, old)
    written = Written(store, old, now)  # asked by both rules below, looked up once a line
    fading = find_fading(store, old, notes, crystals, now, written)
    found = Insights(
        topics=find_topics(crystals),
        contradictions=contradictions,
        curiosity_gaps=gaps,
        emerging_skills=find_skills(store, now),
        fading_topics=fading,
        answered_questions=answered,
        upcoming=find_upcoming(store, notes, crystals, old, now, written),
        people=find_people(notes, crystals, old),
        weights=weigh_pointers(store, old, fading, now),
    )
    evidence_of(store, crystals, found)
    return found
