"""Every Crystal Pointer and Emerging Skill the offline synthesizer writes reads back as itself,
as written and as the dream's redaction leaves it: a topic ending in "password" once made
"password → search: `…`" read as a password and its value, the redacted line no longer
parsed, and the dream's own guard rejected it ("1 line(s) of Crystal Pointers do not parse")."""

from __future__ import annotations

import importlib.util
import json
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from dreamer.dream import insights
from dreamer.dream.cycle import run
from dreamer.dream.rules.context import Context
from dreamer.dream.rules.pointers import write_pointers
from dreamer.dream.rules.skills import write_skills
from dreamer.dream.synth import DreamInputs
from dreamer.dream.synth.offline import OfflineSynthesizer
from dreamer.memory.state import (
    Pointer,
    Skill,
    WorkingMemory,
    from_fields,
    parse,
    parse_pointers,
    parse_skills,
    render_pointers,
)
from dreamer.support.secrets import redact

LABELLED = [  # lines whose topic ends on a word the secret detector reads as a label
    "Rotated the staging database password.",
    "Changed the VPN passwd.",
    "Moved the deploy secret.",
    "Reset the Grafana admin pwd.",
]


def bullets(body: str) -> list[str]:
    return [line for line in body.split("\n") if line.strip().startswith(("-", "*"))]


def assert_readable(body: str, parse_lines) -> None:
    """Every bullet parses, as written and redacted, to one item each."""
    for text in (body, redact(body).text):
        assert len(parse_lines(text)) == len(bullets(text)), text


def test_a_pointer_whose_topic_ends_on_a_label_still_parses_after_redaction(ws, now):
    old = from_fields({"crystal_pointers": render_pointers([Pointer("Old topic", "old topic")])})
    found = insights.compute(ws.store, [], [], now, old)
    ctx = Context.of(DreamInputs(now, old, [], [], found, {}, "steady"), found)
    body = write_pointers(old, [], [f"- {line}" for line in LABELLED], [], ctx, 10_000)
    assert_readable(body, parse_pointers)
    topics = [p.topic for p in parse_pointers(body)]
    assert "Rotated the staging database" in topics  # cut before the label, not dropped
    assert len(topics) == len(LABELLED) + 1


def test_a_skill_whose_name_ends_on_a_label_still_parses_after_redaction(ws, now):
    old = WorkingMemory()
    skills = [Skill(line.rstrip("."), 80, 3) for line in LABELLED]
    found = insights.compute(ws.store, [], [], now, old)
    found.emerging_skills = [
        {"skill": s.skill, "confidence": s.confidence, "occurrences": s.occurrences} for s in skills
    ]
    body = write_skills(old, found, 10_000)
    assert_readable(body, parse_skills)
    assert len(parse_skills(body)) == len(skills)


def _corpus():
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "secrets" / "corpus.py"
    spec = importlib.util.spec_from_file_location("secrets_corpus", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["secrets_corpus"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_offline_dreams_over_secret_and_ordinary_notes_write_only_readable_lines(ws, now):
    corpus = _corpus()
    notes = [case.note for case in corpus.secrets()[:73]] + corpus.ordinary()[:80] + LABELLED
    notes = [notes[(n * 37) % len(notes)] for n in range(len(notes))]  # mixed, reproducibly
    start = now - timedelta(days=30)
    for n, text in enumerate(notes):
        ws.note(text, importance=0.5 + (n % 5) / 10, at=start + timedelta(hours=4 * n))
        if n % 40 == 39 or n == len(notes) - 1:
            run(
                ws,
                now=start + timedelta(hours=4 * n, minutes=5),
                force=True,
                synthesizer=OfflineSynthesizer(),
            )
            state = parse(ws.memory_md.read_text(encoding="utf-8"))
            assert_readable(state.body("crystal_pointers"), parse_pointers)
            assert_readable(state.body("emerging_skills"), parse_skills)
    entries = [ws.store.journal.get_dream(e["id"]) for e in ws.store.journal.dream_entries(50)]
    assert entries and all(e["outcome"] == "committed" for e in entries)
    critiques = json.dumps([e.get("critiques") for e in entries])
    assert "do not parse" not in critiques
