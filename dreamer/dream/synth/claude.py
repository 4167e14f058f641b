"""The Claude synthesizer: a dream written by the Anthropic API through one forced tool call.

The only module in dreamer that imports ``anthropic``. One request per draft:

- ``tools``: one tool, ``write_working_memory``, whose ``input_schema`` is
  ``schemas/working_memory.json`` (sections as string fields, pointers and skills as arrays);
  ``tool_choice`` forces it, so the answer is structured. Fields the model leaves out carry
  over unchanged from the old state (a quiet dream is a cheap dream).
- ``system``: ``prompts/dream_system.md``. Caching (``memory.dream.cache``, ``cache_marks``):
  a cache entry lives 5 minutes or, at twice the write price, an hour, so the system prompt is
  marked (1-hour TTL) only when dreams are at most an hour apart; the first user message, the
  prefix every revision of the dream repeats, is marked with the 5-minute TTL only when the
  journal shows enough revisions per dream to pay for the write (``BREAK_EVEN``).
- ``messages``: ``prompts/dream_user.md`` with the data blocks ``dreamer.dream.inputs`` rendered
  within the input budget (the old state, each pending note once, what was left pending, the
  hormones since the last dream, compact insights, niche data) inside XML-style tags, stated to
  be data; our tags inside the data are neutralised so a note cannot close its block. The
  user's ``memory/DREAM.md`` goes in ``<dream_instructions>``, the one block that instructs.
- A revision replays the draft once, as the assistant's tool call (the sections it changed),
  and answers it with an error ``tool_result`` holding ``prompts/dream_revise.md`` (the
  critiques). The revision's answer builds on the draft: a section it leaves out keeps the
  draft's version.

The prompts, schema and answer checks are the contract every model backend shares
(``dreamer.dream.synth.prompt``); tries and timeouts go through ``calls.attempt``
(``memory.dream.timeoutSeconds``, ``memory.dream.retries``; the client itself never retries, so
the tries are counted in one place). The answer is validated with jsonschema; a miss, and a 200
whose body is not a Messages response (truncated or empty JSON), raise ``ModelOutputInvalid``
with the raw answer. SDK errors become dreamer's own errors here, ``from`` the SDK's. Every
call's tokens and an estimated cost go in ``Draft.usage`` (and in ``error.usage`` when the
answer was unusable).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import anthropic

from dreamer.config import Settings
from dreamer.dream.synth import Draft, DreamInputs, Usage
from dreamer.dream.synth.answer import Capped, too_large
from dreamer.dream.synth.calls import Backend
from dreamer.dream.synth.prompt import (
    MAX_TOKENS,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    as_raw,
    draft_changes,
    draft_from,
    input_schema,
    redacted,
    revise_prompt,
    system_prompt,
    unusable,
    user_prompt,
)
from dreamer.errors import (
    InvalidSetting,
    ModelAuthError,
    ModelOverloaded,
    ModelRateLimited,
    ModelTimeout,
    SynthesisError,
)

__all__ = ["TOOL_NAME", "ClaudeSynthesizer", "usage_of"]

# Estimated price in USD per million tokens (input, output) by model family, from Anthropic's
# published list for the current generation (Opus 4.5+, Sonnet 4.x, Haiku 4.5). Cache writes
# with the 5-minute TTL cost 1.25x input, with the 1-hour TTL 2x, cache reads 0.1x input.
# A family not listed costs 0.0: the tokens are still recorded, and the journal shows the
# cost as unknown rather than guessed.
PRICES: dict[str, tuple[float, float]] = {
    "opus": (5.0, 25.0),
    "sonnet": (3.0, 15.0),
    "haiku": (1.0, 5.0),
}
CACHE_WRITE_FACTOR = 1.25
CACHE_WRITE_1H_FACTOR = 2.0
CACHE_READ_FACTOR = 0.10
# Revisions per dream from which marking a dream's data pays: the write's 25% surcharge is
# paid every dream, each revision reads the data at 10% instead of 100%.
BREAK_EVEN = (CACHE_WRITE_FACTOR - 1) / (1 - CACHE_READ_FACTOR)  # 0.28
LONG_TTL_MINUTES = 60  # a 1-hour cache entry can be read only by a dream within the hour

# --- the tool ---------------------------------------------------------------------------------


def tool() -> dict[str, Any]:
    """The one tool the dream is forced to call."""
    return {"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "input_schema": input_schema()}


# --- cost -------------------------------------------------------------------------------------


def price(model: str) -> tuple[float, float] | None:
    """USD per million (input, output) tokens for a model's family, or None when unknown."""
    for family, rates in PRICES.items():
        if family in model.lower():
            return rates
    return None


