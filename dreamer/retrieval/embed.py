"""Embeddings: the ``Embedder`` protocol and an offline default that downloads nothing.

``HashingEmbedder`` hashes word unigrams, word bigrams and character trigrams of each word
into a fixed number of signed buckets (the "hashing trick"), with sub-linear term weights,
and L2-normalises the result. It is deterministic across processes and machines (CRC32, not
Python's salted ``hash``) and fast. It finds paraphrases that share stems or word pieces;
a real sentence model can replace it through the protocol.
"""

from __future__ import annotations

import functools
import threading
import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from dreamer.support.bounds import READ_MAX_CHARS, head
from dreamer.support.words import EMBEDDING_STOP_WORDS, stem, words

if TYPE_CHECKING:  # imported where vectors are made: `dream note` never needs numpy
    import numpy as np

WORD_CACHE = 65536
# A vector stands for a text's gist: past a long page (the default note limit) more words only
# dilute it, and tokenizing megabytes costs seconds and gigabytes. Longer texts are embedded by
# their head.
EMBED_MAX_CHARS = READ_MAX_CHARS
# What an embedder is handed in one call: a bound on texts and on characters (so on tokens).
BATCH_TEXTS = 64
BATCH_CHARS = 4 * EMBED_MAX_CHARS


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors of a fixed dimension."""

    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dim), float32, each row of norm 1 (or 0)."""
        ...


class HashingEmbedder:
    """Offline feature-hashing embedder (default)."""

    def __init__(self, dim: int = 384):
        self.dim = dim
        self.name = f"hashing-v1-{dim}"
        # Per-word features (the word and its character trigrams) recur across texts: hashing
        # them once per process makes embedding ~2x faster with the very same output.
        self._word_features = functools.lru_cache(maxsize=WORD_CACHE)(self._hash_word)

    def _hash(self, token: str, weight: float) -> tuple[int, float]:
        h = zlib.crc32(token.encode("utf-8"))
        return h % self.dim, (1.0 if (h >> 31) & 1 else -1.0) * weight

    def _hash_word(self, stem: str) -> tuple[tuple[int, float], ...]:
        padded = f"<{stem}>"
        return (
            self._hash("w:" + stem, 1.0),
            *(self._hash("c:" + padded[i : i + 3], 0.35) for i in range(len(padded) - 2)),
        )

    def _features(self, text: str) -> dict[int, float]:
        stems = [stem(w) for w in words(text) if w not in EMBEDDING_STOP_WORDS]
        feats: dict[int, float] = {}
        for word_stem in stems:
            for bucket, value in self._word_features(word_stem):
                feats[bucket] = feats.get(bucket, 0.0) + value
        for first, second in zip(stems, stems[1:], strict=False):
            bucket, value = self._hash("b:" + first + " " + second, 0.5)
            feats[bucket] = feats.get(bucket, 0.0) + value
        return feats

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed texts as unit vectors."""
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            feats = self._features(text)
            if feats:
                values = np.fromiter(feats.values(), dtype=np.float64, count=len(feats))
                out[row, np.fromiter(feats.keys(), dtype=np.int64, count=len(feats))] = np.sign(
                    values
                ) * np.log1p(np.abs(values))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def clip_for_embedding(text: str) -> str:
    """The part of a text its vector is made from: at most ``EMBED_MAX_CHARS`` characters."""
    return head(text, EMBED_MAX_CHARS)


def batches(texts: list[str]) -> Iterator[list[int]]:
    """The indexes of ``texts`` in groups an embedder is handed at once, similar lengths
    together: at most ``BATCH_TEXTS`` texts and ``BATCH_CHARS`` characters a group (a text
    longer than that alone). Every token of the embedders covers at least one character, so
    the characters bound the tokens, and with them what one call holds in memory."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    group: list[int] = []
    chars = 0
    for i in order:
        size = len(texts[i])
        if group and (len(group) >= BATCH_TEXTS or chars + size > BATCH_CHARS):
            yield group
            group, chars = [], 0
        group.append(i)
        chars += size
    if group:
        yield group


def embed_texts(embedder: Embedder, texts: list[str]) -> np.ndarray:
    """Embed texts by their first ``EMBED_MAX_CHARS`` characters, in bounded batches: the way
    every caller embeds.

    A crystal of megabytes (stored before notes had a limit, or written straight to the
    store) costs a vector no more than a long note does, and so never keeps a search or a
    dream waiting; its words are all still found through the full-text index. However many
    texts wait, the embedder sees a batch at a time (``batches``), so the memory a call takes
    does not grow with their number.
    """
    import numpy as np

    clipped = [clip_for_embedding(text) for text in texts]
    out = np.zeros((len(clipped), embedder.dim), dtype=np.float32)
    for rows in batches(clipped):
        out[rows] = embedder.embed([clipped[i] for i in rows])
    return out


def to_blob(vector: np.ndarray) -> bytes:
    """Store a vector compactly (float16)."""
    import numpy as np

    return np.asarray(vector, dtype=np.float16).tobytes()


_made: dict[str, Embedder] = {}
_made_lock = threading.Lock()


def embedder_for(choice: str = "auto") -> Embedder:
    """The embedder a setting names, one per process: ``auto`` is the MiniLM sentence model.

    ``auto`` falls back to WordLlama's static vectors when the model package is missing, and
    to the hashing embedder (words and word pieces only) when that is missing too;
    ``minilm`` and ``wordllama`` insist on their package.
    """
    with _made_lock:
        if choice not in _made:
            if choice == "hashing":
                _made[choice] = HashingEmbedder()
            elif choice == "minilm" or (choice == "auto" and _minilm_available()):
                from dreamer.retrieval.minilm import MiniLMEmbedder

                _made[choice] = MiniLMEmbedder()
            else:
                from dreamer.retrieval import static

                if choice == "auto" and not static.available():
                    _made[choice] = HashingEmbedder()
                else:
                    _made[choice] = static.StaticEmbedder()
        return _made[choice]


def for_rules(embedder: Embedder) -> Embedder:
    """The embedder the offline dream's rules compare words and short statements with.

    The sentence model ranks searches, but the rules ask of single words and short lines
    whether they name one subject ("spend" and "budget"), answer a question, or are what a
    forget request means: static token vectors are made for that, and the rules' thresholds
    were set on them (with the sentence model, supersession missed a moved deadline in the
    scenarios). So a workspace searching with MiniLM dreams with WordLlama's vectors when
    installed; any other embedder (hashing, chosen to avoid WordLlama) is used as it is.
    """
    if embedder.name.startswith("minilm"):
        from dreamer.retrieval import static

        if static.available():
            return embedder_for("wordllama")
    return embedder


def clearly_nearest(
    embedder: Embedder, probe: str, texts: list[str], minimum: float, margin: float
) -> int | None:
    """The index of the text nearest ``probe`` in meaning when it is clearly so: a cosine of
    at least ``minimum`` that beats the next text's by ``margin``; None when none stands out."""
    import numpy as np

    vectors = embedder.embed([probe, *texts])
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    sims = vectors[1:] @ vectors[0]
    order = np.argsort(-sims, kind="stable")
    best = float(sims[order[0]])
    second = float(sims[order[1]]) if len(order) > 1 else 0.0
    return int(order[0]) if best >= minimum and best - second >= margin else None


def _minilm_available() -> bool:
    from dreamer.retrieval import minilm

    return minilm.available()
