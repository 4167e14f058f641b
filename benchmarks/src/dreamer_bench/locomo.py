"""Retrieval quality on LoCoMo (Maharana et al., ACL 2024), measured through dreamer's own search.

For each conversation a fresh temporary workspace is filled with one crystal per turn (source
``sessions``, timestamp = the session's date, text ``"<session date> <Speaker>: <text> [image:
<caption>]"``); every question with evidence is then asked through ``dreamer.search.search`` (the
function agents call, ``search_type="both"``; ``record=False`` only skips the search log, the
ranking is the same). recall@k is the share of a question's evidence turns among the top k,
averaged over questions, per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial) and overall for categories 1-4. In the same run a plain BM25 (``bench.bm25``) ranks
the same documents: it is the reference, and the ratio of the two is the figure that counts.

The data has known flaws, handled and counted (``anomalies`` in the report): evidence strings
holding several ids (``"D8:6; D9:17"``) are split; leading zeros (``"D30:05"``) are dropped;
``"D:11:26"`` is read as ``D11:26``; ids that cannot be read (``"D"``) or that name turns the
conversation does not have are left out; a question left with no evidence is not scored.
"""

from __future__ import annotations

import json
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dreamer.errors import UsageError
from dreamer.memory.workspace import Workspace
from dreamer.retrieval.embed import Embedder
from dreamer.retrieval.reindex import reindex
from dreamer.retrieval.search import search
from dreamer.store import NewCrystal
from dreamer.support.progress import Progress
from dreamer_bench.bm25 import BM25

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
SCORED = (1, 2, 3, 4)  # the overall figure leaves out adversarial questions, as the paper does
_ID = re.compile(r"^D:?(\d+):(\d+)$")
_SPLIT = re.compile(r"[;,\s]+")
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"


@dataclass
class Turn:
    """One utterance of a conversation."""

    dia_id: str
    speaker: str
    text: str
    caption: str | None
    date_text: str
    at: datetime

    def document(self) -> str:
        """The text a turn is indexed as (the same for dreamer and for the BM25 reference)."""
        text = f"{self.date_text} {self.speaker}: {self.text}"
        if self.caption:
            text += f" [image: {self.caption}]"
        return text


@dataclass
class Question:
    """One question with the turns that answer it."""

    text: str
    category: int
    evidence: list[str]


@dataclass
class Conversation:
    """One LoCoMo sample: its turns in order and its questions."""

    sample_id: str
    turns: list[Turn]
    questions: list[Question]


@dataclass
class Anomalies:
    """How many evidence ids needed repair or had to be left out."""

    counts: Counter = field(default_factory=Counter)

    def to_dict(self) -> dict[str, int]:
        """A JSON-ready dict, every kind listed even when zero."""
        kinds = (
            "multiple_ids_in_one_string",
            "leading_zero",
            "malformed_repaired",
            "malformed_dropped",
            "missing_turn_dropped",
            "questions_without_evidence",
        )
        return {kind: int(self.counts[kind]) for kind in kinds}


