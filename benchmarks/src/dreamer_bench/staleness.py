"""Staleness: once a later fact makes earlier ones untrue, how many does memory still state?

A scenario is a person's facts noted on one day (a city, and the commute and gym that go with
it), a dream, then two days later one note that makes them untrue without saying so ("Lena has
moved to Bristol"), and the next dream. The earlier facts that depend on the old one are the
*stale beliefs*: each is a phrase that must no longer be stated as current. A belief is left
when a line of MEMORY.md or of the 32k bootstrap block (crystal pointer lines aside: they name
the past by design) holds its phrase without a past marker ("previously", "moved from", "no
longer" ...; ``dreamer_bench.quality.PAST_MARKERS``). The figures are the share of stale beliefs
left, and, so that forgetting everything does not score well, the share of new facts kept.

Each scenario runs in a fresh workspace, offline and through each model backend with a scripted
fake model behind it: ``claude`` (the Anthropic SDK against the fake Messages API),
``claude-code`` (the real ``claude`` CLI, found through ``DREAM_CLAUDE_CLI``, against the same
fake; skipped without it) and ``openai`` (chat completions against the same fake server). The
fake is a deterministic echo, not a model: it answers every dream with the state it was given,
Active Context extended by every note it was handed, one line each, newest kept when the section
is full, and the other sections left out (so kept). It never drops a line, so what a backend's
figure shows is what dreamer itself does around a model that forgets nothing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dreamer.agents.bootstrap import bootstrap
from dreamer.dream.cycle import run as run_dream
from dreamer.dream.synth import Synthesizer
from dreamer.dream.synth.offline import OfflineSynthesizer
from dreamer.dream.synth.prompt import TOOL_NAME
from dreamer.errors import DreamError
from dreamer.memory.state import parse
from dreamer.memory.workspace import Workspace
from dreamer_bench.fake_anthropic import FakeAnthropic, Recorded, Scripted, message_body
from dreamer_bench.quality import PAST_MARKERS

BACKENDS = ("offline", "claude", "claude-code", "openai")
BOOTSTRAP_WINDOW = 32_000
ECHO_CHARS = 4_000  # the echo's Active Context: about the section's 1,200-token budget
DAY = datetime(2026, 6, 1, tzinfo=UTC)
FAKE_TOKEN = "sk-ant-oat-bench-0000"
_NOTE = re.compile(r"^#\d+ .*?: (.*)$")  # "#12 2026-06-01 09:00 world_fact .70: text"


@dataclass(frozen=True)
class Case:
    """One scenario: the facts of the first day, the later fact, what went stale, what is new."""

    name: str
    before: tuple[str, ...]
    change: str
    stale: tuple[str, ...]
    new: tuple[str, ...]


# Each in other words: a person's move, a job, a library, a car, a team, a database, a home.
CASES = (
    Case(
        "moved-city",
        (
            "Lena lives in Leeds, in a flat off Hyde Park Road.",
            "Lena's commute is the 07:40 train from Leeds to Manchester Piccadilly.",
            "After work Lena trains at the PureGym on Kirkstall Road, Mondays and Thursdays.",
        ),
        "Lena has moved to Bristol; her new flat is ten minutes from Temple Meads.",
        ("Leeds", "07:40 train", "Kirkstall Road", "Hyde Park Road"),
        ("Bristol",),
    ),
    Case(
        "changed-job",
        (
            "Omar is a data analyst at Brightline Logistics.",
            "Omar's manager at Brightline is Karen Holt; she wants a weekly KPI email.",
            "Omar works from the Canary Wharf office on Tuesdays and Thursdays.",
        ),
        "Omar accepted the offer from Northwind Health and started there on Monday.",
        ("Brightline", "Karen Holt", "Canary Wharf", "KPI email"),
        ("Northwind Health",),
    ),
    Case(
        "library-replaced",
        (
            "The API runs its background jobs on Celery.",
            "celeryconfig.py points the broker at RabbitMQ with a prefetch of 1.",
            "Workaround: tasks use acks_late because Celery loses them when a worker restarts.",
        ),
        "We ripped the job queue out and background jobs now run on Dramatiq with Redis.",
        ("Celery", "celeryconfig.py", "RabbitMQ", "acks_late"),
        ("Dramatiq",),
    ),
    Case(
        "sold-car",
        (
            "Priya drives a 2014 VW Golf.",
            "The Golf's MOT is due on 14 June.",
            "Priya parks in the Elm Street car park with permit 4471.",
        ),
        "Priya sold her car last week and cycles everywhere now.",
        ("VW Golf", "MOT", "permit 4471", "Elm Street car park"),
        ("cycles",),
    ),
    Case(
        "changed-team",
        (
            "Ana is an engineer on the Payments team.",
            "Ana's standup is at 09:30 in #payments-standup.",
            "Ana is on call for the card processor in the first week of each month.",
        ),
        "Ana transferred to the Search team this sprint.",
        ("Payments team", "#payments-standup", "card processor"),
        ("Search team",),
    ),
    Case(
        "database-migrated",
        (
            "The reports run on MySQL 5.7.",
            "The nightly backup is a mysqldump with --single-transaction at 02:00.",
            "Workaround: the GROUP BY reports turn off ONLY_FULL_GROUP_BY in sql_mode.",
        ),
        "Since last weekend's migration the reporting database lives on Postgres 16.",
        ("MySQL", "mysqldump", "ONLY_FULL_GROUP_BY"),
        ("Postgres 16",),
    ),
    Case(
        "bought-house",
        (
            "The Okafors rent a flat on Hill Road.",
            "Their rent of 1,250 pounds is due on the 1st of each month.",
            "Their landlord Mr Patel fixes things slowly; the boiler ticket is still open.",
        ),
        "The Okafors got the keys to the house they bought in Chorlton and moved in.",
        ("Hill Road", "1,250 pounds", "Mr Patel", "boiler ticket"),
        ("Chorlton",),
    ),
)


@dataclass
class CaseResult:
    """What one scenario left after the dream that followed the change."""

    case: str
    backend: str
    stale: int
    left_memory: list[str]
    left_bootstrap: list[str]
    new: int
    kept_new: int
    dreams: list[str] = field(default_factory=list)


@dataclass
class BackendResult:
    """One backend over every scenario (or why it was skipped)."""

    backend: str
    cases: list[CaseResult] = field(default_factory=list)
    skipped: str = ""
    seconds: float = 0.0

    def share(self, which: str) -> float | None:
        """Stale beliefs left (``memory`` or ``bootstrap``) or new facts kept (``new``)."""
        if not self.cases:
            return None
        if which == "new":
            return sum(c.kept_new for c in self.cases) / sum(c.new for c in self.cases)
        left = sum(
            len(c.left_memory if which == "memory" else c.left_bootstrap) for c in self.cases
        )
        return left / sum(c.stale for c in self.cases)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with the shares."""
        shares = {k: self.share(k) for k in ("memory", "bootstrap", "new")}
        return {**asdict(self), "shares": shares}


