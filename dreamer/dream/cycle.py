"""One dream cycle, start to commit (DESIGN.md, "The dream cycle").

The steps, in order, each announced to an optional ``step`` hook (a seam tests use to inject a
crash between any two steps)::

    lock → recover → migrate → readiness → rotate → index → gather → synthesize → pointers
         → guards → write → journal → consolidate → discard

Crash safety: until ``write`` the old MEMORY.md is untouched and the consumed notes sit in the
rotated scratch (``memory/scratch.dreaming.md``), which the next dream puts back in front of
the scratch (``recover``). ``write`` is one atomic rename. After it, a crash at worst leaves the
rotated file for the next dream to restore: the notes are dreamed over again, never lost.
A rejected or failed dream journals why, restores the notes and raises.

Readiness counts the crystals not consolidated yet (every note is a crystal as soon as it is
written) plus scratch notes that are not crystals yet. The seed migration's pending first dream
is always ready.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dreamer.dream import forget_requests, guards, insights
from dreamer.dream.seed import FIRST_DREAM_KEY as SEED_FLAG
from dreamer.dream.seed import FIRST_DREAM_MARKER as SEED_MARKER
from dreamer.dream.seed import ensure_migrated
from dreamer.dream.synth import Draft, DreamInputs, Synthesizer, Usage
from dreamer.dream.synth.factory import make_synthesizer
from dreamer.errors import DreamError, DreamRejected, SynthesisError, WorkspaceError
from dreamer.memory import hormones, scratch
from dreamer.memory import state as wm
from dreamer.memory.workspace import Workspace
from dreamer.retrieval.search import search
from dreamer.store import Crystal, content_hash
from dreamer.support.files import atomic_write
from dreamer.support.times import iso

STEPS = (
    "lock",
    "recover",
    "migrate",
    "readiness",
    "rotate",
    "index",
    "forget",
    "gather",
    "synthesize",
    "pointers",
    "guards",
    "write",
    "journal",
    "consolidate",
    "discard",
)
MAX_CRYSTALS = 40  # crystals handed to the synthesizer
CLIP_CHARS = 600  # each one clipped to this many characters
INSIGHT_SCAN = 500  # new crystals the insights look at

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
    synthesizer: str | None = None
    model: str | None = None

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
    count = store.count_new()
    for path in (ws.scratch_path, scratch.rotated_path(ws.scratch_path)):
        for note in scratch.parse(path).notes:
            if store.find_by_hash(content_hash(note.text)) is None:
                count += 1
    return int(count)


def readiness(ws: Workspace) -> tuple[bool, str]:
    """(ready, why): enough new material since the last dream, or a seed dream pending."""
    if ws.store.get_meta(SEED_FLAG) == "1":
        return True, "first dream after the seed migration"
    waiting, needed = pending(ws), ws.settings.min_chunks_for_dream
    noun = "note" if waiting == 1 else "notes"
    if waiting >= needed:
        return True, f"{waiting} new {noun} since the last dream"
    return False, (
        f"only {waiting} new {noun} since the last dream (needs {needed}); "
        "use --force to dream anyway"
    )


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
        self.resolutions: list[forget_requests.Resolution] = []

    def step(self, name: str) -> None:
        self.hook(name)

    @property
    def synth(self) -> Synthesizer:
        """The synthesizer, built only once a dream will really run (a skip costs nothing)."""
        if self._synth is None:
            self._synth = default_synthesizer(self.ws)
        self.result.synthesizer, self.result.model = self._synth.name, self._synth.model
        return self._synth

    def run(self, *, force: bool, dry_run: bool) -> DreamResult:
        ws = self.ws
        self.step("recover")
        if not dry_run:
            self.result.recovered = scratch.restore(ws.scratch_path)
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
        self.result.reason = why if ready else f"forced ({why})"
        self.step("rotate")
        self.old_text = wm.read_memory(ws.memory_md)
        rotated = scratch.rotate(ws.scratch_path)
        try:
            return self._dream(rotated.notes)
        except BaseException as e:
            self._fail(e)
            raise

    # --- the middle -------------------------------------------------------------------------

    def _dream(self, notes: list[scratch.Note]) -> DreamResult:
        self.step("index")
        for note in notes:
            if self.ws.store.find_by_hash(content_hash(note.text)) is None:
                self.ws.index(
                    note.text,
                    importance=note.importance,
                    semantic_type=None,
                    at=note.at,
                    source="scratch",
                )
        self.step("forget")
        notes = self._honour_forget_requests(notes)
        watermark = self.ws.store.max_crystal_id()
        self.step("gather")
        inputs, consumed = self._gather(notes, watermark)
        self.result.consumed, self.result.notes = consumed, len(notes)
        state, report = self._synthesize(inputs)
        if not report.ok:
            raise DreamRejected(
                f"the guards rejected the dream after {self.result.revisions} revision(s): "
                f"{report.critiques[0]}; MEMORY.md is unchanged and the notes are back in "
                "the scratch",
                reasons=report.critiques,
            )
        return self._commit(state, inputs)

    def _honour_forget_requests(self, notes: list[scratch.Note]) -> list[scratch.Note]:
        """Forget what notes ask to forget; the requests and the forgotten leave the input."""
        store = self.ws.store
        asked = []
        for note in notes:
            request = forget_requests.parse(note.text)
            crystal_id = store.find_by_hash(content_hash(note.text))
            if request is not None and crystal_id is not None:
                asked.append((store.get(crystal_id), request))
        self.silenced = [request for _, request in asked]
        if asked:
            self.resolutions = forget_requests.resolve(
                store, self.ws.memory_md, self.ws.scratch_path, asked, self.now
            )
        # A forgotten note's hash is gone from the store; a request is never stated.
        return [
            note
            for note in notes
            if forget_requests.parse(note.text) is None
            and store.find_by_hash(content_hash(note.text)) is not None
        ]

    def _gather(self, notes: list[scratch.Note], watermark: int) -> tuple[DreamInputs, list[int]]:
        ws, store = self.ws, self.ws.store
        self.old_text = wm.read_memory(ws.memory_md)
        old = wm.parse(self.old_text)
        new = store.new_crystals(watermark, INSIGHT_SCAN)
        evidence = [crystal for crystal in new if forget_requests.parse(crystal.text) is None]
        if store.get_meta(SEED_FLAG) == "1":
            evidence += store.crystals(sources=["seed"])
        found = insights.compute(store, notes, evidence, self.now, old)
        levels = hormones.levels(ws, self.now)
        inputs = DreamInputs(
            now=self.now,
            old=old,
            notes=notes,
            crystals=select(evidence),
            insights=found,
            hormones=levels,
            mood=hormones.mood(levels),
            niche=_niche(ws),
            instructions=_read(ws.dream_md) or None,
        )
        self.inputs_summary = {
            "notes": len(notes),
            "new_crystals": len(new),
            "crystals_given": [c.id for c in inputs.crystals],
            "insights": found.to_dict(),
            "hormones": levels,
            "mood": inputs.mood,
            "niche": inputs.niche is not None,
            "instructions": inputs.instructions is not None,
            "recovered": self.result.recovered,
            "reason": self.result.reason,
            "forget_requests": [resolution.to_dict() for resolution in self.resolutions],
        }
        consumed = sorted(
            {c.id for c in new} | {c.id for c in evidence if c.lifecycle == "generated"}
        )
        return inputs, consumed

    def _synthesize(self, inputs: DreamInputs) -> tuple[wm.WorkingMemory, guards.GuardReport]:
        """Draft, check, and revise on critique (at most settings.max_revisions times)."""
        self.step("synthesize")
        draft = self._call(inputs, None, None)
        while True:
            self.step("pointers")
            state, fixes = verify_pointers(self.ws, draft.state, self.now)
            self.result.pointer_fixes.extend(fixes)
            forget_requests.silence(state, self.silenced, [])
            self.step("guards")
            report = guards.check(state, inputs.old)
            self.result.report = report
            if report.ok:
                return state, report
            self.result.critiques.append(report.critiques)
            if self.result.revisions >= self.ws.settings.max_revisions:
                return state, report
            self.result.revisions += 1
            self.step("synthesize")
            draft = self._call(inputs, report.critiques, draft)

    def _call(
        self, inputs: DreamInputs, critique: list[str] | None, previous: Draft | None
    ) -> Draft:
        draft = self.synth.synthesize(inputs, critique=critique, previous=previous)
        self.result.usage.add(draft.usage)
        self.raw = draft.raw
        self.drafts.append(wm.render(dataclasses.replace(draft.state, preamble="")))
        return draft

    def _dry_run(self, why: str) -> DreamResult:
        notes = scratch.parse(self.ws.scratch_path).notes
        self.silenced = [r for note in notes if (r := forget_requests.parse(note.text))]
        notes = [note for note in notes if forget_requests.parse(note.text) is None]
        watermark = self.ws.store.max_crystal_id()
        inputs, consumed = self._gather(notes, watermark)
        state, report = self._synthesize(inputs)
        state.last_dream, state.mood = iso(self.now), inputs.mood
        self.result.outcome, self.result.reason = "dry-run", why
        self.result.state_text = compose(
            state, inputs.old, seed_pending=self.ws.store.get_meta(SEED_FLAG) == "1"
        )
        self.result.consumed, self.result.notes = consumed, len(notes)
        return self.result

    # --- the end ----------------------------------------------------------------------------

    def _commit(self, state: wm.WorkingMemory, inputs: DreamInputs) -> DreamResult:
        ws, store = self.ws, self.ws.store
        state.last_dream, state.mood = iso(self.now), inputs.mood
        seed_pending = store.get_meta(SEED_FLAG) == "1"
        text = compose(state, inputs.old, seed_pending=seed_pending)
        self.step("write")
        atomic_write(ws.memory_md, text)
        self.result.state_text = text
        self.step("journal")
        with store.transaction():
            self.result.dream_id = self._journal("committed", self.result.reason, new_state=text)
            if seed_pending:
                store.set_meta(SEED_FLAG, "0")
        self.step("consolidate")
        with store.transaction():
            for crystal_id in self.result.consumed:
                store.update_crystal(
                    crystal_id,
                    {"lifecycle": "consolidated", "consolidated_at": iso(self.now)},
                    action="consolidated",
                    at=self.now,
                    reason=f"dream {self.result.dream_id}",
                )
        self.step("discard")
        scratch.discard_rotated(ws.scratch_path)
        self.result.outcome = "committed"
        return self.result

    def _fail(self, error: BaseException) -> None:
        """Put the notes back and journal why (MEMORY.md is whatever the last write left)."""
        restored = scratch.restore(self.ws.scratch_path)
        outcome = "rejected" if isinstance(error, DreamRejected) else "failed"
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
        return self.ws.store.record_dream(
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
                },
                "old_state": self.old_text or None,
                "draft": drafts[0] if drafts else None,
                "critiques": self.result.critiques,
                "revisions": drafts[1:],
                "consumed": self.result.consumed if outcome == "committed" else [],
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_read_tokens": usage.cache_read_tokens,
                "cache_write_tokens": usage.cache_write_tokens,
                "cost_usd": usage.cost_usd,
                **extra,
            }
        )


# --- helpers ------------------------------------------------------------------------------------


def select(crystals: list[Crystal], limit: int = MAX_CRYSTALS) -> list[Crystal]:
    """The most important, newest crystals, skipping near-duplicates, each text clipped."""
    ranked = sorted(crystals, key=lambda c: (-round(c.importance, 1), _desc(c.created_at), c.id))
    chosen: list[Crystal] = []
    seen: list[set[str]] = []
    for crystal in ranked:
        words = insights.stems(crystal.text)
        if any(words and len(words & other) / len(words | other) >= 0.8 for other in seen):
            continue
        seen.append(words)
        text = (
            crystal.text
            if len(crystal.text) <= CLIP_CHARS
            else crystal.text[:CLIP_CHARS].rsplit(" ", 1)[0] + " …"
        )
        chosen.append(dataclasses.replace(crystal, text=text))
        if len(chosen) >= limit:
            break
    return chosen


def _desc(stamp: str) -> tuple[int, ...]:
    return tuple(-ord(ch) for ch in stamp)


def verify_pointers(
    ws: Workspace, state: wm.WorkingMemory, now: datetime
) -> tuple[wm.WorkingMemory, list[str]]:
    """Keep the pointers whose keywords find their topic's crystals; repair or drop the rest."""
    pointers = state.pointers()
    if not pointers:
        return state, []
    kept: list[wm.Pointer] = []
    fixes: list[str] = []
    for pointer in pointers:
        if _leads_somewhere(ws, pointer.keywords, pointer.topic, now):
            kept.append(pointer)
            continue
        repaired = _repair(ws, pointer, now)
        if repaired:
            fixes.append(
                f"repaired pointer {pointer.topic!r}: `{pointer.keywords}` → `{repaired.keywords}`"
            )
            kept.append(repaired)
        else:
            fixes.append(f"dropped pointer {pointer.topic!r}: `{pointer.keywords}` finds nothing")
    if not fixes:
        return state, []
    stray = [
        line
        for line in state.body("crystal_pointers").split("\n")
        if line.strip() and not wm.parse_pointers(line)
    ]
    bodies = dict(state.bodies)
    bodies["crystal_pointers"] = "\n".join([p.render() for p in kept] + stray)
    return dataclasses.replace(state, bodies=bodies), fixes