def _parse_date(text: str, where: str) -> datetime:
    try:
        return datetime.strptime(text.strip(), _DATE_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        raise UsageError(
            f"{where}: cannot read the session date {text!r} (expected e.g. '1:56 pm on 8 May, "
            "2023'); is this the LoCoMo file?"
        ) from None


def normalise_evidence(raw: Iterable[Any], known: set[str], anomalies: Anomalies) -> list[str]:
    """Turn a question's evidence strings into known turn ids, counting every repair."""
    out: list[str] = []
    for item in raw:
        parts = [part for part in _SPLIT.split(str(item).strip()) if part]
        if len(parts) > 1:
            anomalies.counts["multiple_ids_in_one_string"] += 1
        for part in parts:
            match = _ID.match(part)
            if match is None:
                anomalies.counts["malformed_dropped"] += 1
                continue
            if part.startswith("D:"):
                anomalies.counts["malformed_repaired"] += 1
            session, turn = match.groups()
            if (len(session) > 1 and session.startswith("0")) or (
                len(turn) > 1 and turn.startswith("0")
            ):
                anomalies.counts["leading_zero"] += 1
            dia_id = f"D{int(session)}:{int(turn)}"
            if dia_id not in known:
                anomalies.counts["missing_turn_dropped"] += 1
                continue
            if dia_id not in out:
                out.append(dia_id)
    return out


def load(path: str | Path) -> tuple[list[Conversation], Anomalies]:
    """Read a LoCoMo file into conversations, normalising evidence ids."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"no file at {path}; pass the path to locomo10.json") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UsageError(f"cannot read {path} as JSON ({e}); pass the LoCoMo file") from e
    if not isinstance(raw, list):
        raise UsageError(f"{path} is not a list of conversations; pass the LoCoMo file")
    anomalies = Anomalies()
    conversations = []
    for number, sample in enumerate(raw):
        try:
            conversation = _conversation(sample, number, anomalies)
        except (KeyError, TypeError, AttributeError) as e:
            raise UsageError(
                f"{path}: conversation {number} lacks {e} or has the wrong shape; "
                "pass the LoCoMo file"
            ) from None
        conversations.append(conversation)
    return conversations, anomalies


def _session_numbers(conv: dict[str, Any]) -> list[int]:
    numbers = []
    for key, value in conv.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if match and isinstance(value, list):
            numbers.append(int(match.group(1)))
    return sorted(numbers)


def _conversation(sample: dict[str, Any], number: int, anomalies: Anomalies) -> Conversation:
    conv = sample["conversation"]
    sample_id = str(sample.get("sample_id", number))
    turns = []
    for session in _session_numbers(conv):
        date_text = conv[f"session_{session}_date_time"]
        at = _parse_date(date_text, f"{sample_id} session {session}")
        for turn in conv[f"session_{session}"]:
            turns.append(
                Turn(
                    str(turn["dia_id"]),
                    str(turn["speaker"]),
                    str(turn["text"]),
                    turn.get("blip_caption") or None,
                    date_text,
                    at,
                )
            )
    known = {turn.dia_id for turn in turns}
    questions = []
    for qa in sample["qa"]:
        evidence = normalise_evidence(qa.get("evidence") or [], known, anomalies)
        if not evidence:
            anomalies.counts["questions_without_evidence"] += 1
            continue
        questions.append(Question(str(qa["question"]), int(qa["category"]), evidence))
    return Conversation(sample_id, turns, questions)


def _recall(found: list[set[str]], evidence: list[str], k: int) -> float:
    seen: set[str] = set()
    for ids in found[:k]:
        seen |= ids
    return sum(1 for dia_id in evidence if dia_id in seen) / len(evidence)


PATHS = ("ingest", "notes")


def _fill(ws: Workspace, turns: list[Turn], path: str = "ingest") -> dict[int, set[str]]:
    """Store every turn, as ingest does (a session crystal) or as an agent's note
    (``Workspace.note``, one per turn); map crystal id -> turn ids."""
    by_crystal: dict[int, set[str]] = {}
    with ws.store.transaction():
        for turn in turns:
            if path == "notes":
                crystal_id = ws.note(turn.document(), importance=0.5, at=turn.at)
            else:
                crystal_id = ws.index(
                    NewCrystal(
                        turn.document(),
                        importance=0.5,
                        semantic_type="experience",
                        at=turn.at,
                        source="sessions",
                    )
                )
            # Identical text in one session (a repeated "Bye!") is one crystal: both turns count.
            by_crystal.setdefault(crystal_id, set()).add(turn.dia_id)
    return by_crystal


def _summarise(recalls: dict[int, list[dict[int, float]]], ks: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for category, name in CATEGORIES.items():
        rows = recalls.get(category, [])
        out[str(category)] = {"name": name, "questions": len(rows)} | {
            f"recall@{k}": round(statistics.fmean(r[k] for r in rows), 4) if rows else None
            for k in ks
        }
    scored = [r for category in SCORED for r in recalls.get(category, [])]
    out["overall"] = {"name": "categories 1-4", "questions": len(scored)} | {
        f"recall@{k}": round(statistics.fmean(r[k] for r in scored), 4) if scored else None
        for k in ks
    }
    return out


def run(
    path: str | Path,
    ks: list[int] | None = None,
    *,
    embedder: Embedder | None = None,
    parent: Path | None = None,
    progress: Callable[[str], None] | None = None,
    path_kind: str = "ingest",
    store_url: str | None = None,
    counts: Progress | None = None,
) -> dict[str, Any]:
    """Score dreamer's search and the BM25 reference on a LoCoMo file; return the report.

    The per-conversation workspaces live in a fresh temporary folder (inside ``parent`` if
    given) that is deleted afterwards; ``counts(done, total)`` counts conversations. With
    ``store_url`` (a PostgreSQL URL) their stores are
    rows in that database instead of SQLite files; those rows stay (use a scratch database).
    """
    if path_kind not in PATHS:
        raise UsageError(f"unknown path {path_kind!r}; use one of {', '.join(PATHS)}")
    ks = sorted(set(ks or [5, 10]))
    if not ks or ks[0] < 1:
        raise UsageError("k must be whole numbers of 1 or more, e.g. --k 5,10")
    depth = ks[-1]
    started = time.perf_counter()
    conversations, anomalies = load(path)
    ours: dict[int, list[dict[int, float]]] = {}
    reference: dict[int, list[dict[int, float]]] = {}
    latencies: list[float] = []
    turns_total = crystals_total = 0
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    # Nothing of the caller's environment steers the bench, but the store it is asked to use.
    environ = {"DREAM_STORE_URL": store_url} if store_url else {}
    with tempfile.TemporaryDirectory(prefix="dream-bench-locomo-", dir=parent) as tmp:
        for number, conversation in enumerate(conversations):
            if progress:
                progress(
                    f"conversation {number + 1}/{len(conversations)} "
                    f"({conversation.sample_id}): {len(conversation.turns)} turns, "
                    f"{len(conversation.questions)} questions"
                )
            ws = Workspace.open(Path(tmp) / f"conv-{number}", environ=environ, embedder=embedder)
            try:
                by_crystal = _fill(ws, conversation.turns, path_kind)
                # A deferred embedder's vectors: all made before the first question, as a
                # consolidation tick would have (the searches then time search alone).
                reindex(ws.store, ws.embedder)
                turns_total += len(conversation.turns)
                crystals_total += len(by_crystal)
                # Asked the day after the last session, as an agent would be.
                now = max(turn.at for turn in conversation.turns) + timedelta(days=1)
                bm25 = BM25([turn.document() for turn in conversation.turns])
                for question in conversation.questions:
                    t0 = time.perf_counter()
                    hits = search(
                        ws.store,
                        ws.embedder,
                        ws.settings,
                        question.text,
                        now=now,
                        limit=depth,
                        search_type="both",
                        record=False,
                    )
                    latencies.append(time.perf_counter() - t0)
                    found = [by_crystal.get(hit.id, set()) for hit in hits]
                    ref = [{conversation.turns[i].dia_id} for i in bm25.top(question.text, depth)]
                    ours.setdefault(question.category, []).append(
                        {k: _recall(found, question.evidence, k) for k in ks}
                    )
                    reference.setdefault(question.category, []).append(
                        {k: _recall(ref, question.evidence, k) for k in ks}
                    )
            finally:
                ws.close()
            if counts:
                counts(number + 1, len(conversations))
    search_summary = _summarise(ours, ks)
    bm25_summary = _summarise(reference, ks)
    ratio = {
        f"recall@{k}": (
            round(
                search_summary["overall"][f"recall@{k}"] / bm25_summary["overall"][f"recall@{k}"], 3
            )
            if bm25_summary["overall"][f"recall@{k}"]
            else None
        )
        for k in ks
    }
    latencies.sort()
    return {
        "data": str(path),
        "path": path_kind,
        "store": "postgres" if store_url else "sqlite",
        "conversations": len(conversations),
        "turns": turns_total,
        "crystals": crystals_total,
        "questions": sum(len(c.questions) for c in conversations),
        "k": ks,
        "search": search_summary,
        "bm25": bm25_summary,
        "ratio": ratio,
        "anomalies": anomalies.to_dict(),
        "search_ms": {
            "p50": round(1000 * latencies[len(latencies) // 2], 2) if latencies else None,
            "p99": round(1000 * latencies[int(len(latencies) * 0.99)], 2) if latencies else None,
        },
        "seconds": round(time.perf_counter() - started, 1),
    }
