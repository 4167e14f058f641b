"""One dream cycle, start to commit (DESIGN.md, "The dream cycle").

The steps, in order, each announced to an optional ``step`` hook (a seam tests use to inject a
crash between any two steps)::

    lock → recover → migrate → readiness → rotate → index → gather → synthesize → pointers
         → guards → write → journal → consolidate → discard

Crash safety: until ``write`` the old MEMORY.md is untouched and the consumed notes sit in the
rotated scratch (``memory/scratch.dreaming.md``, or rows marked with the dream's lease token on
PostgreSQL), which the next dream puts back in front of the scratch (``recover``). ``write``
is one atomic rename. After it, a crash at worst leaves the rotated notes for the next dream to
restore: the notes are dreamed over again, never lost.
A rejected or failed dream journals why, restores the notes and raises.

Readiness counts the crystals not consolidated yet (every note is a crystal as soon as it is
written) plus scratch notes that are not crystals yet. The seed migration's pending first dream
is always ready.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from dreamer.dream import (
    budget,
    dropped,
    forget_requests,
    guards,
    hand_edits,
    insights,
    keep_instructions,
    numbers,
    oversized_sections,
    pins,
    review,
)
from dreamer.dream import inputs as bounded
from dreamer.dream.journal import revision_rate
from dreamer.dream.seed import FIRST_DREAM_KEY as SEED_FLAG
from dreamer.dream.seed import FIRST_DREAM_MARKER as SEED_MARKER
from dreamer.dream.seed import ensure_migrated
from dreamer.dream.synth import Draft, DreamInputs, Redacting, Synthesizer, Usage
from dreamer.dream.synth.factory import make_synthesizer
from dreamer.errors import (
    DreamDeferred,
    DreamError,
    DreamRejected,
    SynthesisError,
    WorkspaceError,
)
from dreamer.memory import held, hormone_summary, hormones, repeats, scratch
from dreamer.memory import state as wm
from dreamer.memory.provenance import may_set_rules
from dreamer.memory.workspace import Workspace
from dreamer.retrieval.embed import for_rules
from dreamer.retrieval.search import search
from dreamer.store import Crystal, NewCrystal, content_hash
from dreamer.support.bounds import head
from dreamer.support.times import iso, parse_iso
from dreamer.support.words import keywords, stem, stems

STEPS = (
    "lock",
    "recover",
    "migrate",
    "readiness",
    "rotate",
    "index",
    "forget",
    "overflow",
    "gather",
    "synthesize",
    "pointers",
    "guards",
    "write",
    "journal",
    "consolidate",
    "settle",
)
DAY = timedelta(days=1)
# A hand edit of MEMORY.md during a dream: dream again over the edited state this many times,
# then defer (the edit stands, the notes wait for the next dream).
REDREAMS = 1
RECALLED = 20  # older memories a draft line's values are looked up in
CARRIED = " (the old state had it; it is left out)"  # how a dead pointer the old state had ends
POINTER_SAMPLE = 50  # crystals holding a pointer's keywords read to confirm one is on topic
POINTER_SETS = 70  # keyword subsets asked for one pointer at most (eight keywords)

StepHook = Callable[[str], None]


@dataclass
class DreamResult:
    """What one dream did: committed, skipped, or (dry run) would have written."""

    outcome: str  # committed | skipped | dry-run
    reason: str
    dream_id: int | None = None
    state_text: str | None = None  # the MEMORY.md written (or, in a dry run, the candidate)
    usage: Usage = field(default_factory=Usage)
    critiques: list[list[str]] = field(default_factory=list)
    revisions: int = 0
    report: guards.GuardReport | None = None
    consumed: list[int] = field(default_factory=list)
    notes: int = 0
    recovered: int = 0
    pointer_fixes: list[str] = field(default_factory=list)
    # Lines a rule took out of the draft: {"section", "line", "reason"} (journaled, dream show).
    dropped: list[dict[str, str]] = field(default_factory=list)
    synthesizer: str | None = None
    model: str | None = None
    inputs: dict[str, Any] = field(default_factory=dict)  # budget, tokens by block, left, hormones
    left_pending: int = 0  # pending notes this dream could not take (they wait for the next)
    edited_during: int = 0  # times MEMORY.md was edited by hand while this dream ran

    @property
    def committed(self) -> bool:
        """True when MEMORY.md was rewritten."""
        return self.outcome == "committed"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out = dataclasses.asdict(self)
        out["report"] = self.report.to_dict() if self.report else None
        return out


def default_synthesizer(ws: Workspace) -> Synthesizer:
    """The synthesizer the settings ask for (Claude with a key, offline otherwise)."""
    return make_synthesizer(ws.settings)


def compose(state: wm.WorkingMemory, old: wm.WorkingMemory, *, seed_pending: bool) -> str:
    """The MEMORY.md text to commit: the rendered state, under the user's text on a seed dream.

    On the first dream after a seed migration the user's hand-written text (the parsed
    preamble) stays on top, then a marker, then the state; later dreams write only the state
    (the original lives on in the seed crystals and MEMORY.md.seed-backup).
    """
    rendered = wm.render(dataclasses.replace(state, preamble=""))
    if not seed_pending:
        return rendered
    original = old.preamble
    # A crash after an earlier write leaves the marker in the preamble: never stack two.
    if SEED_MARKER in original:
        original = original[: original.index(SEED_MARKER)].rstrip().removesuffix("---").rstrip()
    if not original.strip():
        return rendered
    return f"{original.rstrip()}\n\n---\n\n{SEED_MARKER}\n\n{rendered}"


def pending(ws: Workspace) -> int:
    """How many new notes/crystals wait for a dream."""
    store = ws.store
    count = store.crystals.count_new()
    for note in ws.scratch.waiting():
        if store.crystals.find_by_hash(content_hash(note.text)) is None:
            count += 1
    return int(count)


FORCE_HINT = "; use --force to dream anyway"  # a skip's advice; a forced dream took it


def readiness(ws: Workspace) -> tuple[bool, str]:
    """(ready, why): enough new material since the last dream, or a seed dream pending."""
    if ws.store.records.get_meta(SEED_FLAG) == "1":
        return True, "first dream after the seed migration"
    waiting, needed = pending(ws), ws.settings.min_chunks_for_dream
    noun = "note" if waiting == 1 else "notes"
    if waiting >= needed:
        return True, f"{waiting} new {noun} since the last dream"
    return False, f"only {waiting} new {noun} since the last dream (needs {needed}){FORCE_HINT}"


def run(
    ws: Workspace,
    *,
    now: datetime,
    force: bool = False,
    dry_run: bool = False,
    synthesizer: Synthesizer | None = None,
    step: StepHook | None = None,
) -> DreamResult:
    """Run one dream; raise DreamRejected, SynthesisError or LockHeld when it cannot commit."""
    hook = step or (lambda name: None)
    hook("lock")
    with ws.lock():
        return _Dream(ws, now, synthesizer, hook).run(force=force, dry_run=dry_run)


class _Dream:
    """The state of one dream in progress (one instance per run)."""

    def __init__(
        self, ws: Workspace, now: datetime, synthesizer: Synthesizer | None, hook: StepHook
    ):
        self.ws, self.now, self.hook = ws, now, hook
        self._synth = synthesizer
        self.result = DreamResult(outcome="", reason="")
        self.drafts: list[str] = []
        self.raw: str | None = None
        self.inputs_summary: dict[str, Any] = {}
        self.old_text = ""
        self.silenced: list[forget_requests.ForgetRequest] = []  # never stated in MEMORY.md
        self.audit_mark = 0  # the newest audit row when the dream gathered its inputs
        self.overflowed: dict[str, int] = {}  # section title -> lines moved into crystals
        self.hand_report: dict[str, Any] = {}  # what the hand edits of the old state needed
        self.resolutions: list[forget_requests.Resolution] = []
        self.current = ""  # the step under way

    def step(self, name: str) -> None:
        self.current = name
        self.hook(name)

    @property
    def synth(self) -> Synthesizer:
        """The synthesizer, built only once a dream will really run (a skip costs nothing)."""
        if self._synth is None:
            # Named before it is built, so a backend that cannot start is journaled as itself.
            self.result.synthesizer = self.ws.settings.synthesis()[0]
            self._synth = default_synthesizer(self.ws)
        if not isinstance(self._synth, Redacting):  # answers are redacted like the notes
            self._synth = Redacting(self._synth, lambda text: self.ws.redact(text).text)
        self.result.synthesizer, self.result.model = self._synth.name, self._synth.model
        return self._synth

    def run(self, *, force: bool, dry_run: bool) -> DreamResult:
        ws = self.ws
        self.step("recover")
        if not dry_run:
            self.result.recovered = ws.scratch.restore()
        self.step("migrate")
        if not dry_run:
            ensure_migrated(ws, self.now)
        self.step("readiness")
        ready, why = readiness(ws)
        if dry_run:
            return self._dry_run(why if ready else "would skip: " + why)
        if not ready and not force:
            self.result.outcome, self.result.reason = "skipped", why
            self.result.dream_id = self._journal("skipped", why, old_state=None)
            return self.result
        self.result.reason = why if ready else f"forced ({why.removesuffix(FORCE_HINT)})"
        # A candidate waiting for review, or the spending cap (read from the journal, so every
        # process sees it): skip before anything is sent.
        held = review.waiting(ws) or budget.blocked(ws, self.now, lambda: self.synth.name)
        if held is not None:
            self.result.outcome, self.result.reason = "skipped", held
            self.result.dream_id = self._journal("skipped", held, old_state=None)
            return self.result
        self.step("rotate")
        self.old_text = ws.read_memory()
        rotated = ws.scratch.rotate()
        try:
            return self._dream(rotated)
        except BaseException as e:
            self._fail(e)
            raise

    # --- the middle -------------------------------------------------------------------------

    def _dream(self, notes: list[scratch.Note]) -> DreamResult:
        self.step("index")
        for note in notes:
            if self.ws.store.crystals.find_by_hash(content_hash(note.text)) is None:
                self.ws.index(
                    NewCrystal(note.text, importance=note.importance, at=note.at, source="scratch")
                )
        self.step("forget")
        notes = self._honour_forget_requests(notes)
        while True:
            self.step("overflow")
            old = self._overflow(write=True)
            pins.from_memory(self.ws, self.old_text, self.now)  # lines marked "(pinned)" by hand
            watermark = self.ws.store.crystals.max_crystal_id()
            self.step("gather")
            inputs, consumed = self._gather(notes, watermark, old)
            self.result.consumed, self.result.notes = consumed, len(inputs.notes)
            self.result.revisions = 0
            state, report = self._synthesize(inputs)
            if not report.ok:
                raise DreamRejected(
                    f"the guards rejected the dream after {self.result.revisions} revision(s): "
                    f"{report.critiques[0]}; MEMORY.md is unchanged and the notes are back in "
                    "the scratch",
                    reasons=report.critiques,
                )
            try:
                return self._commit(state, inputs)
            except DreamDeferred as e:
                # A person saved MEMORY.md while the synthesizer worked: never write over it.
                self.result.edited_during += 1
                if self.result.edited_during > REDREAMS:
                    raise DreamDeferred(
                        f"deferred: MEMORY.md was edited during the dream "
                        f"({self.result.edited_during} times); the edits are kept, MEMORY.md "
                        "is as the person left it and the notes are back in the scratch for "
                        "the next dream"
                    ) from e

    def _honour_forget_requests(self, notes: list[scratch.Note]) -> list[scratch.Note]:
        """Forget what notes ask to forget; the requests and the forgotten leave the input."""
        store = self.ws.store
        asked = []
        for note in notes:
            request = forget_requests.parse(head(note.text))
            crystal_id = store.crystals.find_by_hash(content_hash(note.text))
            if request is not None and crystal_id is not None:
                asked.append((store.crystals.get(crystal_id), request))
        # What the user said in a captured session asks as a note does; never the answer.
        for crystal in store.crystals.new_crystals(store.crystals.max_crystal_id(), bounded.POOL):
            if crystal.source == "sessions" and crystal.speaker == "user":
                if (request := forget_requests.parse(head(crystal.text))) is not None:
                    asked.append((crystal, request))
        self.silenced = [request for _, request in asked]
        if asked:
            self.resolutions = forget_requests.resolve(self.ws, asked, self.now)
        # A forgotten note's hash is gone from the store; a request is never stated.
        return [
            note
            for note in notes
            if forget_requests.parse(head(note.text)) is None
            and store.crystals.find_by_hash(content_hash(note.text)) is not None
        ]

    def _overflow(self, *, write: bool) -> wm.WorkingMemory:
        """The old state mended and within its budgets; what moves out becomes crystals."""
        self.old_text = self.ws.read_memory()
        seed_pending = self.ws.store.records.get_meta(SEED_FLAG) == "1"
        last = hand_edits.last_written(self.ws.store)
        mended = hand_edits.mend(wm.parse(self.old_text), last, seed_pending=seed_pending)
        # The seed migration made the person's file crystals already.
        hand = [] if seed_pending else hand_edits.hand_lines(self.old_text, last)
        old = self._trim(mended.state, write=write)
        capped = hand_edits.cap_pointers(old)
        self.hand_report = {
            "hand_lines": len(hand),
            "moved": len(mended.moved) + len(capped.moved),
            "fixes": mended.fixes + capped.fixes,
        }
        if write:
            # Every line a person wrote stays findable, whatever the synthesizer does with it.
            for where, line in dict.fromkeys([*hand, *mended.moved, *capped.moved]):
                self._keep(line, f"MEMORY.md {where}")
        return capped.state

    def _keep(self, line: str, origin: str) -> None:
        """Index one line of MEMORY.md as a consolidated crystal (idempotent by content)."""
        text = hand_edits.text_of(line)
        if text:
            self.ws.index(
                NewCrystal(
                    text,
                    importance=0.5,
                    at=self.now,
                    source="memory",
                    lifecycle="consolidated",
                    origin=origin,
                )
            )

    def _trim(self, old: wm.WorkingMemory, *, write: bool) -> wm.WorkingMemory:
        """The state within its budgets; lines past them become crystals and a pointer."""
        trimmed, cut = oversized_sections.trim(old)
        if not cut:
            return old
        titles = {s.key: s.title for s in wm.sections()}
        pointers = [
            p
            for key, lines in cut.items()
            if (p := oversized_sections.pointer_for(titles[key], lines))
        ]
        trimmed, more = oversized_sections.trim(oversized_sections.with_pointers(trimmed, pointers))
        for key, lines in more.items():
            cut[key] = cut.get(key, []) + lines
        if write:
            # Every line of an overflowing section becomes a crystal, the kept ones too: a
            # later dream may fade them, and the user's words must stay findable.
            for key in cut:
                for line in dict.fromkeys([*old.body(key).split("\n"), *cut[key]]):
                    self._keep(line, f"MEMORY.md {titles[key]}")
        self.overflowed = {titles[key]: len(lines) for key, lines in cut.items()}
        return trimmed

    def _since(self) -> datetime:
        """When the last committed dream ran (a day ago when none has)."""
        last = self.ws.store.journal.latest_dream_id(("committed",))
        if last is not None:
            try:
                return parse_iso(self.ws.store.journal.get_dream(last)["started_at"])
            except (ValueError, KeyError, TypeError):
                pass
        return self.now - DAY

    def _gather(
        self, notes: list[scratch.Note], watermark: int, old: wm.WorkingMemory
    ) -> tuple[DreamInputs, list[int]]:
        ws, store = self.ws, self.ws.store
        budget = ws.settings.input_tokens
        self.audit_mark = repeats.mark(store)
        pool = store.crystals.new_crystals(watermark, bounded.POOL)
        beyond = max(0, store.crystals.count_new() - len(pool))
        if store.records.get_meta(SEED_FLAG) == "1":
            have = {c.id for c in pool}
            pool += [c for c in store.crystals.select(sources=["seed"]) if c.id not in have]
        # A crystal of megabytes (stored before notes had a limit) is read by its head: every
        # step below costs in proportion to what it reads. memory_get still has it whole.
        pool = [bounded.readable(c) for c in pool]
        pool += pins.evidence(ws, pool)  # every dream sees the pinned facts; never consumes them
        asks = [forget_requests.parse(c.text) is not None for c in pool]  # read once each
        requests = [c.id for c, ask in zip(pool, asks, strict=True) if ask]
        evidence = [c for c, ask in zip(pool, asks, strict=True) if not ask]
        levels = hormones.levels(ws, self.now)
        instructions = pins.instructions(ws, _read(ws.dream_md)) or None
        period = hormone_summary.period(ws, self._since(), self.now)
        probe = DreamInputs(
            now=self.now,
            old=old,
            notes=[],
            crystals=[],
            insights=None,
            hormones=levels,
            mood=hormone_summary.mood(levels),
            niche=_niche(ws),
            instructions=instructions,
            period=period,
        )
        fixed = bounded.blocks_for(probe, budget)
        used = bounded.measure({k: v for k, v in fixed.items() if k not in ("notes", "insights")})
        room = max(0, budget - used["total"] - int(budget * bounded.INSIGHTS_SHARE))
        chosen = bounded.select(
            evidence, room, self.now, old.substance().split("\n"), last=repeats.latest(store)
        )
        hashes = {c.content_hash for c in chosen.chosen}
        given = [
            dataclasses.replace(note, text=head(note.text))
            for note in notes
            if content_hash(note.text) in hashes
        ]
        # Words and values by static vectors; answers to questions by the sentence model.
        rules = for_rules(self.ws.embedder)
        found = insights.compute(
            store, given, chosen.chosen, self.now, old, rules, sentences=self.ws.embedder
        )
        inputs = dataclasses.replace(
            probe,
            notes=given,
            crystals=chosen.chosen,
            insights=found,
            left=bounded.left_summary(chosen.left, beyond),
            causes=_causes(period, chosen.chosen),
            seen=repeats.of(store, [(c.id, c.created_at) for c in chosen.chosen]),
            revision_rate=revision_rate(store, self.synth.name),
        )
        inputs.blocks = bounded.blocks_for(inputs, budget)
        measured = bounded.measure(inputs.blocks)
        self.result.left_pending = len(chosen.left) + beyond
        self.result.inputs = {
            "budget": budget,
            "tokens": measured,
            "given": len(chosen.chosen),
            "covered": len(chosen.covered),
            "left_pending": inputs.left,
            "hormones": {**period, "cause_notes": inputs.causes},
            "overflow": self.overflowed,
            "hand_edits": self.hand_report,
        }
        self.inputs_summary = {
            "notes": len(given),
            "new_crystals": len(pool),
            "crystals_given": [c.id for c in inputs.crystals],
            "insights": found.to_dict(),
            "hormones": levels,
            "mood": inputs.mood,
            "niche": inputs.niche is not None,
            "instructions": inputs.instructions is not None,
            "recovered": self.result.recovered,
            "reason": self.result.reason,
            "forget_requests": [resolution.to_dict() for resolution in self.resolutions],
            **self.result.inputs,
        }
        return inputs, sorted((set(chosen.consumed) | set(requests)) - pins.ids(ws))

    def _synthesize(self, inputs: DreamInputs) -> tuple[wm.WorkingMemory, guards.GuardReport]:
        """Draft, check, and revise on critique (at most settings.max_revisions times)."""
        self.step("synthesize")
        draft = self._call(inputs, None, None)
        rules = keep_instructions.parse(inputs.instructions or "")
        context = guards.Context(
            evidence=[c.text for c in inputs.crystals] + [n.text for n in inputs.notes]
        )
        reported: set[str] = set()  # a dead pointer is told to the model and recorded once
        held_words = held.held_words(self.ws)
        valued = [
            *(c.text for c in inputs.crystals),
            *(n.text for n in inputs.notes),
            *(c.text for c in pins.listed(self.ws)),
            inputs.instructions or "",
        ]
        offered = getattr(inputs.insights, "emerging_skills", None) or []
        trusted = [
            *(c.text for c in inputs.crystals if may_set_rules(c.speaker)),
            *(n.text for n in inputs.notes),
            *(c.text for c in pins.listed(self.ws)),
            inputs.instructions or "",
        ]
        while True:
            self.step("pointers")
            state, dead = verify_pointers(self.ws, draft.state, self.now, inputs.old)
            new = [fix for fix in dead if fix not in reported]
            reported.update(new)
            self.result.pointer_fixes.extend(new)
            self.result.dropped = dropped.drop_lines(
                state, self.silenced, rules, held_words, trusted, inputs.old
            )
            self.step("guards")
            # A value no note gives is corrected (its line goes, journaled), not argued over.
            unsupported = numbers.check(state, inputs.old, valued, offered, self._recall)
            self.result.dropped += numbers.drop(state, unsupported)
            report = guards.check(state, inputs.old, context)
            pins.guard(self.ws, state, report)
            self.result.report = report
            # Only a pointer this dream wrote is sent back; one the old state had just goes.
            told = [fix for fix in new if not fix.endswith(CARRIED)]
            if report.ok and not told:
                return state, report
            critiques = report.critiques + [
                f"{fix}: write its keywords from words its topic's notes contain, or leave it "
                "out (it was left out of this draft)"
                for fix in told
            ]
            self.result.critiques.append(critiques)
            if self.result.revisions >= self.ws.settings.max_revisions:
                return state, report
            self.result.revisions += 1
            self.step("synthesize")
            draft = self._call(inputs, critiques, draft)

    def _recall(self, line: str) -> list[str]:
        """The texts of the memories a state line's words find (for its values)."""
        store = self.ws.store
        found = store.search.fts_match(keywords(line)[:12], [], RECALLED)
        return [c.text for c in store.crystals.crystals_by_id([i for i, _ in found])]

    def _call(
        self, inputs: DreamInputs, critique: list[str] | None, previous: Draft | None
    ) -> Draft:
        draft = self.synth.synthesize(inputs, critique=critique, previous=previous)
        self.result.usage.add(draft.usage)
        self.raw = draft.raw
        self.drafts.append(wm.render(dataclasses.replace(draft.state, preamble="")))
        return draft

    def _dry_run(self, why: str) -> DreamResult:
        notes = self.ws.scratch.notes()
        self.silenced = [r for note in notes if (r := forget_requests.parse(note.text))]
        notes = [note for note in notes if forget_requests.parse(note.text) is None]
        old = self._overflow(write=False)
        watermark = self.ws.store.crystals.max_crystal_id()
        inputs, consumed = self._gather(notes, watermark, old)
        state, report = self._synthesize(inputs)
        state.last_dream, state.mood = iso(self.now), inputs.mood
        self.result.outcome, self.result.reason = "dry-run", why
        self.result.state_text = compose(
            state, inputs.old, seed_pending=self.ws.store.records.get_meta(SEED_FLAG) == "1"
        )
        self.result.consumed, self.result.notes = consumed, len(inputs.notes)
        return self.result

    # --- the end ----------------------------------------------------------------------------

    def _commit(self, state: wm.WorkingMemory, inputs: DreamInputs) -> DreamResult:
        ws, store = self.ws, self.ws.store
        state.last_dream, state.mood = iso(self.now), inputs.mood
        seed_pending = store.records.get_meta(SEED_FLAG) == "1"
        text = compose(state, inputs.old, seed_pending=seed_pending)
        self.step("write")
        if ws.settings.review:  # review mode: the candidate beside MEMORY.md, which stays as is
            self.inputs_summary["review_diff"] = review.write(ws, self.old_text, text)
            self.result.outcome = review.OUTCOME
        else:
            ws.write_memory(text, self.now, expected=self.old_text)
            self.result.outcome = "committed"
        if self.result.edited_during:
            self.result.reason += (
                f"; MEMORY.md was edited during the dream ({self.result.edited_during} time(s)), "
                "so it dreamt again over the edited state"
            )
        # The commit point: MEMORY.md (or the candidate) holds the new state. Whatever fails
        # from here on is bookkeeping, and the dream is reported as what it is.
        self.result.state_text = text
        try:
            self._book(state_text=text, seed_pending=seed_pending)
        except Exception as e:
            self.result.reason += (
                f"; MEMORY.md was written, but the {self.current} step after it failed "
                f"({type(e).__name__}: {e}); the dream's notes stay pending and the next dream "
                "settles them"
            )
        return self.result

    def _book(self, *, state_text: str, seed_pending: bool) -> None:
        """The bookkeeping after the commit: journal, consumed crystals, the scratch."""
        ws, store, text = self.ws, self.ws.store, state_text
        # A note written again while the model worked stays pending: the next dream counts it.
        again = repeats.since(store, self.result.consumed, self.audit_mark)
        self.result.consumed = [i for i in self.result.consumed if i not in again]
        self.step("journal")
        with store.transaction():
            self.result.dream_id = self._journal(
                self.result.outcome, self.result.reason, new_state=text
            )
            if seed_pending:
                store.records.set_meta(SEED_FLAG, "0")
        self.step("consolidate")
        with store.transaction():
            for crystal_id in self.result.consumed:
                store.crystals.update_crystal(
                    crystal_id,
                    {"lifecycle": "consolidated", "consolidated_at": iso(self.now)},
                    action="consolidated",
                    at=self.now,
                    reason=f"dream {self.result.dream_id}",
                )
        self.step("settle")
        # The notes this dream could not take go back to the scratch for the next one.
        consumed = set(self.result.consumed)

        def waiting(note: scratch.Note) -> bool:
            crystal_id = store.crystals.find_by_hash(content_hash(note.text))
            if crystal_id is None or crystal_id in consumed:
                return False
            return store.crystals.get(crystal_id).lifecycle == "generated"

        ws.scratch.settle(waiting)

    def _fail(self, error: BaseException) -> None:
        """Put the notes back and journal why (MEMORY.md is whatever the last write left)."""
        restored = self.ws.scratch.restore()
        outcome = (
            "rejected"
            if isinstance(error, DreamRejected)
            else "deferred"
            if isinstance(error, DreamDeferred)
            else "failed"
        )
        spent = error.usage if isinstance(error, SynthesisError) else None
        if isinstance(spent, Usage):  # an unusable answer was still paid for
            self.result.usage.add(spent)
        raw = error.raw if isinstance(error, SynthesisError) else self.raw
        if not isinstance(error, Exception):
            return  # KeyboardInterrupt and the like: the notes are back, leave at once
        self.result.reason = f"{error} ({restored} notes put back in the scratch)"
        dream_id = self._journal(
            outcome, str(error), error=f"{type(error).__name__}: {error}", raw=raw
        )
        if isinstance(error, DreamError):
            error.dream_id = dream_id

    def _journal(self, outcome: str, reason: str, **extra: Any) -> int:
        drafts = self.drafts
        usage = self.result.usage
        return self.ws.store.journal.record_dream(
            {
                "started_at": iso(self.now),
                "finished_at": iso(self.now),
                "outcome": outcome,
                "reason": reason,
                "synthesizer": self.result.synthesizer,
                "model": self.result.model,
                "inputs": {
                    **(self.inputs_summary or {"reason": reason}),
                    "pointer_fixes": self.result.pointer_fixes,
                    "dropped_lines": self.result.dropped,
                    "edited_during": self.result.edited_during,
                    # How long the backend took and how many calls it made, retries included.
                    "synthesis": {"seconds": round(usage.seconds, 3), "tries": usage.tries},
                },
                "old_state": self.old_text or None,
                "draft": drafts[0] if drafts else None,
                "critiques": self.result.critiques,
                "revisions": drafts[1:],
                "consumed": self.result.consumed if outcome in ("committed", "candidate") else [],
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_read_tokens": usage.cache_read_tokens,
                "cache_write_tokens": usage.cache_write_tokens,
                "cost_usd": usage.cost_usd,
                **extra,
            }
        )


