"""Issue 36: a key is a key before any punctuation, for every rule loaded from the gitleaks file.

151 of the 221 loaded rules ended on a pattern that accepts only a space, a newline, ``;``, a
quote or a backtick after the key, so ``(SG.….…)`` or ``key: SG.….…,`` kept the key raw. Each
rule's own sample (generated from its pattern, below) is followed here by each punctuation mark
and by the end of the text: the key goes, the punctuation stays.
"""

from __future__ import annotations

import random
import re
import string
from re import _constants as C  # noqa: N812 - the opcodes of Python's own regex parser
from re import _parser as parser

import pytest

from dreamer.support import secrets_rules
from dreamer.support.secrets import redact

PUNCTUATION = (")", ",", ":", "]", ".", "!", "?", ">")
PRINTABLE = string.ascii_letters + string.digits + string.punctuation + " "
# The end-of-key pattern gitleaks puts after most keys (converted for Python's re).
GITLEAKS_END = r"""(?:[\x60'"\s;]|\\[nr]|$)"""


def _in_class(items: list, char: str) -> bool:
    """Whether ``char`` is in a parsed character class."""
    negate = False
    hit = False
    for op, av in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            hit |= ord(char) == av
        elif op is C.RANGE:
            hit |= av[0] <= ord(char) <= av[1]
        elif op is C.CATEGORY:
            hit |= _in_category(av, char)
    return hit != negate


def _in_category(category: object, char: str) -> bool:
    tests = {
        C.CATEGORY_DIGIT: char.isdigit(),
        C.CATEGORY_NOT_DIGIT: not char.isdigit(),
        C.CATEGORY_WORD: char.isalnum() or char == "_",
        C.CATEGORY_NOT_WORD: not (char.isalnum() or char == "_"),
        C.CATEGORY_SPACE: char.isspace(),
        C.CATEGORY_NOT_SPACE: not char.isspace(),
    }
    return tests.get(category, False)


class _Sampler:
    """Writes one string a parsed pattern matches, choosing branches and lengths at random."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.groups: dict[int, str] = {}

    def write(self, parsed: object) -> str:
        return "".join(self.item(op, av) for op, av in parsed)

    def item(self, op: object, av: object) -> str:
        rng = self.rng
        if op is C.LITERAL:
            return chr(av)
        if op is C.NOT_LITERAL:
            return rng.choice([c for c in string.ascii_letters if ord(c) != av])
        if op is C.ANY:
            return rng.choice(string.ascii_letters)
        if op is C.IN:
            return rng.choice([c for c in PRINTABLE if _in_class(av, c)] or ["x"])
        if op is C.CATEGORY:
            return rng.choice([c for c in PRINTABLE if _in_category(av, c)] or [" "])
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            least, most, sub = av
            most = least + 8 if most is C.MAXREPEAT else most
            count = least if least or rng.random() < 0.7 else rng.randint(least, min(most, 3))
            return "".join(self.write(sub) for _ in range(count))
        if op is C.BRANCH:
            return self.write(rng.choice(av[1]))
        if op is C.SUBPATTERN:
            group, _, _, sub = av
            written = self.write(sub)
            if group:
                self.groups[group] = written
            return written
        if op is C.GROUPREF:
            return self.groups.get(av, "")
        if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            return ""
        raise ValueError(f"no sample for {op}")


def sample(rule: secrets_rules.Rule) -> tuple[str, str]:
    """A text the rule finds a secret in, ending where its key ends, and that secret."""
    source = rule.regex
    if source.endswith(GITLEAKS_END):
        source = source[: -len(GITLEAKS_END)]  # written up to the key's end, no terminator
    parsed = parser.parse(source, re.ASCII)
    common = secrets_rules.ruleset().common
    for attempt in range(400):
        written = _Sampler(random.Random(f"{rule.id}-{attempt}")).write(parsed)
        if "\n" in written or written != written.strip():
            continue
        found = list(rule.spans(written, common))
        if found:
            start, end, _ = found[0]
            return written, written[start:end]
    raise AssertionError(f"no sample for {rule.id}")


RULES = secrets_rules.rules()


def _text(rule: secrets_rules.Rule, written: str) -> str:
    """The sample in a note, after one of the rule's keywords if it holds none."""
    lowered = written.lower()
    if any(keyword in lowered for keyword in rule.keywords):
        return f"note {written}"
    return f"note {rule.keywords[0]} {written}"


def test_every_loaded_rule_gets_a_sample():
    assert len(RULES) >= 200
    for rule in RULES:
        written, secret = sample(rule)
        assert secret and secret in written


@pytest.mark.parametrize("rule", RULES, ids=[rule.id for rule in RULES])
def test_each_rules_sample_is_redacted_before_each_punctuation_mark_and_at_the_end(rule):
    written, secret = sample(rule)
    text = _text(rule, written)
    assert secret not in redact(text).text, "at the end of the text"
    for mark in PUNCTUATION:
        out = redact(f"{text}{mark} then lunch").text
        assert secret not in out, mark
        assert out.endswith(f"{mark} then lunch"), (mark, out)
        wrapped = redact(f"({text}{mark})").text
        assert secret not in wrapped, ("in brackets", mark)
        assert wrapped.endswith(f"{mark})"), (mark, wrapped)
