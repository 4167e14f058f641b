"""BERT's uncased WordPiece tokenizer in plain Python: what all-MiniLM-L6-v2 reads.

The same steps as the ``tokenizers`` package's ``BertWordPieceTokenizer(lowercase=True)``,
whose output ``tests/retrieval/test_minilm.py`` checks this against: clean the text (drop control
characters, every whitespace a space), put spaces around CJK ideographs, strip accents (NFD,
combining marks dropped), lower-case; split on whitespace and around each punctuation mark;
then each word greedily into the longest vocabulary pieces ("##" marking a continuation), a
word with no such split or over 100 characters being ``[UNK]``. ``[CLS]`` and ``[SEP]`` wrap
the result, cut to ``max_tokens`` in all.

Plain Python because a fresh ``dream search`` tokenizes one short query: it looks its few
pieces up in the text of the 30,522 line vocabulary, much sooner than importing and
building the Rust tokenizer.
"""

from __future__ import annotations

import functools
import threading
import unicodedata
from pathlib import Path

MAX_WORD_CHARS = 100
CONTINUATION = "##"
UNKNOWN, CLS, SEP, PAD = "[UNK]", "[CLS]", "[SEP]", "[PAD]"
WORD_CACHE = 65536
LAZY_LOOKUPS = 24  # look-ups in the vocabulary's text before the table is built
# The CJK ideograph blocks BERT isolates (as its original tokenizer and ``tokenizers`` do).
_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def _is_cjk(code: int) -> bool:
    return any(low <= code <= high for low, high in _CJK)


@functools.lru_cache(maxsize=4096)
def _kind(char: str) -> str:
    """How the normaliser and splitter treat a character: drop, space, cjk, punct or keep."""
    code = ord(char)
    if char in " \t\n\r" or unicodedata.category(char) == "Zs":
        return "space"
    if code == 0 or code == 0xFFFD or unicodedata.category(char) in ("Cc", "Cf", "Co"):
        return "drop"
    if _is_cjk(code):
        return "cjk"
    if (33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126) or (
        unicodedata.category(char).startswith("P")
    ):
        return "punct"
    return "keep"


def _normalise(text: str) -> str:
    """Cleaned, CJK spaced, accents stripped, lower-cased (the order ``tokenizers`` uses)."""
    out: list[str] = []
    for char in text:
        kind = _kind(char)
        if kind == "drop":
            continue
        if kind == "space":
            out.append(" ")
        elif kind == "cjk":
            out.append(f" {char} ")
        else:
            out.append(char)
    decomposed = unicodedata.normalize("NFD", "".join(out))
    stripped = "".join(c for c in decomposed if unicodedata.category(c) != "Mn")
    return stripped.lower()


def _words(normalised: str) -> list[str]:
    """Split on whitespace, and around every punctuation mark (each a word of its own)."""
    words: list[str] = []
    for chunk in normalised.split():
        current: list[str] = []
        for char in chunk:
            if _kind(char) == "punct":
                if current:
                    words.append("".join(current))
                    current = []
                words.append(char)
            else:
                current.append(char)
        if current:
            words.append("".join(current))
    return words


class WordPiece:
    """A WordPiece vocabulary (one token a line, its id the line number) and its tokenizer.

    A fresh ``dream search`` tokenizes one short query: it finds its few pieces in the text of
    the vocabulary (a line's id is the number of lines before it) instead of building the
    30,522-entry table. Past ``LAZY_LOOKUPS`` look-ups (a batch of notes) the table
    is built, and answers the same ids."""

    def __init__(self, vocab_file: Path):
        # Bytes decoded, then line ends made "\n" as text mode does: text mode's own decoder
        # is slower over the 230 KB.
        text = vocab_file.read_bytes().decode("utf-8")
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        # "\n" before every line and after the last: a token is found as "\n<token>\n".
        self._text = "\n" + text if text.endswith("\n") else f"\n{text}\n"
        self._table: dict[str, int] | None = None
        self._lookups = 0
        self._lock = threading.Lock()
        self._pieces: dict[str, tuple[int, ...]] = {}
        specials: list[int] = []
        for special in (UNKNOWN, CLS, SEP, PAD):
            token_id = self._id(special)
            if token_id is None:
                raise ValueError(f"{vocab_file} has no {special} token")
            specials.append(token_id)
        self.unknown, self.cls, self.sep, self.pad = specials

    @property
    def vocab(self) -> dict[str, int]:
        """Every token and its id (a later line wins over an earlier one with the same token)."""
        if self._table is None:
            tokens = self._text[1:-1].split("\n")
            self._table = dict(zip(tokens, range(len(tokens)), strict=True))
        return self._table

    def _id(self, piece: str) -> int | None:
        """The id of a vocabulary token, or None."""
        if self._table is not None or self._lookups >= LAZY_LOOKUPS:
            return self.vocab.get(piece)
        self._lookups += 1
        at = self._text.rfind(f"\n{piece}\n")  # the last line, as in the table
        return None if at < 0 else self._text.count("\n", 0, at)

    def _word(self, word: str) -> tuple[int, ...]:
        found = self._pieces.get(word)
        if found is not None:
            return found
        pieces = self._split(word)
        with self._lock:
            if len(self._pieces) < WORD_CACHE:
                self._pieces[word] = pieces
        return pieces

    def _split(self, word: str) -> tuple[int, ...]:
        if len(word) > MAX_WORD_CHARS:
            return (self.unknown,)
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else CONTINUATION + word[start:end]
                found = self._id(piece)
                if found is not None:
                    ids.append(found)
                    break
                end -= 1
            else:
                return (self.unknown,)
            start = end
        return tuple(ids)

    def ids(self, text: str, max_tokens: int) -> list[int]:
        """The token ids of ``text``: ``[CLS]``, its pieces, ``[SEP]``, at most ``max_tokens``."""
        pieces: list[int] = [self.cls]
        room = max_tokens - 1
        for word in _words(_normalise(text)):
            pieces.extend(self._word(word))
            if len(pieces) >= room:
                break
        return pieces[:room] + [self.sep]