# --- helpers ------------------------------------------------------------------------------------


def _causes(period: dict[str, Any], crystals: list[Crystal]) -> dict[str, list[int]]:
    """For each hormone that peaked: the given memories written when its stimuli came.

    A note's own words stimulate at the note's moment; a stimulus from outside (``dream
    feel``) is tied to the most important memory written up to 30 minutes around it.
    """
    out: dict[str, list[int]] = {}
    mine = [c for c in crystals if c.source != "auto"]
    for name, peak in (period.get("peaks") or {}).items():
        ids: list[int] = []
        for cause in peak["causes"]:
            at = parse_iso(cause["at"])
            near = []
            for crystal in mine:
                try:
                    gap = abs((parse_iso(crystal.created_at) - at).total_seconds())
                except ValueError:
                    continue
                if gap <= 1800:
                    near.append((gap > 1, -crystal.importance, gap, crystal.id))
            if near:
                best = min(near)[3]
                if best not in ids:
                    ids.append(best)
        if ids:
            out[name] = ids
    return out


def verify_pointers(
    ws: Workspace, state: wm.WorkingMemory, now: datetime, old: wm.WorkingMemory | None = None
) -> tuple[wm.WorkingMemory, list[str]]:
    """Keep the pointers whose keywords find their topic's crystals; leave out the rest and
    say so, one line each (never rewritten under a guessed keyword: a topic's own words can
    find memories of something else). A line ends in ``CARRIED`` when ``old`` had the pointer."""
    pointers = state.pointers()
    if not pointers:
        return state, []
    before = old.pointers() if old is not None else []
    kept: list[wm.Pointer] = []
    dead: list[str] = []
    for pointer, leads in zip(pointers, _lead_somewhere(ws, pointers, now), strict=True):
        if leads:
            kept.append(pointer)
            continue
        dead.append(
            f"pointer {pointer.topic!r} leads nowhere: `{pointer.keywords}` finds no memory "
            "of its topic" + (CARRIED if pointer in before else "")
        )
    if not dead:
        return state, []
    stray = [
        line
        for line in state.body("crystal_pointers").split("\n")
        if line.strip() and not wm.parse_pointers(line)
    ]
    bodies = dict(state.bodies)
    bodies["crystal_pointers"] = "\n".join([p.render() for p in kept] + stray)
    return dataclasses.replace(state, bodies=bodies), dead


