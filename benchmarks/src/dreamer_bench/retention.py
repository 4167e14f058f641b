"""Retention on LoCoMo: how much of what is later asked about survives the dreams.

Each conversation is replayed session by session in a fresh workspace: every turn is a note
(``Workspace.note``, its text ``"<session date> <Speaker>: <text>"``, dated at its session),
and a dream (the offline synthesizer unless another is passed) runs after each session. Then
every question of categories 1-4 is checked against what an agent would load: MEMORY.md, and
the bootstrap block for a 32k context window. A question's answer is *kept* by a text when the
text holds its content words (all of a one- or two-word answer, at least half of a longer one;
lower-cased, punctuation and stop words aside).

Beside each text, two references of the same size in characters: the most recent turns that
fit (a window, what a chat log cut to that size keeps) and the dataset's own session summaries,
newest first, cut to that size. The share of answers each keeps is the figure; the dreams help
when MEMORY.md keeps clearly more than the window of the same size.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from dreamer.agents.bootstrap import bootstrap_block
from dreamer.dream.cycle import run as run_dream
from dreamer.dream.synth import Synthesizer
from dreamer.dream.synth.offline import OfflineSynthesizer
from dreamer.errors import DreamError, UsageError
from dreamer.memory.workspace import Workspace
from dreamer.support.progress import Progress
from dreamer_bench.locomo import SCORED, Conversation, Turn, load

CONTEXT_WINDOW = 32_000  # the smallest bootstrap budget, as in `dream bench quality`
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset(
    "a an the of in on at to for and or is was were be by with from that this it its as "
    "her his their she he they them i my we our you your".split()
)


@dataclass
class Kept:
    """Answers kept by one text and by its two same-size references."""

    chars: int
    dreamed: int = 0
    window: int = 0
    summaries: int = 0


@dataclass
class ConversationResult:
    """One conversation's retention: questions scored, answers kept per text, dreams run."""

    index: int
    sample_id: str
    questions: int
    dreams: int
    failed_dreams: int
    memory: Kept
    bootstrap: Kept
    seconds: float
    details: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


def content(text: str) -> set[str]:
    """The content words of a text, lower-cased."""
    return {t for t in _TOKEN.findall(text.lower()) if t not in _STOP}


def keeps(text_words: set[str], answer: str) -> bool:
    """Whether a text (its content words) holds an answer: all of a short one, half of a long."""
    wanted = content(answer)
    if not wanted:
        return False
    held = len(wanted & text_words)
    return held == len(wanted) if len(wanted) <= 2 else held >= 0.5 * len(wanted)


def window(turns: list[Turn], chars: int) -> str:
    """The most recent turns whose text fits in chars."""
    out: list[str] = []
    used = 0
    for turn in reversed(turns):
        doc = turn.document()
        if used + len(doc) + 1 > chars:
            break
        out.append(doc)
        used += len(doc) + 1
    return "\n".join(reversed(out))


def summaries(texts: list[str], chars: int) -> str:
    """The session summaries, newest first, cut to chars."""
    return "\n".join(reversed(texts))[:chars]


def _answers(path: Path) -> list[dict[str, str]]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for sample in raw:
        answers = {
            str(qa["question"]): str(qa["answer"])
            for qa in sample.get("qa", [])
            if "answer" in qa and int(qa.get("category", 0)) in SCORED
        }
        out.append(answers)
    return out


def _summaries(path: Path) -> list[list[str]]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for sample in raw:
        found = sample.get("session_summary") or {}
        numbered = sorted(
            (int(m[1]), str(v)) for k, v in found.items() if (m := re.match(r"session_(\d+)", k))
        )
        out.append([text for _, text in numbered])
    return out


def _replay(ws: Workspace, conversation: Conversation, synth: Synthesizer) -> tuple[int, int]:
    """Note every turn, dreaming after each session; (dreams run, dreams not committed)."""
    dreams = failed = 0
    sessions: dict[str, list[Turn]] = {}
    for turn in conversation.turns:
        sessions.setdefault(turn.dia_id.split(":")[0], []).append(turn)
    for turns in sessions.values():
        for turn in turns:
            ws.note(turn.document(), at=turn.at, embed=True)
        dreams += 1
        try:
            result = run_dream(
                ws, now=turns[-1].at + timedelta(hours=1), force=True, synthesizer=synth
            )
            failed += not result.committed
        except DreamError:
            failed += 1
    return dreams, failed


