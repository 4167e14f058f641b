"""Dream quality: replay a scenario of agent notes through dreams and judge what MEMORY.md says.

A scenario (``benchmarks/scenarios/README.md`` documents the format) is a TOML or JSON file:
notes, hormone stimuli and ``memory/DREAM.md`` contents at their times, a dream schedule, and
checks on the state the dreams wrote. ``run_scenario`` replays it in a fresh workspace with
the scenario's clock (never the wall clock), consolidation ticks and dreams included, and
evaluates every check at its moment (the end unless the check names one). Each check passes
or fails with evidence; a scenario's score is checks passed over checks run.

The offline synthesizer is the default and is built here, explicitly, and the workspace is
opened with an empty environment: an ``ANTHROPIC_API_KEY`` in the environment changes nothing.

A ``session`` event is a captured Claude Code session or Codex rollout: its turns are written
in the CLI's own format (:mod:`dreamer_bench.transcripts`) under a fake home beside the
workspace, ending at the event's time, and ingested as the SessionEnd hook ingests them (the
transcript and its subagents' files, whole). Checks may name that home as ``{home}``.

Searches made by checks use the store's search without recording it (the same hybrid search
``Workspace.search`` runs): a measurement must not add accesses, curiosity gaps or recall
skills that the next dream would read.
"""

from __future__ import annotations

import json
import math
import re
import time
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from dreamer.agents.bootstrap import bootstrap
from dreamer.agents.ingest import ingest
from dreamer.config import HORMONES
from dreamer.dream.cycle import run as run_dream
from dreamer.dream.synth import Synthesizer
from dreamer.dream.synth.offline import OfflineSynthesizer
from dreamer.errors import DreamError, DreamRejected, UsageError
from dreamer.memory import repeats
from dreamer.memory.hormones import feel
from dreamer.memory.state import WorkingMemory, parse, section_keys
from dreamer.memory.workspace import Workspace
from dreamer.retrieval.search import search as search_crystals
from dreamer.service.consolidation import tick as consolidation_tick
from dreamer.store.kinds import SEMANTIC_TYPES
from dreamer.support.times import as_utc, iso, parse_iso
from dreamer.support.words import stems
from dreamer_bench import transcripts

# The repository's benchmarks/scenarios, in the package (a link in a clone, files in a wheel).
SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"
BOOTSTRAP_WINDOW = 32_000  # tokens: the small agent whose bootstrap block gets cut hardest
POINTER_SEARCH_LIMIT = 5
PAST_MARKERS = (
    "previously",
    "formerly",
    "no longer",
    "not anymore",
    "anymore",
    "used to",
    "instead of",
    "moved from",
    "changed from",
    "pushed from",
    "postponed from",
    "rescheduled from",
    "superseded",
    "replaced",
    "outdated",
    "(was",
    "(old",
    "~~",
)
LABEL_WORDS = frozenset(
    "past friction breakthrough deadline goal task note decided decision update todo done "
    "open question".split()
)
DATE_WORDS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday "
    "saturday sunday today tomorrow yesterday".split()
)
TOPIC_STOP = frozenset("a an the of on in to for and or with at by from my our is was".split())
_TOKEN_CUT = re.compile(r"(?<=\w)[./(:]")  # where a code token could be cut: reveal|.js
_TOPIC_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})
_EVENT_KINDS = ("note", "feel", "dream_md", "memory_md", "dream", "session")
_TOP_KEYS = {"name", "description", "start", "end", "settings", "schedule", "events", "checks"}
_SCHEDULE_KEYS = {"dream_times", "force", "consolidate_every_minutes"}
_ORDER = {"event": 0, "tick": 1, "dream": 2, "check": 3}  # at one moment: notes, tick, dream


@dataclass(frozen=True)
class Event:
    """One thing that happens: a note, a stimulus, a DREAM.md, a MEMORY.md edit, an extra dream."""

    at: datetime
    kind: str  # note | feel | dream_md | memory_md | dream | session
    data: dict[str, Any]


@dataclass(frozen=True)
class Check:
    """One judgement on the state at a moment (the scenario's end unless ``at`` is given)."""

    id: str
    description: str
    kind: str
    at: datetime | None
    options: dict[str, Any]


