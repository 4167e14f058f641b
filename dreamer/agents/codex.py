"""Read Codex CLI rollout files incrementally, as complete user/assistant exchanges.

The format
----------
The Codex CLI writes each session (a "thread") to
``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<session id>.jsonl`` and appends to it
while the session runs (``codex exec resume`` appends to the same file). OpenAI calls the format
internal, so every rule below degrades to "skip the line and count it". Each line is
``{"timestamp", "type", "payload"}`` (0.169.0 adds ``ordinal``); the types this reader uses, as
written by Codex CLI 0.169.0 (tests/codex_rollout.jsonl is such a file, unchanged):

- ``session_meta`` (the first line): ``payload.id`` (the session id), ``cwd``, ``git``
  (``branch`` ...) when the folder is a repository, ``cli_version``, ``base_instructions``.
- ``event_msg`` with ``payload.type``: ``task_started`` (``turn_id``) opens a turn,
  ``task_complete`` (``turn_id``, ``last_agent_message``) and ``turn_aborted`` close it;
  ``item_completed`` carries the turn's items as the app shows them: ``UserMessage`` (what the
  person typed, ``content[].text``), ``AgentMessage``, ``CommandExecution`` (with its output);
  older releases write ``user_message`` (``message``) and ``agent_message`` instead. Also
  ``token_count``, ``thread_settings_applied`` and others, which say nothing.
- ``response_item``: what goes to the model. ``message`` with ``role`` ``developer`` (the
  harness's instructions, and the SessionStart hook's ``additionalContext``), ``user`` (the
  prompt, but also ``<environment_context>`` and AGENTS.md blocks) and ``assistant``
  (``output_text`` parts); ``function_call`` (``name``, ``arguments`` as a JSON string, e.g.
  ``exec_command`` with ``cmd``), ``custom_tool_call`` (``apply_patch``), ``local_shell_call``,
  their ``*_output`` lines, and ``reasoning``.
- ``turn_context``, ``world_state``, ``token_usage_record`` and ``compacted``: bookkeeping.

Hooks receive ``session_id``, ``transcript_path`` (the rollout file), ``cwd`` and, for Stop,
``turn_id``; the Stop hook runs before ``task_complete`` is written.

What the reader does
--------------------
An :class:`~dreamer.agents.claude_code.Exchange` is one turn: the person's prompt (from
``UserMessage`` / ``user_message``; a release that writes neither falls back to the ``user``
messages that are not harness markup) and what the assistant said (its ``assistant`` messages in
order), each tool call as one ``[tool: name "arg"]`` line. Tool output, reasoning, developer
messages (so also dreamer's own memory block) and harness markup are dropped. The exchange's
``uuid`` is the ``turn_id``, its time the prompt's. A turn is emitted once it is closed
(``task_complete``, ``turn_aborted``, or a new ``task_started``); a session read ``final``
also emits its open turn. A turn without a prompt (a compaction, a review) is skipped.

Cursor: as for Claude Code sessions. ``offset`` is the end of the last line consumed with no
turn open, so an open turn is read again whole next time and a half-written line is never read;
a replaced, truncated or rewritten file (inode, size, or the hash of the bytes before
``offset``) is read again from the start, and only exchanges after ``last_uuid`` and later than
``last_at`` are emitted, so none is stored twice.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from dreamer.agents.claude_code import (
    Cursor,
    Exchange,
    Queue,
    UnreadableTranscript,
    head_lines,
    parse_json,
    read_incrementally,
    tool_marker,
    when,
)

_ARG_KEYS = ("cmd", "command", "path", "file_path", "query", "url", "pattern")
_MARKUP = ("<environment_context", "<user_instructions", "# AGENTS.md", "<turn_aborted", "<INSTR")

__all__ = ["Cursor", "Exchange", "UnreadableTranscript", "is_rollout", "read_rollout"]


def is_rollout(path: Path) -> bool:
    """Whether a .jsonl file is a Codex rollout (its first line is a ``session_meta``)."""
    lines = head_lines(path, 1)
    first = parse_json(lines[0]) if lines else None
    return (
        isinstance(first, dict)
        and first.get("type") == "session_meta"
        and isinstance(first.get("payload"), dict)
    )


def read_rollout(
    path: str | os.PathLike[str], cursor: Cursor | None = None, *, final: bool = False
) -> tuple[list[Exchange], Cursor]:
    """Exchanges a Codex rollout completed since ``cursor``, and the cursor to pass next time."""
    return read_incrementally(
        path, cursor, final, lambda path, first, mtime: _Reader(path, parse_json(first), mtime)
    )


@dataclass
class _Turn:
    start: int
    turn_id: str
    at: datetime | None = None
    prompts: list[str] = field(default_factory=list)
    fallback: list[str] = field(default_factory=list)  # user messages, when no prompt event
    parts: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    calls: dict[str, str] = field(default_factory=dict)  # call_id: its [tool: …] line
    results: list[tuple[str, str, bool]] = field(default_factory=list)


class _Reader:
    def __init__(self, path: Path, meta: Any, mtime: datetime) -> None:
        self.mtime = mtime
        payload = meta.get("payload") if isinstance(meta, dict) else None
        payload = payload if isinstance(payload, dict) else {}
        self.session_id = str(payload.get("id") or payload.get("session_id") or path.stem)
        self.cwd = _text(payload.get("cwd"))
        git = payload.get("git")
        self.branch = _text(git.get("branch")) if isinstance(git, dict) else None
        self.exchanges: list[Exchange] = []
        self.tally: list[tuple[int, str]] = []
        self.turn: _Turn | None = None

    def feed(
        self, data: bytes, base: int, start: int, final: bool, queue: Queue
    ) -> tuple[int, Queue]:
        """See :meth:`~dreamer.agents.claude_code.LineParser.feed` (Codex queues no prompts)."""
        offset = position = start
        for line in data[start - base :].splitlines(keepends=True):
            begin, position = position, position + len(line)
            if not line.endswith(b"\n"):
                break  # still being written
            entry = parse_json(line)
            if not isinstance(entry, dict):
                if line.strip():
                    self.tally.append((position, "malformed"))
                continue
            self._line(entry, begin, position)
            if self.turn is None:
                offset = position
        if self.turn is not None:
            if final:
                self._close()
                offset = position
            else:
                offset = self.turn.start
        return offset, []

    def _line(self, entry: dict[str, Any], begin: int, end: int) -> None:
        kind, payload = entry.get("type"), entry.get("payload")
        if not isinstance(payload, dict):
            return
        what = payload.get("type")
        at = when(entry.get("timestamp"))
        if kind == "event_msg" and what == "task_started":
            self._close()
            turn_id = str(payload.get("turn_id") or f"{self.session_id}@{begin}")
            self.turn = _Turn(begin, turn_id, at)
            return
        if kind == "event_msg" and what in ("task_complete", "turn_aborted"):
            self._close()
            return
        turn = self.turn
        if turn is None:
            if kind == "response_item":
                self.tally.append((end, "outside a turn"))
            return
        if kind == "event_msg" and what in ("user_message", "item_completed"):
            self._prompt(turn, payload, at)
        elif kind == "response_item":
            self._item(turn, payload, end)

    def _prompt(self, turn: _Turn, payload: dict[str, Any], at: datetime | None) -> None:
        if payload.get("type") == "user_message":
            text = _text(payload.get("message"))
        else:
            item = payload.get("item")
            if not isinstance(item, dict) or item.get("type") != "UserMessage":
                return
            text = "\n".join(
                str(c.get("text"))
                for c in item.get("content") or []
                if isinstance(c, dict) and c.get("type") == "text" and c.get("text")
            ).strip()
        if text:
            turn.prompts.append(text)
            turn.at = turn.at or at

    def _item(self, turn: _Turn, payload: dict[str, Any], end: int) -> None:
        what = payload.get("type")
        item_id = str(payload.get("id") or payload.get("call_id") or "")
        if item_id and item_id in turn.seen:
            return
        turn.seen.add(item_id)
        if what == "message":
            role = payload.get("role")
            texts = [
                str(c.get("text")).strip()
                for c in payload.get("content") or []
                if isinstance(c, dict) and c.get("text")
            ]
            text = "\n".join(t for t in texts if t)
            if role == "assistant" and text:
                turn.parts.append(text)
            elif role == "user" and text and not text.lstrip().startswith(_MARKUP):
                turn.fallback.append(text)
            elif text:
                self.tally.append((end, f"{role} message"))
        elif what in ("function_call", "custom_tool_call", "local_shell_call"):
            line = _tool_line(payload)
            turn.parts.append(line)
            turn.calls[str(payload.get("call_id") or item_id)] = line
        elif what in ("function_call_output", "custom_tool_call_output"):
            call = turn.calls.get(str(payload.get("call_id")), "[tool]")
            turn.results.append((call, *_output(payload.get("output"))))
            self.tally.append((end, str(what)))  # kept only as an outcome (ingest)
        else:
            self.tally.append((end, str(what)))  # tool output, reasoning: dropped on purpose

    def _close(self) -> None:
        turn, self.turn = self.turn, None
        if turn is None:
            return
        prompts = turn.prompts or turn.fallback
        if not prompts:
            self.tally.append((turn.start, "turn without a prompt"))
            return
        self.exchanges.append(
            Exchange(
                session_id=self.session_id,
                uuid=turn.turn_id,
                at=turn.at or self.mtime,
                user="\n".join(dict.fromkeys(prompts)),
                assistant="\n".join(turn.parts),
                cwd=self.cwd,
                git_branch=self.branch,
                results=turn.results,
            )
        )


def _tool_line(payload: dict[str, Any]) -> str:
    """``[tool: name "arg"]``: a tool call as one line (its most telling argument, cut)."""
    name = str(payload.get("name") or payload.get("type") or "tool")
    value: Any = None
    if payload.get("type") == "local_shell_call":
        action = payload.get("action")
        value = action.get("command") if isinstance(action, dict) else None
    elif payload.get("type") == "function_call":
        arguments = parse_json(str(payload.get("arguments") or "").encode())
        if isinstance(arguments, dict):
            key = next((k for k in _ARG_KEYS if arguments.get(k)), None)
            value = arguments.get(key) if key else None
    if isinstance(value, list):
        value = " ".join(str(part) for part in value)
    if not isinstance(value, str) or not value.strip():
        return f"[tool: {name}]"
    return tool_marker(name, value)


def _output(value: Any) -> tuple[str, bool]:
    """A tool output's text and whether it failed (a non-zero exit code, when given)."""
    data = parse_json(value.encode()) if isinstance(value, str) else value
    if isinstance(data, dict) and isinstance(data.get("output"), str):
        meta = data.get("metadata")
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return data["output"], isinstance(code, int) and code != 0
    if isinstance(value, str):
        return value, False
    return "", False


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None
