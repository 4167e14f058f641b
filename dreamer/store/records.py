"""Column lists both backends share: the journal's JSON fields and summaries, the hormone
history, the texts a forget rewrites, the report's lifecycle events."""

from __future__ import annotations

import json
from typing import Any

# Journal fields stored as JSON text.
JSON_FIELDS = ("inputs", "critiques", "revisions", "consumed")
# Every column of the journal's ``dreams`` table, in its order.
DREAM_COLUMNS = (
    "id",
    "started_at",
    "finished_at",
    "outcome",
    "reason",
    "synthesizer",
    "model",
    "inputs",
    "old_state",
    "new_state",
    "draft",
    "critiques",
    "revisions",
    "consumed",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "error",
    "raw",
    "cache_read_tokens",
    "cache_write_tokens",
)
# A dream as ``dream_entries`` sums it up: who, when, how it ended, and what it cost.
SUMMARY_FIELDS = (
    *DREAM_COLUMNS[:7],
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cost_usd",
)
# Text columns that may quote a memory, by table (rewrite_texts).
REWRITTEN = {
    "dreams": (
        "reason",
        "inputs",
        "old_state",
        "new_state",
        "draft",
        "critiques",
        "revisions",
        "error",
        "raw",
    ),
    "searches": ("query",),
    "gaps": ("query",),
    "hormones": ("reason",),
}
HISTORY_FIELDS = ("at", "hormone", "delta", "reason", "source", "dopamine", "cortisol", "oxytocin")

# Lifecycle stages a day's audit rows can move crystals into, as the report counts them.
LIFECYCLE_EVENTS = ("created", "consolidated", "archived", "frozen")
# A dream row as the report reads it: the summary's fields, then what it consumed and how it
# went.
DREAM_ROW_FIELDS = (
    *SUMMARY_FIELDS,
    "consumed",
    "critiques",
    "revisions",
    "has_text",
)


def decode(row: dict[str, Any]) -> dict[str, Any]:
    """A journal row with its JSON fields decoded."""
    for key in JSON_FIELDS:
        if row.get(key):
            row[key] = json.loads(row[key])
    return row
