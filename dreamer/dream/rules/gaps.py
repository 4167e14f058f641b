"""Curiosity gaps: open questions found in notes, closed by a later answer; their section."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from dreamer.dream.rules.context import Context
from dreamer.dream.rules.insight_results import Insights
from dreamer.dream.rules.lines import fit, same
from dreamer.dream.rules.words import context_lines, is_capture
from dreamer.memory.scratch import Note
from dreamer.memory.state import WorkingMemory
from dreamer.retrieval.embed import Embedder, clearly_nearest
from dreamer.store import Crystal, Store
from dreamer.support.times import iso
from dreamer.support.words import stem, stems

MAX_GAPS = 10


GAP_WINDOW = timedelta(days=14)


_QUESTION_LEAD = re.compile(
    r"^\s*(?:open question|question|todo|unknown|unclear|not sure|need to find out|"
    r"find out|ask (?:the user|them|him|her|about|whether|if)|figure out|investigate|"
    r"wonder(?:ing)?)\b[:\s-]*",
    re.IGNORECASE,
)


_SENTENCE = re.compile(r"[^.!?\n]+[?]|[^.!?\n]+[.!]?", re.UNICODE)

# A question asked without a question mark, inside a sentence ("we're still undecided: ...",
# "not sure yet whether ..."): the phrase and what it leaves open. Each entry has a test in
# tests/dream/test_rules_gaps.py.
UNDECIDED = (
    r"not sure (?:yet )?(?:whether|if|which|how|when|where|who|what)",
    r"(?:still |yet )?undecided\b\s*(?::|on|about|whether|if|between)",
    r"(?:have not|haven't|hasn't|has not) (?:yet )?decided\b\s*(?::|whether|if|which|how|on)",
    r"(?:it's|it is|that's|that is) (?:still )?an open question\b\s*(?::|whether|if|which|how)",
)
_UNDECIDED = re.compile(r"\b(?:" + "|".join(UNDECIDED) + r")", re.IGNORECASE)
MIN_LEFT_OPEN = 3  # words after the phrase: "still undecided: X or Y" leaves something open


def questions(text: str) -> list[str]:
    """Open questions in a note: sentences ending in '?', led by 'find out', 'TODO' ..., or
    saying what is still undecided ("not sure yet whether we shard by tenant")."""
    out = []
    for line in text.split("\n"):
        stripped = line.strip().lstrip("-*• ").strip()
        if not stripped:
            continue
        lead = _QUESTION_LEAD.match(stripped)
        if lead and len(stripped) > lead.end() + 3:
            out.append(stripped[0].upper() + stripped[1:])
            continue
        for sentence in _SENTENCE.findall(stripped):
            sentence = sentence.strip()
            if sentence.endswith("?") and len(sentence) > 8:
                out.append(sentence)
            elif (found := _UNDECIDED.search(sentence)) and len(
                sentence[found.end() :].split()
            ) >= MIN_LEFT_OPEN:
                out.append(sentence[0].upper() + sentence[1:])
    return out


_ASKED = re.compile(r"[^?]*\?")


def one_each(text: str) -> list[str]:
    """The questions of one gap bullet, one each: "Who pays? When is it due?" is two, each
    answered on its own (an answer to one names too few of both's words)."""
    text = text.strip()
    asked = [q.strip() for q in _ASKED.findall(text) if len(q.strip()) > 8]
    if len(asked) < 2:
        return [text] if text else []
    lead = _QUESTION_LEAD.match(asked[0])
    if lead:  # "Open question: does X? Y?": the label belongs to neither
        asked[0] = asked[0][lead.end() :].strip()
    return [q[0].upper() + q[1:] for q in asked if q]


_ANSWER = re.compile(
    r"\b(decided|decision|decide|found|answer(?:ed)?|resolved|chose|chosen|going with|settled|"
    r"turns out|confirmed|agreed|approved|we will|we'll|will use|booked|done|went with|go with|"
    r"opted|picked|sticking with|stick with)\b",
    re.IGNORECASE,
)


_QUESTION_WORDS = frozenset(
    stem(w)
    for w in "open question find out need figure whether why ask unclear sure yet still "
    "undecided decide decided haven't".split()
)


def answer_to(question: str, asked: str, statements: list[tuple[str, str]]) -> tuple[str, str]:
    """(text, at) of the first statement after ``asked`` that answers ``question``, or ("", "")."""
    wanted = stems(question) - _QUESTION_WORDS
    if len(wanted) < 2:
        return "", ""
    for text, at in sorted(statements, key=lambda pair: pair[1]):
        if (asked and at <= asked) or questions(text):
            continue
        shared = wanted & stems(text)
        if len(shared) >= 2 and len(shared) >= 0.3 * len(wanted):
            if _ANSWER.search(text) or len(shared) >= 0.6 * len(wanted):
                return text, at
    return "", ""


ANSWER_SIMILARITY = 0.35  # cosine of question and answer, with the default embedder
ANSWER_MARGIN = 0.1  # the answer must be clearly nearer than any other later statement


def by_meaning(
    question: str, asked: str, statements: list[tuple[str, str]], embedder: Embedder
) -> tuple[str, str]:
    """(text, at) of the later statement clearly nearest the question in meaning, or ("", "")."""
    # An answer names something the question names (the courier, the metric): meaning alone
    # would let any near sentence close a question.
    wanted = stems(question) - _QUESTION_WORDS
    # One entry per moment: a note and its crystal, or the two sides of one exchange (the
    # person's words and the answer that repeats them), are one statement, not two rivals.
    moments: dict[str, list[str]] = {}
    for text, at in statements:
        if not (asked and at <= asked) and wanted & stems(text):
            said = moments.setdefault(at, [])
            if text not in said:
                said.append(text)
    if not moments:
        return "", ""
    later = list(moments.items())
    texts = [" ".join(said) for _, said in later]
    nearest = clearly_nearest(embedder, question, texts, ANSWER_SIMILARITY, ANSWER_MARGIN)
    return (later[nearest][1][0], later[nearest][0]) if nearest is not None else ("", "")


# A question said in a session that the person leaves open on purpose ("open question:", "for
# later"): a gap until something answers it. Each entry has a test in
# tests/dream/test_rules_gaps.py.
OPEN_MARKERS = (
    "open question",
    "for later",
    "still open",
    "to be decided",
    "not sure yet",
    "undecided",
    "haven't decided",
    "not decided",
)
OPEN = re.compile(r"\b(?:" + "|".join(map(re.escape, OPEN_MARKERS)) + r")\b", re.IGNORECASE)
_ANSWERERS = ("assistant", "subagent")


def find_gaps(
    store: Store,
    notes: list[Note],
    crystals: list[Crystal],
    now: datetime,
    old: WorkingMemory,
    embedder: Embedder | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(open questions, answered questions): a later note that answers one closes it, in the
    question's words or, with an embedder, in any words (``by_meaning``)."""
    seen: set[str] = set()
    gaps: list[dict[str, Any]] = []
    answered: list[dict[str, Any]] = []
    texts = [(n.text, iso(n.at)) for n in notes] + [(c.text, c.created_at) for c in crystals]
    # The answer in a session exchange whose prompt was a question answers that question
    # ("Is 'honeybee' one word?" "Yes, ..."), not an older one it happens to sound like.
    session = [c for c in crystals if c.source == "sessions"]
    asked_then = {
        c.created_at for c in session if c.speaker not in _ANSWERERS and questions(c.text)
    }
    replies = {c.text for c in session if c.speaker in _ANSWERERS and c.created_at in asked_then}
    statements = [(t, at) for t, at in texts if not questions(t) and t not in replies]

    def add(question: str, source: str, at: str) -> None:
        key = " ".join(question.lower().split())
        if key in seen:
            return
        seen.add(key)
        reply, when = answer_to(question, at, statements) if source != "search" else ("", "")
        if not reply and source != "search" and embedder is not None:
            reply, when = by_meaning(question, at, statements, embedder)
        if reply:
            answered.append({"question": question, "answer": reply, "at": when})
        elif source != "state":
            gaps.append({"question": question, "source": source, "at": at})

    # A question asked in a session was asked of the agent and answered there, unless the
    # person left it open on purpose; a question the assistant asks back is no gap.
    left_open = {c.text for c in session if c.speaker == "user" and OPEN.search(c.text)}
    asked_in_session = {c.text for c in session} - left_open
    for text, at in sorted(texts, key=lambda pair: pair[1], reverse=True):
        if is_capture(text) or text in asked_in_session:
            continue
        for found in questions(text):
            for question in one_each(found):
                add(question, "note", at)
    for line in context_lines(old.body("curiosity_gaps")):
        for question in one_each(re.sub(r"^\s*([-*•]|\d+[.)])\s+", "", line)):
            add(question, "state", "")
    # A gap stays open until a later search for the same words found something (a search
    # that finds nothing writes a gap row at the same moment).
    for query, at in store.search.open_gaps(iso(now - GAP_WINDOW), MAX_GAPS):
        add(f"What is known about “{query}”? (a search found no close match)", "search", at)
    return gaps[:MAX_GAPS], answered


MAX_GAPS_SHOWN = 10


def write_gaps(old: WorkingMemory, ins: Insights, ctx: Context, budget: int) -> str:
    lines = [f"- {g['question']}" for g in ins.curiosity_gaps]
    for line in context_lines(old.body("curiosity_gaps")):
        asked = one_each(re.sub(r"^\s*([-*•]|\d+[.)])\s+", "", line))
        if len(asked) < 2:
            lines += [line] if not same(line, ctx.answered) else []
        else:  # one question per bullet: the answered ones leave, the others stay
            lines += [f"- {q}" for q in asked if not same(q, ctx.answered)]
    return fit(lines[:MAX_GAPS_SHOWN], budget)