def run(
    path: str | Path,
    indices: list[int],
    *,
    synthesizer: Synthesizer | None = None,
    parent: Path | None = None,
    progress: Callable[[str], None] | None = None,
    counts: Progress | None = None,
) -> list[ConversationResult]:
    """Replay the chosen conversations through dreams and measure what MEMORY.md keeps;
    ``counts(done, total)`` counts conversations."""
    path = Path(path)
    conversations, _ = load(path)
    answers, session_texts = _answers(path), _summaries(path)
    for index in indices:
        if not 0 <= index < len(conversations):
            raise UsageError(f"no conversation {index} in {path} (0 to {len(conversations) - 1})")
    synth = synthesizer or OfflineSynthesizer()
    results = []
    for index in indices:
        began = time.perf_counter()
        conversation = conversations[index]
        asked = [
            (q.text, answers[index][q.text])
            for q in conversation.questions
            if q.text in answers[index]
        ]
        folder = Path(tempfile.mkdtemp(prefix="dream-retention-", dir=parent))
        try:
            with Workspace.open(folder, environ={}) as ws:
                ws.init()
                dreams, failed = _replay(ws, conversation, synth)
                memory = ws.memory_md.read_text(encoding="utf-8")
                last = conversation.turns[-1].at + timedelta(hours=2)
                block = bootstrap_block(ws, context_window=CONTEXT_WINDOW, now=last)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        scores = {}
        details = []
        for name, text in (("memory", memory), ("bootstrap", block)):
            kept = Kept(len(text))
            refs = {
                "dreamed": content(text),
                "window": content(window(conversation.turns, len(text))),
                "summaries": content(summaries(session_texts[index], len(text))),
            }
            for question, answer in asked:
                hits = {ref: keeps(words, answer) for ref, words in refs.items()}
                kept.dreamed += hits["dreamed"]
                kept.window += hits["window"]
                kept.summaries += hits["summaries"]
                if name == "memory":
                    details.append({"question": question, "answer": answer, **hits})
            scores[name] = kept
        results.append(
            ConversationResult(
                index,
                conversation.sample_id,
                len(asked),
                dreams,
                failed,
                scores["memory"],
                scores["bootstrap"],
                round(time.perf_counter() - began, 1),
                details,
            )
        )
        if progress:
            progress(format_row(results[-1]))
        if counts:
            counts(len(results), len(indices))
    return results


def _share(n: int, total: int) -> str:
    return f"{n / total:.3f}" if total else "n/a"


def format_row(r: ConversationResult) -> str:
    """One conversation's line of the report."""
    m, b = r.memory, r.bootstrap
    return (
        f"conv {r.index} ({r.sample_id}): {r.questions} questions, {r.dreams} dreams"
        f" ({r.failed_dreams} not committed), {r.seconds} s | MEMORY.md {m.chars} chars:"
        f" {_share(m.dreamed, r.questions)} vs window {_share(m.window, r.questions)},"
        f" summaries {_share(m.summaries, r.questions)} | bootstrap {b.chars} chars:"
        f" {_share(b.dreamed, r.questions)} vs window {_share(b.window, r.questions)},"
        f" summaries {_share(b.summaries, r.questions)}"
    )


def format_report(results: list[ConversationResult]) -> str:
    """Per conversation, then the totals (answers kept over questions asked)."""
    lines = [format_row(r) for r in results]
    total = sum(r.questions for r in results)
    for name in ("memory", "bootstrap"):
        kept = [getattr(r, name) for r in results]
        lines.append(
            f"total {name}: {_share(sum(k.dreamed for k in kept), total)} kept by the dreams,"
            f" {_share(sum(k.window for k in kept), total)} by a window of recent turns,"
            f" {_share(sum(k.summaries for k in kept), total)} by the session summaries"
            f" ({total} questions)"
        )
    return "\n".join(lines)
