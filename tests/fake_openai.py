"""A scripted fake of an OpenAI-compatible chat-completions server, served on 127.0.0.1.

What Ollama, llama.cpp's server, vLLM and LM Studio answer at ``POST /v1/chat/completions``::

    fake = FakeOpenAI()
    fake.tool_call("write_working_memory", {"bond": "..."})   # a forced function call
    fake.content(json.dumps({...}))                          # a json_schema response
    fake.error(500)
    with fake.serve() as base_url:                           # http://127.0.0.1:PORT
        settings.openai_base_url = base_url + "/v1"

The queue, the record of requests (``fake.requests``), raw bodies (``fake.raw``) and slow answers
(``fake.timeout(delay=...)``) work as in ``fake_anthropic.FakeAnthropic``, whose server this
reuses; only the bodies differ.

The Codex CLI speaks the Responses API instead (``POST /v1/responses`` with ``"stream": true``);
``fake.response("text")`` queues one assistant message as that endpoint's server-sent events
(``response.created``, the item's ``output_item.added`` / ``output_text.delta`` /
``output_item.done``, then ``response.completed`` with usage), the shape the real service sends.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from fake_anthropic import FakeAnthropic, Scripted

MODEL = "qwen2.5:14b"


def completion(
    message: dict[str, Any],
    *,
    finish_reason: str = "stop",
    usage: dict[str, int] | None = None,
    model: str = MODEL,
) -> dict[str, Any]:
    """A chat.completion body with one choice holding this assistant message."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_773_325_800,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500}
        | (usage or {}),
    }


def message_item(text: str, item_id: str) -> dict[str, Any]:
    """A Responses API output item: one assistant message."""
    return {
        "type": "message",
        "id": item_id,
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def call_item(name: str, arguments: Any, item_id: str) -> dict[str, Any]:
    """A Responses API output item: a function call (arguments as a JSON string)."""
    return {
        "type": "function_call",
        "id": item_id,
        "call_id": f"call_{item_id}",
        "status": "completed",
        "name": name,
        "arguments": json.dumps(arguments),
    }


def response_events(
    items: list[dict[str, Any]], *, response_id: str = "resp_fake", model: str = MODEL
) -> bytes:
    """A Responses API answer with these output items, as its event stream."""
    head = {"id": response_id, "object": "response", "model": model, "status": "in_progress"}
    usage = {
        "input_tokens": 1200,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 30,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 1230,
    }
    events: list[dict[str, Any]] = [{"type": "response.created", "response": head}]
    for index, item in enumerate(items):
        opening = {**item, "status": "in_progress"}
        if item["type"] == "message":
            opening["content"] = []
        events.append(
            {"type": "response.output_item.added", "output_index": index, "item": opening}
        )
        if item["type"] == "message":
            events.append(
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": item["content"][0]["text"],
                }
            )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append(
        {
            "type": "response.completed",
            "response": {**head, "status": "completed", "output": items, "usage": usage},
        }
    )
    return "".join(
        f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in events
    ).encode()


class FakeOpenAI(FakeAnthropic):
    """A queue of scripted chat-completions answers plus a record of the requests received."""

    def __init__(self) -> None:
        super().__init__()
        self._calls = itertools.count(1)

    def tool_call(
        self, name: str, arguments: Any, *, as_text: bool = True, **kwargs: Any
    ) -> FakeOpenAI:
        """Queue a forced function call; arguments as a JSON string (as OpenAI sends them)."""
        call = {
            "id": f"call_fake_{next(self._calls)}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": json.dumps(arguments) if as_text else arguments,
            },
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        kwargs.setdefault("finish_reason", "tool_calls")
        self.push(Scripted(200, completion(message, **kwargs)))
        return self

    def content(self, text: str, **kwargs: Any) -> FakeOpenAI:
        """Queue a plain assistant message (a json_schema answer is its JSON text)."""
        self.push(Scripted(200, completion({"role": "assistant", "content": text}, **kwargs)))
        return self

    def response(self, text: str, **kwargs: Any) -> FakeOpenAI:
        """Queue a streamed Responses API answer (what the Codex CLI reads) saying ``text``."""
        number = next(self._calls)
        items = [message_item(text, f"msg_fake_{number}")]
        return self._stream(items, f"resp_fake_{number}", **kwargs)

    def response_call(self, name: str, arguments: Any, **kwargs: Any) -> FakeOpenAI:
        """Queue a streamed Responses API answer that calls the tool ``name`` (Codex runs it)."""
        number = next(self._calls)
        items = [call_item(name, arguments, f"fc_fake_{number}")]
        return self._stream(items, f"resp_fake_{number}", **kwargs)

    def _stream(self, items: list[dict[str, Any]], response_id: str, **kwargs: Any) -> FakeOpenAI:
        events = response_events(items, response_id=response_id, **kwargs)
        self.push(Scripted(200, raw=events, headers={"content-type": "text/event-stream"}))
        return self

    def error(  # type: ignore[override]
        self, status: int, message: str | None = None, **_: Any
    ) -> FakeOpenAI:
        """Queue an HTTP error with an OpenAI-style error body."""
        body = {"error": {"message": message or f"fake error {status}", "type": "server_error"}}
        self.push(Scripted(status, body))
        return self
