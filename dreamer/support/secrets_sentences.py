"""A password said in a sentence, in any of the languages of ``PASSWORD_CUES``.

"Das Passwort für den Router ist Sonnenblume42", "ルーターのパスワードは kirin-Sora88 です",
"I told Tom the wifi password, it's hunter2-Blue77", "Use Tulip-Garden-8x as the password".
Around each word for a password (60 characters either side, within its clause: a ``;``, a
sentence's end or a line ends it), a made-up string (letters and digits, and a symbol or mixed
case) is the password; so is the first string right after the word and its verb or colon
("パスワードは4821Kx", "密码：abc123"), when it has a letter and a digit or a symbol. A version, a
path, a URL, an address, code, a password manager's name or a word stays.
"""

from __future__ import annotations

from collections.abc import Iterator

from dreamer.support.secrets_words import (
    CODE,
    PASSWORD_MANAGERS,
    REFERENCE,
    SENTENCE_HINTS,
    Lazy,
    Span,
    made_up,
    trim,
)
from dreamer.support.words import SECRET_STOP_WORDS

_TOKEN = Lazy(r"[!-~]+")  # a run of printable ASCII: any script around it ends it
_CLAUSE_END = Lazy(r";|[.!。！]\s|[.!。！]$|\n")
_VERSION = Lazy(r"^v?\d+(?:\.\d+)+")
_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_OPENERS = "\"'`([{<"
_WINDOW = 60
_GAP = 4  # at most this much between the word (and its verb or colon) and a value right after
_KEYWORD_GRAMMAR = frozenset({"", "is", "was", "to", ":", "="})


def sentences(text: str, lowered: str) -> Iterator[Span]:
    """Passwords said in a sentence after (or before) a word for a password."""
    for cue in SENTENCE_HINTS:
        at = lowered.find(cue)
        while at >= 0:
            yield from _around(text, lowered, at, at + len(cue))
            at = lowered.find(cue, at + len(cue))


def _around(text: str, lowered: str, start: int, end: int) -> Iterator[Span]:
    # The word inside a longer token is code or a name: DB_PASSWORD=…, passwords, password123.
    if _inside_token(text, start, end):
        return
    left = max(0, start - _WINDOW)
    for m in _CLAUSE_END.finditer(text, left, start):
        left = m.end()
    right = min(len(text), end + _WINDOW)
    stop = _CLAUSE_END.search(text, end, right)
    if stop:
        right = stop.start()
    first = True
    for m in _TOKEN.finditer(text, left, right):
        if start <= m.start() < end:
            continue
        token = m.group()
        begin = m.start() + len(token) - len(token.lstrip(_OPENERS))
        value = trim(token.lstrip(_OPENERS))
        gap = text[end : m.start()].strip() if m.start() >= end else None
        right_after = first and gap is not None and _particle(gap)
        if gap is not None:
            first = False
        # "password is/to/: value" is the keyword rules' to read (secrets_prose), whose "to"
        # counts only after a setting verb: "compare the password to Tr0ub4dor" gives none.
        if gap is not None and gap.lower() in _KEYWORD_GRAMMAR and text[start:end].isascii():
            continue
        if value and _a_password(value, right_after):
            yield begin, begin + len(value), "password"


def _inside_token(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return (before.isascii() and before.isalnum()) or (after.isascii() and after in _WORD)


def _particle(gap: str) -> bool:
    """Only a particle, a colon or a dash between the word and the value: "パスワードは",
    "密码：", "пароль —" (not an English word: "password sha256-hashed" gives none)."""
    return 0 < len(gap) <= _GAP and all(not c.isascii() or c in ":=-" for c in gap)


def _a_password(value: str, right_after: bool) -> bool:
    lowered = value.lower()
    if (
        lowered in PASSWORD_MANAGERS
        or lowered in SECRET_STOP_WORDS
        or _VERSION.match(value)
        or CODE.match(value)
        or REFERENCE.match(value)
        or any(c in value for c in "/@\\()[]{}=<>")  # a path, an address, code
    ):
        return False
    if made_up(value):
        return True
    if not right_after or len(value) < 4:
        return False
    letter = any(c.isalpha() for c in value)
    return letter and (any(c.isdigit() for c in value) or not value.isalnum())
