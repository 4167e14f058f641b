"""Secrets written as numbers that no ruleset reads: payment card numbers (a card prefix and a
valid Luhn digit), IBANs (their mod-97 check holds) and social security numbers named as one.

Each detector takes the text and its lowercase (position for position) and yields (start, end,
kind) spans; `dreamer.support.secrets` runs them in its order.
"""

from __future__ import annotations

from collections.abc import Iterator

from dreamer.support.secrets_words import DOC_CUES, Lazy, Span

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
            if 15 <= len(compact) <= 34 and _mod97(compact) and not _quoted(lowered, m.start()):
                yield m.start(), m.end(), "iban"
    if "ssn" in lowered or "social security" in lowered:
        for m in _SSN.finditer(lowered):
            yield m.start(1), m.end(1), "ssn"


_IBAN_HINT = Lazy(r"\b[A-Z]{2}[0-9]{2}[ ]?[A-Z0-9]{4}")


def _quoted(lowered: str, at: int) -> bool:
    """Whether the line at ``at`` quotes documentation ("the example IBAN", "from the spec")."""
    end = lowered.find("\n", at)
    line = lowered[lowered.rfind("\n", 0, at) + 1 : len(lowered) if end < 0 else end]
    return any(cue in line for cue in DOC_CUES)


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
