"""Read Claude Code session transcripts incrementally, as complete user/assistant exchanges.

The format
----------
Anthropic documents where sessions live and that the record format is internal and changes
between releases, so every rule below degrades to "skip the line and count it", never to an
exception. The facts this reader relies on, and where they were found:

- Layout: ``~/.claude/projects/<cwd, non-alphanumerics as "-">/<session-id>.jsonl`` is one
  session. ``<session-id>/subagents/agent-<id>.jsonl`` is one subagent run (Claude Code 2.1.2+;
  before that ``agent-<id>.jsonl`` sat beside the sessions), with ``agent-<id>.meta.json``
  holding ``agentType`` and ``description``; ``agent-acompact-<id>.jsonl`` there is the run
  that wrote a compaction summary. ``<session-id>/tool-results/<tool-use-id>.txt`` holds a tool
  output too large for the transcript, which keeps a ``<persisted-output>`` preview of it.
  ``sessions-index.json`` is ``{"version", "entries": [{sessionId, fullPath, firstPrompt,
  messageCount, created, modified, gitBranch, projectPath, isSidechain, ...}]}`` for
  ``--resume``. Sources: skillsynchq/txcript ``docs/formats/claude-code.md`` (citing
  code.claude.com/docs/en/sessions); daaain/claude-code-log#80; ikuwow/dotfiles#303;
  daintreehq/daintree#11949; anthropics/claude-code#23948;
  stefanspycher/claude-historian ``references/session-discovery.md``; real Claude Code 2.1.39
  files in marot/spotter ``test/fixtures/transcripts``.
- Lines: one JSON object per line, appended while the session runs. ``type`` is ``user``,
  ``assistant``, ``system`` (``subtype`` ``turn_duration``, ``stop_hook_summary``,
  ``compact_boundary``, ``local_command``, ``away_summary`` ...), ``summary``,
  ``file-history-snapshot``, ``queue-operation``, ``progress``, ``attachment``, and new
  bookkeeping types most releases. user/assistant lines carry ``uuid``, ``parentUuid``,
  ``sessionId``, ``timestamp``, ``cwd``, ``gitBranch``, ``version``, ``isSidechain`` (plus
  ``agentId`` in subagent files) around an Anthropic Messages ``message`` whose ``content`` is a
  string or blocks: ``text``, ``thinking``, ``tool_use``, ``tool_result``, ``image``. Sources:
  as above, and jeremedia/claude-code-log-format ``CLAUDE_CODE_LOG_FORMAT.md``.
- An assistant reply is written one content block per line, the lines sharing ``message.id``.
  ``stop_reason`` is null on every line from 1.0.10 to at least 2.1.39 (anthropics/claude-code
  #1546 and #20222; the 2.1.39 files), but ``end_turn`` on the final line of a 2.1.220 excerpt,
  which is followed by ``attachment``, ``stop_hook_summary`` and ``turn_duration`` lines;
  ``turn_duration`` is written only after some turns (the long ones in the 2.1.39 files).
- Harness lines that are not the person speaking: tool output (``user`` lines of
  ``tool_result`` blocks with a ``toolUseResult`` copy); ``isMeta`` lines (caveats, command and
  skill expansions); ``isCompactSummary`` (with ``isVisibleInTranscriptOnly``: "This session is
  being continued ...", which may arrive mid-turn after an auto-compaction); slash commands as
  ``<command-name>``, ``<command-message>``, ``<command-args>`` with ``<local-command-stdout>``,
  ``-stderr``, ``-caveat`` (moved to ``system``/``local_command`` lines in newer versions);
  ``<bash-input>``/``<bash-stdout>`` for ``!`` commands; ``<task-notification>`` when a
  background task ends; ``<system-reminder>`` spans inside text; ``[Request interrupted by
  user]`` and ``[Request interrupted by user for tool use]``; and a failed API call, written as
  a synthetic assistant line (``isApiErrorMessage``, model ``<synthetic>``, ``error``,
  ``apiErrorStatus``) that ends the turn. Sources: the 2.1.39 files, txcript, and the fixtures
  of several public transcript parsers.
- Hooks receive ``session_id``, ``transcript_path`` and ``cwd`` on stdin (code.claude.com/docs
  /en/hooks), so a hook may read a file that is still being written.

What the reader does
--------------------
An :class:`Exchange` is a person's prompt and what the assistant did about it: every text block
of the turn in order (narration and answer), each tool call as one ``[tool: Name "arg"]`` line;
thinking, tool output, harness lines and ``<system-reminder>`` spans are dropped. A prompt that
got no answer (an API error, an interrupt before any output) is kept with an empty answer: what
the person said is worth remembering. A slash command opens a turn of its own; it becomes an
exchange (``/name args``, no markup) only when the model answered it, so ``/model`` or
``/clear`` leave nothing. Turns opened by a task notification are the harness talking and are
not emitted. Compaction summaries neither open nor close a turn.

Completeness: an exchange is emitted only once its turn is over, which is when a later line
(1) opens the next turn (a prompt, a slash or ``!`` command, a task notification), (2) is an
interrupt marker or an API error, (3) is a ``system`` ``turn_duration``, or (4) follows an
assistant line whose ``stop_reason`` is ``end_turn``, ``stop_sequence``, ``max_tokens`` or
``refusal`` and is not another block of that same message. (4) waits for one more line so a
reply written block by block is never cut. ``stop_hook_summary`` is not an end: a blocking Stop
hook makes the model go on. Output after an exchange closed and before the next prompt (such a
Stop hook's continuation) is counted as ``orphaned``. A session that is over (SessionEnd, a bulk
import of old files, every subagent file once its run returned) is read with ``final=True``,
which also emits the last, open exchange.

Cursor: ``offset`` is the end of the last fully consumed line. A line is consumed when it
ends with a newline and nothing still open depends on it, so an open exchange is read again,
whole, next time, and a partly written last line is never read as garbage. Truncation or
replacement: the file is read from the start again when its inode changed, it is shorter than
``offset``, or the bytes just before ``offset`` no longer hash to ``mark``; the exchanges up to
and including ``last_uuid`` are then skipped. Whatever happened, a read emits only exchanges
later than ``last_at`` (prompt times only grow within a session file), so a file that was
truncated, replaced or rewritten never repeats an exchange, even when ``last_uuid`` is gone.

Subagents: a subagent file's exchanges carry ``subagent`` (its ``agentType``, else its agent id)
and ``subagent_task`` (its ``description``). Their prompts come from the main agent, so
``text()`` labels them ``Task for subagent X`` / ``Subagent X`` instead of ``User`` /
``Assistant``. Compaction runs (``agent-acompact-*``) yield nothing; sidechain lines inside a
main session file are skipped because their own file carries them.

Prompts typed while the model works are queued and reach it mid-turn; the transcript has no
user line for them. 2.1.39 logs ``queue-operation`` ``enqueue`` (with ``content``) and, when the
prompt is handed to the model, ``remove``; later versions write an ``attachment`` of type
``queued_command`` with ``prompt`` (seen in a public hook test, not in a real file). Such a
prompt ends the turn it interrupts and opens an exchange of its own (uuid derived from the
session and the enqueue time), since what follows answers it. Which ``remove`` hands over which
``enqueue`` is inferred (the latest typed prompt), not documented; queued task notifications are
ignored. Prompts still queued at the cursor's offset are kept in ``Cursor.queue``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid as uuidlib
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, Protocol

TERMINAL_STOPS = frozenset({"end_turn", "stop_sequence", "max_tokens", "refusal"})
MARK_BYTES = 512
TOOL_ARG_CHARS = 80
_TOOL_ARGS = {
    "Bash": "command",
    "Read": "file_path",
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
    "Glob": "pattern",
    "Grep": "pattern",
    "WebFetch": "url",
    "WebSearch": "query",
    "Task": "description",
    "Agent": "description",
    "Skill": "skill",
    "SlashCommand": "command",
}
_PATH_ARGS = {"file_path", "notebook_path", "path"}
_OUTPUT_TAGS = (
    "local-command-stdout|local-command-stderr|local-command-caveat|bash-stdout|bash-stderr"
)
_OUTPUT = re.compile(rf"<({_OUTPUT_TAGS})>.*?</\1>", re.DOTALL)
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_COMMAND = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.DOTALL)
_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
_BASH = re.compile(r"<bash-input>(.*?)</bash-input>", re.DOTALL)
_INTERRUPT = "[Request interrupted by user"


class UnreadableTranscript(Exception):
    """A transcript file or project folder cannot be opened or read."""


@dataclass
class Exchange:
    """A prompt and the assistant's answer to it, with where and when it happened."""

    session_id: str
    uuid: str
    at: datetime
    user: str
    assistant: str
    cwd: str | None = None
    git_branch: str | None = None
    subagent: str | None = None
    subagent_task: str | None = None
    # What the turn's tools returned: (the call as ``[tool: Name "arg"]``, its output, whether
    # the tool reported an error). Not stored as such: ingest keeps an outcome and holds any
    # instruction in it (dreamer.agents.harness, dreamer.memory.provenance).
    results: list[tuple[str, str, bool]] = field(default_factory=list)

    def text(self) -> str:
        """The exchange as ``User: …`` / ``Assistant: …`` lines (a subagent's as its task)."""
        if self.subagent:
            asked, answered = f"Task for subagent {self.subagent}", f"Subagent {self.subagent}"
        else:
            asked, answered = "User", "Assistant"
        lines = [f"{asked}: {self.user}"]
        if self.assistant:
            lines.append(f"{answered}: {self.assistant}")
        return "\n".join(lines)