@dataclass
class Scenario:
    """A loaded scenario: when things happen, when dreams run, and what must hold."""

    name: str
    description: str
    path: Path | None
    start: datetime
    end: datetime
    events: list[Event]
    checks: list[Check]
    dream_times: list[str] = field(default_factory=lambda: ["23:00"])
    force: bool = True
    consolidate_every_minutes: int = 30
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass
class CheckResult:
    """A check's verdict, with the evidence when it failed."""

    id: str
    description: str
    passed: bool
    evidence: str = ""
    at: str = ""


@dataclass
class ScenarioResult:
    """What a scenario run produced: every check's verdict, the dreams, the final MEMORY.md."""

    name: str
    checks: list[CheckResult]
    dreams: list[dict[str, Any]]
    seconds: float
    memory: str = ""

    @property
    def passed(self) -> int:
        """How many checks passed."""
        return sum(1 for check in self.checks if check.passed)

    @property
    def total(self) -> int:
        """How many checks ran."""
        return len(self.checks)

    @property
    def score(self) -> float:
        """Checks passed over checks run (1.0 for a scenario without checks)."""
        return self.passed / self.total if self.total else 1.0

    @property
    def failed(self) -> list[CheckResult]:
        """The checks that failed."""
        return [check for check in self.checks if not check.passed]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            **asdict(self),
            "passed": self.passed,
            "total": self.total,
            "score": round(self.score, 4),
        }


# --- loading ------------------------------------------------------------------------------------


