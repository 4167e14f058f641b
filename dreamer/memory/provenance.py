"""Who may set a rule: instruction-shaped words, and an agent repeating what it read.

DESIGN.md, "Who said what": only the user's words (or the agent's own, unprompted) set a
standing rule. Words from a tool result, a file, a page, another agent or an import are
evidence; when they are shaped like an instruction ("always …", "from now on …", "standing
rule: …") they are *held* (``dreamer.memory.held``). So is the agent's note or the assistant's
answer that only repeats such words: the agent steered by a page it read.

Whether a sentence is instruction-shaped is read from cue phrases, one tuple per language
(``CUES``): this is the one place where meaning cannot be read from the writer's structure,
and a wrong guess costs little (a held item waits for the user; nothing is lost). Whether a
sentence repeats another is read from their word stems, not their wording.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from dreamer.store.kinds import RULE_SPEAKERS
from dreamer.support.words import STOP_WORDS, stems

# Phrases that make a sentence an instruction to whoever reads it, by language (lowercase).
# A word cue matches as a whole word; the CJK ones (no spaces between words) as written.
CUES: dict[str, tuple[str, ...]] = {
    "en": (
        "always", "never", "from now on", "going forward", "in future", "in the future",
        "every future", "standing rule", "standing instruction", "rule:", "policy:",
        "remember to", "remember this", "please remember", "make sure to", "be sure to",
        "you must", "must always", "must never", "do not", "don't", "ignore previous",
        "ignore all previous", "instructions:", "the user wants", "the user prefers",
        "user's rule", "user rule", "user's standing", "prefers that",
    ),
    "de": ("immer", "niemals", "ab jetzt", "von nun an", "merke dir", "merk dir", "regel:",
           "in zukunft", "stets", "du musst"),
    "fr": ("toujours", "jamais", "désormais", "à partir de maintenant", "retiens", "règle :",
           "règle:", "à l'avenir", "il faut toujours"),
    "es": ("siempre", "nunca", "a partir de ahora", "recuerda", "regla:", "en adelante",
           "de ahora en adelante"),
    "pt": ("sempre", "nunca", "a partir de agora", "lembre-se", "regra:", "daqui em diante"),
    "it": ("sempre", "mai più", "d'ora in poi", "ricorda", "regola:", "da adesso"),
    "nl": ("altijd", "nooit", "vanaf nu", "onthoud", "regel:", "voortaan"),
    "pl": ("zawsze", "nigdy", "od teraz", "zapamiętaj", "zasada:", "odtąd"),
    "ru": ("всегда", "никогда", "отныне", "с этого момента", "запомни", "правило:"),
    "ja": ("常に", "必ず", "絶対に", "今後", "覚えて", "ルール", "してはいけない"),
    "zh": ("总是", "永远", "始终", "从现在起", "今后", "记住", "规则", "必须", "不要"),
    "ko": ("항상", "절대", "앞으로", "기억해", "규칙", "반드시"),
}  # fmt: skip

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
ECHO_SHARE = 0.5  # of the shorter side's content stems two sentences share for an echo
ECHO_MIN_STEMS = 3


def _cue_pattern(cue: str) -> str:
    body = re.escape(cue)
    if _CJK.search(cue):
        return body
    return rf"(?<![\w]){body}(?![\w])" if cue[-1].isalnum() else rf"(?<![\w]){body}"


_CUE = re.compile("|".join(_cue_pattern(c) for cues in CUES.values() for c in cues), re.I)


def instruction_shaped(text: str) -> bool:
    """Whether ``text`` tells its reader what to do from now on (in any language of ``CUES``)."""
    return bool(_CUE.search(text))


def sentences(text: str) -> list[str]:
    """The sentences (and lines) of ``text``, stripped, empty ones left out."""
    return [s.strip(" -*>\t") for s in _SENTENCE.split(text) if s.strip(" -*>\t")]


def instructions(text: str) -> list[str]:
    """The instruction-shaped sentences of ``text``."""
    return [s for s in sentences(text) if instruction_shaped(s)]


def _content(text: str) -> set[str]:
    return {s for s in stems(text) if s not in STOP_WORDS and len(s) > 1}


def echoes(sentence: str, read: Iterable[str]) -> bool:
    """Whether ``sentence`` repeats one of the instructions ``read`` (by content stems)."""
    mine = _content(sentence)
    if not mine:
        return False
    for instruction in read:
        theirs = _content(instruction)
        shared = mine & theirs
        if len(shared) >= ECHO_MIN_STEMS and len(shared) >= ECHO_SHARE * min(
            len(mine), len(theirs)
        ):
            return True
    return False


def may_set_rules(speaker: str | None) -> bool:
    """Whether a crystal by ``speaker`` may set a rule (None: stored before speakers were)."""
    return speaker is None or speaker in RULE_SPEAKERS