def pointer_leads_somewhere(ws: Workspace, pointer: wm.Pointer, now: datetime) -> bool:
    """Whether a pointer's keywords still find crystals about its topic (searches not logged)."""
    return _lead_somewhere(ws, [pointer], now)[0]


def _lead_somewhere(ws: Workspace, pointers: list[wm.Pointer], now: datetime) -> list[bool]:
    """For each pointer: whether a crystal holds at least half of its keywords (by stem; the
    topic's words when the keywords have none), so searching them finds its topic.

    One full-text query for all the pointers (each asks for any half of its keywords together,
    ``POINTER_SAMPLE`` crystals at most), not a ranked search per pointer: the cost stays that
    of a few index lookups however many crystals the store holds."""
    wanted = [stems(p.keywords) or stems(p.topic) for p in pointers]
    needs = [max(1, math.ceil(len(group) / 2)) for group in wanted]
    groups: list[list[list[str]]] = []
    for pointer, need in zip(pointers, needs, strict=True):
        words = keywords(pointer.keywords) if stems(pointer.keywords) else []
        by_stem: dict[str, str] = {}  # one word per stem: asking for two forms proves nothing
        for word in words or keywords(pointer.topic):
            by_stem.setdefault(stem(word), word)
        sets = [list(c) for c in itertools.combinations(by_stem.values(), need)]
        groups.append(sets if len(sets) <= POINTER_SETS else [])
    found = ws.store.search.texts_holding(groups, POINTER_SAMPLE)
    out = []
    for pointer, pointer_stems, need, sets, texts in zip(
        pointers, wanted, needs, groups, found, strict=True
    ):
        if pointer_stems and not sets:  # too many keywords to ask by subsets: one ranked search
            texts = [hit.text for hit in _hits(ws, pointer.keywords, now)]
        out.append(any(len(pointer_stems & stems(head(text))) >= need for text in texts))
    return out


def _hits(ws: Workspace, query: str, now: datetime) -> list[Any]:
    return search(ws.store, ws.embedder, ws.settings, query, now=now, limit=5, record=False)


def _read(path: Any) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as e:
        raise WorkspaceError(f"cannot read {path} ({e}); fix or move the file") from e


def _niche(ws: Workspace) -> dict[str, Any] | None:
    text = _read(ws.niche_json)
    if not text.strip():
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise WorkspaceError(f"{ws.niche_json} is not valid JSON ({e}); fix or remove it") from e
    if not isinstance(data, dict):
        raise WorkspaceError(f"{ws.niche_json} must hold a JSON object; fix or remove it")
    return data
