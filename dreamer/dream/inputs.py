"""What one dream is given, within a token budget whatever is pending (DESIGN.md, step 4).

Every pending memory is a crystal by the time a dream gathers (the rotated notes are indexed
first), so a note is sent once, as its crystal, with its type, source, time and importance.
The pending crystals are ranked (``rank``: directives and corrections first, then importance,
recency and novelty) and taken in that order while they fit the room the other blocks leave;
each is clipped to ``CLIP_CHARS`` with a marker that names the crystal holding it whole. What
does not fit is summarised by count and source (``left_summary``) and stays pending: the
dream does not consolidate it and its scratch line goes back for the next dream.

The data blocks are rendered here, as text, so the offline synthesizer, ``dream run --dry-run
--json`` and the Claude prompt measure the same thing (``measure``). Data is delimited by
XML-style tags; ``neutralise`` defuses those tags inside the data so a note cannot close its
block. Insights go as compact JSON with caps on every list (``insights_json``).
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dreamer.dream.jaccard import WordIndex
from dreamer.memory.repeats import Sighting
from dreamer.memory.state import WorkingMemory, render, sections
from dreamer.store import Crystal
from dreamer.support import tokens
from dreamer.support.bounds import READ_MAX_CHARS, head
from dreamer.support.times import parse_iso
from dreamer.support.words import stems

CLIP_CHARS = 1_500  # a pending memory longer than this is clipped, with a marker
NEAR_DUPLICATE = 0.8  # word overlap (Jaccard) above which a memory repeats a chosen one
POOL = 5_000  # pending crystals a dream looks at (newest first); the rest wait their turn
# Shares of the budget the fixed blocks may take at most (the memories get the rest).
STATE_SHARE, INSTRUCTIONS_SHARE, NICHE_SHARE, INSIGHTS_SHARE = 0.30, 0.08, 0.05, 0.15
CAPS = {
    "topics": 8,
    "contradictions": 6,
    "curiosity_gaps": 10,
    "answered_questions": 8,
    "emerging_skills": 8,
    "fading_topics": 12,
    "upcoming": 10,
    "people": 10,
}
# The kinds of insight a model is handed: those right at least nine times in ten on the quality
# scenarios (``dream bench insights``; docs/performance.md gives each kind's figure). The offline
# synthesizer reads every kind.
SENT_KINDS = ("topics", "fading_topics", "upcoming", "people")
TEXT_CAP = 240  # characters of any text inside the insights
IDS_CAP = 5
CONTINUATION = "  "  # indent of a note's later lines
REFERABLE = ("line", "text")  # insight fields that may repeat a state line
SECRET_MARK = "[secret:"  # how a redacted secret reads (dreamer.support.secrets.placeholder)
WITHHELD = "[withheld]"
_VALUE = r"[^\s,;]*[\w@.-][^\s,;]*"  # a name, handle or address
_WHO = r"(?:user(?:[ _-]?(?:name|id))?|login|account|e-?mail)"
_CREDENTIAL = re.compile(
    rf"(\b{_WHO}\b(?:\s*:?\s*{_WHO}\b)*(?:\s+is)?\s*[:=]?\s*)(?!\[secret:){_VALUE}",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")

# Tags that delimit data in the prompts; inside data they are neutralised.
DATA_TAGS = (
    "dream_instructions",
    "current_state",
    "notes",
    "note",
    "crystals",
    "crystal",
    "insights",
    "niche",
    "hormones",
    "previous_draft",
    "left_pending",
)
_TAG = re.compile(r"<(?=\s*/?\s*(?:" + "|".join(DATA_TAGS) + r")\b)", re.IGNORECASE)
_CORRECTION = re.compile(
    r"\b(correction|corrected|actually|no longer|not anymore|instead|changed to|moved to|"
    r"from now on|forget|don'?t remember)\b",
    re.IGNORECASE,
)


def neutralise(text: str) -> str:
    """Data text with our delimiter tags defused, so it cannot end its block."""
    return _TAG.sub("&lt;", text)


def _attr(value: Any) -> str:
    return html.escape(str(value), quote=True)


def readable(crystal: Crystal) -> Crystal:
    """The crystal as a dream reads it: its text cut to ``READ_MAX_CHARS`` characters."""
    if len(crystal.text) <= READ_MAX_CHARS:
        return crystal
    return dataclasses.replace(crystal, text=head(crystal.text))


def clip(text: str, crystal_id: int | None, limit: int = CLIP_CHARS) -> str:
    """``text`` cut to ``limit`` characters at a word, with a marker naming what was left out."""
    if len(text) <= limit:
        return text
    head = text[:limit].rsplit(" ", 1)[0] or text[:limit]
    where = f"; memory_get({crystal_id}) has it whole" if crystal_id is not None else ""
    return f"{head} … [clipped: {len(text) - len(head):,} more characters{where}]"


# --- ranking and selection ----------------------------------------------------------------------


def priority(
    crystal: Crystal,
    now: datetime,
    known: WordIndex,
    last: str | None = None,
    words: set[str] | None = None,
) -> tuple[float, ...]:
    """Sort key (ascending): directives and corrections first, then a score of importance,
    recency (a day-scale decay from ``last``, when the text was last written, else its
    creation) and novelty (little overlap with the state lines indexed in ``known``)."""
    first = crystal.semantic_type == "directive" or bool(_CORRECTION.search(crystal.text[:400]))
    try:
        stamp = max(crystal.created_at, last or "")
        hours = max(0.0, (now - parse_iso(stamp)).total_seconds() / 3600)
    except ValueError:
        hours = 1e6
    recency = 1.0 / (1.0 + hours / 24.0)
    overlap = known.best(stems(crystal.text[:CLIP_CHARS]) if words is None else words)
    score = crystal.importance + 0.3 * recency + 0.2 * (1.0 - overlap)
    return (0.0 if first else 1.0, -round(score, 6), -crystal.id)


@dataclass
class Selection:
    """The pending memories a dream is given, those it covers, and those left for later."""

    chosen: list[Crystal] = field(default_factory=list)  # clipped copies, in rank order
    covered: list[int] = field(default_factory=list)  # near-duplicates of chosen memories
    left: list[Crystal] = field(default_factory=list)  # did not fit: stay pending
    tokens: int = 0

    @property
    def consumed(self) -> list[int]:
        """What the dream consolidates when it commits: the chosen and what they cover."""
        return sorted({c.id for c in self.chosen} | set(self.covered))


def select(
    crystals: list[Crystal],
    room: int,
    now: datetime,
    state_lines: list[str] | None = None,
    render_one: Callable[[Crystal], str] | None = None,
    last: dict[int, str] | None = None,
) -> Selection:
    """Take pending crystals in rank order while their rendered lines fit ``room`` tokens
    (``last``: when a crystal's text was last written again, for its recency)."""
    render_one = render_one or note_line
    words = [stems(c.text[:CLIP_CHARS]) for c in crystals]
    known = WordIndex()
    for line in state_lines or []:
        if line.strip():
            known.add(stems(line))
    last = last or {}
    ranked = sorted(
        range(len(crystals)),
        key=lambda i: priority(crystals[i], now, known, last.get(crystals[i].id), words[i]),
    )
    out = Selection()
    # The chosen memories' words, indexed: a near-duplicate is found among those sharing a
    # rare word with it, not by comparing it with every chosen one (see ``overlap``).
    seen = WordIndex(WordIndex.frequencies(words))
    for i in ranked:
        crystal = crystals[i]
        if seen.reaches(words[i], NEAR_DUPLICATE):
            out.covered.append(crystal.id)
            continue
        clipped = dataclasses.replace(crystal, text=clip(crystal.text, crystal.id))
        cost = tokens.count(render_one(clipped)) + 1
        if out.tokens + cost > room:
            out.left.append(crystal)
            continue
        out.tokens += cost
        out.chosen.append(clipped)
        seen.add(words[i], NEAR_DUPLICATE)
    return out


def left_summary(left: list[Crystal], beyond: int = 0) -> dict[str, int]:
    """How many memories wait for a later dream, by source (``beyond``: not even looked at)."""
    out: dict[str, int] = {}
    for crystal in left:
        out[crystal.source] = out.get(crystal.source, 0) + 1
    if beyond:
        out["not looked at"] = beyond
    return out


# --- rendering ----------------------------------------------------------------------------------


def when(stamp: str) -> str:
    """An ISO time as a note line shows it: to the minute, UTC ("2026-03-12 14:30")."""
    try:
        return parse_iso(stamp).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return stamp


def withheld_values(texts: list[str]) -> set[str]:
    """The usernames, logins and accounts ``withhold`` takes out of these texts."""
    found: set[str] = set()
    for text in texts:
        if SECRET_MARK in text:
            found.update(m.group(0)[len(m.group(1)) :] for m in _CREDENTIAL.finditer(text))
    return {value for value in found if len(value) > 1}


def scrub(text: str, values: set[str]) -> str:
    """``text`` with every withheld value (``withheld_values``) replaced, wherever it stands:
    in a topic's label, a keyword, an insight (half a credential is still one)."""
    for value in sorted(values, key=len, reverse=True):
        text = re.sub(rf"(?<![\w@.-]){re.escape(value)}(?![\w@-])", WITHHELD, text, flags=re.I)
    return text


def withhold(text: str) -> str:
    """``text`` without the username, login or account that goes with a redacted secret: half
    a credential is still one, so the request never carries it (a model cannot keep it)."""
    if SECRET_MARK not in text:
        return text
    return _CREDENTIAL.sub(lambda m: m.group(1) + WITHHELD, text)


def _importance(value: float) -> str:
    return f"{value:.2f}".removeprefix("0")  # ".70"; 1.00 stays "1.00"


def _body(text: str) -> str:
    """A note's text on its line; a later line of it indented, so it never reads as a note."""
    return neutralise(withhold(text)).replace("\n", "\n" + CONTINUATION)


def note_line(crystal: Crystal, sighting: Sighting | None = None) -> str:
    """One pending memory as the prompt shows it: ``#id time type[/source] importance [by
    speaker]``, how often and when last its text was written when more than once, then its text."""
    kind = crystal.semantic_type
    if crystal.source != "scratch":
        kind += f"/{crystal.source}"
    head = (
        f"#{crystal.id} {when(crystal.created_at)} {_attr(kind)} {_importance(crystal.importance)}"
    )
    if crystal.speaker not in (None, "agent"):
        head += f" by {crystal.speaker}"  # who said it: only the user's words set rules
    if sighting is not None and sighting.seen > 1:
        head += f" seen {sighting.seen}, last {when(sighting.last)}"
    return f"{head}: {_body(crystal.text)}"


def notes_block(crystals: list[Crystal], seen: dict[int, Sighting] | None = None) -> str:
    """The memories of a dream, oldest first (so the newest statement reads last)."""
    seen = seen or {}
    ordered = sorted(
        crystals, key=lambda c: (seen[c.id].last if c.id in seen else c.created_at, c.id)
    )
    return "\n".join(note_line(c, seen.get(c.id)) for c in ordered) or "(no new notes)"


def left_block(left: dict[str, int]) -> str:
    """The memories this dream could not take, by count and source."""
    if not left:
        return "(none: every pending note is above)"
    parts = ", ".join(f"{n} from {source}" for source, n in sorted(left.items()))
    total = sum(left.values())
    return (
        f"{total} more pending notes did not fit this dream ({parts}); they stay pending and "
        "the next dream takes them. Do not guess what they say."
    )


def state_block(state: WorkingMemory, room: int, empty: str) -> str:
    """The committed state as data, clipped to ``room`` tokens (with a marker) if need be."""
    if not state.substance() and not state.extra:
        return empty
    text = neutralise(render(state).strip())
    if tokens.count(text) <= room:
        return text
    return tokens.trim(text, room) + "\n[… the rest of the state is in crystals: memory_search]"


def text_block(text: str | None, room: int, empty: str) -> str:
    """Free text (memory/DREAM.md) as data, clipped to ``room`` tokens."""
    text = (text or "").strip()
    if not text:
        return empty
    text = neutralise(text)
    if tokens.count(text) <= room:
        return text
    return tokens.trim(text, room) + " … [clipped]"


def json_block(value: Any, room: int, empty: str) -> str:
    """JSON data (memory/niche.json) compact, clipped to ``room`` tokens."""
    if value is None:
        return empty
    text = neutralise(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))
    if tokens.count(text) <= room:
        return text
    return tokens.trim(text, room) + " … [clipped]"