@dataclass
class Cursor:
    """How far a session file has been read, and what was skipped on the way."""

    offset: int = 0
    last_uuid: str | None = None
    last_at: str | None = None
    inode: int | None = None
    mark: str | None = None
    malformed: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    restarts: int = 0
    queue: list[list[str]] = field(default_factory=list)  # [prompt, enqueue time] still queued

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Cursor:
        """Rebuild a cursor saved by :meth:`to_dict`; unknown keys are ignored."""
        known = {f.name for f in fields(cls)}
        cursor = cls(**{key: value for key, value in data.items() if key in known})
        cursor.skipped = {str(k): int(v) for k, v in dict(cursor.skipped).items()}
        cursor.queue = [[str(text), str(stamp)] for text, stamp in cursor.queue]
        return cursor


LINE_TYPES = frozenset(
    {
        "user",
        "assistant",
        "summary",
        "system",
        "file-history-snapshot",
        "queue-operation",
        "progress",
        "attachment",
    }
)  # the types of a session's lines


def head_lines(path: Path, count: int) -> list[bytes] | None:
    """The first ``count`` lines of a .jsonl file; None for another file or one not readable."""
    if path.suffix.lower() != ".jsonl":
        return None
    try:
        with path.open("rb") as handle:
            return [handle.readline() for _ in range(count)]
    except OSError:
        return None


