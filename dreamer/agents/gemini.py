"""Read Gemini CLI chat files incrementally, as complete user/assistant exchanges.

The format
----------
The Gemini CLI records each session to ``~/.gemini/tmp/<project>/chats/session-<start
time>-<first 8 of the session id>.jsonl`` (``$GEMINI_CLI_HOME/.gemini`` when that is set) and
appends to it while the session runs; ``--resume`` appends to the same file. The format is the
CLI's own; every rule below degrades to "skip the line and count it". Its lines, as written by
Gemini CLI 0.61.0 (tests/gemini_chat.jsonl is such a file, unchanged; the reader follows the
CLI's ``loadConversationRecord``):

- a metadata record ``{sessionId, projectHash, startTime, lastUpdated, kind}`` opens the file
  and is written again on each resume; ``kind`` is ``main`` or ``subagent`` (a subagent's file
  sits in ``chats/<parent session id>/``);
- a message record ``{id, timestamp, type, content, ...}``: ``type`` ``user`` (``content`` a
  list of parts: ``text``, or ``functionResponse`` for a tool's result), ``gemini`` (``content``
  a string or parts, ``thoughts``, ``tokens``, ``model``, ``toolCalls`` with ``name``,
  ``args``, ``result``, ``status``), ``info``, ``warning`` or ``error``. A record whose ``id``
  was written before replaces it (the CLI writes a model message, then again with its tool
  calls);
- ``{"$set": {...}}`` updates metadata; ``$set.messages`` replaces the message list (the
  CLI's ``<session_context>`` block at the start, and the whole history on a resume);
- ``{"$rewindTo": id}`` drops that message and every later one.

A SessionStart hook's ``additionalContext`` reaches the prompt as a ``<hook_context>`` span in
front of the person's words (headless runs), or as a user message of its own. Hooks receive
``session_id``, ``transcript_path`` (this file) and ``cwd``; AfterAgent fires once a turn's
final answer is written.

What the reader does
--------------------
An :class:`~dreamer.agents.claude_code.Exchange` is one turn: the person's prompt (a ``user``
message with text, ``<hook_context>`` spans cut out; the ``<session_context>`` block, slash
commands and tool results are not prompts) and what the model said until the next prompt (its
messages' text in order), each tool call as one ``[tool: name "arg"]`` line; what each tool
returned goes to ``results`` (with whether it failed), for ingest to keep its outcome and hold
any instruction in it, never the output itself. Thoughts, token counts and ``$set`` histories
(what a resume replays) are dropped. The exchange's ``uuid`` is the
prompt's ``id``, its time the prompt's, its ``cwd`` the project root the CLI noted beside the
chats folder. A turn is emitted once the next prompt opens, when read ``final``, or at
``until``, a byte offset where a hook saw the turn end (AfterAgent). A subagent's file yields
nothing: its prompts come from the main agent, not the person.

Cursor: as for Claude Code sessions (:func:`~dreamer.agents.claude_code.read_incrementally`).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from dreamer.agents.claude_code import (
    Cursor,
    Exchange,
    Queue,
    head_lines,
    parse_json,
    read_incrementally,
    tool_marker,
    when,
)

_ARG_KEYS = ("command", "file_path", "dir_path", "path", "pattern", "query", "url", "prompt")
_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>\s*", re.DOTALL)
_NOT_PROMPTS = ("<session_context>", "/", "?")
_FAILED = ("error", "cancelled")

__all__ = ["Cursor", "Exchange", "is_chat", "read_chat"]


def is_chat(path: Path) -> bool:
    """Whether a .jsonl file is a Gemini CLI chat (its first line names a session and project)."""
    lines = head_lines(path, 1)
    first = parse_json(lines[0]) if lines else None
    return isinstance(first, dict) and "sessionId" in first and "projectHash" in first


def read_chat(
    path: str | os.PathLike[str],
    cursor: Cursor | None = None,
    *,
    final: bool = False,
    until: int | None = None,
) -> tuple[list[Exchange], Cursor]:
    """Exchanges a Gemini CLI chat completed since ``cursor``, and the cursor to pass next.

    ``until``: the file's size when a hook saw a turn end; the turn open there is complete.
    """
    return read_incrementally(
        path,
        cursor,
        final,
        lambda path, first, mtime: _Reader(path, parse_json(first), mtime, until),
    )


@dataclass
class _Turn:
    start: int
    prompt_id: str
    at: datetime | None
    prompt: str
    replies: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> latest record


class _Reader:
    def __init__(self, path: Path, meta: Any, mtime: datetime, until: int | None) -> None:
        self.mtime = mtime
        self.until = until
        meta = meta if isinstance(meta, dict) else {}
        self.session_id = str(meta.get("sessionId") or path.stem)
        self.subagent = meta.get("kind") == "subagent"
        self.cwd = _project_root(path)
        self.exchanges: list[Exchange] = []
        self.tally: list[tuple[int, str]] = []
        self.turn: _Turn | None = None

    def feed(
        self, data: bytes, base: int, start: int, final: bool, queue: Queue
    ) -> tuple[int, Queue]:
        """See :meth:`~dreamer.agents.claude_code.LineParser.feed` (Gemini queues no prompts)."""
        offset = position = start
        for line in data[start - base :].splitlines(keepends=True):
            begin, position = position, position + len(line)
            if not line.endswith(b"\n"):
                break  # still being written
            record = parse_json(line)
            if not isinstance(record, dict):
                if line.strip():
                    self.tally.append((position, "malformed"))
                continue
            self._record(record, begin, position)
            if self.until is not None and position == self.until:
                self._close()  # a hook saw the turn end here
            if self.turn is None:
                offset = position
        if self.turn is not None:
            if final:
                self._close()
                offset = position
            else:
                offset = self.turn.start
        return offset, []

    def _record(self, record: dict[str, Any], begin: int, end: int) -> None:
        if "$rewindTo" in record:
            self._rewind(str(record["$rewindTo"]), end)
            return
        if "$set" in record or "sessionId" in record:
            return  # metadata, and histories a resume replays
        kind, record_id = record.get("type"), record.get("id")
        if not isinstance(record_id, str):
            self.tally.append((end, "no id"))
            return
        if self.subagent:
            self.tally.append((end, "subagent"))
            return
        if kind == "user":
            prompt = _prompt(record.get("content"))
            if prompt is None:
                self.tally.append((end, "tool result or context"))
                return
            self._close()
            self.turn = _Turn(begin, record_id, when(record.get("timestamp")), prompt)
        elif kind == "gemini" and self.turn is not None:
            self.turn.replies[record_id] = record
        else:
            self.tally.append((end, str(kind)))

    def _rewind(self, message_id: str, end: int) -> None:
        """``$rewindTo``: the person took back a message and what followed it."""
        turn = self.turn
        if turn is None:
            self.tally.append((end, "rewind"))
        elif turn.prompt_id == message_id:
            self.turn = None
            self.tally.append((end, "rewound turn"))
        elif message_id in turn.replies:
            ids = list(turn.replies)
            for dropped in ids[ids.index(message_id) :]:
                del turn.replies[dropped]

    def _close(self) -> None:
        turn, self.turn = self.turn, None
        if turn is None:
            return
        parts: list[str] = []
        results: list[tuple[str, str, bool]] = []
        for reply in turn.replies.values():
            text = _text(reply.get("content"))
            if text:
                parts.append(text)
            for call in reply.get("toolCalls") or []:
                if isinstance(call, dict):
                    line = _tool_line(call)
                    parts.append(line)
                    results.append(
                        (line, _output(call.get("result")), call.get("status") in _FAILED)
                    )
        self.exchanges.append(
            Exchange(
                session_id=self.session_id,
                uuid=turn.prompt_id,
                at=turn.at or self.mtime,
                user=turn.prompt,
                assistant="\n".join(parts),
                cwd=self.cwd,
                results=results,
            )
        )


def _prompt(content: Any) -> str | None:
    """The person's words in a user message, or None for a tool result or harness context."""
    text = _HOOK_CONTEXT.sub("", _text(content)).strip()
    if not text or text.startswith(_NOT_PROMPTS):
        return None
    return text


