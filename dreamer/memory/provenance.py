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
from dreamer.support.words import QUERY_STOP_WORDS, stem, words

# Phrases that make a sentence an instruction to whoever reads it, by language (lowercase).
# A word cue matches as a whole word; the CJK ones (no spaces between words) as written.
CUES: dict[str, tuple[str, ...]] = {
    "en": (
        "always", "never", "from now on", "going forward", "in future", "in the future",
        "every future", "standing rule", "standing instruction", "rule:", "policy:",
        "remember to", "remember this", "please remember", "make sure to", "be sure to",
        "you must", "must always", "must never", "do not", "don't", "ignore previous",
        "ignore all previous", "instructions:", "the user wants", "the user prefers",
        "user's rule", "user rule", "user's standing", "prefers that", "expected to",
        "required to", "are supposed to", "is mandatory", "standard practice", "policy",
        "make it a habit", "as a rule", "at all times", "every time you", "whenever you",
        "call me", "i prefer", "i'd prefer", "i want", "i'd like", "i don't want", "i like",
        "i'd rather", "i would rather",
    ),
    "de": ("immer", "niemals", "ab jetzt", "von nun an", "merke dir", "merk dir", "regel:",
           "in zukunft", "stets", "du musst", "ich möchte", "ich will", "bevorzuge"),
    "fr": ("toujours", "jamais", "désormais", "à partir de maintenant", "retiens", "règle :",
           "règle:", "à l'avenir", "il faut toujours", "je préfère", "je veux"),
    "es": ("siempre", "nunca", "a partir de ahora", "recuerda", "regla:", "en adelante",
           "de ahora en adelante", "prefiero", "quiero"),
    "pt": ("sempre", "nunca", "a partir de agora", "lembre-se", "regra:", "daqui em diante",
           "prefiro", "eu quero"),
    "it": ("sempre", "mai più", "d'ora in poi", "ricorda", "regola:", "da adesso", "preferisco",
           "voglio"),
    "nl": ("altijd", "nooit", "vanaf nu", "onthoud", "regel:", "voortaan", "ik wil", "liever"),
    "pl": ("zawsze", "nigdy", "od teraz", "zapamiętaj", "zasada:", "odtąd", "wolę", "chcę"),
    "ru": ("всегда", "никогда", "отныне", "с этого момента", "запомни", "правило:",
           "предпочитаю", "я хочу"),
    "ja": ("常に", "必ず", "絶対に", "今後", "覚えて", "ルール", "してはいけない",
           "お願いします", "してください"),
    "zh": ("总是", "永远", "始终", "从现在起", "今后", "记住", "规则", "必须", "不要",
           "希望", "请", "一律"),
    "ko": ("항상", "절대", "앞으로", "기억해", "규칙", "반드시", "주세요"),
}  # fmt: skip

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_CJK_RUNS = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")
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


# Words read from a source (a tool, a page, a file, another agent, a pasted document) that
# speak to the agent itself, or frame a rule without a cue word, are an instruction too:
# ordinary files, pages and reports rarely address an assistant, so here a wider net costs a
# held item at most. (Too wide for the user's own words: their "should we ...?" is a question.)
ADDRESSEES: dict[str, tuple[str, ...]] = {
    "en": ("assistant", "assistants", "ai assistant", "ai assistants", "ai agent", "ai agents",
           "agent", "agents", "coding agent", "ai model", "ai models", "language model", "llm",
           "llms", "claude", "codex", "copilot", "chatgpt", "main agent", "you are an ai",
           "system:", "note to ai", "for ai"),
    "de": ("assistent", "assistenten", "ki-assistent", "ki-assistenten", "ki-agent", "agenten"),
    "fr": ("l'assistant", "assistants", "assistante", "l'ia", "agents ia", "agent ia"),
    "es": ("asistente", "asistentes", "agente", "agentes", "la ia"),
    "pt": ("assistente", "assistentes", "agente", "agentes", "a ia"),
    "it": ("assistente", "assistenti", "agente", "agenti", "l'ia"),
    "nl": ("assistent", "assistenten", "agenten"),
    "pl": ("asystent", "asystenci", "asystenta", "asystentów", "agenci", "agentów"),
    "ru": ("ассистент", "ассистенты", "ассистента", "ассистентам", "агент", "агенты",
           "помощник", "помощники", "ии"),
    "sv": ("assistenten", "assistenterna", "agenten", "agenterna"),
    "da": ("assistenten", "assistenterne", "agenten"),
    "tr": ("asistan", "asistanı", "asistanlar", "yapay zeka"),
    "ja": ("アシスタント", "エージェント", "ＡＩ"),
    "zh": ("助手", "智能体", "人工智能"),
    "ko": ("어시스턴트", "에이전트", "비서"),
}  # fmt: skip
FRAMINGS: tuple[str, ...] = (
    # a rule framed without a cue word
    "standing order", "best practice", "correct workflow", "the workflow is", "it has been decided",
    "has been decided", "has been agreed", "have agreed", "authorised you", "authorized you",
    "permanently", "policy update", "new rule",
    # the agent's memory and sessions: what a page has no business telling
    "future sessions", "every session", "each session", "next session", "for every later",
    "for all future", "every later task", "every future", "long-term memory", "memory.md",
    "your memory", "please note", "note for", "save this",
    "keep in mind", "don't forget", "do not forget",
    "in jeder sitzung", "chaque session", "cada sesión", "cada sessão", "ogni sessione",
    "elke sessie", "każdej sesji", "каждой сессии", "セッション", "会话", "세션", "varje session",
    "každé relaci", "her oturum", "सत्र",
    # a message made to look like the harness's or the user's own
    "[system", "system message", "system prompt", "developer message", "developer override",
    "<system", "role: system", "the user told", "the user said", "the user asked",
    "the user wants", "when the user", "if the user", "whenever the user", "user told me",
    "der benutzer", "der nutzer", "l'utilisateur", "el usuario", "o usuário", "l'utente",
    "de gebruiker", "użytkownik", "пользователь", "ユーザー", "用户", "用戶", "사용자",
    "användaren", "uživatel", "kullanıcı", "उपयोगकर्ता", "यूज़र",
)  # fmt: skip
# An identifier or markup naming the assistant ("ai-instructions", "agent_memory", "// AI:").
_AI_TOKEN = re.compile(
    r"(?<![\w])(?:(?:ai|ia|ki|llm|agent|assistant)[-_ ]?)+(?:instructions?|memory|policy|policies|"
    r"config|rules?|notes?|directives?|prompt|mode)(?![\w])|(?<![\w])(?:ai|ia|ki|llm)\)?:",
    re.I,
)
# "agent" in words that name no assistant (a browser's user agent, an SSH agent, a CI runner).
_OTHER_AGENTS = re.compile(
    r"\b(?:user|ssh|gpg|build|ci|deploy|monitoring|travel|estate)[ -]agents?\b", re.I
)
_SOURCE_CUE = re.compile(
    "|".join(
        _cue_pattern(c) for c in (*FRAMINGS, *(c for cues in ADDRESSEES.values() for c in cues))
    ),
    re.I,
)