def is_session(path: Path) -> bool:
    """Whether a .jsonl file is a Claude Code session (its lines carry sessionId and a type)."""
    for line in head_lines(path, 20) or []:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("type") in LINE_TYPES and "sessionId" in entry:
            return True
    return False


def project_sessions(folder: str | os.PathLike[str]) -> list[Path]:
    """Session and subagent transcripts of a project folder, without indexes, metas and dumps."""
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise UnreadableTranscript(f"{root}: not a folder; pass ~/.claude/projects/<project>")
    try:
        found = [p for p in root.glob("*.jsonl") if p.is_file()]
        for session in (p for p in root.iterdir() if p.is_dir()):
            found.extend(p for p in (session / "subagents").rglob("agent-*.jsonl") if p.is_file())
    except OSError as e:
        raise UnreadableTranscript(f"{root}: cannot list it ({e}); check its permissions") from e
    return sorted((p for p in found if not _is_compaction(p)), key=str)


Queue = list[tuple[str, str]]  # (typed prompt, enqueue time) not yet handed over


class LineParser(Protocol):
    """One transcript format: turns a file's lines into exchanges (Claude Code's, Codex's)."""

    exchanges: list[Exchange]
    tally: list[tuple[int, str]]  # (line end, why the line was skipped or "malformed")

    def feed(
        self, data: bytes, base: int, start: int, final: bool, queue: Queue
    ) -> tuple[int, Queue]:
        """Read ``data`` (file bytes from ``base``) from ``start``, with ``queue`` still queued
        there: the offset consumed (the end of the last line read with no turn open), and the
        prompts still queued at that offset."""
        ...


