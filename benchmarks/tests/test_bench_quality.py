"""`dream bench quality`: loading scenarios, every check kind both ways, the shipped scenarios."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from dreamer_bench.quality import (
    format_report,
    load_scenario,
    run_scenario,
    shipped_scenarios,
)

from dreamer.dream.synth import Draft, DreamInputs
from dreamer.errors import UsageError
from dreamer.memory.state import WorkingMemory, parse

HEAD = """
name = "tiny"
start = "2026-03-02T00:00:00Z"
end = "2026-03-03T23:30:00Z"

[schedule]
dream_times = []
consolidate_every_minutes = 0
"""

NOTES = [
    ("2026-03-02T09:00:00Z", "Refactored the invoice module: split the builder from the renderer."),
    ("2026-03-02T10:00:00Z", "Refactored the payments module: a retry policy class."),
    ("2026-03-02T11:00:00Z", "Decided with Dana to keep Postgres for the payout queue."),
    ("2026-03-02T12:00:00Z", "The invoice export deadline moved from March 20 to April 3."),
]

GOOD_STATE = """# Working Memory State

## The Phenotype
- Careful with money code: tests first.

## The Bond
- Dana prefers rebase merges (no longer squash merges).
- Her manager is Priya Raman.

## The Niche

## Active Context
- Deadline: the invoice export is due April 3 (moved from March 20).

## Crystal Pointers
- Past: Refactors of the invoice and payments modules → search: `refactored module`

## Curiosity Gaps

## Emerging Skills
"""

BAD_STATE = """# Working Memory State

## The Bond
- Dana prefers squash merges.
- Please forget the staging password.

## Active Context
- Deadline: the invoice export is due March 20.
- Note: Reformatted a SQL query for readability.

## Crystal Pointers
- Past: Decided → search: `decided`
- Past: Refactored the invoice module: split the … → search: `refactored invoice`
- Past: Refactored the payments module → search: `refactored payments`
- Past: Kitchen renovation quotes from Bob → search: `zebra quasar`
"""

CHECKS = """
[[checks]]
id = "deadline"
description = "The current deadline is in Active Context"
kind = "must_contain"
section = "active_context"
any = ["April 3", "3 April"]

[[checks]]
id = "noise"
description = "Routine notes are not in Active Context"
kind = "must_not_contain"
section = "active_context"
phrase = "Reformatted a SQL query"

[[checks]]
id = "old-values"
description = "Superseded values are not stated as current"
kind = "must_not_be_current"
any = ["March 20", "squash merges"]

[[checks]]
id = "manager-bootstrap"
description = "The manager is in the bootstrap block"
kind = "must_contain"
section = "bootstrap"
phrase = "Priya"

[[checks]]
id = "forget-request"
description = "A forget request is not a line of The Bond"
kind = "must_not_contain"
section = "bond"
phrase = "forget the staging password"

[[checks]]
id = "truncated"
description = "No pointer topic is cut"
kind = "pointers_not_truncated"

[[checks]]
id = "descriptive"
description = "Pointer topics say what they are about"
kind = "pointers_descriptive"

[[checks]]
id = "retrieve"
description = "Pointer keywords find their crystals"
kind = "pointers_retrieve"

[[checks]]
id = "refactors"
description = "The refactors are one pointer"
kind = "pointer_group"
name = "module refactors"
any = ["refactor", "refactored", "refactors"]

[[checks]]
id = "forgotten"
description = "The staging password cannot be found"
kind = "not_searchable"
query = "staging password"
phrase = "stg-Secret-123"

