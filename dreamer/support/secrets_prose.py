"""Secrets in prose that no ruleset reads: passwords and passphrases said in sentences, PINs,
logins as user / password, generated strings after a keyword, card numbers, IBANs.

Each detector takes the text and its lowercase (position for position) and yields (start, end,
kind) spans; `dreamer.support.secrets` runs them in its order. Patterns run on the lowercase,
values are read from the text, and a detector whose cheap hint is absent costs one substring
search.
"""

from __future__ import annotations

from collections.abc import Iterator

from dreamer.support.secrets_words import (
    CODE,
    REFERENCE,
    STAND_IN,
    STOP_WORDS,
    Lazy,
    Span,
    entropy,
    made_up,
    random_looking,
    trim,
    user_password,
)

_OWNER = Lazy(r"\b(?:my|our|your|his|her|their|\w+'s)(?:[ \t]+[\w'-]+){0,3}[ \t]*$")
_DESCRIBING = Lazy(r"(?:ed|ing|ly|able|ible|ive|ous|ful|less)$")


def owned(lowered: str, start: int, value: str, after: str) -> int:
    """ "my password for the router is sunflower": a plain word is a password when someone's
    password "is" it and it ends the sentence or the line (not "my password is outdated", "...
    is in 1P"). The word's length, 0 if it is none; a "!" or "?" after it ends the sentence."""
    word = value.rstrip("!?")
    after = value[len(word) :] + after
    ends = after[:1] in ("", "\n", "\r") or (
        after[:1] in (".", "!", "?", ",", ";") and not after[1:2].isalnum()
    )
    if (
        ends
        and word.isalpha()
        and len(word) >= 4
        and word.lower() not in STOP_WORDS
        and not _DESCRIBING.search(word.lower())
        and _OWNER.search(lowered, max(0, start - 40), start) is not None
    ):
        return len(word)
    return 0


_STRONG = Lazy(r"[A-Za-z0-9_\-./+=~]{20,200}")
_HEX = frozenset("0123456789abcdefABCDEF")