def read_incrementally(
    path: str | os.PathLike[str],
    cursor: Cursor | None,
    final: bool,
    parser: Callable[[Path, bytes, datetime], LineParser],
) -> tuple[list[Exchange], Cursor]:
    """Exchanges a transcript completed since ``cursor``, and the cursor to pass next time.

    ``parser`` makes the format's parser from the path, the file's first line and its time.
    A replaced, truncated or rewritten file (see :func:`moved`) is read again from the start;
    only exchanges after the cursor's last one are returned, so none is stored twice.
    """
    path = Path(path)
    cursor = Cursor() if cursor is None else replace(cursor, skipped=dict(cursor.skipped))
    try:
        with path.open("rb") as fh:
            stat = os.fstat(fh.fileno())
            restart = cursor.offset > 0 and moved(cursor, stat.st_ino, stat.st_size, fh)
            start = 0 if restart else cursor.offset
            fh.seek(0)
            first = fh.readline()
            base = max(0, start - MARK_BYTES)
            fh.seek(base)
            data = fh.read()
    except OSError as e:
        raise UnreadableTranscript(
            f"{path}: cannot read it ({e.strerror or e}); check the path and its permissions"
        ) from e
    if restart:
        cursor.malformed, cursor.skipped, cursor.restarts = 0, {}, cursor.restarts + 1
        cursor.queue = []
    reader = parser(path, first, datetime.fromtimestamp(stat.st_mtime, UTC))
    queued = [(text, stamp) for text, stamp in cursor.queue]
    offset, queue = reader.feed(data, base, start, final, queued)
    exchanges = after(reader.exchanges, cursor.last_uuid, cursor.last_at)
    for end, reason in reader.tally:
        if end <= offset:
            if reason == "malformed":
                cursor.malformed += 1
            else:
                cursor.skipped[reason] = cursor.skipped.get(reason, 0) + 1
    if exchanges:
        cursor.last_uuid, cursor.last_at = exchanges[-1].uuid, exchanges[-1].at.isoformat()
    cursor.offset, cursor.inode = offset, stat.st_ino or None
    cursor.queue = [[text, stamp] for text, stamp in queue]
    cursor.mark = digest(data[max(0, offset - MARK_BYTES) - base : offset - base])
    return exchanges, cursor


def read_session(
    path: str | os.PathLike[str], cursor: Cursor | None = None, *, final: bool = False
) -> tuple[list[Exchange], Cursor]:
    """Exchanges a Claude Code session completed since ``cursor``, and the cursor to pass next."""
    return read_incrementally(path, cursor, final, lambda path, _first, mtime: _Reader(path, mtime))


# --- reading ------------------------------------------------------------------------------


@dataclass
class _Turn:
    start: int  # byte offset of the line that opened the turn
    entry: dict[str, Any]
    user: str
    emit: bool  # False for turns the harness opened (task notifications)
    command: bool = False  # opened by a slash command: emitted only when answered
    parts: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    lines: list[int] = field(default_factory=list)  # ends of its assistant lines
    stopped: str | None = None  # message.id of a line with a terminal stop reason
    queue: list[tuple[str, str]] = field(default_factory=list)  # queued prompts at its start
    calls: dict[str, str] = field(default_factory=dict)  # tool_use id: its [tool: …] line
    results: list[tuple[str, str, bool]] = field(default_factory=list)


