"""Crystal Pointers: what left Active Context, one pointer per topic."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from dreamer.dream import dates, keep_instructions
from dreamer.dream.rules.context import Context, line_key
from dreamer.dream.rules.digest import DIGEST_LINES, day_of, digest, is_digest
from dreamer.dream.rules.lines import LABEL_PREFIX, fit, readable_head
from dreamer.dream.rules.skills import task_action
from dreamer.dream.rules.supersession import current
from dreamer.dream.rules.words import LABELS, context_lines
from dreamer.memory.state import Pointer, WorkingMemory, parse_pointers
from dreamer.support.words import NOTE_STOP_WORDS, keywords, stems

MAX_POINTERS = 18  # stays under the guard's 20 with room for a hand-added one


def past_pointers(evidence: list[dict[str, Any]]) -> list[Pointer]:
    """One pointer per hand-written 'Journal'-like heading, keyed by its most frequent words."""
    groups: dict[str, list[str]] = {}
    for item in evidence:
        if item.get("hint") == "past":
            groups.setdefault(item["heading"], []).append(item["text"])
    pointers = []
    for heading, texts in groups.items():
        counts: dict[str, int] = {}
        for text in texts:
            for word in keywords(text):
                counts[word] = counts.get(word, 0) + 1
        top = sorted(counts, key=lambda w: (-counts[w], w))[:3]
        # The heading names the group, the first entry makes the topic specific.
        pointers.append(Pointer(f"{heading}: {_topic(texts[0])}", " ".join(top)))
    return pointers


TOPIC_WORDS = 9
VALUE_WORDS = 16  # a topic may run this long to end on the value it carries
# A value: a number, an amount or a time ("£32,000", "71", "17:30", "34.6"), or a day of a month.
_VALUE = re.compile(r"[£$€]?\d[\d,.:%k]*|\d+(?:st|nd|rd|th)", re.IGNORECASE)


_OLD = "\x00old pointer: "  # marks an old pointer among the sources of a merge


_WHEN = frozenset(dates.MONTHS) | frozenset(dates.WEEKDAYS) | {"am", "pm"}


def _topic(line: str) -> str:
    """A whole, specific topic for a pointer: a clause of the line, never cut with '…'."""
    text = re.sub(r"^\s*([-*•]|\d+[.)])\s+", "", line).strip()
    text = re.sub(r"[*_`]+", "", text)
    # Each clause with the mark that ends it: ":" (a lead-in), "?" (a question), or another.
    # A parenthesis just before a colon ("my advisor (Helen Marsh): ...") belongs to the lead-in.
    lead = re.sub(r"\s*\([^()]{0,40}\)(?=:\s)", "", text)
    parts = re.split(r"(:\s|;\s|[.!?]\s|\s[—–-]\s|\(|\)|\?$)", lead)
    clauses = [
        (c.strip(), (parts[n + 1].strip() if n + 1 < len(parts) else ""))
        for n, c in enumerate(parts)
        if n % 2 == 0 and c.strip()
    ]

    def content(clause: str) -> list[str]:
        words = [w for w in re.findall(r"[^\W\d_][\w'’-]*", clause) if w.lower() not in LABELS]
        return [w for w in words if w.lower() not in NOTE_STOP_WORDS | _WHEN]

    def specific(clause: str) -> bool:
        words = [w for w in re.findall(r"[^\W\d_][\w'’-]*", clause) if w.lower() not in LABELS]
        # A time stamp with a name ("1:56 pm on 8 May, 2023 Ana") heads a line; it is no topic.
        return len(words) >= 3 and len(content(clause)) >= 2

    def lead_in(n: int) -> bool:
        """A clause before a colon that says less than what it introduces ("Talked it through
        with my advisor: chrF++ will be the headline score, COMET goes in the appendix")."""
        clause, mark = clauses[n]
        after = clauses[n + 1][0] if n + 1 < len(clauses) else ""
        return mark == ":" and len(content(after)) > len(content(clause))

    # A statement before a question ("can you believe it?" states nothing), a lead-in never.
    ranked = sorted(
        (n for n, (c, _) in enumerate(clauses) if specific(c) and not lead_in(n)),
        key=lambda n: (clauses[n][1] == "?", n),
    )
    chosen = clauses[ranked[0]][0] if ranked else text
    if _VALUE.search(text) and not _VALUE.search(chosen):
        # The value is what a pointer must carry ("the ask is now £32,000"), not the preamble.
        chosen = next(
            (
                c
                for c, _ in clauses
                if specific(c) and _VALUE.search(c) and len(re.findall(r"\b[^\W\d_]{2,}", c)) >= 4
            ),
            chosen,
        )
    words = chosen.rstrip(".").split()
    if words and words[0].lower().rstrip(":") in LABELS:
        words = words[1:]
    # A whole phrase up to the newest value it names ("moved from March 20 to March 27"), so
    # a cut never leaves the old value looking current; else the first TOPIC_WORDS words.
    last_value = max(
        (i for i, w in enumerate(words[:VALUE_WORDS]) if _VALUE.fullmatch(w.strip(",.;:()"))),
        default=-1,
    )
    words = words[: max(TOPIC_WORDS, last_value + 1)]
    while len(words) > 3 and words[-1].lower().strip(",.") in NOTE_STOP_WORDS:
        words = words[:-1]  # end on a content word, not "for the"
    return " ".join(words).rstrip(",;:.") or text[:60]


def _anchors(text: str, common: set[str]) -> set[str]:
    """What ties notes into one topic: names and places inside the text, and a repeated action."""
    words = re.findall(r"(?<=\s)[A-Z][\w'’-]+|\b[A-Z]{2,}\d*\b|\b\w*\d\w*[A-Z]\w*\b", text)
    found = {w.strip("'’").lower().removesuffix("'s") for w in words}
    found = {w for w in found if w not in common and w not in NOTE_STOP_WORDS and len(w) > 2}
    action = task_action(LABEL_PREFIX.sub("", re.sub(r"^\s*[-*•]\s+", "", text)))
    if action:
        found |= {f"{action[0]}:{stem}" for w in action[1][:3] for stem in stems(w)}
    # Measurements of one series: the same unit on a number and a word in common ("8k BPE
    # merges gives 34.1" and "4k merges only reach 32.7": points of one sweep).
    units = _units(text)
    if units:
        subject = {s for s in _subject(text, common) if not any(ch.isdigit() for ch in s)}
        found |= {f"{unit}#{stem}" for unit in units for stem in subject}
    return found


# A unit written on a number: "8k", "20%", "14GB", "£32,000"; ordinals and times of day aside.
_UNIT = re.compile(r"(?P<cur>[£$€])\d|\b\d+(?:[.,]\d+)?(?P<suffix>[^\W\d_]+|%)", re.UNICODE)
_NOT_UNITS = frozenset({"st", "nd", "rd", "th", "am", "pm", "h"})


def _units(text: str) -> set[str]:
    """The units a text writes on its numbers ("k" of "16k", "£" of "£6,200")."""
    found = {(m["cur"] or m["suffix"] or "").lower() for m in _UNIT.finditer(text)}
    return {unit for unit in found if unit and unit not in _NOT_UNITS}


MERGE_OLD_AT_MOST = 5  # pointers of the old state that may still fold into one


def _merge(
    pointers: list[tuple[Pointer, str]], common: set[str]
) -> list[tuple[Pointer, list[str]]]:
    """One pointer per topic: pointers sharing an anchor (a name, a repeated action) merge.
    Each comes with the sources it was made of."""
    groups: list[tuple[set[str], list[tuple[Pointer, str]]]] = []
    subjects: list[list[set[str]]] = []
    for pointer, source in pointers:
        anchors = _anchors(source, common)
        subject = _subject(source, common)
        home = next(
            (
                n
                for n, g in enumerate(groups)
                if g[0] & anchors or any(_same_topic(subject, s) for s in subjects[n])
            ),
            None,
        )
        if home is None:
            groups.append((set(anchors), [(pointer, source)]))
            subjects.append([subject])
        else:
            groups[home][0].update(anchors)
            groups[home][1].append((pointer, source))
            subjects[home].append(subject)
    out: list[tuple[Pointer, list[str]]] = []
    for _, members in groups:
        old_only = all(src.startswith(_OLD) for _, src in members)
        if len(members) == 1 or (old_only and len(members) > MERGE_OLD_AT_MOST):
            # A long list of pointers the state already holds (25 warehouse contracts a person
            # wrote) stays as it is: folded into one it would drop most of the state, a mass
            # drop the guards reject at every dream. A few (four support letters) still merge.
            out.extend((pointer, [source]) for pointer, source in members)
            continue
        out.append((_merged(members), [source for _, source in members]))
    return out


def _subject(text: str, common: set[str]) -> set[str]:
    """The content stems of a pointer's source, without labels, names the Bond holds, numbers."""
    body = text.removeprefix(_OLD)
    return {s for s in stems(LABEL_PREFIX.sub("", body)) if s not in common and s not in LABELS}


_RELATED = re.compile(r" \(and (\d+) related notes?\)")
SAME_TOPIC_SHARE = 0.4  # of the smaller set of content stems, and at least two stems


def _same_topic(one: set[str], other: set[str]) -> bool:
    """Two pointers on one topic: "place cards for tables 4 to 6" and "Wrote the place cards"."""
    shared = len(one & other)
    return shared >= 2 and shared >= SAME_TOPIC_SHARE * min(len(one), len(other))


def _merged(members: list[tuple[Pointer, str]]) -> Pointer:
    """One pointer for notes of one topic, e.g. "Refactored modules: invoice, payments, …"."""
    lines = [(p, src) for p, src in members if not src.startswith(_OLD)] or members
    if len(lines) == 1:
        return lines[0][0]
    members = lines
    actions = [
        task_action(LABEL_PREFIX.sub("", re.sub(r"^\s*[-*•]\s+", "", src))) for _, src in members
    ]
    if all(actions) and len({a[0] for a in actions if a}) == 1:
        done = [a for a in actions if a]
        verb = done[0][0]
        shared = [w for w in done[0][1] if all(w in a[1] for a in done)]
        noun = shared[-1] if shared else done[0][1][0]
        others = list(dict.fromkeys(a[1][0] for a in done if a[1][0] != noun))
        plural = noun if noun.endswith("s") else noun + "s"
        past = {"ing": "ed"}.get(verb[-3:], "")
        name = verb[:-3] + past if past else verb
        topic = (
            f"{name.capitalize()} {plural}: {', '.join(others)}"
            if others
            else (f"{name.capitalize()} {plural} ({len(done)} times)")
        )
        source_words = keywords(members[0][1])
        lead = source_words[0] if source_words else name
        return Pointer(topic, " ".join(dict.fromkeys([lead, noun, *others[:1]])))
    first = members[0][0]
    # A topic merged before keeps one count: "X (and 2 related notes)", never "(and 1) (and 1)".
    related = len(members) - 1
    base = first.topic
    for pointer, _ in members:
        if found := _RELATED.search(pointer.topic):
            related += int(found[1])
    base = _RELATED.sub("", base)
    return Pointer(
        f"{base} (and {related} related note{'s' if related > 1 else ''})", first.keywords
    )


_WHEN_MARK = re.compile(r" \((?:passed[^)]*|[A-Z][a-z]+ \d{1,2})\)$")  # added by passed_topic


def passed_topic(item: dict[str, Any]) -> str:
    """What happened to an event whose date passed: the later note on its subject with the
    date ("The building inspector signed off the foundations (March 17)"), else the event
    marked as passed ("RSVPs have to be back by Saturday March 14 (passed)")."""
    when = date.fromisoformat(item["passed"])
    day = f"{when:%B} {when.day}"
    if item.get("outcome"):
        return f"{_topic(item['outcome'])} ({day})"
    topic = _topic(current(item["line"]))
    return f"{topic} (passed)" if day in topic else f"{topic} (passed {day})"


HALF_LIFE_DAYS = 30.0  # a pointer's weight halves every month since its memory was written
FRESH = {"importance": 0.5, "age_days": 0.0}  # a line that left with nothing known about it


def weight(found: dict[str, float]) -> float:
    """What keeps a pointer under the cap: importance and recency together (a 0.9 rule of a
    month ago outweighs 0.4 chatter of today; 0.4 chatter of a quarter ago goes first)."""
    return found["importance"] * 0.5 ** (found["age_days"] / HALF_LIFE_DAYS)


def write_pointers(
    old: WorkingMemory,
    fading: list[dict],
    overflow: list[str],
    past: list[Pointer],
    ctx: Context,
    budget: int,
    known: dict[str, dict[str, float]] | None = None,
) -> str:
    """The Crystal Pointers body: the lines that left Active Context, merged by topic with the
    old pointers; over ``MAX_POINTERS``, the lightest (``weight``) leave. ``known`` weighs the
    lines that left by their ``line_key`` (the new notes'); ``ctx.weights`` the old pointers
    and the fading lines."""
    sources = [f["line"] for f in fading] + [
        line for line in overflow if not keep_instructions.dropped(line, ctx.rules)
    ]
    passed = {f["line"]: f for f in fading if f.get("passed")}
    # Many lines of one day leaving at once (a busy day, a long session): one dated digest of
    # what they established, not a pointer per line that names its topic and not its facts.
    leaving = {f["line"]: f for f in fading}
    days: dict[Any, list[str]] = {}
    for line in sources:
        if line not in passed:
            day = day_of(line, leaving, known or {}, line_key(line), ctx.now)
            if day is not None:
                days.setdefault(day, []).append(line)
    digests: list[tuple[Pointer, str]] = []
    for day, lines in sorted(days.items(), reverse=True):
        if len(lines) >= DIGEST_LINES and (made := digest(day, lines)) is not None:
            digests += [(made, line) for line in lines]
            sources = [line for line in sources if line not in lines]
    fresh: list[tuple[Pointer, str]] = []
    for line in sources:
        topic = passed_topic(passed[line]) if line in passed else _topic(current(line))
        words = keywords(_WHEN_MARK.sub("", topic)) or keywords(line)
        if words:
            fresh.append((Pointer(topic, " ".join(words[:4])), line))
    common = {
        w.lower()
        for line in context_lines(old.body("bond"))
        for w in re.findall(r"[A-Z][\w-]+", line)
    }
    common |= {p["name"].split()[0].lower() for p in ctx.people}
    olds = {f"{_OLD}{p.topic} {p.keywords}": p for p in old.pointers()}
    # A digest is the record of its day: it never folds into a topic, nor a topic into it.
    kept_days = [(p, [s]) for s, p in olds.items() if is_digest(p)]
    merged = _merge(fresh + [(p, s) for s, p in olds.items() if not is_digest(p)], common)
    new_days: dict[str, tuple[Pointer, list[str]]] = {}
    for pointer, line in digests:
        new_days.setdefault(pointer.topic, (pointer, []))[1].append(line)
    merged = list(new_days.values()) + merged + kept_days

    def weighed(source: str) -> float:
        if source in olds:  # an old pointer its keywords no longer find weighs nothing
            found = ctx.weights.get(olds[source].keywords)
            return weight(found) if found else 0.0
        found = ctx.weights.get(source) or (known or {}).get(line_key(source))
        return weight(found or FRESH)

    # A hand-written journal's pointers are the user's: they never leave for the cap.
    ranked = [(p, float("inf")) for p in past]
    ranked += [(p, max(weighed(s) for s in sources)) for p, sources in merged]
    out: list[tuple[Pointer, float]] = []
    seen: set[frozenset[str]] = set()
    for pointer, score in ranked:
        key = frozenset(stems(pointer.keywords))
        if key in seen:
            continue
        seen.add(key)
        out.append((pointer, score))
    if len(out) > MAX_POINTERS:
        heavy = sorted(range(len(out)), key=lambda n: (-out[n][1], n))[:MAX_POINTERS]
        out = [out[n] for n in sorted(heavy)]
    readable = [r for r in (_readable(p) for p, _ in out) if r is not None]
    stray = [
        line
        for line in old.body("crystal_pointers").split("\n")
        if line.strip() and not parse_pointers(line)
    ]
    return fit([p.render() for p in readable] + stray, budget)


def _readable(pointer: Pointer) -> Pointer | None:
    """The pointer as a line that parses back as itself, redacted or not (see readable_head);
    None when it cannot be one."""
    keywords = " ".join(pointer.keywords.replace("`", "").split())
    if not keywords:
        return None

    def read(line: str) -> str | None:
        found = parse_pointers(line)
        return found[0].topic if len(found) == 1 else None

    topic = readable_head(pointer.topic, lambda t: Pointer(t, keywords).render(), read)
    return None if topic is None else Pointer(topic, keywords)
