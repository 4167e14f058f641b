"""Issue 22, item 4: no hand edit of MEMORY.md can stop the dreams, and none is lost to one.

A person may write anything into MEMORY.md between dreams: a line in the wrong shape, too much,
odd markdown, headings missing, doubled or unknown. The next dream commits (offline, and with a
model through the fake Messages API) and every hand-written line stays findable: in MEMORY.md,
or as a crystal that ``dream search`` finds with the line's words.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from fake_anthropic import FakeAnthropic

from dreamer import Workspace
from dreamer.cli import main
from dreamer.dream.cycle import run
from dreamer.dream.synth.claude import TOOL_NAME, ClaudeSynthesizer
from dreamer.memory import state as wm

pytestmark = pytest.mark.slow

NOTES = [
    "Ada runs a small bookkeeping consultancy in Ghent and prefers short answers",
    "Quarterly VAT return for Brouwerij Vos is due on 2026-03-20",
    "Reconciled the Brouwerij Vos bank statements for February",
    "Open question: does Brouwerij Vos still use the old chart of accounts?",
    "Reconciled the Atelier Noor bank statements for February",
    "Sent the Atelier Noor invoice reminder by email",
]
INVOICES = "- remember to check the old invoices folder"


def dreamt(root, now) -> Workspace:
    """A workspace with one committed offline dream."""
    ws = Workspace.open(root)
    for i, text in enumerate(NOTES):
        ws.note(text, importance=0.7, at=now - timedelta(hours=30 - i))
    assert run(ws, now=now).committed
    return ws


def findable(ws: Workspace, line: str, now) -> bool:
    """The line is in MEMORY.md, or a search with its words finds a crystal holding it."""
    text = re.sub(r"^\s*([-*•]|\d+[.)])\s+", "", line).strip()
    if not text:
        return True
    if text in ws.memory_md.read_text(encoding="utf-8"):
        return True
    query = " ".join(re.findall(r"\w+", text)[:12])
    return any(text in hit.text for hit in ws.search(query, now=now, limit=10))


def test_a_hand_written_pointer_line_no_longer_stops_the_dreams(tmp_path, runner, now):
    root = tmp_path / "ws"
    dreamt(root, now).close()
    memory = root / "MEMORY.md"
    memory.write_text(
        memory.read_text().replace("## Curiosity Gaps", f"{INVOICES}\n\n## Curiosity Gaps")
    )
    result = runner.invoke(main, ["run", "--force", "-w", str(root)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "committed" in result.output
    found = runner.invoke(
        main, ["search", "old invoices folder", "--json", "-w", str(root)], catch_exceptions=False
    )
    assert found.exit_code == 0, found.output
    hits = json.loads(found.output)
    assert any("remember to check the old invoices folder" in hit["text"] for hit in hits)
    # The line became a well-formed pointer whose keywords find that crystal.
    state = wm.parse(memory.read_text())
    assert not [
        line
        for line in state.body("crystal_pointers").split("\n")
        if line.strip() and not wm.parse_pointers(line)
    ]
    pointer = next(p for p in state.pointers() if "invoices" in p.topic)
    with Workspace.open(root) as ws:
        hits = ws.search(pointer.keywords, now=now, limit=5)
        assert any("old invoices folder" in hit.text for hit in hits)
        # The journal says what was done with the line.
        entry = ws.store.journal.get_dream(ws.store.journal.latest_dream_id(("committed",)))
        assert entry["inputs"]["hand_edits"]["hand_lines"] == 1
        assert any("old invoices folder" in fix for fix in entry["inputs"]["hand_edits"]["fixes"])
        # And the dream after it commits too.
        ws.note("Filed the Atelier Noor receipts", at=now + timedelta(hours=2))
        assert run(ws, now=now + timedelta(hours=3), force=True).committed


def _long(words: int, seed: str) -> str:
    return " ".join(f"{seed}{i}" for i in range(words))


def _sections(text: str, **bodies: str) -> str:
    """Replace section bodies of a rendered state (keys of wm.sections) by hand."""
    state = wm.parse(text)
    state.bodies.update(bodies)
    return wm.render(state)


def _add(text: str, title: str, lines: str) -> str:
    return text.replace(f"## {title}\n", f"## {title}\n{lines}\n", 1)


NICHE_LINES = [f"- Platform {i}: {_long(12, 'fee')}" for i in range(60)]
ARCHIVE_LINES = [f"- old case {i} {_long(10, 'dossier')}" for i in range(200)]
# Each case: (id, edit(text) -> text, the hand-written lines that must stay findable).
BOND_LINES = [
    f"- Client {i}: Bakkerij {name} pays by direct debit on the {i + 1}th"
    for i, name in enumerate(("Pauwels", "Smet", "Claes", "Goossens", "Wouters") * 12)
]
POINTERS_OVER_CAP = [
    f"- Past: supplier contract for warehouse {i} → search: `warehouse{i} supplier`"
    for i in range(25)
]
NICHE_LINES = [f"- Platform {i}: {_long(12, 'fee')}" for i in range(60)]
ARCHIVE_LINES = [f"- old case {i} {_long(10, 'dossier')}" for i in range(200)]
CASES = [
    ("pointer-prose", lambda t: _add(t, "Crystal Pointers", INVOICES), [INVOICES]),
    (
        "pointer-no-bullet",
        lambda t: _add(t, "Crystal Pointers", "see the onboarding wiki page for the rest"),
        ["see the onboarding wiki page for the rest"],
    ),
    (
        "pointer-no-keywords",
        lambda t: _add(t, "Crystal Pointers", "- Past: the Lisbon offsite → search:"),
        ["- Past: the Lisbon offsite → search:"],
    ),
    (
        "pointers-over-cap",
        lambda t: _add(t, "Crystal Pointers", "\n".join(POINTERS_OVER_CAP)),
        POINTERS_OVER_CAP,
    ),
    (
        "skill-prose",
        lambda t: _add(t, "Emerging Skills", "- getting better at writing SQL migrations"),
        ["- getting better at writing SQL migrations"],
    ),
    (
        "skill-out-of-range",
        lambda t: _add(t, "Emerging Skills", "- Payroll runs → Confidence: 150% | Occurrences: 4"),
        ["- Payroll runs → Confidence: 150% | Occurrences: 4"],
    ),
    ("bond-oversized", lambda t: _add(t, "The Bond", "\n".join(BOND_LINES)), BOND_LINES),
    (
        "bond-rewritten",
        lambda t: _sections(t, bond="Ada's sister Lien now helps with the invoicing on Fridays."),
        ["Ada's sister Lien now helps with the invoicing on Fridays."],
    ),
    (
        "active-very-long-line",
        lambda t: _add(t, "Active Context", "- " + _long(1800, "ledger")),
        ["- " + _long(1800, "ledger")],
    ),
    (
        "phenotype-odd-markdown",
        lambda t: _add(
            t,
            "The Phenotype",
            "| habit | since |\n|---|---|\n| double-checks totals | 2025 |\n"
            "```\n## not a heading, a code sample\n```\n<!-- hand note: keep tone warm -->\n"
            "\t* tabbed bullet about rounding rules",
        ),
        [
            "| double-checks totals | 2025 |",
            "## not a heading, a code sample",
            "<!-- hand note: keep tone warm -->",
            "* tabbed bullet about rounding rules",
        ],
    ),
    (
        "niche-oversized",
        lambda t: _add(
            t, "The Niche", "\n".join(f"- Platform {i}: {_long(12, 'fee')}" for i in range(60))
        ),
        [f"- Platform {i}: {_long(12, 'fee')}" for i in range(60)],
    ),
    (
        "gaps-oversized",
        lambda t: _add(
            t,
            "Curiosity Gaps",
            "\n".join(f"- Which bank does supplier {i} of Atelier Noor use?" for i in range(80)),
        ),
        [f"- Which bank does supplier {i} of Atelier Noor use?" for i in range(80)],
    ),
    (
        "unknown-section",
        lambda t: t + "\n## Scratchpad\nkeep this by hand: the Vos ledger password hint is blue\n",
        ["keep this by hand: the Vos ledger password hint is blue"],
    ),
    (
        "unknown-section-oversized",
        lambda t: (
            t
            + "\n## Archive\n"
            + "\n".join(f"- old case {i} {_long(10, 'dossier')}" for i in range(200))
        ),
        [f"- old case {i} {_long(10, 'dossier')}" for i in range(0, 200, 37)],
    ),
    (
        "duplicated-heading",
        lambda t: t + "\n## Active Context\n- Call the notary about the Noor lease on Tuesday\n",
        ["- Call the notary about the Noor lease on Tuesday"],
    ),
    (
        "missing-heading",
        lambda t: t.replace("## The Niche\n", "- (niche heading deleted) peers: fiscal-bot\n", 1),
        ["- (niche heading deleted) peers: fiscal-bot"],
    ),
    (
        "heading-case",
        lambda t: t.replace(
            "## Crystal Pointers", "## CRYSTAL POINTERS\n- the shoebox of 2019 receipts", 1
        ),
        ["- the shoebox of 2019 receipts"],
    ),
    (
        "above-the-title",
        lambda t: "Call the bank on Monday about the Vos overdraft\n\n" + t,
        ["Call the bank on Monday about the Vos overdraft"],
    ),
    (
        "between-title-and-sections",
        lambda t: t.replace(
            "# Working Memory State\n", "# Working Memory State\nThe Noor audit starts in May\n", 1
        ),
        ["The Noor audit starts in May"],
    ),
    (
        "all-headings-removed",
        lambda t: (
            "# Working Memory State\n\n"
            + "\n".join(line for line in t.split("\n")[1:] if not line.startswith("## "))
            + "\n- Ada switched the Vos books to the new ledger by hand\n"
        ),
        ["- Ada switched the Vos books to the new ledger by hand"],
    ),
    ("emptied", lambda t: "", []),
    ("emptied-but-headings", lambda t: wm.render(wm.WorkingMemory()), []),
    (
        "free-form-rewrite",
        lambda t: "My notes\n\n- Ada's VAT number ends in 4471\n- Noor pays late every quarter\n",
        ["- Ada's VAT number ends in 4471", "- Noor pays late every quarter"],
    ),
]


@pytest.mark.parametrize(("edit", "lines"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_hand_edit_never_stops_the_next_dream_nor_is_lost(tmp_path, now, edit, lines):
    ws = dreamt(tmp_path / "ws", now)
    try:
        ws.memory_md.write_text(edit(ws.memory_md.read_text()), encoding="utf-8")
        ws.note("Booked the Vos VAT meeting for Thursday", at=now + timedelta(hours=1))
        result = run(ws, now=now + timedelta(hours=2), force=True)
        assert result.committed, result.report
        missing = [line for line in lines if not findable(ws, line, now + timedelta(hours=2))]
        assert not missing, missing
        # No guard is left to trip: the dream after it commits as well.
        ws.note("Sent the Vos VAT draft to Ada", at=now + timedelta(hours=3))
        assert run(ws, now=now + timedelta(hours=4), force=True).committed
        assert not [line for line in lines if not findable(ws, line, now + timedelta(hours=4))]
    finally:
        ws.close()


# A model that writes only Active Context: every other section carries over from the old
# state as the person left it, so a hand edit a guard rejects would reject every answer. Left
# out: edits that leave its one-line Active Context as the whole state (an empty or rewritten
# file), where "empty synthesis" or "mass drop" is the right critique of that answer.
THIN_ANSWER = {"all-headings-removed", "emptied", "emptied-but-headings", "free-form-rewrite"}
MODEL_CASES = [c for c in CASES if c[0] not in THIN_ANSWER]


@pytest.mark.parametrize(
    ("edit", "lines"), [c[1:] for c in MODEL_CASES], ids=[c[0] for c in MODEL_CASES]
)
def test_a_model_dream_commits_over_a_hand_edit(tmp_path, now, edit, lines):
    ws = dreamt(tmp_path / "ws", now)
    fake = FakeAnthropic()
    try:
        ws.memory_md.write_text(edit(ws.memory_md.read_text()), encoding="utf-8")
        ws.note("Booked the Vos VAT meeting for Thursday", at=now + timedelta(hours=1))
        fake.tool_use(TOOL_NAME, {"active_context": "- Vos VAT meeting on Thursday."})
        synth = ClaudeSynthesizer(ws.settings, client=fake.client())
        result = run(ws, now=now + timedelta(hours=2), force=True, synthesizer=synth)
        assert result.committed, result.report
        assert result.revisions == 0  # the first answer passes: nothing left to critique
        assert not [line for line in lines if not findable(ws, line, now + timedelta(hours=2))]
    finally:
        ws.close()
