"""Day digests: many lines of one day leaving Active Context become one dated pointer that
carries what they established, in whole clauses."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from dreamer.dream import insights
from dreamer.dream.rules.context import Context
from dreamer.dream.rules.digest import DIGEST_WORDS, digest, is_digest, resolved, stamp
from dreamer.dream.rules.pointers import write_pointers
from dreamer.dream.synth import DreamInputs
from dreamer.dream.synth.offline import ACTIVE_SHARE, OfflineSynthesizer
from dreamer.memory import state as wm
from dreamer.memory.state import Pointer, WorkingMemory, parse_pointers
from dreamer.support import tokens

NOW = datetime(2026, 3, 20, 9, 0, tzinfo=UTC)


def _ctx() -> Context:
    return Context(NOW, set(), set(), {}, [], {}, [])


def test_a_stamp_heading_a_line_names_its_day_in_several_forms():
    assert stamp("- 2026-03-12 Rebased the ingest branch onto main.")[0] == date(2026, 3, 12)
    assert stamp("- Task: 7:05 pm on 3 March, 2026 Priya: booked the van")[0] == date(2026, 3, 3)
    day, rest = stamp("March 9, 2026: the plasterer finished the hall ceiling.")
    assert day == date(2026, 3, 9) and rest.startswith("the plasterer")
    # A date inside the line, or one without a year, is no stamp.
    assert stamp("- Deadline: the grant report is due on March 27.")[0] is None
    assert stamp("- Moved the review to 14 April 2026 after the audit.")[0] is None


def test_relative_days_are_dated_against_the_day_written():
    day = date(2026, 3, 12)  # a Thursday
    assert resolved("the boiler man came yesterday", day).endswith("yesterday (11 March)")
    assert "last Monday (9 March)" in resolved("we signed it last Monday", day)
    assert "last Thursday (5 March)" in resolved("she called last Thursday", day)
    # A date already given is left alone.
    assert resolved("sent yesterday (11 March)", day) == "sent yesterday (11 March)"


def test_a_coding_day_keeps_its_facts_not_its_chatter():
    lines = [
        "- 2026-03-12 Fixed the Parquet schema test on the ingest branch.",
        "- 2026-03-12 Great, thanks, that sounds good.",
        "- 2026-03-12 Nadia moved the load test to Frankfurt.",
        "- 2026-03-12 Are the nightly exports still failing?",
        "- 2026-03-12 Bumped pyarrow to 15.0.2.",
    ]
    pointer = digest(date(2026, 3, 12), lines)
    assert pointer is not None
    topic = pointer.topic
    assert topic.startswith("12 March 2026: ")
    for fact in ("Parquet schema test", "Frankfurt", "15.0.2"):
        assert fact in topic, topic
    assert "sounds good" not in topic  # a feeling states nothing
    assert "?" not in topic  # a question is not something that happened
    assert len(topic.split()) <= DIGEST_WORDS + 3  # the day aside
    assert is_digest(pointer)


def test_a_conversation_day_names_each_speaker_once_per_run():
    lines = [
        "- 4:10 pm on 2 May, 2026 Tomas: I sold the old Volvo in Ghent.",
        "- 4:10 pm on 2 May, 2026 Tomas: The buyer paid 3,400 euros.",
        "- 4:10 pm on 2 May, 2026 Ines: Wow, that's amazing!",
        "- 4:10 pm on 2 May, 2026 Ines: My sister starts at the Leuven hospital.",
    ]
    pointer = digest(date(2026, 5, 2), lines)
    assert pointer is not None
    assert pointer.topic.count("Tomas:") == 1 and pointer.topic.count("Ines:") == 1
    assert "Ghent" in pointer.topic and "3,400" in pointer.topic and "Leuven" in pointer.topic
    assert "amazing" not in pointer.topic


def test_a_cut_sentence_and_a_long_one_are_left_out_never_cut():
    long = " ".join(["the committee reviewed"] + ["every single budget line"] * 5) + "."
    lines = [
        f"- 2026-01-20 {long}",
        "- 2026-01-20 The treasurer resigned. The auditors want the ledger by …",
        "- 2026-01-20 We hired Okafor Partners as the new auditors.",
        "- 2026-01-20 Okay.",
    ]
    pointer = digest(date(2026, 1, 20), lines)
    assert pointer is not None
    assert "committee" not in pointer.topic and "…" not in pointer.topic
    assert "The treasurer resigned" in pointer.topic and "Okafor Partners" in pointer.topic
    assert len(pointer.topic.split()) <= DIGEST_WORDS + 5  # the day and speaker names aside


def test_a_title_or_an_initial_does_not_end_a_clause():
    lines = [
        "- 2026-02-03 Dr. Okafor moved the thyroid review to the Leeds clinic.",
        "- 2026-02-03 Mrs. Diaz sent the scan results, e.g. the ultrasound report.",
        "- 2026-02-03 J. Lee starts physiotherapy at Kirkgate on Thursday.",
        "- 2026-02-03 Fine.",
    ]
    pointer = digest(date(2026, 2, 3), lines)
    assert pointer is not None
    assert "Dr. Okafor moved the thyroid review" in pointer.topic, pointer.topic
    assert "; Okafor" not in pointer.topic and "; Lee" not in pointer.topic
    assert "; Diaz" not in pointer.topic and "; the ultrasound" not in pointer.topic


def test_a_day_of_chatter_makes_no_digest():
    lines = ["- 2026-01-20 Okay, great!", "- 2026-01-20 Thanks so much.", "- 2026-01-20 Sure."]
    assert digest(date(2026, 1, 20), lines) is None


def test_a_busy_day_leaves_as_one_digest_and_a_quiet_day_as_pointers():
    busy = [
        "- 2026-03-12 Rebased the ingest branch onto main.",
        "- 2026-03-12 Nadia moved the load test to the staging cluster in Frankfurt.",
        "- 2026-03-12 Bumped pyarrow to 15.0.2 because of the timezone bug.",
        "- 2026-03-12 The Grafana board for ingest latency is live.",
    ]
    quiet = ["- 2026-03-10 Ordered a second monitor for the home office."]
    body = write_pointers(WorkingMemory(), [], busy + quiet, [], _ctx(), 800)
    pointers = parse_pointers(body)
    days = [p for p in pointers if is_digest(p)]
    assert len(days) == 1 and days[0].topic.startswith("12 March 2026: ")
    assert any("second monitor" in p.topic for p in pointers if not is_digest(p))


def test_an_old_digest_never_folds_into_a_new_pointer():
    old_day = Pointer(
        "11 March 2026: Nadia moved the load test to Frankfurt; Bumped pyarrow to 15.0.2",
        "nadia load test frankfurt",
    )
    old = WorkingMemory(bodies={"crystal_pointers": old_day.render()})
    body = write_pointers(
        old, [], ["- Nadia booked the Frankfurt trip for the load test."], [], _ctx(), 800
    )
    topics = [p.topic for p in parse_pointers(body)]
    assert old_day.topic in topics and len(topics) == 2, topics


def test_the_offline_dream_fills_a_share_of_active_context_and_digests_the_rest(ws, now):
    day = now - timedelta(hours=3)
    for n in range(40):
        ws.note(
            f"Crew {n} poured the slab for unit {n} at the Harbour Road site in Dundee.",
            at=day + timedelta(minutes=n),
        )
    old = wm.parse("")
    crystals = ws.store.crystals.select(lifecycles=["generated"])
    draft = OfflineSynthesizer().synthesize(
        DreamInputs(
            now=now,
            old=old,
            notes=[],
            crystals=crystals,
            insights=insights.compute(ws.store, [], crystals, now, old),
            hormones={"dopamine": 0.2, "cortisol": 0.1, "oxytocin": 0.3},
            mood="steady",
        )
    )
    budget = next(s.budget_tokens for s in wm.sections() if s.key == "active_context")
    assert tokens.count(draft.state.body("active_context")) <= budget * ACTIVE_SHARE
    assert any(is_digest(p) for p in draft.state.pointers()), draft.state.body("crystal_pointers")
