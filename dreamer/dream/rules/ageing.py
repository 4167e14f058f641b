"""Ageing: which Active Context lines fade, and which name a date still ahead."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any

from dreamer.dream import dates
from dreamer.dream.rules.values import CALENDAR
from dreamer.dream.rules.words import context_lines, nameable, topic_of
from dreamer.memory import repeats
from dreamer.memory.scratch import Note
from dreamer.memory.state import WorkingMemory
from dreamer.store import Crystal, Store
from dreamer.support.bounds import head
from dreamer.support.times import iso, parse_iso
from dreamer.support.words import keywords, stem, stems

FADE_AFTER = timedelta(days=2)  # an Active Context line with no support this long fades
SAID_AGAIN_LOOKUP = 20  # full-text matches of a fading line's words read for its own note


def _when(stamp: str | None, fallback: datetime) -> datetime:
    try:
        return parse_iso(stamp) if stamp else fallback
    except ValueError:
        return fallback


class Written:
    """When state lines were first written: each line's newest crystal, else the last dream.

    The store is asked once for each set of words (a full-text join that grows with the
    store), however many rules of one dream ask about the same line.
    """

    def __init__(self, store: Store, old: WorkingMemory, now: datetime):
        self.store, self.old, self.now = store, old, now
        self.said: dict[tuple[str, ...], str | None] = {}

    def __call__(self, line: str) -> datetime:
        """When ``line`` was first written."""
        words = tuple(keywords(re.sub(r"^\s*([-*•]|\d+[.)])\s+", "", line))[:3])
        if words not in self.said:
            self.said[words] = self.store.search.last_mention(words) if words else None
        return _when(self.said[words] or self.old.last_dream, self.now)


def find_upcoming(
    store: Store,
    notes: list[Note],
    crystals: list[Crystal],
    old: WorkingMemory,
    now: datetime,
    written: Written | None = None,
) -> list[dict[str, Any]]:
    """New notes and Active Context lines naming a date that is still ahead (``written``:
    the dream's look-ups of when lines were written, shared with its other rules)."""
    written = written or Written(store, old, now)
    items: list[tuple[str, str | None]] = [(n.text, iso(n.at)) for n in notes]
    items += [(c.text, c.created_at) for c in crystals]
    items += [(line.strip(), None) for line in context_lines(old.body("active_context"))]
    out: dict[str, dict[str, Any]] = {}
    for text, at in items:
        if not dates.names_a_date(text):
            continue  # no date: nothing ahead, whenever it was written (a look-up spared)
        when = dates.ahead(text, _when(at, now) if at else written(text), now)
        if when is not None:
            out.setdefault(
                " ".join(text.split()), {"text": text, "date": when.isoformat(), "at": at}
            )
    return sorted(out.values(), key=lambda item: (item["date"], item["text"]))


_WHEN_STEMS = {stem(w) for w in [*dates.MONTHS, *dates.WEEKDAYS]}


def _supported(line_stems: set[str], evidence: list[set[str]]) -> bool:
    need = 1 if len(line_stems) <= 2 else 2
    return any(len(line_stems & other) >= need for other in evidence)


def find_fading(
    store: Store,
    old: WorkingMemory,
    notes: list[Note],
    crystals: list[Crystal],
    now: datetime,
    written: Written | None = None,
) -> list[dict[str, Any]]:
    lines = context_lines(old.body("active_context"))
    if not lines:
        return []
    written = written or Written(store, old, now)
    since = iso(now - FADE_AFTER)
    # MEMORY.md's own lines kept as crystals (hand edits, overflow) are not news about
    # themselves: only a search that found one since makes it support.
    recent = [
        c
        for c in store.crystals.touched_since(since, limit=400)
        if c.source != "memory" or c.access_count > 0
    ]
    # Heads only: a crystal (or a query) of megabytes costs no more than a long note.
    evidence = [stems(head(n.text)) for n in notes]
    evidence += [stems(head(c.text)) for c in crystals + recent]
    evidence += [stems(head(query)) for query in store.search.search_queries(since)]
    fading = []
    statements = [(n.text, iso(n.at)) for n in notes]
    statements += [(c.text, c.created_at) for c in crystals + recent]
    for line in lines:
        line_stems = stems(line)
        if not line_stems:
            continue
        # When its note was written (its label, "Deadline:", is no word of the note); each
        # date a line names is read against that, and a line naming none needs no look-up.
        dated = dates.names_a_date(line)
        passed = (
            _passed(line, written(content(line)), now) if dated and CALENDAR.search(line) else None
        )
        if passed is None:
            if _supported(line_stems, evidence):
                continue
            if dated and dates.ahead(line, written(line), now) is not None:
                continue  # an event or deadline still ahead never fades before its date
            if standing(line):
                continue  # an open question or a standing rule is live until it is settled
        words, last = finding_words(store, line)
        if passed is None and last is not None and _said_again(store, words, last, since):
            continue  # its note was written again in the window: a sighting is support
        finding = {
            "topic": topic_of(line),
            "keywords": " ".join(words),
            "line": line.strip(),
            "last_seen": last,
        }
        if passed is not None:
            # An event or deadline whose date has passed leaves whatever still mentions it,
            # as a pointer that says what happened: the later note on its subject, if any.
            happened = outcome(line, passed, statements)
            others = [(o, iso(written(content(o)))) for o in lines if o != line]
            if happened is None and _newest_move(line, passed, now, statements + others):
                continue  # a deadline moved and moved again: its newest date waits for news
            finding |= {"passed": passed.isoformat(), "outcome": happened}
        fading.append(finding)
    return fading


def _said_again(store: Store, words: list[str], last: str, since: str) -> bool:
    """Whether the note ``words`` find (the one created at ``last``) was written again since."""
    ids = [crystal_id for crystal_id, _ in store.search.fts_match(words, [], SAID_AGAIN_LOOKUP)]
    own = [(c.id, c.created_at) for c in store.crystals.crystals_by_id(ids) if c.created_at == last]
    return any(seen.last >= since for seen in repeats.of(store, own).values())


def _passed(line: str, written: datetime, now: datetime) -> date | None:
    """The last calendar date a line names when it was ahead of the day the line was written
    and has passed now (before today), else None. A date of the day it was written or before
    is a record ("12 May, 2023 Ana: ..." heads a line with its own day), not an event ahead;
    a bare weekday is too loose to say an event passed."""
    if not CALENDAR.search(line):
        return None
    named = dates.mentioned(line, written)
    if not named or max(named) <= written.date() or max(named) >= now.date():
        return None
    return max(named)


OUTCOME_STEMS = 2  # content words a later note shares with a passed event to tell its outcome
MOVED_GRACE = timedelta(days=7)  # a moved deadline's newest date, passed with no news, stays
_MOVED = re.compile(
    r"\b(?:moved|pushed|postponed|slipped|slips|rescheduled|delayed|brought forward)\b",
    re.IGNORECASE,
)


def _newest_move(line: str, passed: date, now: datetime, statements: list[tuple[str, str]]) -> bool:
    """Whether ``line`` moved a deadline to a date that passed within ``MOVED_GRACE`` and no
    statement (a new note, another line of the state) names a later date for the same subject:
    it was moved before, so whether it held is news still to come, and it stays in view."""
    if not _MOVED.search(line) or now.date() - passed > MOVED_GRACE:
        return False
    subject = {s for s in stems(line) if not any(ch.isdigit() for ch in s)} - _WHEN_STEMS
    for text, at in statements:
        if not at or len(subject & stems(text)) < OUTCOME_STEMS:
            continue
        named = dates.mentioned(text, parse_iso(at))
        if named and max(named) > passed:
            return False  # moved again, later
    return True


def outcome(line: str, when: date, statements: list[tuple[str, str]]) -> str | None:
    """The newest statement written on or after an event's date that shares its subject (at
    least ``OUTCOME_STEMS`` content words, dates aside) and names no date still ahead."""
    wanted = {s for s in stems(content(line)) if not any(ch.isdigit() for ch in s)}
    wanted -= _WHEN_STEMS
    best: tuple[int, str, str] | None = None
    for text, at in statements:
        if not at or at[:10] < when.isoformat() or " ".join(text.split()) in line:
            continue
        shared = len(wanted & stems(text))
        if shared < OUTCOME_STEMS or CALENDAR.search(text):
            continue
        if best is None or (shared, at) > best[:2]:
            best = (shared, at, text)
    return best[2] if best else None


_BULLET = re.compile(r"^\s*([-*•]|\d+[.)])\s+")
_LABEL = re.compile(r"^[*_`]*(?P<label>[^:*_`]{1,40})[*_`]*:\s+")
_OPEN = re.compile(
    r"\?|\b(open (?:question|decision|point|issue)s?|undecided|not (?:yet )?decided|"
    r"to decide|(?:still )?deciding|tbd)\b",
    re.IGNORECASE,
)
# A rule or a review kept on a rhythm; a habit on a weekday ("every Tuesday at 08:30") may
# still move, and fades like any line once nothing supports it.
_STANDING = re.compile(
    r"\b(?:every|each)\s+(?:day|week|month|morning|evening|night)\b|"
    r"\b(?:daily|weekly|fortnightly|monthly|always|never|standing rule)\b",
    re.IGNORECASE,
)


def standing(line: str) -> bool:
    """Whether a line is an open question or decision, or a standing rule or review."""
    return bool(_OPEN.search(line) or _STANDING.search(line))


def content(line: str) -> str:
    """A line without its bullet and its short label ("Baseline: …", "Decided 2026-05-20: …")."""
    text = _BULLET.sub("", line).strip()
    label = _LABEL.match(text)
    if label and len(label["label"].split()) <= 4:
        text = text[label.end() :]
    return text


FIND_WORDS = 4  # keywords suggested to find a fading line's note again


def finding_words(store: Store, line: str) -> tuple[list[str], str | None]:
    """Keywords from a line's content that find its own note (full-text), and when that note
    was last written; ([], None) when no choice of them finds it."""
    words = [w for w in keywords(content(line)) if nameable(w)][: 2 * FIND_WORDS]
    for size in range(min(FIND_WORDS, len(words)), 0, -1):
        for start in range(len(words) - size + 1):
            chosen = words[start : start + size]
            last = store.search.last_mention(chosen)
            if last is not None:
                return chosen, last
    return [], None


_EPOCH_JULIAN_DAY = 2440587.5  # the julian day of 1970-01-01T00:00:00Z


def weigh(
    store: Store, words: list[str], now: datetime, counts: dict[str, int] | None = None
) -> dict[str, float] | None:
    """The importance and age in days of the crystal ``words`` find best (full-text), or None.

    A crystal's importance fades in the consolidation ticks unless it is found again, so it
    already says how much a memory still matters; the age says how long ago it was written.
    Only the crystals holding the rarest of the words are ranked (``counts``: in how many
    crystals each word is), so a pointer of common words costs no more at a million crystals.
    """
    counts = counts if counts is not None else store.search.term_frequencies(words)
    present = [w for w in words if counts.get(w, 0) > 0]
    if not present:
        return None
    rarest = min(present, key=lambda w: (counts[w], w))
    ids = [cid for cid, _ in store.search.fts_match([rarest], [], 3)]
    rows = {row[0]: row for row in store.search.rank_rows(ids)}
    best = next((rows[cid] for cid in ids if cid in rows), None)
    if best is None:
        return None
    today = now.timestamp() / 86400 + _EPOCH_JULIAN_DAY
    return {"importance": float(best[3]), "age_days": max(0.0, today - float(best[2]))}


def weigh_pointers(
    store: Store, old: WorkingMemory, fading: list[dict[str, Any]], now: datetime
) -> dict[str, dict[str, float]]:
    """Weights of the old pointers (by their keywords) and of the fading lines (by the line):
    what the pointer cap evicts first is the least important and oldest together."""
    wanted = {p.keywords: p.keywords.split() for p in old.pointers()}
    wanted.update({item["line"]: item["keywords"].split() for item in fading})
    everyone = sorted({w for words in wanted.values() for w in words})
    if not everyone:
        return {}
    counts = store.search.term_frequencies(everyone)  # one look at the index for every pointer
    out: dict[str, dict[str, float]] = {}
    for key, words in wanted.items():
        if found := weigh(store, words, now, counts):
            out[key] = found
    return out
