"""A workspace with a week of history whose numbers the report tests know in advance.

Built through the real paths (notes, stimuli, consolidation ticks, dreams, a forget) except
where no command exists yet: freezing and archiving a crystal and a redaction's audit row are
written through the Store, as those features would write them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dreamer import Workspace
from dreamer.dream.cycle import run as run_dream
from dreamer.dream.synth import Draft, DreamInputs, Usage
from dreamer.dream.synth.offline import OfflineSynthesizer
from dreamer.errors import DreamRejected
from dreamer.memory import hormones
from dreamer.memory.state import WorkingMemory
from dreamer.service import consolidation

NOW = datetime(2026, 3, 12, 14, 30, tzinfo=UTC)
START = NOW - timedelta(days=6)
BILLED = Usage(input_tokens=1200, output_tokens=300, cost_usd=0.0123)
WASTED = Usage(input_tokens=400, output_tokens=50, cost_usd=0.002)
HOSTILE = '<img src=x onerror="alert(1)">'


class PricedSynthesizer:
    """The offline synthesizer, billed like Claude: its drafts carry a known usage.

    The first ``empty`` drafts are empty, which the guards reject, so the dream revises.
    """

    name = "claude"
    model = "claude-fake"

    def __init__(self, usage: Usage, *, empty: int = 0, empty_usage: Usage | None = None):
        self.usage, self.empty, self.empty_usage = usage, empty, empty_usage or Usage()
        self.calls = 0

    def synthesize(
        self,
        inputs: DreamInputs,
        *,
        critique: list[str] | None = None,
        previous: Draft | None = None,
    ) -> Draft:
        self.calls += 1
        if self.calls <= self.empty:
            return Draft(WorkingMemory(), raw="", usage=Usage(**asdict(self.empty_usage)))
        draft = OfflineSynthesizer().synthesize(inputs)
        draft.usage = Usage(**asdict(self.usage))
        return draft


@dataclass
class Facts:
    """What the fixture put in, for the tests to look for in the page."""

    root: Path
    notes_per_day: dict[str, int] = field(default_factory=dict)
    billed_dream: int = 0
    rejected_dream: int = 0
    skipped_dream: int = 0
    free_dreams: list[int] = field(default_factory=list)
    frozen_day: str = ""
    archived_day: str = ""


def _notes(ws: Workspace, facts: Facts, day: datetime, texts: list[str]) -> None:
    for number, text in enumerate(texts):
        at = day + timedelta(minutes=10 * number)
        ws.note(text, importance=0.7, at=at)
        key = at.date().isoformat()
        facts.notes_per_day[key] = facts.notes_per_day.get(key, 0) + 1


def build(root: Path) -> Facts:
    """Create the fixture workspace at ``root`` (which must not exist)."""
    facts = Facts(root)
    with Workspace.open(root, environ={}) as ws:  # never the developer's key or settings
        ws.init()
        day0 = START + timedelta(hours=2)
        _notes(
            ws,
            facts,
            day0,
            [
                "User's name is Ines; she runs the billing team at Corvid Labs.",
                "We shipped the invoice service release, it finally works.",
                "Booked flights for the Lisbon trip in May: arriving on the 14th.",
                "Ines prefers short answers with the code first.",
                "The quarterly report deadline is next Friday.",
                "Set up the staging database for the invoice service.",
            ],
        )
        facts.free_dreams.append(
            run_dream(
                ws, now=day0 + timedelta(hours=2), force=True, synthesizer=OfflineSynthesizer()
            ).dream_id
        )
        for hour in range(0, 6 * 24, 12):  # consolidation every 12 hours
            consolidation.tick(ws, START + timedelta(hours=hour + 1))
        hormones.feel(
            ws, "cortisol", 0.5, "production outage " + HOSTILE, START + timedelta(days=1, hours=3),
            source="cli",
        )  # fmt: skip
        day2 = START + timedelta(days=2, hours=9)
        _notes(
            ws,
            facts,
            day2,
            [
                "Invoice totals were off by one cent after the currency change.",
                "Fixed the rounding in the invoice totals: banker's rounding now.",
                "Ines wants a weekly summary of billing incidents on Mondays.",
                "The Lisbon hotel is near the Alfama district.",
                "Corvid Labs moves the billing stand-up to 10:00.",
            ],
        )
        billed = PricedSynthesizer(BILLED, empty=1)
        facts.billed_dream = run_dream(
            ws, now=day2 + timedelta(hours=3), synthesizer=billed
        ).dream_id
        day3 = START + timedelta(days=3, hours=9)
        _notes(
            ws,
            facts,
            day3,
            [
                "The staging database ran out of disk space overnight.",
                "Moved the staging database to a bigger volume.",
                "Ines asked for the invoice export as CSV too.",
                "Started the CSV export for invoices.",
                "The CSV export needs the customer's VAT number.",
            ],
        )
        try:
            run_dream(
                ws,
                now=day3 + timedelta(hours=3),
                synthesizer=PricedSynthesizer(BILLED, empty=99, empty_usage=WASTED),
            )
        except DreamRejected as e:
            facts.rejected_dream = e.dream_id
        facts.free_dreams.append(
            run_dream(ws, now=day3 + timedelta(hours=5), synthesizer=OfflineSynthesizer()).dream_id
        )
        day4 = START + timedelta(days=4, hours=9)
        _notes(ws, facts, day4, ["Ines is out on Thursday."])
        facts.skipped_dream = run_dream(ws, now=day4 + timedelta(hours=1)).dream_id

        day5 = START + timedelta(days=5, hours=8)
        lisbon = ws.search("Lisbon flights", limit=1, now=day5)[0].id
        staging = ws.search("staging database disk space", limit=1, now=day5)[0].id
        ws.store.crystals.update_crystal(lisbon, {"lifecycle": "frozen"}, action="frozen", at=day5)
        ws.store.crystals.update_crystal(
            staging, {"lifecycle": "archived"}, action="archived", at=day5
        )
        ws.store.records.audit(staging, "redacted", {"kinds": ["aws-access-key"]}, day5)
        facts.frozen_day = facts.archived_day = day5.date().isoformat()
        cents = ws.search("off by one cent", limit=1, now=day5)[0].id
        ws.forget([cents], reason="asked to", now=day5 + timedelta(hours=1))

        # A hand edit between dreams: pointers (one stale), and text a page must escape.
        text = ws.memory_md.read_text(encoding="utf-8")
        text = text.replace(
            "## Crystal Pointers\n",
            "## Crystal Pointers\n"
            "- Past: Lisbon trip → search: `lisbon flights`\n"
            "- Past: zebra migration → search: `zebra marmalade quasar`\n",
        )
        text += "\n## Notes by hand\n<script>alert('x')</script> and **bold** with `code`\n"
        ws.memory_md.write_text(text, encoding="utf-8")
    return facts