class _Reader:
    """Turns the lines of one file into exchanges and a list of (line end, skip reason)."""

    def __init__(self, path: Path, mtime: datetime) -> None:
        self.path = path
        self.mtime = mtime
        self.subagent_file = path.parent.name == "subagents" or path.stem.startswith("agent-")
        self.compaction = _is_compaction(path)
        self.agent_type, self.task = _meta(path) if self.subagent_file else (None, None)
        self.exchanges: list[Exchange] = []
        self.tally: list[tuple[int, str]] = []
        self.turn: _Turn | None = None
        self.queue: Queue = []

    def feed(
        self, data: bytes, base: int, start: int, final: bool, queue: Queue
    ) -> tuple[int, Queue]:
        """See :meth:`LineParser.feed`."""
        self.queue = list(queue)
        consumed = position = start
        while position - base < len(data):
            newline = data.find(b"\n", position - base)
            if newline < 0:
                tail = data[position - base :]
                if final and tail.strip() and isinstance(parse_json(tail), dict):
                    self.line(position, base + len(data), tail)
                    consumed = base + len(data)
                break
            end = base + newline + 1
            self.line(position, end, data[position - base : newline])
            consumed = position = end
        queue = self.queue
        if self.turn is not None:
            if final:
                self.close()
            else:
                consumed, queue = self.turn.start, self.turn.queue
        return consumed, queue

    def line(self, start: int, end: int, raw: bytes) -> None:
        """Classify one line and act on it."""
        if not raw.strip():
            return
        entry = parse_json(raw)
        if not isinstance(entry, dict):
            self.tally.append((end, "malformed"))
            return
        if self.compaction:
            self.tally.append((end, "compaction"))
            return
        before = list(self.queue)
        if (queued := self.queued(entry)) is not None:
            self.close()
            self.turn = _Turn(start, queued[0], queued[1], emit=True, queue=before)
            return
        if self.turn and entry.get("type") in ("user", "assistant"):
            for key in ("cwd", "gitBranch", "agentId"):  # a queued prompt's line has none
                self.turn.entry.setdefault(key, entry.get(key))
        kind, value = self.classify(entry)
        turn = self.turn
        if (
            turn
            and turn.stopped
            and not (kind == "assistant" and _message_id(entry) == turn.stopped)
        ):
            self.close()
        if kind in ("prompt", "command", "notification"):
            self.close()
            emit = kind != "notification" and bool(value)
            command = kind == "command"
            self.turn = _Turn(start, entry, value, emit=emit, command=command, queue=before)
            if kind != "prompt":
                self.tally.append((end, kind))
            self.queue = [q for q in self.queue if q[0] != value]  # it arrived as a line after all
        elif kind == "end":
            self.close()
            self.tally.append((end, value))
        elif kind == "assistant":
            self.answer(entry, end)
        elif kind == "malformed":
            self.tally.append((end, "malformed"))
        else:
            if value == "tool_result" and self.turn is not None:
                self.tool_results(entry["message"]["content"])
            self.tally.append((end, value))

    def tool_results(self, content: list[Any]) -> None:
        """Keep what the open turn's tools returned, paired with their calls."""
        assert self.turn is not None
        for block in content:
            if _block(block) != "tool_result":
                continue
            call = self.turn.calls.get(str(block.get("tool_use_id")), "[tool]")
            output = _result_text(block.get("content"))
            self.turn.results.append((call, output, bool(block.get("is_error"))))

    def queued(self, entry: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
        """(an entry to date it by, text) when ``entry`` hands a queued prompt to the model."""
        text, stamp = None, entry.get("timestamp")
        if entry.get("type") == "queue-operation":
            operation, content = entry.get("operation"), entry.get("content")
            if operation == "enqueue" and isinstance(content, str):
                if (typed := _REMINDER.sub("", content).strip()) and not typed.startswith("<"):
                    self.queue.append((typed, str(stamp)))
            elif operation == "dequeue" and self.queue:
                self.queue.pop(0)  # it becomes the next turn's prompt line
            elif operation == "remove" and self.queue:
                text, stamp = self.queue.pop()
        elif entry.get("type") == "attachment" and isinstance(entry.get("attachment"), dict):
            attachment = entry["attachment"]
            prompt = attachment.get("prompt")
            if attachment.get("type") == "queued_command" and isinstance(prompt, str):
                if attachment.get("commandMode") in (None, "prompt"):
                    typed = _REMINDER.sub("", prompt).strip()
                    text = typed if typed and not typed.startswith("<") else None
        if text is None:
            return None
        session = _text(entry.get("sessionId"))
        key = f"{session}/queued/{stamp}/{text}"
        made = {
            "uuid": _text(entry.get("uuid")) or str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, key)),
            "sessionId": session,
            "timestamp": stamp,
        }
        return made, text

    def classify(self, entry: dict[str, Any]) -> tuple[str, str]:
        """(kind, detail): prompt/command/notification + text, end/skip + reason, assistant."""
        kind = entry.get("type")
        if kind == "system":
            if entry.get("subtype") == "turn_duration":
                return "end", "system"
            content = entry.get("content")
            if entry.get("subtype") == "local_command" and isinstance(content, str):
                if content.lstrip().startswith("<command-") and (command := _command(content)):
                    return "command", command
            return "skip", "system"
        if kind not in ("user", "assistant"):
            return "skip", str(kind or "untyped")
        message = entry.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("content"), str | list):
            return "malformed", ""
        if entry.get("isSidechain") and not self.subagent_file:
            return "skip", "sidechain"
        if kind == "assistant":
            if entry.get("isApiErrorMessage"):
                return "end", "api_error"
            if entry.get("isMeta") or message.get("model") == "<synthetic>":
                return "skip", "synthetic"
            return "assistant", ""
        if entry.get("isCompactSummary") or entry.get("isVisibleInTranscriptOnly"):
            return "skip", "compact_summary"
        if entry.get("isMeta"):
            return "skip", "meta"
        return _user(message["content"])

    def answer(self, entry: dict[str, Any], end: int) -> None:
        """Add an assistant line's text and tool calls to the open turn."""
        turn = self.turn
        if turn is None:
            self.tally.append((end, "orphaned"))
            return
        message = entry["message"]
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        message_id = _message_id(entry)
        cwd = turn.entry.get("cwd") if isinstance(turn.entry.get("cwd"), str) else None
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if message_id:  # some versions write a block twice (replays after --resume)
                key = digest((message_id + json.dumps(block, sort_keys=True)).encode())
                if key in turn.seen:
                    continue
                turn.seen.add(key)
            if block.get("type") == "text":
                text = _REMINDER.sub("", str(block.get("text") or "")).strip()
                if text:
                    turn.parts.append(text)
            elif block.get("type") in ("tool_use", "server_tool_use"):
                line = _tool_line(block, cwd)
                turn.parts.append(line)
                turn.calls[str(block.get("id"))] = line
            # thinking, redacted_thinking and tool result blocks are left out on purpose
        turn.lines.append(end)
        if message.get("stop_reason") in TERMINAL_STOPS and message_id:
            turn.stopped = message_id
        elif message.get("stop_reason") in TERMINAL_STOPS:
            self.close()

    def close(self) -> None:
        """End the open turn: emit it when it is an exchange, else count its lines."""
        turn, self.turn = self.turn, None
        if turn is None:
            return
        if not turn.emit or (turn.command and not turn.parts):
            self.tally.extend((end, "unprompted") for end in turn.lines)
            return
        entry = turn.entry
        self.exchanges.append(
            Exchange(
                session_id=_text(entry.get("sessionId")) or self.session_fallback(),
                uuid=_text(entry.get("uuid")) or f"{self.path.name}@{turn.start}",
                at=when(entry.get("timestamp")) or self.mtime,
                user=turn.user,
                assistant="\n".join(turn.parts),
                cwd=_text(entry.get("cwd")),
                git_branch=_text(entry.get("gitBranch")),
                subagent=(self.agent_type or _text(entry.get("agentId")) or self.path.stem)
                if self.subagent_file
                else None,
                subagent_task=self.task,
                results=turn.results,
            )
        )

    def session_fallback(self) -> str:
        """The session id a file's place implies, for lines that lack ``sessionId``."""
        if self.path.parent.name == "subagents":
            return self.path.parent.parent.name
        return self.path.stem