def _short(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= TEXT_CAP else value[: TEXT_CAP - 1].rstrip() + "…"
    if isinstance(value, list):
        if value and all(isinstance(v, int) for v in value):
            return value[:IDS_CAP]
        return [_short(v) for v in value]
    if isinstance(value, dict):
        return {k: _short(v) for k, v in value.items() if v is not None and v != []}
    return value


def _plain(line: str) -> str:
    return " ".join(_BULLET.sub("", line).split())


def state_refs(state: WorkingMemory, shown: str) -> dict[str, str]:
    """Each line of the state that ``shown`` (the state block) holds -> ``section:n``, its
    n-th non-empty line in that section."""
    refs: dict[str, str] = {}
    for section in sections():
        lines = [line for line in state.body(section.key).split("\n") if line.strip()]
        for n, line in enumerate(lines, 1):
            if neutralise(line.strip()) in shown:
                refs.setdefault(_plain(line), f"{section.key}:{n}")
    return refs


def refer(value: Any, refs: dict[str, str]) -> Any:
    """``value`` with every ``line`` or ``text`` that repeats a state line replaced by
    ``"state": "section:n"``: the request holds that line once, in the state block."""
    if isinstance(value, list):
        return [refer(item, refs) for item in value]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            ref = refs.get(_plain(item)) if key in REFERABLE and isinstance(item, str) else None
            if ref:
                out["state"] = ref
            else:
                out[key] = refer(item, refs)
        return out
    return value


def evidenced(kind: str, item: dict[str, Any]) -> bool:
    """Whether an insight names the crystals that bear it out (a contradiction: either side)."""
    if kind == "contradictions":
        return any(
            isinstance(item.get(side), dict) and item[side].get("id") for side in ("older", "newer")
        )
    return bool(item.get("crystal_ids"))


def _aged(item: dict[str, Any], now: datetime | None) -> dict[str, Any]:
    """The item with ``age_days``: how long ago its evidence was written (``at``, else
    ``last_seen``), when ``now`` is known."""
    stamp = item.get("at") or item.get("last_seen")
    if now is None or not isinstance(stamp, str):
        return item
    try:
        days = (now - parse_iso(stamp)).days
    except ValueError:
        return item
    return {**item, "age_days": max(days, 0)}


def offered(data: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """The insights a model is handed: the kinds in ``SENT_KINDS``, each item with its evidence
    and its age; an item naming no crystal is left out."""
    return {
        kind: [_aged(item, now) for item in items if evidenced(kind, item)]
        for kind, items in data.items()
        if kind in SENT_KINDS
    }


def insights_json(
    insights: Any, room: int, refs: dict[str, str] | None = None, now: datetime | None = None
) -> str:
    """The insights a model is handed (``offered``) as compact JSON, each list capped, shortened
    until it fits ``room``; a state line they name is referred to (``refs``, see ``refer``),
    not repeated."""
    if insights is None:
        return "(none)"
    data = insights.to_dict() if hasattr(insights, "to_dict") else dict(insights)
    data = refer(offered(data, now), refs or {})
    data = {key: _short(value[: CAPS.get(key, 8)]) for key, value in data.items() if value}
    while True:
        text = neutralise(json.dumps(data, ensure_ascii=False, separators=(",", ":")))
        longest = max(data, key=lambda k: len(data[k]), default=None)
        if tokens.count(text) <= room or longest is None:
            return text or "(none)"
        data[longest] = data[longest][:-1]  # drop the last (least ranked) item of the longest
        if not data[longest]:
            del data[longest]


def period_text(period: dict[str, Any] | None, causes: dict[str, list[str]]) -> str:
    """What the hormones did since the last dream, in a few lines (peaks and their causes)."""
    if not period or not period.get("peaks"):
        return "No stimulus since the last dream: every hormone stayed at rest."
    lines = [f"Since the last dream ({period['since']}):"]
    for name, peak in sorted(period["peaks"].items(), key=lambda item: -item[1]["lift"]):
        why = "; ".join(dict.fromkeys(cause["reason"] for cause in peak["causes"]))
        line = (
            f"- {name} peaked at {peak['peak']:.2f} at {peak['at']} ({peak['lift']:+.2f} over "
            f"rest, {peak['stimuli']} stimuli): {why}"
        )
        notes = causes.get(name) or []
        if notes:
            line += " — notes: " + " | ".join(notes)
        lines.append(neutralise(line))
    return "\n".join(lines)


def measure(blocks: dict[str, str]) -> dict[str, int]:
    """Tokens of each data block and their total."""
    out = {name: tokens.count(text) for name, text in blocks.items()}
    out["total"] = sum(out.values())
    return out


def _loose_notes(di: Any) -> list[str]:
    """Notes that are not among the crystals (a caller that passed notes only)."""
    from dreamer.store import content_hash

    have = {c.content_hash for c in di.crystals}
    return [
        f"{when(n.at.isoformat())} {_importance(n.importance)}: {_body(clip(n.text, None))}"
        for n in di.notes
        if content_hash(n.text) not in have
    ]


def blocks_for(di: Any, budget: int) -> dict[str, str]:
    """Every data block of a dream (``DreamInputs``) rendered within ``budget`` tokens."""
    causes = {
        name: [
            clip(withhold(c.text), c.id, TEXT_CAP)
            for c in di.crystals
            if c.id in set(di.causes.get(name, []))
        ]
        for name in di.causes
    }
    out = {
        "instructions": text_block(
            di.instructions, int(budget * INSTRUCTIONS_SHARE), "(none: no memory/DREAM.md)"
        ),
        "state": state_block(di.old, int(budget * STATE_SHARE), "(empty: this is the first dream)"),
        "hormones": period_text(di.period, causes),
        "niche": json_block(di.niche, int(budget * NICHE_SHARE), "(none: no memory/niche.json)"),
        "left": left_block(di.left),
    }
    loose = _loose_notes(di)
    listed = notes_block(di.crystals, di.seen)
    out["notes"] = "\n".join(([listed] if di.crystals else []) + loose) or listed
    used = sum(tokens.count(text) for text in out.values())
    room = max(200, min(int(budget * INSIGHTS_SHARE), budget - used))
    out["insights"] = insights_json(di.insights, room, state_refs(di.old, out["state"]), di.now)
    # What a note line withholds, no other block carries (its topics, keywords, insights).
    hidden = withheld_values([c.text for c in di.crystals] + [n.text for n in di.notes])
    return {key: scrub(text, hidden) for key, text in out.items()} if hidden else out
