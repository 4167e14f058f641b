"""The openai synthesizer: a dream written by any OpenAI-compatible chat-completions endpoint.

For the models people run themselves (Ollama, llama.cpp's server, vLLM, LM Studio) and any
hosted endpoint that speaks the same protocol: ``POST {base}/chat/completions`` with
``memory.dream.openai.baseUrl`` (``OPENAI_BASE_URL``), ``memory.dream.model`` (``DREAM_MODEL``)
and, when the endpoint wants one, ``memory.dream.openai.apiKey`` (``OPENAI_API_KEY``, sent as a
Bearer token). It talks plain HTTP through ``httpx2`` (already installed with ``anthropic``)
rather than the ``openai`` package: the request is one JSON object, and reading the raw answer
ourselves is what lets a server's deviation (arguments as an object, a truncated body, no tool
call) end in one clear ``ModelOutputInvalid`` instead of a client library's exception.

Structure comes from one of two formats (``memory.dream.openai.format``), never one after the
other:

- ``tools`` (the default): one function, ``write_working_memory``, whose parameters are the
  working-memory schema, forced by ``tool_choice``. A revision replays the draft as the
  assistant's tool call and answers it with a ``tool`` message holding the critiques.
- ``json_schema``: ``response_format`` with the same schema, for servers or models without tool
  calling; the answer is the message's JSON text. A revision replays the draft as the
  assistant's JSON and sends the critiques as the next user message.

The prompts, redaction and answer checks are the shared contract (``prompt``); tries and
timeouts go through ``calls.attempt``. The cost is 0 unless ``memory.dream.openai.inputPrice``
and ``outputPrice`` are set (USD per million tokens): a local model costs electricity, not money.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2

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
    ModelUnavailable,
    SynthesisError,
)
from dreamer.support import prompts

CALL_ID = "call_previous_draft"


class OpenAISynthesizer(Backend):
    """Writes the candidate state through an OpenAI-compatible chat-completions endpoint."""

    name = "openai"

    def __init__(self, settings: Settings, transport: httpx2.BaseTransport | None = None):
        """``transport``: an httpx2 transport to use instead of the network (tests, proxies)."""
        if not settings.openai_base_url:
            raise InvalidSetting(
                "the openai synthesizer needs an endpoint; set OPENAI_BASE_URL or "
                "memory.dream.openai.baseUrl (e.g. http://127.0.0.1:11434/v1 for Ollama)"
            )
        model = settings.model_for("openai")
        if not model:
            raise InvalidSetting(
                "the openai synthesizer needs a model; set DREAM_MODEL or memory.dream.model "
                "to one the endpoint serves (e.g. qwen2.5:14b for Ollama)"
            )
        self.model: str | None = model
        self.url = settings.openai_base_url.rstrip("/") + "/chat/completions"
        self.format = settings.openai_format
        self.prices = (settings.openai_input_price, settings.openai_output_price)
        self.rest = dict(settings.hormone_rest)
        self.budget = settings.input_tokens
        self.timeout = settings.timeout_seconds
        self.retries = settings.retries
        headers = {"content-type": "application/json"}
        if settings.openai_api_key:
            headers["authorization"] = f"Bearer {settings.openai_api_key}"
        self.headers = headers
        self.transport = transport

    def request(
        self,
        inputs: DreamInputs,
        *,
        critique: list[str] | None = None,
        previous: Draft | None = None,
    ) -> dict[str, Any]:
        """The JSON body of the chat-completions request for a draft or a revision."""
        system = system_prompt()
        if self.format == "json_schema":
            system += "\n\n" + prompts.render("dream_json_answer", tool_name=TOOL_NAME)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": user_prompt(inputs, self.rest, self.budget)},
        ]
        if critique is not None or previous is not None:
            if previous is None:
                raise ValueError("a revision needs the previous draft")
            changes = json.dumps(draft_changes(previous, inputs.old), ensure_ascii=False)
            critiques = revise_prompt(critique or [], previous)
            if self.format == "tools":
                call = {"id": CALL_ID, "type": "function"}
                call["function"] = {"name": TOOL_NAME, "arguments": changes}  # type: ignore[assignment]
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
                messages.append({"role": "tool", "tool_call_id": CALL_ID, "content": critiques})
            else:
                messages.append({"role": "assistant", "content": changes})
                messages.append({"role": "user", "content": critiques})
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": MAX_TOKENS,
            "stream": False,
        }
        if self.format == "tools":
            function = {
                "name": TOOL_NAME,
                "description": TOOL_DESCRIPTION,
                "parameters": input_schema(),
            }
            body["tools"] = [{"type": "function", "function": function}]
            body["tool_choice"] = {"type": "function", "function": {"name": TOOL_NAME}}
        else:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": TOOL_NAME, "schema": input_schema(), "strict": False},
            }
        return body

    def without_secrets(self, request: dict[str, Any]) -> dict[str, Any]:
        """The request body with every secret in the messages replaced."""
        return {**request, "messages": redacted(request["messages"])}

    def _call(self, body: dict[str, Any], inputs: DreamInputs, previous: Draft | None) -> Draft:
        status, text = self._post(body)
        if status >= 300:
            raise self._refused(status, text)
        try:
            answer = json.loads(text)
        except ValueError as e:
            raise unusable(
                f"the endpoint answered {status} with a body that is not JSON "
                f"({e}; truncated or empty); check the server at {self.url}, then run "
                "'dream run' again",
                text,
                Usage(),
            ) from e
        choices = answer.get("choices") if isinstance(answer, dict) else None
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(choice, dict) or not isinstance(message, dict):
            raise unusable(
                "the endpoint answered, but not with a chat completion (no choices[0].message); "
                f"check that {self.url} is an OpenAI-compatible endpoint",
                text,
                Usage(),
            )
        usage = self._usage(answer.get("usage"))
        finish = choice.get("finish_reason")
        fields, raw = self._fields(message, finish, text, usage)
        if finish == "length":
            raise unusable(
                f"the model's answer was cut off at {MAX_TOKENS} tokens; run 'dream run' again",
                raw,
                usage,
            )
        return draft_from(fields, raw, inputs, usage, previous)

    def _post(self, body: dict[str, Any]) -> tuple[int, str]:
        """The status and body of the endpoint's answer, read up to ``answer.MAX_BYTES``."""
        try:
            with (
                httpx2.Client(timeout=self.timeout, transport=self.transport) as client,
                client.stream("POST", self.url, json=body, headers=self.headers) as response,
            ):
                read = Capped().read(response.iter_bytes())
                if read.over:
                    raise unusable(too_large(f"the endpoint {self.url}"), read.text(), Usage())
                return response.status_code, read.text()
        except httpx2.TimeoutException as e:
            raise ModelTimeout(
                f"the endpoint {self.url} did not answer within {self.timeout:g} s; a slow local "
                "model may need a higher memory.dream.timeoutSeconds"
            ) from e
        except httpx2.ConnectError as e:
            raise ModelUnavailable(
                f"could not reach the openai endpoint {self.url} ({e}); start the server (e.g. "
                "'ollama serve') or fix OPENAI_BASE_URL / memory.dream.openai.baseUrl"
            ) from e
        except httpx2.HTTPError as e:
            raise ModelTimeout(
                f"the connection to {self.url} failed ({type(e).__name__}: {e}); "
                "run 'dream run' again"
            ) from e

    def _fields(
        self, message: dict[str, Any], finish: Any, text: str, usage: Usage
    ) -> tuple[Any, str]:
        """The answer's working-memory fields and their raw text, or ModelOutputInvalid."""
        if self.format == "tools":
            calls = message.get("tool_calls") or []
            mine = [
                call.get("function") or {}
                for call in calls
                if isinstance(call, dict) and (call.get("function") or {}).get("name") == TOOL_NAME
            ]
            if not mine:
                raise unusable(
                    f"the model answered without calling {TOOL_NAME} (finish reason {finish}); "
                    "if this server or model has no tool calling, set "
                    'memory.dream.openai.format = "json_schema"',
                    str(message.get("content") or text),
                    usage,
                )
            arguments = mine[0].get("arguments")
        else:
            arguments = message.get("content")
        if isinstance(arguments, dict):  # some servers send the object, not its JSON text
            return arguments, as_raw(arguments)
        raw = str(arguments or "")
        try:
            return json.loads(raw), raw
        except ValueError as e:
            # Asking again gets the same: the model or its server does not hold it to JSON.
            if self.format == "tools":
                cause = (
                    f"its {TOOL_NAME} call is not valid JSON ({e}): this model or server does "
                    "not hold tool arguments to their schema; use a model with reliable tool "
                    'calling, or set memory.dream.openai.format = "json_schema" if the server '
                    "enforces a response schema"
                )
            else:
                cause = (
                    f"its answer is not valid JSON ({e}): this model or server does not enforce "
                    "the JSON-schema response format; use a server that does (a recent "
                    'Ollama, llama.cpp or vLLM), or set memory.dream.openai.format = "tools" '
                    "for a model with tool calling"
                )
            raise unusable(
                f"the model cannot answer in structured JSON: {cause}", raw, usage
            ) from e

    def _usage(self, raw: Any) -> Usage:
        counts = raw if isinstance(raw, dict) else {}

        def whole(name: str) -> int:
            value = counts.get(name)
            return value if isinstance(value, int) and not isinstance(value, bool) else 0

        usage = Usage(input_tokens=whole("prompt_tokens"), output_tokens=whole("completion_tokens"))
        per_input, per_output = self.prices
        usage.cost_usd = round(
            (usage.input_tokens * per_input + usage.output_tokens * per_output) / 1e6, 6
        )
        return usage

    def _refused(self, status: int, text: str) -> SynthesisError:
        try:
            detail = json.loads(text).get("error")
            said = detail.get("message") if isinstance(detail, dict) else detail
        except (ValueError, AttributeError):
            said = text
        said = " ".join(str(said or "no message").split())[:200]
        if status in (401, 403):
            return ModelAuthError(
                f"the endpoint refused the key ({status}: {said}); check OPENAI_API_KEY or "
                "memory.dream.openai.apiKey",
                text,
            )
        if status == 429:
            return ModelRateLimited(
                f"the endpoint rate-limited the dream ({status}: {said}); run 'dream run' again "
                "later",
                text,
            )
        if status == 408:
            return ModelTimeout(f"the endpoint timed out ({status}: {said})", text)
        if status >= 500:
            return ModelOverloaded(
                f"the endpoint failed ({status}: {said}); check the server, then run "
                "'dream run' again",
                text,
            )
        if status == 404:
            return SynthesisError(
                f"the endpoint does not know model {self.model!r} or the path ({status}: "
                f"{said}); check memory.dream.model and that the base URL ends in /v1",
                text,
            )
        return SynthesisError(
            f"the endpoint refused the dream request ({status}: {said}); check "
            "memory.dream.model and memory.dream.openai.format",
            text,
        )