def source_instruction(text: str) -> bool:
    """Whether words read from a source are an instruction: instruction-shaped, addressed to an
    assistant or agent, framed as a rule, speaking of the agent's memory or sessions, or dressed
    as a system message or the user's own words (``ADDRESSEES``, ``FRAMINGS``)."""
    text = _OTHER_AGENTS.sub(" ", text)
    return instruction_shaped(text) or bool(_SOURCE_CUE.search(text) or _AI_TOKEN.search(text))


def sentences(text: str) -> list[str]:
    """The sentences (and lines) of ``text``, stripped, empty ones left out."""
    return [s.strip(" -*>\t") for s in _SENTENCE.split(text) if s.strip(" -*>\t")]


def instructions(text: str) -> list[str]:
    """The sentences of ``text`` read from a source that are instructions to the agent."""
    return [s for s in sentences(text) if source_instruction(s)]


def _content(text: str) -> set[str]:
    """Content stems of ``text``; a run of CJK characters (no spaces between its words) counts
    by its character pairs."""
    out: set[str] = set()
    for word in words(text):
        if _CJK.search(word):
            run = _CJK_RUNS.findall(word)
            out.update(part[i : i + 2] for part in run for i in range(max(1, len(part) - 1)))
            out.update(stem(w) for w in _CJK_RUNS.split(word) if len(w) > 1)
        elif word not in QUERY_STOP_WORDS and len(word) > 1:
            out.add(stem(word))
    return out


def _same(a: str, b: str) -> bool:
    """One word in two forms: equal stems, or one the other's start (the light stemmer cuts
    "tiles" to "til" and leaves "tile")."""
    return a == b or (min(len(a), len(b)) >= 3 and (a.startswith(b) or b.startswith(a)))


def _shared(mine: set[str], theirs: set[str]) -> int:
    return sum(1 for word in mine if word in theirs or any(_same(word, t) for t in theirs))


def echoes(sentence: str, read: Iterable[str]) -> bool:
    """Whether ``sentence`` repeats one of the instructions ``read`` (by content stems)."""
    mine = _content(sentence)
    if not mine:
        return False
    for instruction in read:
        theirs = _content(instruction)
        shared = _shared(mine, theirs)
        if shared >= ECHO_MIN_STEMS and shared >= ECHO_SHARE * min(len(mine), len(theirs)):
            return True
    return False


def traces(line: str, texts: Iterable[str]) -> bool:
    """Whether ``line`` states what one of ``texts`` says: most of its content stems are there."""
    mine = _content(line)
    if not mine:
        return True
    need = max(min(2, len(mine)), -(-len(mine) * 2 // 5))  # two, and at least 40%
    return any(_shared(mine, _content(text)) >= need for text in texts)


def may_set_rules(speaker: str | None) -> bool:
    """Whether a crystal by ``speaker`` may set a rule (None: stored before speakers were)."""
    return speaker is None or speaker in RULE_SPEAKERS