[[checks]]
id = "dreams"
description = "No dream was rejected"
kind = "dreams_ok"
"""


def _events(notes: list[tuple[str, str]]) -> str:
    return "".join(
        f"\n[[events]]\nat = {json.dumps(at)}\nnote = {json.dumps(text)}\nimportance = 0.6\n"
        for at, text in notes
    )


def _memory(at: str, text: str) -> str:
    return f"\n[[events]]\nat = {json.dumps(at)}\nmemory_md = {json.dumps(text)}\n"


def _scenario(tmp_path, body: str, name: str = "tiny.toml", schedule: str = ""):
    path = tmp_path / name
    head = HEAD.replace("dream_times = []", schedule) if schedule else HEAD
    path.write_text(head + body, encoding="utf-8")
    return load_scenario(path)


# --- loading ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('name = "broken\n', "not valid TOML"),
        ("[[checks]]\nid = 'x'\n", "events: missing"),
        (
            _events(NOTES[:1]) + '[[checks]]\nid = "a"\ndescription = "d"\nkind = "must_contains"\n'
            'phrase = "x"\n',
            "unknown kind 'must_contains'",
        ),
        (
            '[[events]]\nat = "2026-03-02T09:00:00Z"\nnote = "n"\nfeel = {hormone = "cortisol", '
            'delta = 0.5}\n[[checks]]\nid = "a"\ndescription = "d"\nkind = "dreams_ok"\n',
            "exactly one of",
        ),
        (
            _events(NOTES[:1]) + '[[checks]]\nid = "a"\ndescription = "d"\nkind = "must_contain"\n'
            'section = "active"\nphrase = "x"\n',
            "unknown section 'active'",
        ),
        (
            _events(NOTES[:1]) + '[[checks]]\nid = "a"\ndescription = "d"\nkind = "must_contain"\n'
            'phrase = "x"\nany = ["y"]\n',
            "exactly one of phrase",
        ),
        (
            '[[events]]\nat = "2026-04-02T09:00:00Z"\nnote = "late"\n[[checks]]\nid = "a"\n'
            'description = "d"\nkind = "dreams_ok"\n',
            "outside the scenario",
        ),
        (
            _events(NOTES[:1]) + '[[checks]]\nid = "a"\ndescription = "d"\nkind = "dreams_ok"\n'
            '[[checks]]\nid = "a"\ndescription = "e"\nkind = "dreams_ok"\n',
            "duplicate id",
        ),
        (
            _events(NOTES[:1]) + '[[checks]]\nid = "a"\ndescription = "d"\nkind = "dreams_ok"\n'
            'phrase = "x"\n',
            "unknown key(s) phrase",
        ),
        (
            _events(NOTES[:1]) + '[[checks]]\nid = "a"\ndescription = "d"\nkind = "must_contain"\n'
            'phrase = "x"\nat = "not a time"\n',
            "is not an ISO-8601 time",
        ),
    ],
    ids=[
        "toml",
        "no-events",
        "kind",
        "two-kinds",
        "section",
        "phrase-and-any",
        "outside",
        "duplicate",
        "extra-key",
        "bad-time",
    ],
)
def test_load_rejects_a_malformed_scenario_naming_file_and_field(tmp_path, body, message):
    with pytest.raises(UsageError) as caught:
        _scenario(tmp_path, body)
    assert str(caught.value).startswith(str(tmp_path / "tiny.toml"))
    assert message in str(caught.value)


def test_load_rejects_a_missing_field_and_a_typo_at_the_top(tmp_path):
    path = tmp_path / "typo.toml"
    path.write_text(
        'name = "x"\nstart = 2026-03-02\nend = 2026-03-03\nevents = []\nchekcs = []\n',
        encoding="utf-8",
    )
    with pytest.raises(UsageError, match=r"unknown key\(s\) chekcs"):
        load_scenario(path)
    path.write_text('name = "x"\nstart = 2026-03-02\nevents = []\nchecks = []\n', encoding="utf-8")
    with pytest.raises(UsageError, match="end: missing"):
        load_scenario(path)


def test_json_scenario_loads_like_toml(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(
        json.dumps(
            {
                "name": "tiny",
                "start": "2026-03-02",
                "end": "2026-03-03T23:00:00Z",
                "events": [{"at": "2026-03-02T09:00:00Z", "note": "Hello", "importance": 0.5}],
                "checks": [{"id": "a", "description": "d", "kind": "must_contain", "phrase": "x"}],
            }
        ),
        encoding="utf-8",
    )
    scenario = load_scenario(path)
    assert (scenario.name, len(scenario.events), scenario.checks[0].kind) == (
        "tiny",
        1,
        "must_contain",
    )
    assert scenario.dream_times == ["23:00"] and scenario.force  # the schedule's defaults


# --- the checks, both ways ----------------------------------------------------------------------


def test_every_check_kind_passes_on_a_good_state(tmp_path):
    body = _events(NOTES) + _memory("2026-03-03T08:00:00Z", GOOD_STATE) + CHECKS
    result = run_scenario(_scenario(tmp_path, body), tmp_path / "work")
    assert [c.id for c in result.checks if not c.passed] == []
    assert (result.passed, result.total, result.score) == (11, 11, 1.0)


def test_every_check_kind_fails_on_a_bad_state_with_evidence(tmp_path):
    notes = [*NOTES, ("2026-03-02T13:00:00Z", "Staging password is stg-Secret-123, for now.")]
    # Raw storage, so the password lands and the not_searchable check has something to catch
    # (with redaction on, as by default, it never lands at all).
    raw = "\n[settings.memory.secrets]\nredact = false\n"
    body = _events(notes) + _memory("2026-03-03T08:00:00Z", BAD_STATE) + CHECKS + raw
    result = run_scenario(_scenario(tmp_path, body), tmp_path / "work")
    evidence = {c.id: c.evidence for c in result.checks if not c.passed}
    assert set(evidence) == {c.id for c in result.checks} - {"dreams"}
    assert "none of ['April 3', '3 April'] in active_context" in evidence["deadline"]
    assert "Reformatted a SQL query for readability" in evidence["noise"]
    assert "'March 20' stated as current in active_context" in evidence["old-values"]
    assert "none of ['Priya'] in the 32k bootstrap block" in evidence["manager-bootstrap"]
    assert "Please forget the staging password" in evidence["forget-request"]
    assert "Refactored the invoice module: split the …" in evidence["truncated"]
    assert "'Decided'" in evidence["descriptive"]
    assert "`zebra quasar`" in evidence["retrieve"]
    assert "2 pointers for 'module refactors'" in evidence["refactors"]
    assert "stg-Secret-123" in evidence["forgotten"]
    report = format_report([result])
    assert "tiny: 1/11 checks passed" in report
    assert "FAIL deadline" in report and "PASS dreams" in report
    assert "at 2026-03-03T23:30:00Z: none of ['April 3', '3 April']" in report


def test_a_check_at_a_moment_judges_the_state_of_that_moment(tmp_path):
    body = (
        _events(NOTES)
        + _memory("2026-03-02T20:00:00Z", GOOD_STATE)
        + _memory("2026-03-03T08:00:00Z", BAD_STATE)
        + """
