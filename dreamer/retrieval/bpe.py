"""WordLlama's tokenizer for plain short texts without loading it: its BPE table in SQLite.

Building the ``tokenizers`` BPE model (32,000 tokens, 61,249 merges) is the largest part of
a fresh ``dream search`` after importing numpy. A query is nearly always plain
words separated by single spaces, and for such a text the Llama tokenizer's answer is the
concatenation of each word's BPE: its normalizer only prefixes ``▁`` and turns spaces into
``▁``, and no token holds a ``▁`` after its first character, so no merge ever crosses a word.
One word's BPE needs the ranks of a few dozen pairs, read from an indexed SQLite copy of the
table (``TokenTable``), built once from the tokenizer file into the user's cache folder.

Texts outside that shape (newlines, tabs, runs of spaces, leading or trailing spaces, a
character that is no token of its own and needs byte fallback) get ``None``, and the caller
uses the real tokenizer. ``tests/retrieval/test_bpe.py`` checks the two agree on every
vocabulary token as a word and on real sentences.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from dreamer.store.token_table import TokenTableFile, write_token_table

SPACE = "▁"
WORD_CACHE = 4096
Lookup = Callable[[set[str]], dict[str, int]]
LOOKUP_CACHE = 65536  # pairs' merge ranks and symbols' ids kept (a few MB; they never change)


def _plain(text: str) -> bool:
    """Words separated by single spaces, nothing else: the shape this module tokenizes."""
    if not text or text[0] == " " or text[-1] == " " or "  " in text:
        return False
    return not any(c.isspace() and c != " " for c in text)


class TokenTable:
    """The tokenizer's BPE over its vocabulary and merge ranks, read from SQLite as needed."""

    def __init__(self, path: Path):
        self.path = path
        self._file = TokenTableFile(path)
        self._lock = threading.Lock()
        self._words: dict[str, list[int]] = {}
        # What the table answered, absent keys too (None): a new word's pairs are mostly
        # pairs of words seen before, so its BPE rarely needs a statement.
        self._ranks: dict[str, int | None] = {}
        self._vocab: dict[str, int | None] = {}

    def close(self) -> None:
        """Close the table."""
        self._file.close()

    def ids(self, text: str) -> list[int] | None:
        """The token ids of ``text`` (no special tokens), or None when it is not plain."""
        if not _plain(text):
            return None
        try:
            return self._ids(text)
        except sqlite3.Error:  # a damaged cache file: the real tokenizer answers instead
            return None

    def _ids(self, text: str) -> list[int] | None:
        out: list[int] = []
        with self._lock:
            for word in text.split(" "):
                found = self._words.get(word)
                if found is None:
                    found = self._word(SPACE + word)
                    if found is None:
                        return None
                    if len(self._words) < WORD_CACHE:
                        self._words[word] = found
                out.extend(found)
        return out

    def _known(self, kept: dict[str, int | None], keys: set[str], read: Lookup) -> dict[str, int]:
        """The values of those ``keys`` the table holds: from ``kept``, the rest read once."""
        missing = keys.difference(kept)
        if missing:
            if len(kept) + len(missing) > LOOKUP_CACHE:
                kept.clear()
                missing = keys
            found = read(missing)
            kept.update((key, found.get(key)) for key in missing)
        return {key: value for key in keys if (value := kept[key]) is not None}

    def _word(self, chunk: str) -> list[int] | None:
        symbols = list(chunk)
        vocab = self._known(self._vocab, set(symbols), self._file.token_ids)
        if len(vocab) != len(set(symbols)):
            return None  # a character that needs byte fallback: the real tokenizer's job
        while len(symbols) > 1:
            pairs = {f"{a} {b}" for a, b in zip(symbols, symbols[1:], strict=False)}
            ranks = self._known(self._ranks, pairs, self._file.merge_ranks)
            if not ranks:
                break
            # The lowest-ranked pair first, every occurrence left to right: what the BPE
            # model's heap of (rank, position) does, since a merge's result ranks after it.
            first, second = min(ranks, key=ranks.__getitem__).split(" ")
            merged: list[str] = []
            at = 0
            while at < len(symbols):
                if at + 1 < len(symbols) and symbols[at] == first and symbols[at + 1] == second:
                    merged.append(first + second)
                    at += 2
                else:
                    merged.append(symbols[at])
                    at += 1
            symbols = merged
        found = self._known(self._vocab, set(symbols), self._file.token_ids)
        if len(found) != len(set(symbols)):
            return None
        return [found[symbol] for symbol in symbols]


def build(tokenizer_json: Path, path: Path) -> None:
    """Write the SQLite table of ``tokenizer_json``'s vocabulary and merges to ``path``."""
    config = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    model = config["model"]
    normalizers = (config.get("normalizer") or {}).get("normalizers")
    expected = [
        {"type": "Prepend", "prepend": SPACE},
        {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
    ]
    # What makes a word's BPE independent of its neighbours (see the module docstring).
    inner_space = any(SPACE in token[1:] and set(token) != {SPACE} for token in model["vocab"])
    if (
        model.get("type") != "BPE"
        or config.get("pre_tokenizer") is not None
        or normalizers != expected
        or inner_space
    ):
        raise ValueError(f"{tokenizer_json} is not the Llama BPE tokenizer this table mirrors")
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    write_token_table(path, model["vocab"], merges)


def open_table(tokenizer_json: Path, cache: Path) -> TokenTable | None:
    """The table for ``tokenizer_json`` at ``cache``, built there first if missing; None when
    it cannot be (a read-only cache folder, a tokenizer of another kind)."""
    with contextlib.suppress(OSError, ValueError, sqlite3.Error, KeyError):
        if not cache.is_file():
            build(tokenizer_json, cache)
        return TokenTable(cache)
    return None