def _text(content: Any) -> str:
    """The text parts of a message's content (a string, or a list of parts), thoughts left out."""
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    texts = [
        str(part["text"])
        for part in content
        if isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought")
    ]
    return "\n".join(t.strip() for t in texts if t.strip())


def _tool_line(call: dict[str, Any]) -> str:
    """``[tool: name "arg"]`` for a tool call (its most telling argument)."""
    name = str(call.get("name") or "tool")
    given = call.get("args")
    args: dict[str, Any] = given if isinstance(given, dict) else {}
    key = next((k for k in _ARG_KEYS if isinstance(args.get(k), str) and args[k].strip()), None)
    return tool_marker(name, args[key]) if key else f"[tool: {name}]"


def _output(result: Any) -> str:
    """What a tool returned: the ``output`` (or ``error``) of its function responses."""
    texts = []
    for part in result if isinstance(result, list) else []:
        response = part.get("functionResponse") if isinstance(part, dict) else None
        answer = response.get("response") if isinstance(response, dict) else None
        if isinstance(answer, dict):
            value = answer.get("output", answer.get("error"))
            texts.append(value if isinstance(value, str) else json.dumps(value))
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(texts)


def _project_root(path: Path) -> str | None:
    """The project folder the CLI noted for this chat (``<project>/.project_root``)."""
    for folder in (path.parent.parent, path.parent.parent.parent):
        try:
            text = (folder / ".project_root").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            continue
        return text or None
    return None