[[checks]]
id = "then"
description = "The deadline was current on the evening of day one"
kind = "must_contain"
section = "active_context"
phrase = "April 3"
at = "2026-03-02T21:00:00Z"

[[checks]]
id = "now"
description = "The deadline is current at the end"
kind = "must_contain"
section = "active_context"
phrase = "April 3"
"""
    )
    result = run_scenario(_scenario(tmp_path, body), tmp_path / "work")
    assert [(c.id, c.passed, c.at) for c in result.checks] == [
        ("then", True, "2026-03-02T21:00:00Z"),
        ("now", False, "2026-03-03T23:30:00Z"),
    ]


CAPTURE_CHECKS = """
[[checks]]
id = "markup"
description = "No crystal holds a system reminder or a path under the fake home"
kind = "crystals_must_not_contain"
substring = true
any = ["<system-reminder>", "{home}/code"]

[[checks]]
id = "ide-in-memory"
description = "MEMORY.md holds no IDE block"
kind = "must_not_contain"
substring = true
phrase = "<ide_"

[[checks]]
id = "twice"
description = "The deploy was seen on two days"
kind = "seen_on_dates"
phrase = "Deployed the billing service"

[[checks]]
id = "tokens"
description = "No line is cut inside reveal.js"
kind = "tokens_whole"
tokens = ["reveal.js", "puppeteer.launch()"]

[[checks]]
id = "found"
description = "The slides are found by search"
kind = "searchable"
query = "slides deck"
phrase = "slides"

