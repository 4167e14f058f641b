"""A scripted fake of the Anthropic Messages API, for driving the real ``anthropic`` SDK in tests.

The SDK (anthropic 2.x) talks through ``httpx2``; the fake plugs in at that boundary, either as an
``httpx2.MockTransport`` (in-process, the fast default) or as a real HTTP server on 127.0.0.1
(for code that builds its own client, e.g. the CLI with ``ANTHROPIC_BASE_URL``)::

    fake = FakeAnthropic()
    fake.tool_use("write_memory", {"bond": "..."})         # queue a forced-tool answer
    fake.error(529)                                        # then an overloaded error
    client = fake.client()                                 # a real anthropic.Anthropic
    ...
    assert fake.requests[0].json["tool_choice"] == {"type": "tool", "name": "write_memory"}

    with fake.serve() as base_url:                         # same queue, over real HTTP
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)

In server mode a request with ``"stream": true`` (what the Claude Code CLI sends) gets a 200
message back as the Messages API's server-sent events, so the same scripted answer serves both.
``structured_output(answer)`` queues the answer the CLI's ``StructuredOutput`` tool expects.

Every request is recorded (``fake.requests``: method, path, headers, parsed JSON body) and
answered by the next scripted response, first in first out. A scripted response is a
``Scripted`` (status, JSON body, headers, optional delay) or a callable taking the
``Recorded`` request and returning one (for answers that depend on the request, e.g. an agent
loop). When the queue is empty the fake answers 400 ``fake anthropic: no scripted response
left`` so a test fails loudly instead of hanging. Error answers carry ``x-should-retry: false``
unless ``retry=True``, so a client with default retries still fails at once.
"""

from __future__ import annotations

import contextlib
import http.server
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2

DEFAULT_MODEL = "claude-sonnet-5-5"
TEST_KEY = "sk-ant-test-0000"

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}


@dataclass
class Recorded:
    """One request the fake received."""

    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: bytes

    @property
    def json(self) -> Any:
        """The request body parsed as JSON (None when empty)."""
        return json.loads(self.body) if self.body else None

    def text(self) -> str:
        """Every text the request sends the model (system blocks and messages), joined."""
        payload = self.json or {}
        parts: list[str] = []
        system = payload.get("system")
        if isinstance(system, str):
            parts.append(system)
        elif isinstance(system, list):
            parts.extend(block.get("text", "") for block in system)
        for message in payload.get("messages", []):
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
                continue
            for block in content or []:
                if block.get("type") == "text":
                    parts.append(block.get("text", ""))
                elif block.get("type") == "tool_result":
                    inner = block.get("content")
                    parts.append(inner if isinstance(inner, str) else json.dumps(inner))
                elif block.get("type") == "tool_use":
                    parts.append(json.dumps(block.get("input")))
        return "\n".join(parts)


@dataclass
class Scripted:
    """One scripted answer: HTTP status, JSON body, headers, and how long to wait first."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to sleep before answering (real time)
    timeout: bool = False  # raise a read timeout instead of answering (transport mode)
    raw: bytes | None = None  # send these bytes as the body instead of ``body`` as JSON


Responder = Scripted | Callable[[Recorded], Scripted]


def message_body(
    content: list[dict[str, Any]],
    *,
    stop_reason: str = "end_turn",
    model: str = DEFAULT_MODEL,
    usage: dict[str, int] | None = None,
    message_id: str = "msg_fake",
) -> dict[str, Any]:
    """A Messages API response body with the given content blocks."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 100,
            "output_tokens": 50,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            **(usage or {}),
        },
    }


def error_body(status: int, message: str | None = None, kind: str | None = None) -> dict[str, Any]:
    """A Messages API error body."""
    kind = kind or _ERROR_TYPES.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message or f"fake {kind}"}}


def sse_events(message: dict[str, Any]) -> bytes:
    """A Messages API response as the event stream a ``"stream": true`` request receives."""
    usage = message.get("usage") or {}
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(message.get("content") or []):
        if block.get("type") == "tool_use":
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block.get("input"))}
        else:
            opening = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block.get("text", "")}
        events += [
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opening},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message.get("stop_reason"), "stop_sequence": None},
                "usage": {"output_tokens": usage.get("output_tokens", 0)},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