def usage_of(model: str, raw_usage: Any) -> Usage:
    """Tokens of one API response and their estimated cost."""
    usage = Usage(
        input_tokens=int(getattr(raw_usage, "input_tokens", 0) or 0),
        output_tokens=int(getattr(raw_usage, "output_tokens", 0) or 0),
        cache_read_tokens=int(getattr(raw_usage, "cache_read_input_tokens", 0) or 0),
        cache_write_tokens=int(getattr(raw_usage, "cache_creation_input_tokens", 0) or 0),
    )
    # The API splits cache writes by TTL; an hour's entry costs more to write.
    split = getattr(raw_usage, "cache_creation", None)
    long_writes = int(getattr(split, "ephemeral_1h_input_tokens", 0) or 0) if split else 0
    long_writes = min(long_writes, usage.cache_write_tokens)
    rates = price(model)
    if rates is not None:
        per_input, per_output = rates[0] / 1e6, rates[1] / 1e6
        usage.cost_usd = round(
            usage.input_tokens * per_input
            + (usage.cache_write_tokens - long_writes) * per_input * CACHE_WRITE_FACTOR
            + long_writes * per_input * CACHE_WRITE_1H_FACTOR
            + usage.cache_read_tokens * per_input * CACHE_READ_FACTOR
            + usage.output_tokens * per_output,
            6,
        )
    return usage


# --- the prompt -------------------------------------------------------------------------------


# --- errors -----------------------------------------------------------------------------------


def _api_message(e: anthropic.APIStatusError) -> str:
    body = e.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        text = str(body["error"].get("message") or "")
    else:
        text = str(e.message)
    return " ".join(text.split())[:200] or "no message"


def _read_answer(response: Any) -> Capped:
    """The streamed body, read up to the answer limit; one line when it breaks off after the
    headers came (the SDK's transport raises its own error there, not the SDK's)."""
    try:
        return Capped().read(response.iter_bytes())
    except Exception as e:  # noqa: BLE001 (whatever the transport raises mid-body)
        raise ModelTimeout(
            f"the Anthropic API's answer broke off ({type(e).__name__}); check the network "
            "(or ANTHROPIC_BASE_URL) and run 'dream run' again"
        ) from e


def _translate(e: anthropic.AnthropicError, model: str, timeout: float) -> SynthesisError:
    """dreamer's error for an SDK error; not tried again when the API says so."""
    error = _mapped(e, model, timeout)
    if isinstance(e, anthropic.APIStatusError):
        error.retry = e.response.headers.get("x-should-retry", "").lower() != "false"
    return error


def _mapped(e: anthropic.AnthropicError, model: str, timeout: float) -> SynthesisError:
    """dreamer's error for an SDK error (the one place this mapping lives)."""
    if isinstance(e, anthropic.APITimeoutError):
        return ModelTimeout(
            f"the Anthropic API did not answer within {timeout:g} s; "
            "check the network and run 'dream run' again"
        )
    if isinstance(e, anthropic.APIResponseValidationError):
        return unusable(
            f"the Anthropic API answered {e.status_code}, but not with a Messages response "
            "(truncated or empty JSON); if ANTHROPIC_BASE_URL points at a proxy, check it, "
            "else run 'dream run' again",
            e.response.text,
            Usage(),
        )
    if isinstance(e, anthropic.APIConnectionError):
        cause = e.__cause__ or e
        return ModelTimeout(
            f"could not reach the Anthropic API ({type(cause).__name__}); check the network "
            "(or ANTHROPIC_BASE_URL) and run 'dream run' again"
        )
    if not isinstance(e, anthropic.APIStatusError):
        return SynthesisError(f"the anthropic SDK failed ({e}); run 'dream run' again")
    status, message, raw = e.status_code, _api_message(e), e.response.text
    if isinstance(e, anthropic.AuthenticationError | anthropic.PermissionDeniedError):
        return ModelAuthError(
            f"the Anthropic API refused the key ({status}: {message}); "
            "check ANTHROPIC_API_KEY or memory.dream.apiKey",
            raw,
        )
    if isinstance(e, anthropic.RateLimitError):
        return ModelRateLimited(
            f"the Anthropic API rate-limited the dream ({status}: {message}); "
            "run 'dream run' again later",
            raw,
        )
    if isinstance(e, anthropic.RequestTimeoutError):
        return ModelTimeout(
            f"the Anthropic API timed out ({status}: {message}); run 'dream run' again", raw
        )
    if isinstance(e, anthropic.InternalServerError) or status >= 500:
        return ModelOverloaded(
            f"the Anthropic API is overloaded or failing ({status}: {message}); "
            "run 'dream run' again later",
            raw,
        )
    if isinstance(e, anthropic.NotFoundError):
        return SynthesisError(
            f"the Anthropic API does not know model {model!r} ({status}: {message}); "
            "set memory.dream.model to a current model",
            raw,
        )
    return SynthesisError(
        f"the Anthropic API refused the dream request ({status}: {message}); "
        "check memory.dream.model and the anthropic package version",
        raw,
    )