# --- measuring ----------------------------------------------------------------------------------


def stated_as_current(text: str, phrase: str) -> list[str]:
    """The lines of text that hold phrase (any case, whole words) with no past marker."""
    pattern = re.compile(r"(?<!\w)" + re.escape(phrase.casefold()) + r"(?!\w)")
    return [
        line.strip()
        for line in text.split("\n")
        if pattern.search(line.casefold()) and not any(m in line.casefold() for m in PAST_MARKERS)
    ]


def without_pointers(text: str) -> str:
    """Text without its crystal pointer lines (``- Past: topic → search: `keywords```): a
    pointer names the past on purpose."""
    return "\n".join(line for line in text.split("\n") if "→ search:" not in line)


def run_case(
    case: Case, root: Path, backend: str, synth: Synthesizer, environ: dict[str, str]
) -> CaseResult:
    """Note the first day's facts, dream, note the change two days later, dream, measure."""
    dreams = []
    with Workspace.open(root, environ=environ) as ws:
        ws.init()
        for hour, text in enumerate(case.before, start=9):
            ws.note(text, importance=0.7, at=DAY.replace(hour=hour))
        for moment in (DAY.replace(hour=23), None):
            if moment is None:
                ws.note(case.change, importance=0.7, at=DAY + timedelta(days=2, hours=10))
                moment = DAY + timedelta(days=2, hours=23)
            try:
                dreams.append(run_dream(ws, now=moment, force=True, synthesizer=synth).outcome)
            except DreamError as e:
                dreams.append(f"{type(e).__name__}: {e}")
        written = ws.memory_md.read_text(encoding="utf-8") if ws.memory_md.exists() else ""
        memory = without_pointers(written)
        boot = without_pointers(bootstrap(ws, context_window=BOOTSTRAP_WINDOW, now=moment).text)
    return CaseResult(
        case.name,
        backend,
        len(case.stale),
        [p for p in case.stale if stated_as_current(memory, p)],
        [p for p in case.stale if stated_as_current(boot, p)],
        len(case.new),
        sum(1 for p in case.new if stated_as_current(memory, p)),
        dreams,
    )