def _hits(ws: Workspace, query: str, now: datetime) -> list[Any]:
    return search(ws.store, ws.embedder, ws.settings, query, now=now, limit=5, record=False)


def pointer_leads_somewhere(ws: Workspace, pointer: wm.Pointer, now: datetime) -> bool:
    """Whether a pointer's keywords still find crystals about its topic (searches not logged)."""
    return _leads_somewhere(ws, pointer.keywords, pointer.topic, now)


def _leads_somewhere(ws: Workspace, keywords: str, topic: str, now: datetime) -> bool:
    wanted = insights.stems(keywords) or insights.stems(topic)
    if not wanted:
        return False
    need = max(1, math.ceil(len(wanted) / 2))
    return any(len(wanted & insights.stems(hit.text)) >= need for hit in _hits(ws, keywords, now))


def _repair(ws: Workspace, pointer: wm.Pointer, now: datetime) -> wm.Pointer | None:
    topic_words = insights.keywords(pointer.topic)
    for hit in _hits(ws, pointer.topic, now):
        hit_stems = insights.stems(hit.text)
        shared = [w for w in topic_words if insights.stems(w) & hit_stems]
        if shared:
            candidate = " ".join(shared[:4])
            if _leads_somewhere(ws, candidate, pointer.topic, now):
                return wm.Pointer(pointer.topic, candidate)
    return None


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
