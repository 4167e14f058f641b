"""The synthesizer boundary: what a dream hands a synthesizer and what it gets back.

Four implementations: ``offline.OfflineSynthesizer`` (deterministic, no network, the default),
``claude.ClaudeSynthesizer`` (the Anthropic API; the only module that imports anthropic),
``claude_code.ClaudeCodeSynthesizer`` (the user's own ``claude`` CLI in print mode; the only
module that spawns it) and ``openai_compat.OpenAISynthesizer`` (any OpenAI-compatible
chat-completions endpoint: Ollama, llama.cpp's server, vLLM, LM Studio). The model backends share
one contract (``prompt``: prompts, schema, redaction, answer checks) and one way of trying
(``calls``: the timeout and retries of ``memory.dream``). ``factory.make_synthesizer`` picks one
from the workspace settings. The dream runs whichever it gets inside ``Redacting``, so no
backend's answer lands with a secret in it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from dreamer.dream.synth.answer import excerpt
from dreamer.errors import SynthesisError
from dreamer.memory.repeats import Sighting
from dreamer.memory.scratch import Note
from dreamer.memory.state import WorkingMemory
from dreamer.store import Crystal


@dataclass
class Usage:
    """What one synthesis cost."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0  # time spent waiting for the model, every try included
    tries: int = 0  # calls made (a retry is one more)

    def add(self, other: Usage) -> None:
        """Accumulate another call's usage into this one."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.cost_usd += other.cost_usd
        self.seconds += other.seconds
        self.tries += other.tries


@dataclass
class DreamInputs:
    """Everything a synthesizer may use; the dream's own past output is never fresh evidence."""

    now: datetime
    old: WorkingMemory  # the committed state (empty on a first dream)
    notes: list[Note]  # the rotated scratch notes being consumed
    crystals: list[Crystal]  # top new/important crystals, diverse, text clipped
    insights: Any  # dreamer.insights.Insights
    hormones: dict[str, float]  # dopamine/cortisol/oxytocin levels now
    mood: str  # hormonal description for the status line
    niche: dict[str, Any] | None = None  # memory/niche.json
    instructions: str | None = None  # memory/DREAM.md
    left: dict[str, int] = field(default_factory=dict)  # pending, did not fit: count by source
    period: dict[str, Any] | None = None  # what the hormones did since the last dream
    causes: dict[str, list[int]] = field(default_factory=dict)  # hormone -> crystals behind it
    blocks: dict[str, str] = field(default_factory=dict)  # the data as rendered in the budget
    seen: dict[int, Sighting] = field(default_factory=dict)  # crystals written more than once
    revision_rate: float | None = None  # the journal's revisions per dream (None: no history)


@dataclass
class Draft:
    """A candidate state from one synthesis call."""

    state: WorkingMemory
    raw: str  # the synthesizer's raw output, kept for the journal and for errors
    usage: Usage = field(default_factory=Usage)


class Synthesizer(Protocol):
    """Writes a candidate state from the dream's inputs, and revises it on critique."""

    name: str
    model: str | None

    def synthesize(
        self,
        inputs: DreamInputs,
        *,
        critique: list[str] | None = None,
        previous: Draft | None = None,
    ) -> Draft:
        """Return a draft; with critique and previous, a revision of previous that answers it."""
        ...


class Redacting:
    """Any synthesizer, with its answers redacted like the notes it read.

    A model can write a secret no note held (a prompt injection obeyed, a hallucination, a file
    no door redacts such as niche.json): the dream wraps whatever synthesizer it runs in this,
    so every draft, revision and unusable raw answer passes ``redact`` before the guards, the
    commit and the journal see it (a raw answer cut to its head first: ``answer.excerpt``).
    ``redact`` is the workspace's (a no-op when memory.secrets.redact is off, as for the notes).
    """

    def __init__(self, inner: Synthesizer, redact: Callable[[str], str]) -> None:
        self.inner = inner
        self.redact = redact
        self.name = inner.name
        self.model = inner.model

    def synthesize(
        self,
        inputs: DreamInputs,
        *,
        critique: list[str] | None = None,
        previous: Draft | None = None,
    ) -> Draft:
        """The inner synthesizer's draft with every secret in it replaced by its placeholder."""
        try:
            draft = self.inner.synthesize(inputs, critique=critique, previous=previous)
        except SynthesisError as error:
            if error.raw is not None:
                error.raw = self.redact(excerpt(error.raw))
            raise
        return Draft(self._state(draft.state), self.redact(excerpt(draft.raw)), draft.usage)

    def _state(self, state: WorkingMemory) -> WorkingMemory:
        return dataclasses.replace(
            state,
            bodies={key: self.redact(body) for key, body in state.bodies.items()},
            mood=None if state.mood is None else self.redact(state.mood),
            preamble=self.redact(state.preamble),
            extra=[(self.redact(head), self.redact(body)) for head, body in state.extra],
        )