# --- the echo model ---------------------------------------------------------------------------


def echo_state(prompt: str) -> dict[str, Any]:
    """The echo's answer to a dream prompt: Active Context as given, plus a line per note."""
    state = re.search(r"<current_state>\n?(.*?)</current_state>", prompt, re.DOTALL)
    notes = re.search(r"<notes[^>]*>\n?(.*?)</notes>", prompt, re.DOTALL)
    current = parse(state.group(1)) if state else parse("")
    lines = [ln for ln in current.body("active_context").split("\n") if ln.strip()]
    for raw in (notes.group(1) if notes else "").split("\n"):
        found = _NOTE.match(raw.strip())
        if found:
            lines.append("- " + " ".join(found.group(1).split())[:300])
    lines = list(dict.fromkeys(lines))
    while sum(len(ln) + 1 for ln in lines) > ECHO_CHARS:
        lines.pop(0)  # the oldest goes first
    return {"active_context": "\n".join(lines) or "- (nothing yet)"}


def _prompt(body: dict[str, Any]) -> str:
    """The dream prompt in a request (Messages API or chat completions): the first text that
    holds the current state."""
    for message in body.get("messages", []):
        content = message.get("content")
        texts = (
            [content]
            if isinstance(content, str)
            else [str(b.get("text", "")) for b in content or [] if isinstance(b, dict)]
        )
        for text in texts:
            if "<current_state>" in text:
                return text
    return ""


def _answer(recorded: Recorded) -> Scripted:
    """The echo's reply to any request, by what the request is."""
    body = recorded.json if isinstance(recorded.json, dict) else {}
    if recorded.path.endswith("/chat/completions"):
        arguments = json.dumps(echo_state(_prompt(body)))
        function = {"name": TOOL_NAME, "arguments": arguments}
        call = {"id": "call_echo", "type": "function", "function": function}
        return Scripted(
            200, _completion({"role": "assistant", "content": None, "tool_calls": [call]})
        )
    tools = [t.get("name") for t in body.get("tools", []) if isinstance(t, dict)]
    last = json.dumps((body.get("messages") or [{}])[-1])
    if not tools or '"tool_result"' in last:  # a title request; the CLI's turn after the tool
        return Scripted(200, message_body([{"type": "text", "text": "Done."}]))
    name = TOOL_NAME if TOOL_NAME in tools else tools[0]  # the CLI offers StructuredOutput
    block = {"type": "tool_use", "id": "toolu_echo", "name": name}
    block["input"] = echo_state(_prompt(body))
    return Scripted(200, message_body([block], stop_reason="tool_use"))


def _completion(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-echo",
        "object": "chat.completion",
        "created": 1_780_000_000,
        "model": "echo",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 1_200, "completion_tokens": 300, "total_tokens": 1_500},
    }


class EchoModel(FakeAnthropic):
    """The fake server answering every request with the echo (no queue to run dry)."""

    def answer(self, recorded: Recorded) -> Scripted:
        """Record the request and echo."""
        with self._lock:
            self.requests.append(recorded)
        return _answer(recorded)