class _Reader:
    """Reads a scenario's raw data, raising UsageError that names the file and the field."""

    def __init__(self, where: str):
        self.where = where

    def fail(self, field_name: str, problem: str) -> UsageError:
        return UsageError(f"{self.where}: {field_name}: {problem}")

    def moment(self, value: Any, field_name: str) -> datetime:
        if isinstance(value, datetime):
            return as_utc(value)
        if isinstance(value, date):
            return as_utc(datetime(value.year, value.month, value.day))
        if isinstance(value, str):
            try:
                return parse_iso(value)
            except ValueError as e:
                raise self.fail(field_name, str(e)) from None
        raise self.fail(field_name, f"expected a time like 2026-03-12T14:30:00Z, not {value!r}")

    def text(self, value: Any, field_name: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(field_name, f"expected non-empty text, not {value!r}")
        return value

    def number(self, value: Any, field_name: str, low: float, high: float) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or math.isnan(value)
            or not low <= value <= high
        ):
            raise self.fail(
                field_name, f"expected a number from {low:g} to {high:g}, not {value!r}"
            )
        return float(value)

    def table(self, value: Any, field_name: str, allowed: set[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(field_name, "expected a table of keys")
        unknown = sorted(set(value) - allowed)
        if unknown:
            raise self.fail(
                field_name, f"unknown key(s) {', '.join(unknown)}; use {', '.join(sorted(allowed))}"
            )
        return value


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file (.toml or .json); raise UsageError naming the fix."""
    path = Path(path)
    try:
        raw_text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read scenario {path} ({e}); pass a readable file") from None
    try:
        data = json.loads(raw_text) if path.suffix == ".json" else tomllib.loads(raw_text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        kind = "JSON" if path.suffix == ".json" else "TOML"
        raise UsageError(f"{path}: not valid {kind} ({e}); fix the file") from None
    return scenario_from_dict(data, where=str(path), path=path)


def scenario_from_dict(data: Any, *, where: str = "scenario", path: Path | None = None) -> Scenario:
    """Build a Scenario from parsed TOML/JSON data, validating every field."""
    r = _Reader(where)
    data = r.table(data, "top level", _TOP_KEYS)
    for key in ("name", "start", "end", "events", "checks"):
        if key not in data:
            raise r.fail(key, "missing; see benchmarks/scenarios/README.md")
    start, end = r.moment(data["start"], "start"), r.moment(data["end"], "end")
    if end <= start:
        raise r.fail("end", "must come after start")
    schedule = r.table(data.get("schedule", {}), "schedule", _SCHEDULE_KEYS)
    times = schedule.get("dream_times", ["23:00"])
    if not isinstance(times, list) or not all(
        isinstance(t, str) and re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d", t) for t in times
    ):
        raise r.fail("schedule.dream_times", f"expected a list of HH:MM times, not {times!r}")
    force = schedule.get("force", True)
    if not isinstance(force, bool):
        raise r.fail("schedule.force", f"expected true or false, not {force!r}")
    every = schedule.get("consolidate_every_minutes", 30)
    if isinstance(every, bool) or not isinstance(every, int) or every < 0:
        raise r.fail("schedule.consolidate_every_minutes", f"expected minutes >= 0, not {every!r}")
    settings = data.get("settings", {})
    if not isinstance(settings, dict):
        raise r.fail("settings", "expected a table of dreamer.toml keys")
    if not isinstance(data["events"], list) or not isinstance(data["checks"], list):
        raise r.fail("events/checks", "expected arrays of tables ([[events]], [[checks]])")
    events = [_event(r, raw, i, start, end) for i, raw in enumerate(data["events"])]
    checks = [_check(r, raw, i, start, end) for i, raw in enumerate(data["checks"])]
    seen: set[str] = set()
    for check in checks:
        if check.id in seen:
            raise r.fail(f"checks (id {check.id!r})", "duplicate id; ids must be unique")
        seen.add(check.id)
    return Scenario(
        name=r.text(data["name"], "name"),
        description=str(data.get("description", "")),
        path=path,
        start=start,
        end=end,
        events=events,
        checks=checks,
        dream_times=list(times),
        force=force,
        consolidate_every_minutes=every,
        settings=_flat(settings),
    )


def _flat(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested settings tables as dotted dreamer.toml keys (checked when the workspace opens)."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        out.update(_flat(value, name + ".") if isinstance(value, dict) else {name: value})
    return out


def _event(r: _Reader, raw: Any, i: int, start: datetime, end: datetime) -> Event:
    where = f"events[{i}]"
    raw = r.table(raw, where, {"at", "importance", "type", "force", *_EVENT_KINDS})
    kinds = [k for k in _EVENT_KINDS if k in raw]
    if len(kinds) != 1:
        raise r.fail(where, f"needs exactly one of {', '.join(_EVENT_KINDS)}, found {kinds}")
    if "at" not in raw:
        raise r.fail(where, "missing 'at' (when it happens)")
    at = r.moment(raw["at"], f"{where}.at")
    if not start <= at <= end:
        raise r.fail(
            f"{where}.at", f"{iso(at)} is outside the scenario ({iso(start)} to {iso(end)})"
        )
    kind, data = kinds[0], dict[str, Any]()
    if kind != "note" and ({"importance", "type"} & set(raw)):
        raise r.fail(where, "importance and type belong to a note")
    if kind == "note":
        data["text"] = r.text(raw["note"], f"{where}.note")
        data["importance"] = r.number(raw.get("importance", 0.7), f"{where}.importance", 0, 1)
        if raw.get("type") is not None and raw["type"] not in SEMANTIC_TYPES:
            raise r.fail(
                f"{where}.type",
                f"unknown type {raw['type']!r}; use one of {', '.join(SEMANTIC_TYPES)}",
            )
        data["type"] = raw.get("type")
    elif kind == "feel":
        stim = r.table(raw["feel"], f"{where}.feel", {"hormone", "delta", "reason"})
        if stim.get("hormone") not in HORMONES:
            raise r.fail(f"{where}.feel.hormone", f"use one of {', '.join(HORMONES)}")
        data = {
            "hormone": stim["hormone"],
            "reason": str(stim.get("reason", "")),
            "delta": r.number(stim.get("delta"), f"{where}.feel.delta", -1, 1),
        }
    elif kind in ("dream_md", "memory_md"):
        data["text"] = r.text(raw[kind], f"{where}.{kind}")
    elif kind == "session":
        data = {"spec": transcripts.check_session(raw["session"], where), "number": i}
    else:
        if raw["dream"] is not True:
            raise r.fail(f"{where}.dream", "write dream = true for an extra dream")
        if "force" in raw and not isinstance(raw["force"], bool):
            raise r.fail(f"{where}.force", "expected true or false")
        data["force"] = raw.get("force")
    if kind != "dream" and "force" in raw:
        raise r.fail(where, "force belongs to a dream event")
    return Event(at, kind, data)


def _check(r: _Reader, raw: Any, i: int, start: datetime, end: datetime) -> Check:
    where = f"checks[{i}]"
    if not isinstance(raw, dict):
        raise r.fail(where, "expected a table")
    kind = raw.get("kind")
    if kind not in CHECKS:
        raise r.fail(f"{where}.kind", f"unknown kind {kind!r}; use one of {', '.join(CHECKS)}")
    spec = CHECKS[kind]
    raw = r.table(raw, f"{where} ({kind})", {"id", "description", "kind", "at", *spec.keys})
    check_id = r.text(raw.get("id"), f"{where}.id")
    if not re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", check_id):
        raise r.fail(f"{where}.id", f"{check_id!r}: use lower-case letters, digits, - _ .")
    where = f"{where} (id {check_id!r})"
    description = r.text(raw.get("description"), f"{where}.description")
    if "\n" in description.strip():
        raise r.fail(f"{where}.description", "keep it to one line")
    at = r.moment(raw["at"], f"{where}.at") if "at" in raw else None
    if at is not None and not start <= at <= end:
        raise r.fail(f"{where}.at", "must be within the scenario's start and end")
    options = {k: v for k, v in raw.items() if k in spec.keys}
    if spec.phrases:
        options["phrases"] = _phrases(r, raw, where)
    section = options.get("section", spec.default_section)
    if spec.sections and section not in spec.sections:
        raise r.fail(
            f"{where}.section",
            f"unknown section {section!r}; use one of {', '.join(spec.sections)}",
        )
    if "sections" in options and (
        not isinstance(options["sections"], list)
        or not set(options["sections"]) <= set(section_keys())
    ):
        raise r.fail(f"{where}.sections", f"expected a list of {', '.join(section_keys())}")
    markers = options.get("past_markers", [])
    if not isinstance(markers, list) or not all(isinstance(m, str) and m for m in markers):
        raise r.fail(f"{where}.past_markers", "expected a list of words or phrases")
    for key in spec.required:
        r.text(options.get(key), f"{where}.{key}")
    if "substring" in options and not isinstance(options["substring"], bool):
        raise r.fail(f"{where}.substring", "expected true or false")
    tokens = options.get("tokens")
    if kind == "tokens_whole" and (
        not isinstance(tokens, list)
        or not tokens
        or not all(isinstance(t, str) and _TOKEN_CUT.search(t) for t in tokens)
    ):
        raise r.fail(f"{where}.tokens", "expected a list of code tokens with . / ( or : inside")
    for key in ("max", "limit", "context_window", "min_words", "min"):
        if key in options and (
            isinstance(options[key], bool) or not isinstance(options[key], int) or options[key] < 0
        ):
            raise r.fail(f"{where}.{key}", f"expected a whole number >= 0, not {options[key]!r}")
    return Check(check_id, description.strip(), kind, at, options)


def _phrases(r: _Reader, raw: dict[str, Any], where: str) -> list[str]:
    if ("phrase" in raw) == ("any" in raw):
        raise r.fail(where, 'give exactly one of phrase = "..." or any = ["...", ...]')
    values = [raw["phrase"]] if "phrase" in raw else raw["any"]
    if not isinstance(values, list) or not values:
        raise r.fail(f"{where}.any", "expected a non-empty list of phrases")
    return [r.text(value, f"{where}.phrase") for value in values]


# --- running ------------------------------------------------------------------------------------


def run_scenario(
    scenario: Scenario, workdir: str | Path, synthesizer: Synthesizer | None = None
) -> ScenarioResult:
    """Replay a scenario in a fresh workspace under workdir, dreaming on schedule; judge it."""
    began = time.perf_counter()
    root = Path(workdir) / re.sub(r"[^\w.-]+", "-", scenario.name)
    if root.exists() and any(root.iterdir()):
        raise UsageError(f"{root} is not empty; give run_scenario a fresh working folder")
    root.mkdir(parents=True, exist_ok=True)
    (root / "dreamer.toml").write_text(_toml_settings(scenario.settings), encoding="utf-8")
    home = Path(workdir) / f"{root.name}.home"  # the captured sessions' user home
    synth = synthesizer or OfflineSynthesizer()
    dreams: list[dict[str, Any]] = []
    verdicts: list[CheckResult] = []
    with Workspace.open(root, environ={}) as ws:
        ws.init()
        for at, _, step, payload in _timeline(scenario):
            if step == "event":
                _apply(ws, payload, at, home)
            elif step == "tick":
                consolidation_tick(ws, at)
            elif step == "dream":
                force = scenario.force if payload is None else payload
                dreams.append(_dream(ws, at, force, synth))
            else:
                verdicts.extend(_judge(ws, payload, at, dreams, home))
        memory = _read(ws.memory_md)
    order = {check.id: i for i, check in enumerate(scenario.checks)}
    verdicts.sort(key=lambda v: order[v.id])
    return ScenarioResult(
        scenario.name, verdicts, dreams, round(time.perf_counter() - began, 2), memory
    )


def _toml_settings(settings: dict[str, Any]) -> str:
    return "".join(f"{json.dumps(key)} = {json.dumps(value)}\n" for key, value in settings.items())


def _timeline(scenario: Scenario) -> list[tuple[datetime, int, str, Any]]:
    items: list[tuple[datetime, int, str, Any]] = [
        (e.at, _ORDER["event"], "event", e) for e in scenario.events if e.kind != "dream"
    ]
    items += [
        (e.at, _ORDER["dream"], "dream", e.data["force"])
        for e in scenario.events
        if e.kind == "dream"
    ]
    if scenario.consolidate_every_minutes:
        step, moment = timedelta(minutes=scenario.consolidate_every_minutes), scenario.start
        while moment <= scenario.end:
            items.append((moment, _ORDER["tick"], "tick", None))
            moment += step
    day = scenario.start.date()
    while day <= scenario.end.date():
        for hhmm in scenario.dream_times:
            hour, minute = map(int, hhmm.split(":"))
            moment = as_utc(datetime(day.year, day.month, day.day, hour, minute))
            if scenario.start <= moment <= scenario.end:
                items.append((moment, _ORDER["dream"], "dream", None))
        day += timedelta(days=1)
    by_moment: dict[datetime, list[Check]] = {}
    for check in scenario.checks:
        by_moment.setdefault(check.at or scenario.end, []).append(check)
    items += [(at, _ORDER["check"], "check", checks) for at, checks in by_moment.items()]
    # Stable: events keep their file order within one moment.
    return sorted(items, key=lambda item: (item[0], item[1]))


def _apply(ws: Workspace, event: Event, at: datetime, home: Path) -> None:
    if event.kind == "session":  # written as the CLI writes it, ingested as SessionEnd does
        spec = event.data["spec"]
        began = at - timedelta(minutes=transcripts.TURN_MINUTES * len(spec["turns"]))
        written = transcripts.write_session(
            spec, home, began, f"{ws.root.name}/{event.data['number']}"
        )
        ingest(ws, written.paths, at)
    elif event.kind == "note":
        ws.note(
            event.data["text"], importance=event.data["importance"], type=event.data["type"], at=at
        )
    elif event.kind == "feel":
        feel(ws, event.data["hormone"], event.data["delta"], event.data["reason"], at)
    elif event.kind == "dream_md":
        ws.dream_md.write_text(event.data["text"], encoding="utf-8")
    elif event.kind == "memory_md":  # a user's hand edit between dreams (or a seed to migrate)
        ws.memory_md.write_text(event.data["text"], encoding="utf-8")


def _dream(ws: Workspace, at: datetime, force: bool, synth: Synthesizer) -> dict[str, Any]:
    try:
        result = run_dream(ws, now=at, force=force, synthesizer=synth)
    except DreamError as e:
        outcome = "rejected" if isinstance(e, DreamRejected) else "failed"
        return {"at": iso(at), "outcome": outcome, "reason": str(e)}
    return {
        "at": iso(at),
        "outcome": result.outcome,
        "reason": result.reason,
        "synthesizer": result.synthesizer,
        "revisions": result.revisions,
    }


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


# --- judging ------------------------------------------------------------------------------------


@dataclass
class _View:
    """The state as a check sees it at one moment; the bootstrap is built on demand."""

    ws: Workspace
    at: datetime
    text: str
    state: WorkingMemory
    dreams: list[dict[str, Any]]
    home: Path | None = None
    _boot: dict[int, str] = field(default_factory=dict)

    def phrases(self, opts: dict[str, Any]) -> list[str]:
        """The check's phrases with ``{home}`` read as the captured sessions' home folder."""
        home = str(self.home) if self.home else "{home}"
        return [p.replace("{home}", home) for p in opts["phrases"]]

    def crystals(self) -> list[Any]:
        """Every crystal the store holds (forgotten ones are gone), oldest first."""
        return self.ws.store.crystals.select()

    def region(self, section: str, window: int | None) -> tuple[str, str]:
        """(label, text) of a section key, 'memory' (all of MEMORY.md) or 'bootstrap'."""
        if section == "memory":
            return "MEMORY.md", self.text
        if section == "bootstrap":
            size = window or BOOTSTRAP_WINDOW
            if size not in self._boot:
                self._boot[size] = bootstrap(self.ws, context_window=size, now=self.at).text
            return f"the {size // 1000}k bootstrap block", self._boot[size]
        return section, self.state.body(section)

    def hits(self, query: str, limit: int) -> list[Any]:
        """Search hits for query at this moment, not recorded as a search."""
        return search_crystals(
            self.ws.store,
            self.ws.embedder,
            self.ws.settings,
            query,
            now=self.at,
            limit=limit,
            record=False,
        )


def _judge(
    ws: Workspace,
    checks: list[Check],
    at: datetime,
    dreams: list[dict[str, Any]],
    home: Path | None = None,
) -> list[CheckResult]:
    text = _read(ws.memory_md)
    view = _View(ws, at, text, parse(text), list(dreams), home)
    out = []
    for check in checks:
        ok, evidence = CHECKS[check.kind].run(view, check.options)
        out.append(CheckResult(check.id, check.description, ok, "" if ok else evidence, iso(at)))
    return out


def _norm(text: str) -> str:
    return " ".join(text.translate(_QUOTES).casefold().split())


def _pattern(phrase: str) -> re.Pattern[str]:
    """A phrase as whole words, any case, any run of spaces."""
    words = [re.escape(w) for w in _norm(phrase).split(" ")]
    return re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)")


def _found(phrase: str, text: str, opts: dict[str, Any]) -> bool:
    """Whether text holds the phrase: as whole words, or anywhere with ``substring = true``."""
    if opts.get("substring"):
        return _norm(phrase) in _norm(text)
    return bool(_pattern(phrase).search(_norm(text)))


def _lines_with(text: str, phrase: str) -> list[str]:
    pattern = _pattern(phrase)
    return [line.strip() for line in text.split("\n") if pattern.search(_norm(line))]


def _short(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _must_contain(view: _View, opts: dict[str, Any]) -> tuple[bool, str]:
    label, text = view.region(opts.get("section", "memory"), opts.get("context_window"))
    if any(_found(p, text, opts) for p in view.phrases(opts)):
        return True, ""
    shown = _short(text, 240) if text.strip() else "(empty)"
    return False, f"none of {opts['phrases']} in {label}: {shown}"


def _must_not_contain(view: _View, opts: dict[str, Any]) -> tuple[bool, str]:
    label, text = view.region(opts.get("section", "memory"), opts.get("context_window"))
    found = [
        (p, line) for p in view.phrases(opts) for line in text.split("\n") if _found(p, line, opts)
    ]
    if not found:
        return True, ""
    phrase, line = found[0]
    more = f" (+{len(found) - 1} more)" if len(found) > 1 else ""
    return False, f"{phrase!r} in {label}: {_short(line)}{more}"


def _must_not_be_current(view: _View, opts: dict[str, Any]) -> tuple[bool, str]:
    markers = [_norm(m) for m in opts.get("past_markers", PAST_MARKERS)]
    for key in opts.get("sections", ["active_context", "bond"]):
        for phrase in opts["phrases"]:
            for line in _lines_with(view.state.body(key), phrase):
                if not any(marker in _norm(line) for marker in markers):
                    return False, f"{phrase!r} stated as current in {key}: {_short(line)}"
    return True, ""


def _pointers_not_truncated(view: _View, opts: dict[str, Any]) -> tuple[bool, str]:
    cut = [p.topic for p in view.state.pointers() if p.topic.rstrip().endswith(("…", "..."))]
    return (not cut), f"{len(cut)} topic(s) cut: " + "; ".join(_short(t, 80) for t in cut[:3])


def _pointers_descriptive(view: _View, opts: dict[str, Any]) -> tuple[bool, str]:
    least = opts.get("min_words", 3)
    bad = []
    for pointer in view.state.pointers():
        words = _TOPIC_WORD.findall(pointer.topic.casefold())
        content = [
            w for w in words if w not in LABEL_WORDS | DATE_WORDS | TOPIC_STOP and len(w) > 1
        ]
        if len(words) < least or len(content) < 2:
            bad.append(pointer.topic)
    return (not bad), f"{len(bad)} bare topic(s): " + "; ".join(repr(t) for t in bad[:4])


def _pointers_retrieve(view: _View, opts: dict[str, Any]) -> tuple[bool, str]:
    lost = []
    for pointer in view.state.pointers():
        wanted = stems(pointer.keywords)
        need = max(1, math.ceil(len(wanted) / 2))
        hits = view.hits(pointer.keywords, POINTER_SEARCH_LIMIT) if wanted else []
        if not any(len(wanted & stems(hit.text)) >= need for hit in hits):
            lost.append(f"`{pointer.keywords}` ({_short(pointer.topic, 50)})")
    return (not lost), f"{len(lost)} pointer(s) find nothing: " + "; ".join(lost[:3])


def _pointer_group(view: _View, opts: dict[str, Any]) -> tuple[bool, str]:
    patterns = [_pattern(p) for p in opts["phrases"]]
    members = [
        p
        for p in view.state.pointers()
        if any(pat.search(_norm(f"{p.topic} {p.keywords}")) for pat in patterns)
    ]
    most = opts.get("max", 1)
    if len(members) <= most:
        return True, ""
    return False, (
        f"{len(members)} pointers for {opts['name']!r} (at most {most}): "
        + "; ".join(_short(p.topic, 60) for p in members[:6])
    )


def _searchable(view: _View, opts: dict[str, Any]) -> tuple[bool, str]:
    hits = view.hits(opts["query"], opts.get("limit", POINTER_SEARCH_LIMIT))
    if any(_found(p, hit.text, opts) for hit in hits for p in view.phrases(opts)):
        return True, ""
    shown = "; ".join(f"#{hit.id} {_short(hit.text, 60)}" for hit in hits[:3]) or "nothing"
    return False, f"search {opts['query']!r} finds none of {opts['phrases']}: {shown}"


def _not_searchable(view: _View, opts: dict[str, Any]) -> tuple[bool, str]:
    for hit in view.hits(opts["query"], opts.get("limit", 10)):
        for phrase in view.phrases(opts):
            if _pattern(phrase).search(_norm(hit.text)):
                return False, (
                    f"search {opts['query']!r} finds crystal #{hit.id} "
                    f"({hit.lifecycle}) with {phrase!r}: {_short(hit.text)}"
                )
    return True, ""


def _crystals_must_not_contain(view: _View, opts: dict[str, Any]) -> tuple[bool, str]:
    phrases = view.phrases(opts)
    found = [
        (crystal, phrase)
        for crystal in view.crystals()
        for phrase in phrases
        if _found(phrase, crystal.text, opts)
    ]
    if not found:
        return True, ""
    crystal, phrase = found[0]
    more = f" (+{len(found) - 1} more)" if len(found) > 1 else ""
    return False, (
        f"crystal #{crystal.id} ({crystal.lifecycle}) holds {phrase!r}: {_short(crystal.text)}"
        f"{more}"
    )


def _seen_on_dates(view: _View, opts: dict[str, Any]) -> tuple[bool, str]:
    """The days on which crystals holding a phrase were written (their sightings included)."""
    matching = [
        c for c in view.crystals() if any(_found(p, c.text, opts) for p in view.phrases(opts))
    ]
    days = {c.created_at[:10] for c in matching}
    sightings = repeats.of(view.ws.store, [(c.id, c.created_at) for c in matching])
    days |= {sighting.last[:10] for sighting in sightings.values()}
    least = opts.get("min", 2)
    if len(days) >= least:
        return True, ""
    shown = ", ".join(sorted(days)) or "no day"
    return False, (
        f"{len(matching)} crystal(s) with {opts['phrases']} seen on {shown}; "
        f"expected at least {least} days"
    )


def _tokens_whole(view: _View, opts: dict[str, Any]) -> tuple[bool, str]:
    """No line stops inside a code token or starts with its tail, and no code span is open."""
    label, text = view.region(opts.get("section", "memory"), opts.get("context_window"))
    for line in text.split("\n"):
        flat = line.strip().rstrip("…").rstrip()
        if flat.count("`") % 2:
            return False, f"a code span is cut in {label}: {_short(flat)}"
        for token in opts["tokens"]:
            if token.casefold() in flat.casefold():
                continue
            for cut in _TOKEN_CUT.finditer(token):
                head, tail = token[: cut.start() + 1], token[cut.start() + 1 :]
                body = flat.lstrip("-*• ").casefold()
                if flat.casefold().endswith(head.casefold()) or (
                    len(tail) > 2 and body.startswith(tail.casefold())
                ):
                    return False, f"{token!r} cut in {label}: {_short(flat)}"
    return True, ""


def _forgotten(view: _View, opts: dict[str, Any]) -> tuple[bool, str]:
    count = view.ws.store.forgetting.tombstone_count()
    least = opts.get("min", 1)
    if count >= least:
        return True, ""
    return False, f"{count} crystal(s) forgotten; expected at least {least}"


def _dreams_ok(view: _View, opts: dict[str, Any]) -> tuple[bool, str]:
    bad = [d for d in view.dreams if d["outcome"] in ("rejected", "failed")]
    if not bad:
        return True, ""
    first = bad[0]
    return False, (
        f"{len(bad)} of {len(view.dreams)} dreams not committed; first at "
        f"{first['at']}: {first['outcome']}: {_short(first['reason'])}"
    )


@dataclass(frozen=True)
class _Kind:
    """A check kind: its function and the keys a check of this kind may have."""

    run: Callable[[_View, dict[str, Any]], tuple[bool, str]]
    keys: frozenset[str] = frozenset()
    phrases: bool = False
    sections: tuple[str, ...] = ()
    default_section: str = "memory"
    required: frozenset[str] = frozenset()


_TEXT_KEYS = frozenset({"phrase", "any", "section", "context_window", "substring"})
_REGIONS = ("memory", "bootstrap", *section_keys())
CHECKS: dict[str, _Kind] = {
    "must_contain": _Kind(_must_contain, _TEXT_KEYS, True, _REGIONS),
    "must_not_contain": _Kind(_must_not_contain, _TEXT_KEYS, True, _REGIONS),
    "must_not_be_current": _Kind(
        _must_not_be_current, frozenset({"phrase", "any", "sections", "past_markers"}), True
    ),
    "pointers_not_truncated": _Kind(_pointers_not_truncated),
    "pointers_descriptive": _Kind(_pointers_descriptive, frozenset({"min_words"})),
    "pointers_retrieve": _Kind(_pointers_retrieve),
    "pointer_group": _Kind(
        _pointer_group,
        frozenset({"name", "phrase", "any", "max"}),
        True,
        required=frozenset({"name"}),
    ),
    "searchable": _Kind(
        _searchable,
        frozenset({"query", "phrase", "any", "limit", "substring"}),
        True,
        required=frozenset({"query"}),
    ),
    "not_searchable": _Kind(
        _not_searchable,
        frozenset({"query", "phrase", "any", "limit"}),
        True,
        required=frozenset({"query"}),
    ),
    "crystals_must_not_contain": _Kind(
        _crystals_must_not_contain, frozenset({"phrase", "any", "substring"}), True
    ),
    "seen_on_dates": _Kind(_seen_on_dates, frozenset({"phrase", "any", "min", "substring"}), True),
    "tokens_whole": _Kind(
        _tokens_whole,
        frozenset({"tokens", "section", "context_window"}),
        sections=_REGIONS,
        required=frozenset(),
    ),
    "forgotten": _Kind(_forgotten, frozenset({"min"})),
    "dreams_ok": _Kind(_dreams_ok),
}


# --- reporting ----------------------------------------------------------------------------------


def shipped_scenarios() -> list[Path]:
    """The scenarios the package ships (benchmarks/scenarios of the repository): the written
    notes, then the captured-session months (``captured/``)."""
    if not SCENARIO_DIR.is_dir():
        return []
    found = []
    for folder in (SCENARIO_DIR, SCENARIO_DIR / "captured"):
        if folder.is_dir():
            found += sorted(p for p in folder.iterdir() if p.suffix in (".toml", ".json"))
    return found


def format_report(results: list[ScenarioResult]) -> str:
    """A readable report: per scenario its score, then every check with PASS/FAIL and evidence."""
    lines: list[str] = []
    for result in results:
        outcomes: dict[str, int] = {}
        for dream in result.dreams:
            outcomes[dream["outcome"]] = outcomes.get(dream["outcome"], 0) + 1
        summary = ", ".join(f"{n} {name}" for name, n in sorted(outcomes.items())) or "none"
        lines.append(
            f"{result.name}: {result.passed}/{result.total} checks passed "
            f"(dreams: {summary}; {result.seconds} s)"
        )
        width = max((len(check.id) for check in result.checks), default=0)
        for check in result.checks:
            verdict = "PASS" if check.passed else "FAIL"
            lines.append(f"  {verdict} {check.id:<{width}}  {check.description}")
            if not check.passed:
                lines.append(f"       {'':<{width}}  at {check.at}: {check.evidence}")
        lines.append("")
    passed = sum(r.passed for r in results)
    total = sum(r.total for r in results)
    lines.append(f"total: {passed}/{total} checks passed in {len(results)} scenario(s)")
    return "\n".join(lines)