[[checks]]
id = "forgot"
description = "Something was forgotten"
kind = "forgotten"
"""


def test_the_capture_check_kinds_pass_on_clean_memory(tmp_path):
    notes = [
        ("2026-03-02T09:00:00Z", "Deployed the billing service to production."),
        ("2026-03-02T10:00:00Z", "The staging password is stg-Secret-123."),
        ("2026-03-02T11:00:00Z", "Built the slides deck with reveal.js for the review."),
        ("2026-03-02T12:00:00Z", "Please forget the staging password."),
        ("2026-03-03T09:00:00Z", "Deployed the billing service to production."),
    ]
    state = "# Working Memory State\n\n## The Bond\n- Slides are built with reveal.js.\n"
    body = _events(notes) + _memory("2026-03-03T08:00:00Z", state) + CAPTURE_CHECKS
    body += '\n[[events]]\nat = "2026-03-03T22:00:00Z"\ndream = true\n'
    result = run_scenario(_scenario(tmp_path, body), tmp_path / "work")
    assert [(c.id, c.evidence) for c in result.checks if not c.passed] == []


def test_the_capture_check_kinds_fail_with_evidence(tmp_path):
    home = tmp_path / "work" / "tiny.home"  # where a scenario's captured sessions live
    notes = [
        ("2026-03-02T09:00:00Z", "Deployed the billing service to production."),
        ("2026-03-02T10:00:00Z", f"Opened {home}/code/site/deck.md in the IDE."),
        ("2026-03-02T11:00:00Z", "<system-reminder>Use TodoWrite.</system-reminder> ok"),
    ]
    state = (
        "# Working Memory State\n\n## The Bond\n- Slides are built with reveal.\n"
        "- js slides need a server\n- <ide_opened_file>x</ide_opened_file> Fix it\n"
    )
    body = _events(notes) + _memory("2026-03-03T08:00:00Z", state) + CAPTURE_CHECKS
    result = run_scenario(_scenario(tmp_path, body), tmp_path / "work")
    evidence = {c.id: c.evidence for c in result.checks if not c.passed}
    assert set(evidence) == {"markup", "ide-in-memory", "twice", "tokens", "found", "forgot"}
    assert f"holds '{home}/code'" in evidence["markup"] and "(+1 more)" in evidence["markup"]
    assert "<ide_opened_file>" in evidence["ide-in-memory"]
    assert "seen on 2026-03-02; expected at least 2 days" in evidence["twice"]
    assert "'reveal.js' cut in MEMORY.md: - Slides are built with reveal." in evidence["tokens"]
    assert "finds none of ['slides']" in evidence["found"]
    assert evidence["forgot"] == "0 crystal(s) forgotten; expected at least 1"


def test_tokens_whole_catches_an_open_code_span_and_a_tail(tmp_path):
    checks = CAPTURE_CHECKS.split("[[checks]]")
    only_tokens = "[[checks]]" + next(c for c in checks if 'id = "tokens"' in c)
    for state, caught in (
        ("- Launch the browser with `puppeteer.", "a code span is cut"),
        ("- launch() opens a browser", "'puppeteer.launch()' cut"),
    ):
        body = _events(NOTES[:1]) + _memory("2026-03-03T08:00:00Z", state) + only_tokens
        result = run_scenario(
            _scenario(tmp_path, body, name=f"t{len(caught)}.toml"), tmp_path / f"w{len(caught)}"
        )
        assert caught in result.checks[0].evidence, state


def test_a_session_event_is_written_in_the_cli_format_and_ingested(tmp_path):
    session = """
[[events]]
at = "2026-03-02T10:00:00Z"
[events.session]
agent = "claude-code"
project = "site"
[[events.session.turns]]
user = "Build the slides deck for Friday's review"
ide_file = "deck.md"
assistant = "Built the deck."
[[events.session.turns.tools]]
name = "Bash"
input = { command = "npm run build" }
output = "built 14 slides"

[[events]]
at = "2026-03-02T11:00:00Z"
[events.session]
agent = "codex"
project = "etl"
[[events.session.turns]]
user = "Run the nightly warehouse load"
assistant = "Loaded 120 rows."
"""
    checks = """
[[checks]]
id = "claude"
description = "The Claude Code prompt is found"
kind = "searchable"
query = "slides deck Friday review"
phrase = "slides deck for Friday's review"

[[checks]]
id = "codex"
description = "The Codex prompt is found"
kind = "searchable"
query = "nightly warehouse load"
phrase = "nightly warehouse load"
"""
    result = run_scenario(_scenario(tmp_path, session + checks), tmp_path / "work")
    assert [(c.id, c.evidence) for c in result.checks if not c.passed] == []
    home = tmp_path / "work" / "tiny.home"
    (transcript,) = (home / ".claude" / "projects").rglob("*.jsonl")
    assert "deck.md in the IDE" in transcript.read_text()
    assert list((home / ".codex" / "sessions" / "2026" / "03" / "02").glob("rollout-*.jsonl"))
    with pytest.raises(UsageError, match=r"events\[0\]: session.agent: use one of"):
        _scenario(tmp_path, session.replace('"claude-code"', '"cursor"') + checks, name="b.toml")


def test_must_not_be_current_accepts_an_old_value_marked_as_past(tmp_path):
    state = GOOD_STATE.replace("(moved from March 20)", "(was March 20)")
    body = (
        _events(NOTES)
        + _memory("2026-03-03T08:00:00Z", state)
        + """
