"""The "never keep" and "always keep" lines of ``memory/DREAM.md``, read deterministically.

``memory/DREAM.md`` is free text for the model. Two kinds of line also bind the offline
synthesizer, because they can be read without a model:

- "Never keep X [in Active Context | in MEMORY.md]": a line about X is left out of Active
  Context (or of every section, when the rule names MEMORY.md or no place at all);
- "Always keep X [in Active Context]": a line about X stays in Active Context, never fading.

X is a list ("CI flakes, lint fixes or formatting chores"); each item matches a text holding
any of its distinctive words (a word form counts: "flakes" matches "flaky", "formatting"
matches "reformatted"). Generic words ("fixes", "chores", "anything") and possessive names
("Kai's") are not distinctive. Everything else in DREAM.md is ignored offline
(docs/guides/dreaming.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dreamer.memory.state import WorkingMemory, section_keys
from dreamer.support.words import KEEP_RULE_STOP_WORDS

_RULE = re.compile(
    r"\b(?P<kind>never|always|don'?t|do not)\s+(?:ever\s+)?(?P<verb>keep|store|remember|write|"
    r"save|record|drop)\s+(?P<what>[^.;\n]+)",
    re.IGNORECASE,
)
_PLACE = re.compile(
    r"\s+(?:in|into|inside|from|out of)\s+(?:the\s+)?(?P<place>active context|memory\.md|"
    r"memory|the bond|bond|working memory|any section|the state)\b.*$",
    re.IGNORECASE,
)
_TAIL = re.compile(r"\s+(?:until|unless|while|when|because|since|as|so|they|it)\b.*$", re.I)
_SPLIT = re.compile(r",\s*|\s+(?:or|and|nor)\s+", re.IGNORECASE)
_WORD = re.compile(r"[^\W_][\w'’-]*", re.UNICODE)


@dataclass(frozen=True)
class Rule:
    """One rule: keep or drop lines about any of its word groups, in a place."""

    keep: bool
    groups: tuple[tuple[str, ...], ...]  # each item of the list: its distinctive word stems
    everywhere: bool  # a never-keep rule for all of MEMORY.md (else Active Context only)
    text: str

    def matches(self, text: str) -> bool:
        """Whether ``text`` is about one of the rule's items."""
        words = [w.lower().strip("'’-") for w in _WORD.findall(text)]
        return any(any(_hit(root, words) for root in group) for group in self.groups)


def _root(word: str) -> str:
    word = word.lower()
    for suffix in ("ings", "ing", "ies", "es", "s", "ed", "y"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def _hit(root: str, words: list[str]) -> bool:
    if len(root) < 4:
        return root in words
    return any(root in word for word in words)


def parse(text: str) -> list[Rule]:
    """The keep rules of a DREAM.md text (lines that are no rule are ignored)."""
    rules = []
    for match in _RULE.finditer(text):
        kind, verb, what = match["kind"].lower(), match["verb"].lower(), match["what"]
        keep = (kind == "always") != (verb == "drop")
        place = _PLACE.search(what)
        where = (place["place"].lower() if place else "").strip()
        what = _TAIL.sub("", what[: place.start()] if place else what)
        groups = []
        for item in _SPLIT.split(what):
            words = [
                w.lower()
                for w in _WORD.findall(item)
                if not re.search(r"['’]s$", w)
                and w.lower() not in KEEP_RULE_STOP_WORDS
                and len(w) > 1
            ]
            if words:
                groups.append(tuple(dict.fromkeys(_root(w) for w in words)))
        if groups:
            everywhere = not keep and where not in ("active context",)
            rules.append(Rule(keep, tuple(groups), everywhere, match.group(0).strip()))
    return rules


def dropped(text: str, rules: list[Rule], *, section: str = "active_context") -> bool:
    """Whether a never-keep rule keeps ``text`` out of ``section``."""
    return any(
        not rule.keep and (rule.everywhere or section == "active_context") and rule.matches(text)
        for rule in rules
    )


def pinned(text: str, rules: list[Rule]) -> bool:
    """Whether an always-keep rule holds ``text`` in Active Context."""
    return any(rule.keep and rule.matches(text) for rule in rules)


def silence(state: WorkingMemory, rules: list[Rule]) -> int:
    """Drop the lines never-keep rules forbid, section by section; count them."""
    if not any(not rule.keep for rule in rules):
        return 0
    dropped_lines = 0
    for key in section_keys():
        lines = state.body(key).split("\n")
        kept = [line for line in lines if not line.strip() or not dropped(line, rules, section=key)]
        if len(kept) != len(lines):
            dropped_lines += len(lines) - len(kept)
            state.bodies[key] = "\n".join(kept)
    return dropped_lines
