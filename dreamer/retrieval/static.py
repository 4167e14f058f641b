"""The fallback embedder: static token vectors whose weights ship inside a PyPI wheel, offline.

The weights are WordLlama's ``l2_supercat`` codebook at 256 dimensions (16 MB of float16, in
the ``wordllama`` wheel, MIT): a vector per token of the Llama 2 vocabulary, trained to embed
sentences by averaging. A text's vector is the mean of its tokens' vectors, normalised — the
same arithmetic as ``WordLlama.embed(norm=True)``, checked by the tests.

dreamer reads the two files straight from the installed package (the safetensors file by its
documented layout, the tokenizer with ``tokenizers``) instead of importing ``wordllama``: that
import is slow, pulls in ``requests`` and ``huggingface_hub``, and replaces the root
logger's handlers. Nothing is ever downloaded; when the package is missing ``available()`` is
False and dreamer falls back to the hashing embedder.

Embedding a note is cheap; the cost is loading the tokenizer once per process (the weights
are memory-mapped).
"""

from __future__ import annotations

import importlib.util
import json
import re
import struct
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when the weights are read: `dream note` never needs numpy
    import numpy as np

PACKAGE = "wordllama"
MODEL = "l2_supercat"
DIM = 256
_WEIGHTS = f"weights/{MODEL}_{DIM}.safetensors"
_TOKENIZER = f"tokenizers/{MODEL}_tokenizer_config.json"


class EmbedderUnavailable(RuntimeError):
    """The static embedder's package or weight files are not installed."""


def _package_dir() -> Path | None:
    spec = importlib.util.find_spec(PACKAGE)  # finds it without running its __init__
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def available() -> bool:
    """True when the weights, the tokenizer file and ``tokenizers`` are installed."""
    folder = _package_dir()
    return (
        folder is not None
        and (folder / _WEIGHTS).is_file()
        and (folder / _TOKENIZER).is_file()
        and importlib.util.find_spec("tokenizers") is not None
    )


def _version(folder: Path) -> str:
    """The package's version, from its generated _version.py (no import, no metadata scan)."""
    try:
        text = (folder / "_version.py").read_text(encoding="utf-8")
    except OSError:
        return "unknown"
    found = re.search(r"^__version__\s*=\s*(?:version\s*=\s*)?['\"]([^'\"]+)['\"]", text, re.M)
    return found.group(1) if found else "unknown"


def read_safetensors(path: Path, name: str) -> np.ndarray:
    """One tensor of a safetensors file, memory-mapped as stored (the format: u64 header size,
    JSON, bytes).

    Mapped, not read: a note or a query touches a few dozen of the 32,000 rows, so a fresh
    process reads those pages instead of 16 MB (and converting all of it to float32 in every
    process). Callers convert the rows they take.
    """
    import numpy as np

    with path.open("rb") as handle:
        (size,) = struct.unpack("<Q", handle.read(8))
        header: dict[str, Any] = json.loads(handle.read(size))
    meta = header[name]
    if meta["dtype"] not in ("F16", "F32"):
        raise EmbedderUnavailable(f"{path}: unexpected dtype {meta['dtype']}")
    start, _end = meta["data_offsets"]
    dtype = np.float16 if meta["dtype"] == "F16" else np.float32
    offset = 8 + size + start
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=tuple(meta["shape"]))


class StaticEmbedder:
    """Mean of static token vectors (WordLlama l2_supercat, 256 dimensions), unit length."""

    def __init__(self) -> None:
        folder = _package_dir()
        if folder is None or not available():
            raise EmbedderUnavailable(
                f"the {PACKAGE} package with its {MODEL} weights is not installed; "
                f"reinstall dreamer (it depends on {PACKAGE}) or set memory.search.embedder "
                '= "hashing"'
            )
        self._folder = folder
        self.version = f"{_version(folder)}"
        # What each stored vector records: vectors of two embedders are never compared.
        self.name = f"{PACKAGE}-{MODEL}-{DIM}@{self.version}"
        self.dim = DIM
        self._lock = threading.Lock()
        self._table: np.ndarray | None = None
        self._tokenizer: Any = None

    def _weights(self) -> np.ndarray:
        with self._lock:
            if self._table is None:
                self._table = read_safetensors(self._folder / _WEIGHTS, "embedding.weight")
            return self._table

    def _full_tokenizer(self) -> Any:
        with self._lock:
            if self._tokenizer is None:
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(self._folder / _TOKENIZER))
                tokenizer.no_padding()
                tokenizer.no_truncation()
                self._tokenizer = tokenizer
            return self._tokenizer

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's token ids, as the WordLlama tokenizer gives them (no special tokens)."""
        encoded = self._full_tokenizer().encode_batch(texts, add_special_tokens=False)
        return [list(encoding.ids) for encoding in encoded]

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed texts as unit vectors (a text with no token gives a zero row)."""
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        table = self._weights()
        for row, token_ids in enumerate(self.token_ids(texts)):
            ids = np.clip(np.asarray(token_ids, dtype=np.int64), 0, len(table) - 1)
            if len(ids):
                out[row] = table[ids].astype(np.float32).mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out
