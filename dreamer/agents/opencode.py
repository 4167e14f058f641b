"""Read an OpenCode session's messages as complete user/assistant exchanges, from a cursor.

The format
----------
OpenCode keeps its sessions in its own database; dreamer reads none of it. dreamer's OpenCode
plugin (:mod:`dreamer.agents.opencode_settings`) asks OpenCode's SDK client for a session's
messages when the session goes idle (the ``session.idle`` event, once a turn is over) and
hands them to ``dream hook session-idle`` on stdin; a subagent's session (one with a
``parentID``) it leaves out, since its prompts are the main agent's. They are the SDK's
``{info, parts}`` objects, as OpenCode 1.18.33 returns them (tests/opencode_messages.json
holds such a list, unchanged but for the tool output the plugin leaves out):

- ``info``: ``id``, ``sessionID``, ``role`` (``user`` or ``assistant``), ``time.created``
  (milliseconds); an assistant message also ``parentID`` (the user message it answers),
  ``time.completed``, ``finish`` (``stop``, ``tool-calls``, ...), ``error``, ``path.cwd``, and
  ``summary`` for a compaction's summary.
- ``parts``: ``text`` (``synthetic`` when OpenCode wrote it, ``ignored`` when kept out of the
  model's context), ``tool`` (``tool``, ``state.status``, ``state.input``, ``state.output``
  or ``state.error``, of which the plugin hands over the head), ``reasoning``, ``file``,
  ``step-start``, ``step-finish``, ``patch``, ``snapshot``, ``compaction`` and more.

What the reader does
--------------------
An :class:`~dreamer.agents.claude_code.Exchange` is a user message with text the person typed
(synthetic and ignored parts left out) and what the assistant said in the messages that answer
it: each text part in order, each tool call as one ``[tool: name "arg"]`` line, with what the
tool returned in ``results`` (and whether it errored) for ingest to keep its outcome and hold
any instruction in it; reasoning, files and steps are dropped, as are a compaction's
summaries. Its ``uuid`` is the user message's id, its time the message's. A turn is complete
once a later prompt exists or its last answer is completed (``time.completed``) with a
``finish`` other than ``tool-calls``; the exchanges are emitted in order up to the first turn
still running.

Cursor: a :class:`~dreamer.agents.claude_code.Cursor` whose ``last_uuid`` and ``last_at`` name
the last exchange emitted; only later ones are emitted again, so a session handed over at every
turn stores each turn once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from dreamer.agents.claude_code import Cursor, Exchange, after, tool_marker

_ARG_KEYS = ("command", "filePath", "path", "pattern", "query", "url", "description")

__all__ = ["Cursor", "Exchange", "read_messages"]


def read_messages(
    messages: Any, cursor: Cursor | None = None, *, cwd: str | None = None
) -> tuple[list[Exchange], Cursor]:
    """The exchanges of a session's messages completed since ``cursor``, and the next cursor."""
    cursor = Cursor() if cursor is None else replace(cursor, skipped=dict(cursor.skipped))
    turns: list[_Turn] = []
    answers: dict[str, list[dict[str, Any]]] = {}
    for message in _ordered(messages):
        info, parts = message["info"], message["parts"]
        if info.get("role") == "user":
            text = _typed(parts)
            if text:  # else OpenCode's own message (a compaction's, a file's)
                turns.append(_Turn(str(info.get("id")), _when(info), text))
        elif info.get("role") == "assistant" and not info.get("summary"):
            answers.setdefault(str(info.get("parentID") or ""), []).append(message)
    exchanges: list[Exchange] = []
    for number, turn in enumerate(turns):
        replies = answers.get(turn.id, [])
        if number == len(turns) - 1 and not _finished(replies):
            break  # still running: it is read again, whole, next time
        exchanges.append(turn.exchange(replies, cwd))
    exchanges = after(exchanges, cursor.last_uuid, cursor.last_at)
    if exchanges:
        cursor.last_uuid, cursor.last_at = exchanges[-1].uuid, exchanges[-1].at.isoformat()
    return exchanges, cursor


@dataclass
class _Turn:
    id: str
    at: datetime
    prompt: str

    def exchange(self, replies: list[dict[str, Any]], cwd: str | None) -> Exchange:
        lines: list[str] = []
        results: list[tuple[str, str, bool]] = []
        session_id = ""
        for reply in replies:
            info = reply["info"]
            session_id = session_id or str(info.get("sessionID") or "")
            path = info.get("path")
            cwd = cwd or (path.get("cwd") if isinstance(path, dict) else None)
            for part in reply["parts"]:
                if part.get("type") == "text" and not part.get("synthetic"):
                    text = str(part.get("text") or "").strip()
                    if text:
                        lines.append(text)
                elif part.get("type") == "tool":
                    line, state = _tool_line(part), _dict(part.get("state"))
                    failed = state.get("status") == "error"
                    said = state.get("error") if failed else state.get("output")
                    lines.append(line)
                    results.append((line, str(said or ""), failed))
        return Exchange(
            session_id=session_id or self.id,
            uuid=self.id,
            at=self.at,
            user=self.prompt,
            assistant="\n".join(lines),
            cwd=cwd,
            results=results,
        )


def _ordered(messages: Any) -> list[dict[str, Any]]:
    """The well-formed messages, oldest first (by creation time, then id)."""
    given = messages if isinstance(messages, list) else []
    kept = [
        m
        for m in given
        if isinstance(m, dict)
        and isinstance(m.get("info"), dict)
        and isinstance(m.get("parts"), list)
    ]
    return sorted(kept, key=lambda m: (_when(m["info"]), str(m["info"].get("id"))))


def _typed(parts: list[Any]) -> str:
    """The text a person typed in a user message (OpenCode's own additions left out)."""
    texts = [
        str(part.get("text") or "").strip()
        for part in parts
        if isinstance(part, dict)
        and part.get("type") == "text"
        and not part.get("synthetic")
        and not part.get("ignored")
    ]
    return "\n".join(text for text in texts if text)


def _finished(replies: list[dict[str, Any]]) -> bool:
    """Whether the last answer of a turn is complete and asked for no more tool calls."""
    if not replies:
        return False
    info = replies[-1]["info"]
    time = _dict(info.get("time"))
    if info.get("error"):
        return True
    return bool(time.get("completed")) and info.get("finish") != "tool-calls"


def _tool_line(part: dict[str, Any]) -> str:
    """``[tool: name "arg"]`` for a tool call (its most telling argument)."""
    name = str(part.get("tool") or "tool")
    state = _dict(part.get("state"))
    given = state.get("input")
    args: dict[str, Any] = given if isinstance(given, dict) else {}
    key = next((k for k in _ARG_KEYS if isinstance(args.get(k), str) and args[k].strip()), None)
    return tool_marker(name, args[key]) if key else f"[tool: {name}]"


def _when(info: dict[str, Any]) -> datetime:
    time = _dict(info.get("time"))
    created = time.get("created")
    if isinstance(created, int | float):
        return datetime.fromtimestamp(created / 1000, UTC)
    return datetime.fromtimestamp(0, UTC)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
