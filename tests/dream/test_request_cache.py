"""Issue 23, item 5: cache marks only where they pay, measured from the journal.

The fake Messages API bills each request as the real one does: the prefix up to a
``cache_control`` mark is written to a cache (1.25x input) unless the same prefix is cached,
then it is read (0.1x); the rest is plain input. Dreams run through the real SDK and the cycle,
and the journal's token and cost fields are what is compared.
"""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

import pytest
from fake_anthropic import FakeAnthropic, Recorded, Scripted, message_body

from dreamer.dream.cycle import run
from dreamer.dream.synth.claude import BREAK_EVEN, PRICES, TOOL_NAME, ClaudeSynthesizer
from dreamer.support import tokens

GOOD = {
    "phenotype": "- Careful, concise collaborator.",
    "bond": "- Maya: product lead at Acme, works from Lisbon.",
    "niche": "",
    "active_context": "- Acme report draft due Friday.",
    "crystal_pointers": [],
    "curiosity_gaps": "",
    "emerging_skills": [],
}


class Billing:
    """Answers with usage figures the way the API counts them, with a cache of prefixes."""

    def __init__(self) -> None:
        self.cached: set[str] = set()

    def usage(self, request: Recorded) -> dict[str, int]:
        body = request.json
        parts = [body["tools"], body["system"], *body["messages"]]
        sizes = [tokens.count(json.dumps(part)) for part in parts]
        marked = [i for i, part in enumerate(parts) if "cache_control" in json.dumps(part)]
        if not marked:
            return {"input_tokens": sum(sizes)}
        end = marked[-1] + 1
        key = hashlib.sha256(json.dumps(parts[:end]).encode()).hexdigest()
        prefix, rest = sum(sizes[:end]), sum(sizes[end:])
        if key in self.cached:
            return {"input_tokens": rest, "cache_read_input_tokens": prefix}
        self.cached.add(key)
        return {"input_tokens": rest, "cache_creation_input_tokens": prefix}

    def answer(self, tool_input: dict) -> object:
        def respond(request: Recorded) -> Scripted:
            content = [
                {"type": "tool_use", "id": "toolu_b", "name": TOOL_NAME, "input": tool_input}
            ]
            return Scripted(
                200, message_body(content, stop_reason="tool_use", usage=self.usage(request))
            )

        return respond


def dreams(ws, now, count: int, revise: bool) -> list[dict]:
    """``count`` dreams two hours apart (each a revision first when ``revise``); their rows."""
    fake, billing = FakeAnthropic(), Billing()
    synth = ClaudeSynthesizer(ws.settings, client=fake.client())
    rows = []
    for day in range(count):
        at = now + timedelta(hours=2 * day)
        for i in range(6):
            ws.note(
                f"Dream {day}: step {i} of the Acme report, section {i}",
                at=at - timedelta(minutes=30 - i),
            )
        if revise:  # a collapsed first draft: the guards send it back once
            fake.push(billing.answer({key: "" for key in ("bond", "phenotype", "active_context")}))
        fake.push(billing.answer({**GOOD, "active_context": f"- Acme report: dream {day}."}))
        result = run(ws, now=at, synthesizer=synth)
        assert result.committed and result.revisions == (1 if revise else 0)
        rows.append(ws.store.journal.get_dream(result.dream_id))
    return rows


@pytest.mark.slow
def test_ten_dreams_without_a_revision_write_no_cache(ws, now):
    rows = dreams(ws, now, 10, revise=False)
    assert sum(row["cache_write_tokens"] or 0 for row in rows) == 0
    per_input = PRICES["sonnet"][0] / 1e6
    for row in rows:
        plain = row["input_tokens"] * per_input + row["output_tokens"] * PRICES["sonnet"][1] / 1e6
        assert row["cost_usd"] == pytest.approx(plain)


def test_dreams_that_revise_mark_their_data_once_the_journal_shows_it_pays(ws, now):
    rows = dreams(ws, now, 4, revise=True)
    # The first dream has no history: no mark. From then on one revision a dream (>= 0.28).
    assert BREAK_EVEN == pytest.approx(0.25 / 0.9)
    assert not rows[0]["cache_write_tokens"] and not rows[0]["cache_read_tokens"]
    for row in rows[1:]:
        assert (
            row["cache_write_tokens"] > 0 and row["cache_read_tokens"] == row["cache_write_tokens"]
        )
        # Cheaper than the same tokens unmarked: the read saves more than the write costs.
        per_input = PRICES["sonnet"][0] / 1e6
        unmarked = (
            row["input_tokens"] + row["cache_write_tokens"] + row["cache_read_tokens"]
        ) * per_input + row["output_tokens"] * PRICES["sonnet"][1] / 1e6
        assert row["cost_usd"] < unmarked
