"""gitleaks' default ruleset, loaded as data and run the way gitleaks runs it.

``secrets_rules.json`` beside this module is gitleaks' ``config/gitleaks.toml`` (MIT, see
``secrets_rules.LICENSE``; source, commit and date are inside the file) converted for Python's
``re`` by ``benchmarks/secrets/update_rules.py``. Each rule has a pattern, keywords, an entropy
floor and allowlists. As in gitleaks:

- a rule runs only when one of its keywords occurs in the lowercased text (the prefilter);
- the secret is the rule's ``secretGroup``, else the first capture group that matched, else the
  whole match;
- a secret whose Shannon entropy is not above the rule's floor is dropped;
- the global and the rule's allowlists drop a secret when one of their regexes matches the
  secret, the match or the line (as each says), or the secret holds one of their stopwords.

Nothing is read or compiled until the first text is scanned, and then only the rules whose
keywords occur: ``import dreamer`` pays nothing, a note pays for the few rules it could trip.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["Rule", "rules", "spans"]

Span = tuple[int, int, str]
DATA = Path(__file__).with_name("secrets_rules.json")  # ships in the wheel beside this module


@dataclass(frozen=True)
class _Allow:
    target: str  # secret | match | line
    both: bool  # condition AND: every check must hold
    regexes: tuple[str, ...]
    stopwords: tuple[str, ...]

    def allows(self, secret: str, match: str, line: str) -> bool:
        target = {"match": match, "line": line}.get(self.target, secret)
        checks = []
        if self.regexes:
            checks.append(any(_compiled(r).search(target) for r in self.regexes))
        if self.stopwords:
            lowered = secret.lower()
            checks.append(any(word in lowered for word in self.stopwords))
        return all(checks) if self.both else any(checks)


@dataclass(frozen=True)
class Rule:
    """One gitleaks rule: ``id`` names it upstream, ``kind`` is its placeholder's type."""

    id: str  # gitleaks' name for it
    kind: str
    regex: str
    keywords: tuple[str, ...]
    group: int | None = None
    entropy: float = 0.0
    prefix_run: int = 0  # gitleaks' pattern began with [\w.-]{0,50}? (dropped)
    allow: tuple[_Allow, ...] = ()

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern (compiled on first use, then cached)."""
        return _compiled(_key_ends_at_punctuation(self.regex))

    def spans(self, text: str, common: tuple[_Allow, ...]) -> Iterator[Span]:
        """Where this rule finds a secret in ``text``."""
        for m in self.pattern.finditer(text):
            group = self.group if self.group is not None else _first_group(m)
            start, end = m.span(group)
            secret = text[start:end]
            if not secret or (self.entropy and _entropy(secret) <= self.entropy):
                continue
            lists = common + self.allow
            if lists and self._allowed(text, m, secret, lists):
                continue
            yield start, end, self.kind

    def _allowed(self, text: str, m: re.Match[str], secret: str, lists: tuple[_Allow, ...]) -> bool:
        first = m.start()
        while first > 0 and m.start() - first < self.prefix_run and _RUN(text[first - 1]):
            first -= 1
        line_start = text.rfind("\n", 0, m.start()) + 1
        # A pattern that ends on the newline after its value has not reached the next line.
        line_end = text.find("\n", max(m.start(), m.end() - 1))
        line = text[line_start : len(text) if line_end < 0 else line_end]
        match = text[first : m.end()]
        return any(a.allows(secret, match, line) for a in lists)


# gitleaks ends most keys on the first of these (a space, a newline, ";", a quote or a
# backtick; a few rules add "<", ")" or ","), so a key before ")", ",", ":", "]", "." or "!" was
# no key. A key ends where its characters end: the next character is none a key is written
# with, the last is no "." or ":" (a sentence's end, not the key's), and a "." or ":" after it
# does not go on into more of a word (``<key>.json``, ``<key>:8080`` are something longer).
_GITLEAKS_ENDS = (
    r"""(?:[\x60'"\s;]|\\[nr]|$)""",
    r"""(?:[\x60'"\s;]|\\[nr]|$|\b)""",
    r"""(?:$|[\\'"\x60\s<),])""",
    r"(?:[^a-zA-Z0-9+/]|\Z)",
)
_KEY_END = r"(?<![.:])(?![A-Za-z0-9_\-+/=]|[.:][A-Za-z0-9])"


def _key_ends_at_punctuation(regex: str) -> str:
    """``regex`` with gitleaks' end-of-key pattern replaced by one that any punctuation ends."""
    for end in _GITLEAKS_ENDS:
        if regex.endswith(end):
            return regex[: -len(end)] + _KEY_END
    return regex


def _RUN(c: str) -> bool:  # noqa: N802 - reads as the character class it stands for
    return c.isascii() and (c.isalnum() or c in "_.-")


def _first_group(m: re.Match[str]) -> int:
    for index in range(1, (m.re.groups or 0) + 1):
        if m.group(index):
            return index
    return 0


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    # RE2's \w \d \s \b are ASCII; so are these once compiled with re.ASCII.
    return re.compile(pattern, re.ASCII)


@dataclass(frozen=True)
class _Ruleset:
    rules: tuple[Rule, ...]
    common: tuple[_Allow, ...]  # the global allowlist
    keywords: tuple[str, ...]  # every keyword of every rule, once
    source: dict[str, str]


def _allows(entries: list[dict[str, Any]]) -> tuple[_Allow, ...]:
    return tuple(
        _Allow(e["target"], e["condition"] == "AND", tuple(e["regexes"]), tuple(e["stopwords"]))
        for e in entries
    )


@cache
def ruleset() -> _Ruleset:
    """The rules, read from the data file on first call."""
    raw = json.loads(DATA.read_text(encoding="utf-8"))
    loaded = tuple(
        Rule(
            r["id"],
            r["kind"],
            r["regex"],
            tuple(r["keywords"]),
            r["group"],
            float(r["entropy"]),
            r["prefix_run"],
            _allows(r["allow"]),
        )
        for r in raw["rules"]
    )
    keywords = tuple(sorted({k for rule in loaded for k in rule.keywords}))
    source = {k: raw[k] for k in ("source", "commit", "date", "licence")}
    return _Ruleset(loaded, _allows(raw["allow"]), keywords, source)


def rules() -> tuple[Rule, ...]:
    """Every loaded rule, in the data file's order."""
    return ruleset().rules


_last: tuple[str, frozenset[str]] = ("", frozenset())


def _present(loaded: _Ruleset, lowered: str) -> frozenset[str]:
    """The keywords in ``lowered``; the same text asked twice in a row (the specific rules, then
    the generic one) is searched once: on a long text each search of all keywords adds up."""
    global _last
    text, found = _last
    if text is not lowered:
        found = frozenset(k for k in loaded.keywords if k in lowered)
        _last = (lowered, found)
    return found


def spans(
    text: str,
    lowered: str,
    *,
    skip: frozenset[str] = frozenset(),
    only: frozenset[str] | None = None,
) -> Iterator[Span]:
    """Secrets the ruleset finds in ``text`` (``lowered`` is its lowercase, position for
    position), rule by rule: the rules named in ``only`` (all if None), less those in ``skip``.
    Every rule has keywords (a test checks), so a text with none of them costs one pass."""
    loaded = ruleset()
    present = _present(loaded, lowered)
    if not present:
        return
    for rule in loaded.rules:
        if rule.id in skip or (only is not None and rule.id not in only):
            continue
        if present.intersection(rule.keywords):
            yield from rule.spans(text, loaded.common)