def _user(content: str | list[Any]) -> tuple[str, str]:
    """Classify a user line's content: a prompt, a command, a notification, or a skip."""
    if isinstance(content, str):
        texts, tool_result, images = [content], False, 0
    else:
        texts = [str(b.get("text") or "") for b in content if _block(b) == "text"]
        texts += [b for b in content if isinstance(b, str)]
        tool_result = any(_block(b) == "tool_result" for b in content)
        images = sum(_block(b) == "image" for b in content)
    if any(t.lstrip().startswith(_INTERRUPT) for t in texts):
        return "end", "interrupt"
    if tool_result:
        return "skip", "tool_result"
    text = _REMINDER.sub("", "\n".join(texts)).strip()
    if text.startswith(("<command-", "<bash-input>")) and (command := _command(text)):
        return "command", command
    if text.startswith("<task-notification>"):
        return "notification", ""
    text = _OUTPUT.sub("", text).strip()
    if not text and not images:
        return "skip", "command_output" if _OUTPUT.search("\n".join(texts)) else "empty"
    return "prompt", "\n".join(filter(None, [text, *["[image]"] * images]))


def _result_text(content: Any) -> str:
    """A tool result's text (its text blocks; other blocks by their type)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text") or "") if _block(b) == "text" else f"[{_block(b)}]" for b in content
        )
    return ""


def _command(text: str) -> str:
    """``/name args`` of a slash-command line (``!cmd`` of a bash one), or ``""``."""
    if bash := _BASH.search(text):
        return "!" + bash.group(1).strip()
    if not (name := _COMMAND.search(text)):
        return ""
    args = _ARGS.search(text)
    command = "/" + name.group(1).strip().lstrip("/")
    return f"{command} {args.group(1).strip()}".strip() if args else command


def _tool_line(block: dict[str, Any], cwd: str | None) -> str:
    """A tool call as ``[tool: Name "main argument"]``."""
    name = str(block.get("name") or "tool")
    given = block.get("input")
    arguments: dict[str, Any] = given if isinstance(given, dict) else {}
    key = _TOOL_ARGS.get(name)
    value = arguments.get(key) if key else None
    if not isinstance(value, str) or not value.strip():
        key, value = next(
            ((k, v) for k, v in arguments.items() if isinstance(v, str) and v.strip()), (None, "")
        )
    if not value:
        return f"[tool: {name}]"
    if cwd and key in _PATH_ARGS:
        for sep in ("/", "\\"):
            if value.startswith(cwd.rstrip(sep) + sep):
                value = value[len(cwd.rstrip(sep)) + 1 :]
    return tool_marker(name, value)


def tool_marker(name: str, value: str) -> str:
    """``[tool: name "value"]``, the value on one line and cut to ``TOOL_ARG_CHARS``."""
    value = " ".join(value.split())
    if len(value) > TOOL_ARG_CHARS:
        value = value[: TOOL_ARG_CHARS - 1] + "…"
    return f'[tool: {name} "{value}"]'


def parse_json(raw: bytes) -> Any:
    """One JSON line of a transcript, or None when it is not UTF-8 JSON."""
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None


# --- small helpers ------------------------------------------------------------------------


def _block(block: Any) -> str | None:
    return block.get("type") if isinstance(block, dict) else None


def _message_id(entry: dict[str, Any]) -> str | None:
    message = entry.get("message")
    return _text(message.get("id")) if isinstance(message, dict) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def when(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def moved(cursor: Cursor, inode: int, size: int, fh: BinaryIO) -> bool:
    """Whether the file under ``cursor`` was replaced, truncated or rewritten since."""
    if cursor.inode and inode and inode != cursor.inode:
        return True
    if size < cursor.offset:
        return True
    if cursor.mark is None:
        return False
    fh.seek(max(0, cursor.offset - MARK_BYTES))
    return digest(fh.read(min(cursor.offset, MARK_BYTES))) != cursor.mark


def after(exchanges: list[Exchange], last_uuid: str | None, last_at: str | None) -> list[Exchange]:
    """The exchanges past ``last_uuid`` and later than ``last_at``: the ones not emitted yet."""
    uuids = [x.uuid for x in exchanges]
    if last_uuid in uuids:
        exchanges = exchanges[uuids.index(last_uuid) + 1 :]
    since = when(last_at)
    return [x for x in exchanges if since is None or x.at > since]


def _is_compaction(path: Path) -> bool:
    return path.stem.startswith("agent-acompact")


def _meta(path: Path) -> tuple[str | None, str | None]:
    """(agentType, description) from a subagent's ``.meta.json``; a bad file gives nothing."""
    try:
        data = json.loads(path.with_name(path.stem + ".meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    if not isinstance(data, dict):
        return None, None
    return _text(data.get("agentType")), _text(data.get("description"))