[[checks]]
id = "old"
description = "March 20 is not current"
kind = "must_not_be_current"
phrase = "March 20"

[[checks]]
id = "strict"
description = "March 20 is not current, even marked '(was'"
kind = "must_not_be_current"
phrase = "March 20"
past_markers = ["previously"]
"""
    )
    result = run_scenario(_scenario(tmp_path, body), tmp_path / "work")
    assert [(c.id, c.passed) for c in result.checks] == [("old", True), ("strict", False)]


# --- dreams on schedule, with a fake synthesizer -------------------------------------------------


class FakeSynthesizer:
    """Writes a fixed state and remembers when it was asked."""

    name = "fake"
    model = None

    def __init__(self, state: WorkingMemory):
        self.state = state
        self.calls: list[datetime] = []

    def synthesize(self, inputs: DreamInputs, *, critique=None, previous=None) -> Draft:
        """Return the fixed state."""
        self.calls.append(inputs.now)
        return Draft(state=self.state, raw="{}")


def test_dreams_run_at_the_scheduled_times_with_the_given_synthesizer(tmp_path):
    body = _events(NOTES) + CHECKS.split('[[checks]]\nid = "noise"')[0]
    scenario = _scenario(tmp_path, body, schedule='dream_times = ["12:00", "23:00"]')
    fake = FakeSynthesizer(parse(GOOD_STATE))
    result = run_scenario(scenario, tmp_path / "work", synthesizer=fake)
    assert [c.strftime("%d %H:%M") for c in fake.calls] == [
        "02 12:00",
        "02 23:00",
        "03 12:00",
        "03 23:00",
    ]
    assert [d["outcome"] for d in result.dreams] == ["committed"] * 4
    assert result.checks[0].passed
    assert "Last dream: 2026-03-03T23:00:00Z" in result.memory


def test_without_force_a_quiet_day_skips_and_settings_reach_the_workspace(tmp_path):
    body = _events(NOTES[:2]) + CHECKS.split('[[checks]]\nid = "noise"')[0]
    lazy = 'dream_times = ["23:00"]\nforce = false'
    fake = FakeSynthesizer(parse(GOOD_STATE))
    result = run_scenario(
        _scenario(tmp_path, body, schedule=lazy), tmp_path / "a", synthesizer=fake
    )
    assert [d["outcome"] for d in result.dreams] == ["skipped", "skipped"]  # 2 notes < 5
    eager = '[settings]\n"memory.dream.minChunksForDream" = 2\n' + body
    result = run_scenario(
        _scenario(tmp_path, eager, "eager.toml", schedule=lazy),
        tmp_path / "b",
        synthesizer=FakeSynthesizer(parse(GOOD_STATE)),
    )
    assert [d["outcome"] for d in result.dreams] == ["committed", "skipped"]


def test_a_rejected_dream_is_recorded_and_fails_dreams_ok(tmp_path):
    body = (
        _events(NOTES)
        + '\n[[events]]\nat = "2026-03-02T18:00:00Z"\ndream = true\n'
        + '\n[[checks]]\nid = "dreams"\ndescription = "No dream was rejected"\nkind = "dreams_ok"\n'
    )
    result = run_scenario(
        _scenario(tmp_path, body), tmp_path / "work", synthesizer=FakeSynthesizer(WorkingMemory())
    )
    assert [d["outcome"] for d in result.dreams] == ["rejected"]
    assert not result.checks[0].passed
    assert (
        "1 of 1 dreams not committed; first at 2026-03-02T18:00:00Z: rejected"
        in result.checks[0].evidence
    )


def test_an_api_key_in_the_environment_does_not_leave_the_offline_synthesizer(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-a-real-key")
    monkeypatch.setenv("DREAM_SYNTHESIZER", "claude")
    body = (
        _events(NOTES)
        + '\n[[events]]\nat = "2026-03-02T18:00:00Z"\ndream = true\n'
        + '\n[[checks]]\nid = "dreams"\ndescription = "No dream was rejected"\nkind = "dreams_ok"\n'
    )
    result = run_scenario(_scenario(tmp_path, body), tmp_path / "work")
    assert [(d["outcome"], d["synthesizer"]) for d in result.dreams] == [("committed", "offline")]


def test_the_working_folder_must_be_fresh(tmp_path):
    scenario = _scenario(tmp_path, _events(NOTES) + CHECKS)
    (tmp_path / "work" / "tiny").mkdir(parents=True)
    (tmp_path / "work" / "tiny" / "MEMORY.md").write_text("old", encoding="utf-8")
    with pytest.raises(UsageError, match="is not empty"):
        run_scenario(scenario, tmp_path / "work")


# --- the shipped scenarios ----------------------------------------------------------------------


SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
SHIPPED = sorted(SCENARIOS.glob("*.toml"))


CAPTURED = sorted((SCENARIOS / "captured").glob("*.toml"))


def test_three_scenarios_and_three_captured_months_ship(monkeypatch, tmp_path):
    assert [p.name for p in SHIPPED] == ["family.toml", "month.toml", "outage.toml"]
    assert [p.name for p in CAPTURED] == ["api.toml", "book.toml", "etl.toml"]
    monkeypatch.chdir(tmp_path)  # found in the package, wherever the command runs
    assert [p.name for p in shipped_scenarios()] == [p.name for p in SHIPPED + CAPTURED]


def test_the_captured_months_are_what_their_generator_writes():
    sys.path.insert(0, str(SCENARIOS))
    try:
        import make_sessions
    finally:
        sys.path.remove(str(SCENARIOS))
    for make in make_sessions.MONTHS:
        month = make()
        path = SCENARIOS / "captured" / f"{month.name.removeprefix('captured_')}.toml"
        assert path.read_text(encoding="utf-8") == make_sessions.render(month), path
        routine = sum(len(turns) for turns in month.routine)
        assert routine >= 20  # two thirds routine: twice the storyline's exchanges are drawn


_CAPTURED_RUNS: dict[Path, Any] = {}


def _captured_run(path: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One offline run of a captured month, shared by the tests that judge it."""
    if path not in _CAPTURED_RUNS:
        scenario = load_scenario(path)
        _CAPTURED_RUNS[path] = (scenario, run_scenario(scenario, tmp_path_factory.mktemp("cap")))
    return _CAPTURED_RUNS[path]


