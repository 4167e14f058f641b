"""A scripted fake of the Gemini API (``generateContent``), served on 127.0.0.1.

What the Gemini CLI calls with ``GOOGLE_GEMINI_BASE_URL`` set and ``gemini-api-key`` auth::

    POST /v1beta/models/<model>:streamGenerateContent?alt=sse   the agent's turns (server-sent
                                                                 events, one chunk per event)
    POST /v1beta/models/<model>:generateContent                  side calls (routing, titles...)
    POST /v1beta/models/<model>:countTokens

    fake = FakeGemini()
    fake.text("Helix, as the team agreed.")       # the next streamed turn says this
    fake.call("read_file", {"file_path": "a.txt"})  # ...or calls a tool (the CLI runs it)
    with fake.serve() as base_url:                 # http://127.0.0.1:PORT
        env["GOOGLE_GEMINI_BASE_URL"] = base_url

Only the streamed turns take answers from the queue (first in, first out); ``fake.turns`` holds
those requests, ``fake.requests`` every request. A side call gets a short JSON text, and
``countTokens`` a count, so the CLI's own bookkeeping never eats a scripted answer. With the
queue empty a turn gets a 400 error, so a test fails instead of hanging.
"""

from __future__ import annotations

from typing import Any

from fake_anthropic import FakeAnthropic, Recorded, Scripted

MODEL = "gemini-2.5-flash"
USAGE = {"promptTokenCount": 1200, "candidatesTokenCount": 30, "totalTokenCount": 1230}


def candidate(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """A generateContent response body with one candidate made of these parts."""
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": USAGE,
        "modelVersion": MODEL,
    }


def events(body: dict[str, Any]) -> bytes:
    """A response as the ``alt=sse`` stream of ``streamGenerateContent`` (one chunk)."""
    import json

    return f"data: {json.dumps(body)}\r\n\r\n".encode()


def request_text(recorded: Recorded) -> str:
    """Every text a generateContent request sends the model: system instruction and turns."""
    payload = recorded.json or {}
    parts = list((payload.get("systemInstruction") or {}).get("parts") or [])
    for content in payload.get("contents") or []:
        parts.extend(content.get("parts") or [])
    return "\n".join(str(part.get("text")) for part in parts if part.get("text"))


class FakeGemini(FakeAnthropic):
    """A queue of scripted Gemini turns plus a record of the requests received."""

    def __init__(self) -> None:
        super().__init__()
        self.turns: list[Recorded] = []

    def text(self, text: str, **_: Any) -> FakeGemini:  # type: ignore[override]
        """Queue a streamed turn answering ``text``."""
        self.responses.append(Scripted(200, candidate([{"text": text}])))
        return self

    def call(self, name: str, args: dict[str, Any]) -> FakeGemini:
        """Queue a streamed turn calling the tool ``name`` with ``args``."""
        part = {"functionCall": {"name": name, "args": args}}
        self.responses.append(Scripted(200, candidate([part])))
        return self

    def answer(self, recorded: Recorded) -> Scripted:
        """A side call's answer, or the next scripted turn, as the path asks."""
        if ":streamGenerateContent" not in recorded.path:
            with self._lock:
                self.requests.append(recorded)
            if ":countTokens" in recorded.path:
                return Scripted(200, {"totalTokens": 100})
            return Scripted(200, candidate([{"text": '{"reasoning": "fake", "model_choice": ""}'}]))
        with self._lock:
            self.turns.append(recorded)
        scripted = super().answer(recorded)
        if scripted.status == 200 and isinstance(scripted.body, dict):
            headers = {"content-type": "text/event-stream", **scripted.headers}
            return Scripted(200, raw=events(scripted.body), headers=headers)
        return scripted