def _backend(
    name: str, url: str | None, home: Path, cli: str | None
) -> tuple[Callable[[Workspace], Synthesizer] | None, dict[str, str], str]:
    """(a synthesizer maker, the workspace environment, why skipped) for a backend."""
    if name == "offline":
        return (lambda ws: OfflineSynthesizer()), {}, ""
    assert url is not None
    if name == "claude":
        env = {"DREAM_SYNTHESIZER": "claude", "ANTHROPIC_API_KEY": "sk-ant-bench-0000"}

        def claude(ws: Workspace) -> Synthesizer:
            import anthropic

            from dreamer.dream.synth.claude import ClaudeSynthesizer

            client = anthropic.Anthropic(api_key="sk-ant-bench-0000", base_url=url, max_retries=0)
            return ClaudeSynthesizer(ws.settings, client=client)

        return claude, env, ""
    if name == "openai":
        env = {"DREAM_SYNTHESIZER": "openai", "OPENAI_BASE_URL": url + "/v1", "DREAM_MODEL": "echo"}

        def openai(ws: Workspace) -> Synthesizer:
            from dreamer.dream.synth.openai_compat import OpenAISynthesizer

            return OpenAISynthesizer(ws.settings)

        return openai, env, ""
    if not cli:
        return None, {}, "no Claude Code CLI (set DREAM_CLAUDE_CLI to run this backend)"
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "DREAM_SYNTHESIZER": "claude-code",
        "DREAM_CLAUDE_CLI": cli,
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_AUTH_TOKEN": FAKE_TOKEN,
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),  # node, for the CLI
    }

    def claude_code(ws: Workspace) -> Synthesizer:
        from dreamer.dream.synth.claude_code import ClaudeCodeSynthesizer

        return ClaudeCodeSynthesizer(ws.settings, environ=env)

    return claude_code, env, ""


def run(
    backends: tuple[str, ...] = BACKENDS,
    *,
    parent: Path | None = None,
    cli: str | None = None,
    cases: tuple[Case, ...] = CASES,
    progress: Callable[[str], None] | None = None,
) -> list[BackendResult]:
    """Every scenario through every backend, each in a fresh workspace (a temporary folder)."""
    work = Path(tempfile.mkdtemp(prefix="dream-staleness-", dir=parent))
    results = []
    try:
        for name in backends:
            began = time.perf_counter()
            with EchoModel().serve() as url:
                maker, env, skipped = _backend(name, url, work / "home", cli)
                result = BackendResult(name, skipped=skipped)
                for case in cases:
                    if maker is None:
                        break
                    root = work / name / case.name
                    with Workspace.open(root, environ=env) as ws:
                        synth = maker(ws)
                    result.cases.append(run_case(case, root, name, synth, env))
                    if progress:
                        progress(f"{name}: {case.name} done")
            result.seconds = round(time.perf_counter() - began, 1)
            results.append(result)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return results


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def format_report(results: list[BackendResult]) -> str:
    """A table: per backend the share of stale beliefs left and of new facts kept."""
    lines = [
        f"{'backend':<12} {'cases':>5} {'stale in MEMORY.md':>19} {'stale in bootstrap':>19} "
        f"{'new facts kept':>15} {'seconds':>8}"
    ]
    for r in results:
        if r.skipped:
            lines.append(f"{r.backend:<12} skipped: {r.skipped}")
            continue
        total = sum(c.stale for c in r.cases)
        left_m = f"{sum(len(c.left_memory) for c in r.cases)}/{total} {_share(r.share('memory'))}"
        left_b = f"{sum(len(c.left_bootstrap) for c in r.cases)}/{total}"
        left_b += f" {_share(r.share('bootstrap'))}"
        kept = f"{sum(c.kept_new for c in r.cases)}/{sum(c.new for c in r.cases)}"
        kept += f" {_share(r.share('new'))}"
        lines.append(
            f"{r.backend:<12} {len(r.cases):>5} {left_m:>19} {left_b:>19} {kept:>15} {r.seconds:>8}"
        )
    lines.append("")
    for r in results:
        for c in r.cases:
            if c.left_memory or c.left_bootstrap or c.kept_new < c.new:
                lines.append(
                    f"  {r.backend} {c.case}: left in MEMORY.md {c.left_memory or '-'}, "
                    f"in bootstrap {c.left_bootstrap or '-'}, new kept {c.kept_new}/{c.new}"
                )
            bad = [d for d in c.dreams if d not in ("committed", "skipped")]
            if bad:
                lines.append(f"  {r.backend} {c.case}: dream not committed: {bad[0][:160]}")
    return "\n".join(lines).rstrip()