@pytest.mark.parametrize("path", CAPTURED, ids=lambda p: p.stem)
def test_a_captured_month_is_ingested_dreamed_and_judged_offline(tmp_path_factory, path):
    scenario, result = _captured_run(path, tmp_path_factory)
    assert sum(e.kind == "session" for e in scenario.events) >= 40
    assert result.total == len(scenario.checks) >= 30
    assert all(d["outcome"] == "committed" for d in result.dreams)
    assert f"{result.name}: {result.passed}/{result.total} checks passed" in format_report([result])


@pytest.mark.parametrize("path", CAPTURED, ids=lambda p: p.stem)
def test_a_captured_month_passes_every_check_offline(tmp_path_factory, path):
    _, result = _captured_run(path, tmp_path_factory)
    assert not result.failed, format_report([result])


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_a_shipped_scenario_passes_every_check_offline(tmp_path, path):
    scenario = load_scenario(path)
    result = run_scenario(scenario, tmp_path)
    assert result.total == len(scenario.checks) >= 15
    assert all(d["outcome"] == "committed" for d in result.dreams)
    assert not result.failed, format_report([result])
    assert f"{result.name}: {result.passed}/{result.total} checks passed" in format_report([result])


def test_the_held_out_scenario_loads_and_runs(tmp_path):
    # Written after tuning, never tuned on: its score is reported, not asserted
    # (docs/contributing/bench.md).
    path = SCENARIOS / "heldout" / "bakery.toml"
    result = run_scenario(load_scenario(path), tmp_path)
    assert result.total >= 15 and all(d["outcome"] == "committed" for d in result.dreams)


def test_a_missing_work_folder_is_made_and_an_impossible_one_is_one_error_line(tmp_path, runner):
    from dreamer.cli import main

    outage = str(SCENARIOS / "outage.toml")
    nested = tmp_path / "new" / "bench"
    done = runner.invoke(main, ["bench", "quality", "-w", str(nested), outage])
    assert done.exit_code == 0, done.output
    assert nested.is_dir() and (nested.stat().st_mode & 0o777) == 0o700
    (tmp_path / "a-file").write_text("not a folder")
    refused = runner.invoke(
        main, ["bench", "quality", "-w", str(tmp_path / "a-file" / "x"), outage]
    )
    assert refused.exit_code == 2
    lines = refused.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: cannot make the benchmark folder")
    assert "Traceback" not in refused.output