# --- the synthesizer --------------------------------------------------------------------------


def cache_marks(
    settings: Settings, revision_rate: float | None = None
) -> dict[str, dict[str, str] | None]:
    """The cache_control marks of a dream's request: for the system prompt and for its data.

    A mark is worth its write surcharge only if something reads it. The system prompt (with
    the tools) is the same for every dream, so it is marked with the 1-hour TTL when dreams are
    at most an hour apart, and not at all otherwise (a 5-minute entry would expire long before
    the next dream). The first user message is read back only by a revision of the same dream:
    its write costs 25% more, each read saves 90%, so it is marked (5-minute TTL) only when the
    journal shows at least ``BREAK_EVEN`` revisions per dream (``revision_rate``; none without
    a history, nor when revisions are off). ``memory.dream.cache = "off"`` marks nothing.
    """
    if settings.cache == "off":
        return {"system": None, "data": None}
    hourly = settings.dream_interval_minutes <= LONG_TTL_MINUTES
    revised = (
        settings.max_revisions > 0 and revision_rate is not None and revision_rate >= BREAK_EVEN
    )
    return {
        "system": {"type": "ephemeral", "ttl": "1h"} if hourly else None,
        "data": {"type": "ephemeral", "ttl": "5m"} if revised else None,
    }


class ClaudeSynthesizer(Backend):
    """Writes the candidate state with Claude through a forced ``write_working_memory`` call."""

    name = "claude"

    def __init__(
        self,
        settings: Settings,
        client: anthropic.Anthropic | None = None,
        environ: Mapping[str, str] | None = None,
    ):
        """``client``: use this one (tests, proxies); it keeps its own retry policy."""
        self.timeout = settings.timeout_seconds
        self.retries = settings.retries if client is None else 0
        if client is None:
            if not settings.api_key:
                raise InvalidSetting(
                    "the Claude synthesizer needs an API key; set ANTHROPIC_API_KEY or "
                    "memory.dream.apiKey in dreamer.toml (or memory.dream.synthesizer = "
                    f'"claude-code" or "offline"){scrubbed(environ)}'
                )
            client = anthropic.Anthropic(
                api_key=settings.api_key, timeout=self.timeout, max_retries=0
            )
        self.client = client
        self.model: str | None = settings.model_for("claude")
        self.rest = dict(settings.hormone_rest)
        self.budget = settings.input_tokens
        self.settings = settings

    def request(
        self,
        inputs: DreamInputs,
        *,
        critique: list[str] | None = None,
        previous: Draft | None = None,
    ) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` for a draft or a revision."""
        first: dict[str, Any] = {
            "type": "text",
            "text": user_prompt(inputs, self.rest, self.budget),
        }
        marks = cache_marks(self.settings, inputs.revision_rate)
        if marks["data"]:
            first["cache_control"] = marks["data"]
        messages: list[dict[str, Any]] = [{"role": "user", "content": [first]}]
        if critique is not None or previous is not None:
            if previous is None:
                raise ValueError("a revision needs the previous draft")
            tool_use_id = "toolu_previous_draft"
            messages.append(
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": tool_use_id,
                            "name": TOOL_NAME,
                            "input": draft_changes(previous, inputs.old),
                        }
                    ],
                }
            )
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": tool_use_id,
                            "is_error": True,
                            "content": revise_prompt(critique or [], previous),
                        }
                    ],
                }
            )
        system: dict[str, Any] = {"type": "text", "text": system_prompt()}
        if marks["system"]:
            system["cache_control"] = marks["system"]
        return {
            "model": self.model,
            "max_tokens": MAX_TOKENS,
            "system": [system],
            "tools": [tool()],
            "tool_choice": {"type": "tool", "name": TOOL_NAME},
            "messages": messages,
        }

    def without_secrets(self, request: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments with every secret in the messages replaced."""
        return {**request, "messages": redacted(request["messages"])}

    def _call(self, kwargs: dict[str, Any], inputs: DreamInputs, previous: Draft | None) -> Draft:
        try:
            # Streamed, so that no more than the limit of an answer is ever read into memory.
            with self.client.messages.with_streaming_response.create(**kwargs) as response:
                status = response.http_response.status_code
                read = _read_answer(response)
        except anthropic.AnthropicError as e:
            raise _translate(e, str(self.model), self.timeout) from e
        body = read.text()
        if read.over:
            raise unusable(too_large("the Anthropic API"), body, Usage())
        try:
            data = json.loads(body)
        except ValueError as e:
            raise unusable(
                f"the Anthropic API answered {status} with a body that is not JSON ({e}; "
                "truncated or empty); if ANTHROPIC_BASE_URL points at a proxy, check it, else "
                "run 'dream run' again",
                body,
                Usage(),
            ) from e
        # Built as the SDK's own parse builds it: without validation (``malformed`` checks).
        message: Any = anthropic.types.Message.construct(**data) if isinstance(data, dict) else data
        problem = malformed(message)
        if problem:
            raise unusable(
                f"the API answered, but not with a Messages response ({problem}); if "
                "ANTHROPIC_BASE_URL points at a proxy, check it, else run 'dream run' again",
                body or _dump(message),
                Usage(),
            )
        usage = usage_of(str(self.model), message.usage)
        calls = [b for b in message.content if b.type == "tool_use" and b.name == TOOL_NAME]
        text = "\n".join(b.text for b in message.content if b.type == "text")
        if not calls:
            raise unusable(
                f"the model answered without calling {TOOL_NAME} "
                f"(stop reason {message.stop_reason}); run 'dream run' again",
                text,
                usage,
            )
        answer = calls[0].input
        if message.stop_reason == "max_tokens":
            raise unusable(
                f"the model's answer was cut off at {MAX_TOKENS} tokens; run 'dream run' again",
                as_raw(answer),
                usage,
            )
        return draft_from(answer, as_raw(answer), inputs, usage, previous)


_TOKEN_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


def malformed(message: Any) -> str | None:
    """What is wrong with the shape of an API answer, or None when it is a Messages response.

    The SDK builds its response objects without validating them, so a proxy's or a changed
    API's answer of the wrong shape would otherwise surface as a TypeError deep in here.
    """
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        return f"its content is {type(content).__name__}, not a list of blocks"
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text" and not isinstance(getattr(block, "text", None), str):
            return "a text block has no text"
        if kind == "tool_use" and not isinstance(getattr(block, "name", None), str):
            return "a tool_use block has no name"
    usage = getattr(message, "usage", None)
    for name in _TOKEN_FIELDS:
        value = getattr(usage, name, None)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            return f"usage.{name} is {value!r}, not a whole number"
    return None


def _dump(message: Any) -> str:
    """The answer as the SDK parsed it, for the journal (any shape)."""
    try:
        return json.dumps(message.model_dump(warnings=False), ensure_ascii=False, default=str)
    except Exception:  # a shape model_dump cannot handle: its repr is still evidence
        return repr(message)


def scrubbed(environ: Mapping[str, str] | None) -> str:
    """A note for errors when Claude Code removed credentials from this process's environment."""
    env = os.environ if environ is None else environ
    if env.get("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB", "") not in ("", "0"):
        return (
            " (CLAUDE_CODE_SUBPROCESS_ENV_SCRUB is set: Claude Code removed credentials from "
            "the environment of the hooks it runs; put the key in dreamer.toml instead)"
        )
    return ""