class FakeAnthropic:
    """A queue of scripted Messages API answers plus a record of the requests received."""

    def __init__(self) -> None:
        self.responses: deque[Responder] = deque()
        self.requests: list[Recorded] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    # --- scripting --------------------------------------------------------------------------

    def push(self, response: Responder) -> FakeAnthropic:
        """Queue any scripted answer (or a callable making one from the request)."""
        self.responses.append(response)
        return self

    def reply(
        self,
        content: list[dict[str, Any]],
        *,
        stop_reason: str = "end_turn",
        usage: dict[str, int] | None = None,
        model: str = DEFAULT_MODEL,
        delay: float = 0.0,
    ) -> FakeAnthropic:
        """Queue a 200 message with these content blocks."""
        body = message_body(
            content,
            stop_reason=stop_reason,
            model=model,
            usage=usage,
            message_id=f"msg_fake_{next(self._ids)}",
        )
        return self.push(Scripted(200, body, delay=delay))

    def text(self, text: str, **kwargs: Any) -> FakeAnthropic:
        """Queue a plain text answer."""
        return self.reply([{"type": "text", "text": text}], **kwargs)

    def tool_use(
        self, name: str, tool_input: Any, *, text: str | None = None, **kwargs: Any
    ) -> FakeAnthropic:
        """Queue a tool_use answer (stop_reason ``tool_use``), optionally after some text."""
        blocks: list[dict[str, Any]] = []
        if text is not None:
            blocks.append({"type": "text", "text": text})
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_fake_{next(self._ids)}",
                "name": name,
                "input": tool_input,
            }
        )
        kwargs.setdefault("stop_reason", "tool_use")
        return self.reply(blocks, **kwargs)

    def structured_output(self, answer: Any, **kwargs: Any) -> FakeAnthropic:
        """Queue an answer of Claude Code's ``StructuredOutput`` tool (``--json-schema``)."""
        return self.tool_use("StructuredOutput", answer, **kwargs)

    def raw(self, body: bytes, status: int = 200) -> FakeAnthropic:
        """Queue a response whose body is these bytes (truncated or empty JSON, HTML...)."""
        return self.push(Scripted(status, raw=body, headers={"x-should-retry": "false"}))

    def error(
        self,
        status: int,
        message: str | None = None,
        *,
        kind: str | None = None,
        retry: bool = False,
        headers: dict[str, str] | None = None,
    ) -> FakeAnthropic:
        """Queue an HTTP error answer (401, 429, 529, 500, ...)."""
        all_headers = {"x-should-retry": "true" if retry else "false", **(headers or {})}
        return self.push(Scripted(status, error_body(status, message, kind), all_headers))

    def timeout(self, *, delay: float = 0.0) -> FakeAnthropic:
        """Queue a read timeout (transport mode), or in server mode an answer after ``delay``.

        In server mode the client's own timeout must be shorter than ``delay`` to time out.
        """
        if delay:
            return self.push(Scripted(200, message_body([]), delay=delay))
        return self.push(Scripted(timeout=True))

    # --- inspection --------------------------------------------------------------------------

    @property
    def last(self) -> Recorded:
        """The most recent request."""
        if not self.requests:
            raise AssertionError("the fake Anthropic API received no request")
        return self.requests[-1]

    def assert_all_used(self) -> None:
        """Fail when scripted answers were never asked for."""
        if self.responses:
            raise AssertionError(f"{len(self.responses)} scripted answer(s) were never used")

    # --- answering ---------------------------------------------------------------------------

    def answer(self, recorded: Recorded) -> Scripted:
        """Record a request and pop the answer for it."""
        with self._lock:
            self.requests.append(recorded)
            responder = self.responses.popleft() if self.responses else None
        if responder is None:
            return Scripted(
                400,
                error_body(
                    400,
                    f"fake anthropic: no scripted response left for "
                    f"{recorded.method} {recorded.path}",
                ),
                {"x-should-retry": "false"},
            )
        scripted = responder(recorded) if callable(responder) else responder
        if scripted.delay:
            time.sleep(scripted.delay)
        return scripted

    def _handle(self, request: httpx2.Request) -> httpx2.Response:
        recorded = Recorded(
            request.method,
            request.url.path,
            {k.lower(): v for k, v in request.headers.items()},
            request.content,
        )
        scripted = self.answer(recorded)
        if scripted.timeout:
            raise httpx2.ReadTimeout("fake anthropic: read timed out", request=request)
        if scripted.raw is not None:
            headers = {"request-id": "req_fake", "content-type": "application/json"}
            return httpx2.Response(
                scripted.status, content=scripted.raw, headers={**headers, **scripted.headers}
            )
        return httpx2.Response(
            scripted.status,
            json=scripted.body,
            headers={"request-id": "req_fake", **scripted.headers},
        )

    @property
    def transport(self) -> httpx2.MockTransport:
        """An httpx2 transport answering from the queue."""
        return httpx2.MockTransport(self._handle)

    def client(self, *, max_retries: int = 0, **kwargs: Any) -> anthropic.Anthropic:
        """A real ``anthropic.Anthropic`` client wired to this fake (no retries by default)."""
        kwargs.setdefault("api_key", TEST_KEY)
        return anthropic.Anthropic(
            http_client=httpx2.Client(transport=self.transport),
            base_url="https://api.anthropic.test",
            max_retries=max_retries,
            **kwargs,
        )

    @contextlib.contextmanager
    def serve(self) -> Iterator[str]:
        """Serve the same queue over HTTP on 127.0.0.1; yields the base URL."""
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                recorded = Recorded(
                    self.command,
                    self.path.split("?")[0],
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                )
                scripted = fake.answer(recorded)
                if scripted.timeout:
                    # No answer at all: the client's read timeout fires. Hold long enough.
                    time.sleep(5)
                    return
                payload = (
                    scripted.raw if scripted.raw is not None else json.dumps(scripted.body).encode()
                )
                headers = {
                    "content-type": "application/json",
                    "request-id": "req_fake",
                    **scripted.headers,
                }
                asked = recorded.json if recorded.body.startswith(b"{") else None
                if (
                    isinstance(asked, dict)
                    and asked.get("stream")
                    and scripted.status == 200
                    and scripted.raw is None
                    and isinstance(scripted.body, dict)
                    and scripted.body.get("type") == "message"
                ):
                    payload = sse_events(scripted.body)
                    headers["content-type"] = "text/event-stream"
                try:
                    self.send_response(scripted.status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first (its timeout): what a slow answer tests

            do_POST = do_GET = _any  # noqa: N815

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # keep test output clean

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)
