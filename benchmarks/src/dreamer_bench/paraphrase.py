"""``dream bench paraphrase``: recall by meaning, on a probe of notes and questions that share no
content word (benchmarks/paraphrase/), alone and among distractor notes.

For each setting (the probe's notes alone; the notes among the distractors) every question is
asked three ways in the same run: through dreamer's search (a fresh workspace, the notes written
with ``Workspace.note``), through plain BM25, and through the embedder alone (cosine). hit@k is
the share of questions whose note is among the first k results.
"""

from __future__ import annotations

import json
import platform
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from dreamer.errors import UsageError
from dreamer.memory.workspace import Workspace
from dreamer.retrieval.embed import Embedder
from dreamer.retrieval.reindex import reindex
from dreamer.retrieval.search import search
from dreamer_bench.bm25 import BM25

KS = (1, 5)


def load_probe(path: Path) -> list[dict[str, str]]:
    """The probe's pairs, or UsageError naming the line that is wrong."""
    pairs = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise UsageError(f"cannot read {path} ({e.strerror})") from e
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            pair = json.loads(line)
        except json.JSONDecodeError as e:
            raise UsageError(f"{path}:{number}: not JSON ({e.msg})") from None
        if not isinstance(pair, dict) or not {"note", "question"} <= set(pair):
            raise UsageError(f'{path}:{number}: needs "note" and "question"')
        pairs.append(pair)
    if not pairs:
        raise UsageError(f"{path} holds no pair; see benchmarks/paraphrase/README.md")
    return pairs


def _hits(ranked: list[list[int]], targets: list[int]) -> dict[str, float]:
    return {
        f"hit@{k}": round(
            float(np.mean([t in r[:k] for r, t in zip(ranked, targets, strict=True)])), 3
        )
        for k in KS
    }


def _setting(
    pairs: list[dict[str, str]],
    distractors: list[str],
    parent: Path,
    embedder: Embedder | None = None,
) -> dict[str, Any]:
    texts = distractors + [pair["note"] for pair in pairs]
    targets = list(range(len(distractors), len(texts)))
    questions = [pair["question"] for pair in pairs]
    depth = max(KS)
    at = datetime(2026, 3, 1, tzinfo=UTC)
    with Workspace.open(parent / f"ws-{len(distractors)}", environ={}, embedder=embedder) as ws:
        ids = [
            ws.note(text, importance=0.5, at=at + timedelta(minutes=i))
            for i, text in enumerate(texts)
        ]
        index = {crystal_id: position for position, crystal_id in enumerate(ids)}
        reindex(ws.store, ws.embedder)  # a deferred embedder's vectors, as a tick makes them
        now = at + timedelta(days=2)
        started = time.perf_counter()
        ours = [
            [
                index[hit.id]
                for hit in search(
                    ws.store, ws.embedder, ws.settings, question, now=now, limit=depth, record=False
                )
            ]
            for question in questions
        ]
        per_query_ms = (time.perf_counter() - started) * 1000 / len(questions)
        vectors = ws.embedder.embed(texts)
        asked = ws.embedder.embed(questions)
        name = ws.embedder.name
    semantic = [list(np.argsort(-(vectors @ q), kind="stable")[:depth]) for q in asked]
    bm25 = BM25(texts)
    lexical = [bm25.top(question, depth) for question in questions]
    return {
        "notes": len(texts),
        "search": _hits(ours, targets),
        "bm25": _hits(lexical, targets),
        "embedder": _hits(semantic, targets),
        "embedder_name": name,
        "search_ms": round(per_query_ms, 2),
    }


def run(
    probe: Path,
    distractors: Path | None = None,
    parent: Path | None = None,
    *,
    embedder: Embedder | None = None,
) -> dict[str, Any]:
    """Score search, BM25 and the embedder alone on the probe, alone and among distractors."""
    pairs = load_probe(probe)
    extra: list[str] = []
    if distractors is not None:
        try:
            extra = [
                line.strip()
                for line in distractors.read_text(encoding="utf-8").splitlines()
                if line.strip()
            ]
        except OSError as e:
            raise UsageError(f"cannot read {distractors} ({e.strerror})") from e
    with tempfile.TemporaryDirectory(prefix="dream-bench-paraphrase-", dir=parent) as tmp:
        settings = {"alone": _setting(pairs, [], Path(tmp), embedder)}
        if extra:
            settings[f"among {len(extra)} distractors"] = _setting(
                pairs, extra, Path(tmp), embedder
            )
    return {
        "probe": str(probe),
        "pairs": len(pairs),
        "settings": settings,
        "machine": f"{platform.machine()}, {platform.python_version()}, {platform.system()}",
    }


def format_report(report: dict[str, Any]) -> str:
    """A table: hit@1 / hit@5 per setting for search, BM25 and the embedder alone."""
    lines = [f"{report['probe']}: {report['pairs']} pairs ({report['machine']})"]
    for name, setting in report["settings"].items():
        lines.append(f"  {name} ({setting['notes']} notes, {setting['embedder_name']}):")
        for method in ("search", "bm25", "embedder"):
            scores = setting[method]
            lines.append(
                f"    {method:<9} hit@1 {scores['hit@1']:.3f}  hit@5 {scores['hit@5']:.3f}"
            )
    return "\n".join(lines)