def strong(value: str) -> bool:
    """A generated string no prose or code holds: 20+ characters, and mixed case with a digit,
    or 32+ hex digits, or letters and digits of high entropy with no word joined by a hyphen."""
    if not _STRONG.fullmatch(value) or REFERENCE.match(value) or CODE.match(value):
        return False
    if random_looking(value) and not STAND_IN.search(value):
        return True
    if len(value) >= 32 and set(value) <= _HEX:
        return True
    letters = any(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    return letters and digits >= 3 and "-" not in value and entropy(value) >= 4.0


_BARE_KEY = Lazy(
    r"\b(?P<word>(?:api[ _-]?)?keys?|tokens?|secrets?|pass(?:word|wd)?s?|pwd)\b"
    r"(?:[ \t]+(?:is|was))?[ \t]*[:=]?[ \t]*(?P<value>[A-Za-z0-9_\-./+=~]{20,200})",
)  # runs on the lowercased text


def bare_keys(text: str, lowered: str) -> Iterator[Span]:
    """A generated string right after key, token, secret or password: "algolia admin key
    57f63d65..." (the phrases above need "api key" or a verb; here the value proves itself)."""
    if not any(word in lowered for word in ("key", "token", "secret", "pass", "pwd")):
        return
    for m in _BARE_KEY.finditer(lowered):
        value = trim(text[m.start("value") : m.end("value")])
        if strong(value):
            word = m.group("word").lower()
            kind = (
                "password"
                if word.startswith("p")
                else "token"
                if word.startswith("token")
                else "credential"
                if word.startswith("secret")
                else "api-key"
            )
            yield m.start("value"), m.start("value") + len(value), kind


_SAID = Lazy(
    r"\b(?P<word>pass[ -]?phrase|pass[ -]?code|pin(?:[ -]code)?|(?:door|alarm|access|gate|safe)"
    r"[ -]code)s?\b"
    # "the passphrase for my ssh key is ...": a short qualifier before the verb
    r"(?:[ \t]+(?:for|of|on|to|at)[ \t]+(?:[\w.@/'-]+[ \t]+){0,3}?[\w.@/'-]+)?"
    r"(?:[ \t]+(?:is|was|are)(?:[ \t]+(?:now|still))?[ \t]+|[ \t]*[:=][ \t]*)"
    r"(?P<value>\"[^\"\n]{1,120}\"|'[^'\n]{1,120}'"
    r"|[^\s.,;:!?\"'`()]+(?:[ \t]+[^\s.,;:!?\"'`()]+){0,7})",
)  # runs on the lowercased text
_SAID_HINTS = ("pass", "pin", "code")
_GRAMMAR = frozenset(
    """a an the in on at to from for of by with via into is are was were be been it its this
    that these those my our your their his her not no and or but if then than so as required
    needed stored kept saved managed set changed reset rotated updated generated provided
    configured shown printed written sentence words word characters chars long""".split()
)


def said(text: str, lowered: str) -> Iterator[Span]:
    """A passphrase (words and all), a passcode or a PIN given in a sentence."""
    if not any(hint in lowered for hint in _SAID_HINTS):
        return
    for m in _SAID.finditer(lowered):
        start = m.start("value")
        value = text[start : m.end("value")]
        if value[0] in "\"'":
            value, start = value[1:-1], start + 1
        words = value.split()
        lowered_words = [w.lower() for w in words]
        if not words or REFERENCE.match(value):
            continue
        if "phrase" in m.group("word").lower():
            # A passphrase is words: take them to the end of the clause. Three words or more
            # with no word of grammar are one ("correct horse battery staple"); fewer must
            # hold no stop word ("is required", "is stored in vault").
            prose = _GRAMMAR if len(words) >= 3 else STOP_WORDS
            if any(w in prose for w in lowered_words) or STAND_IN.search(value):
                continue
            yield start, start + len(value), "password"
            continue
        if len(words) != 1 or lowered_words[0] in STOP_WORDS:
            continue
        if value.isdigit() and 4 <= len(value) <= 12:
            yield start, start + len(value), "pin"
        elif made_up(value) and "pass" in m.group("word").lower():
            yield start, start + len(value), "password"


_LOGIN = Lazy(
    r"\b(?:log[ -]?in|log[ -]?on|sign[ -]?in|credentials?|creds|u/p"
    r"|user(?:name)?[ \t]*/[ \t]*pass(?:word)?)\b"
    r"[^\n]{0,40}?(?:[:=]|\b(?:is|are|was|were)\b)?[ \t]+"
    r"(?P<user>[\w.@+\-]{1,64})(?:[ \t]*/[ \t]*|:)(?P<password>[^\s/\"'`]{3,128})",
)  # runs on the lowercased text
_USER_THEN_PASSWORD = Lazy(
    r"\buser(?:name)?[ \t]*[:=]?[ \t]+(?P<user>[\w.@+\-]{1,64})[ \t]*[,;]?[ \t]+"
    r"(?:and[ \t]+)?pass(?:word)?[ \t]*[:=]?[ \t]+(?P<password>[^\s\"'`]{3,128})",
)  # runs on the lowercased text


def logins(text: str, lowered: str) -> Iterator[Span]:
    """``login: admin / hunter2!``, ``creds for the VPN are ada:pw``, ``username admin password
    hunter2``: the password part."""
    if not any(hint in lowered for hint in ("log", "sign", "cred", "u/p", "user")):
        return
    found = list(_LOGIN.finditer(lowered))
    if "pass" in lowered:
        found += _USER_THEN_PASSWORD.finditer(lowered)
    for m in found:
        value = trim(text[m.start("password") : m.end("password")])
        user = m.group("user")
        if (
            len(value) >= 3
            and user.lower() not in STOP_WORDS
            and user_password(value)
            and not CODE.match(value)
            and not STAND_IN.search(value)
            and not value.isdigit()
        ):
            start = m.start("password")
            yield start, start + len(value), "password"


_CARD = Lazy(r"(?<![\w.-])[2-6](?:[0-9]|[ -](?=[0-9])){12,22}(?![\w-]|\.[0-9])")
_CARD_PREFIX = Lazy(
    r"4|5[1-5]|2(?:2[2-9]|[3-6][0-9]|7[01]|720)|3[47]|3(?:0[0-5]|[68])|6(?:011|5|4[4-9])|35"
)
_CARD_GROUPS = {(4, 4, 4, 4), (4, 6, 5), (4, 6, 4), (4, 4, 4, 4, 3), (4, 4, 4, 2), (4, 4, 4, 3)}


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


_IBAN = Lazy(r"\b[A-Z]{2}[0-9]{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,3})?\b")
_SSN = Lazy(
    r"\b(?:ssn|social security(?: number| no\.?)?)\b[^\n0-9]{0,20}([0-9]{3}-[0-9]{2}-[0-9]{4})\b"
)


def accounts(text: str, lowered: str) -> Iterator[Span]:
    """An IBAN (its mod-97 check holds) and a US social security number named as one."""
    if _IBAN_HINT.search(text):
        for m in _IBAN.finditer(text):
            compact = m.group().replace(" ", "")
            if 15 <= len(compact) <= 34 and _mod97(compact):
                yield m.start(), m.end(), "iban"
    if "ssn" in lowered or "social security" in lowered:
        for m in _SSN.finditer(lowered):
            yield m.start(1), m.end(1), "ssn"


_IBAN_HINT = Lazy(r"\b[A-Z]{2}[0-9]{2}[ ]?[A-Z0-9]{4}")


def _mod97(iban: str) -> bool:
    moved = iban[4:] + iban[:4]
    digits = "".join(str(int(c, 36)) for c in moved)
    return int(digits) % 97 == 1


def cards(text: str, lowered: str) -> Iterator[Span]:
    """A payment card number: 13-19 digits with a card prefix and a valid Luhn check digit,
    plain or in the usual groups of 4 (Amex 4-6-5) with spaces or dashes."""
    for m in _CARD.finditer(text):
        raw = m.group()
        digits = raw.replace(" ", "").replace("-", "")
        if not 13 <= len(digits) <= 19 or not _CARD_PREFIX.match(digits):
            continue
        separators = {c for c in raw if not c.isdigit()}
        if len(separators) > 1:
            continue
        if separators:
            groups = tuple(len(part) for part in raw.split(separators.pop()))
            if groups not in _CARD_GROUPS:
                continue
        if _luhn(digits):
            yield m.start(), m.end(), "card-number"
