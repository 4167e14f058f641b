"""Bring existing memory into the crystal store: session transcripts, memory files, other text.

What each kind of file becomes:

- **Claude Code sessions** (a ``.jsonl`` whose lines carry ``sessionId`` and a Claude Code
  ``type``; a folder with ``sessions-index.json`` or such sessions is a project folder, read
  with its subagents and without its index, ``.meta.json`` files and ``tool-results/`` dumps)
  go through ``dreamer.agents.claude_code``: each complete exchange is split by who said what
  (``dreamer.agents.speakers``: the user's words, the answer for what it established, held
  crystals for instructions a tool returned and their echoes), each part a ``sessions`` crystal
  with its ``speaker``, windowed as below, its origin ``claude-code:<sessionId>:<uuid>[#window]
  [/a|/hN][@<gitBranch>][ in <cwd>]``. An agent note of the session that only repeats a held
  instruction is held too (``dreamer.memory.held.hold_echoes``). The same words said in
  another exchange are a sighting of their crystal, with that exchange's date. Each file is
  read from its cursor (meta ``ingest.claude-code:<absolute path>``), stored with the
  exchanges in one transaction, so a growing session ingested any number of times stores each
  exchange once; a per-workspace ``memory/ingest.lock`` keeps two ingests
  (a hook and a catch-up) from reading the same cursor at once.
- **Codex CLI rollouts** (a ``.jsonl`` whose first line is a ``session_meta``; a folder such
  as ``~/.codex/sessions`` is walked for them) go through ``dreamer.agents.codex`` the same
  way: one crystal per complete turn, origin ``codex:<session id>:<turn id>...``, cursor meta
  ``ingest.codex:<absolute path>``, under the same lock.
- **Gemini CLI chats** (a ``.jsonl`` whose first line names a ``sessionId`` and a
  ``projectHash``, in ``~/.gemini/tmp/<project>/chats``) go through ``dreamer.agents.gemini``
  the same way: origin ``gemini:<session id>:<prompt id>...``, cursor meta
  ``ingest.gemini:<absolute path>``, under the same lock.
- **OpenCode sessions** are no files: dreamer's OpenCode plugin hands a session's messages over
  when it goes idle, and :func:`ingest_session` stores them through ``dreamer.agents.opencode``
  the same way: origin ``opencode:<session id>:<message id>...``, cursor meta
  ``ingest.opencode:<session id>``, under the same lock.
- **Other session transcripts** become ``sessions`` crystals (importance 0.5, type
  ``experience``), one per exchange (a user message and everything until the next one), cut
  into 400-token windows with 80 tokens of overlap when longer, each dated by the exchange's
  own timestamp.
  Read: an Anthropic messages JSON array (or ``{"messages": [...]}``), and JSON Lines chat logs
  with ``role``/``content`` per line or Claude Code's shape (``type`` user/assistant,
  ``message.role``, ``message.content`` as a string or blocks, ``timestamp``; meta lines and
  events such as ``summary`` are skipped). Thinking blocks are dropped; tool calls and tool
  output are kept but clipped to 200 tokens each; ``<system-reminder>`` text is dropped.
  An exchange keeps at most ``memory.note.maxChars`` characters (its head, then a
  ``… [clipped N chars]`` mark), as a note would.
- **Markdown memory files** with frontmatter (``name``, ``description``, ``type``) become
  ``memory`` crystals (importance 0.75) typed from ``type``: ``user`` → ``world_fact`` (facts
  about the person), ``feedback`` → ``directive`` (how they want things done), ``project`` →
  ``experience`` (what happened and is happening), ``reference`` → ``world_fact`` (where things
  live). Any other or missing type is inferred from the text. Long bodies are windowed, each
  window headed by ``name: description``.
- **Anything else** (plain text, Markdown without frontmatter) becomes ``memory`` crystals of
  400-token windows (importance 0.6, type inferred).

Files without timestamps are dated by their modification time; no crystal is dated after
``now``. Ingested crystals are ``generated``: dreams may fold the important ones into
MEMORY.md. Ingesting is idempotent: a window whose content hash is already a crystal is
skipped (and not embedded again). A file that cannot be read or parsed is reported with a
one-line reason and the others are still ingested. Folders are walked for ``.jsonl``,
``.json``, ``.md``, ``.markdown`` and ``.txt`` files (hidden ones skipped). NUL characters
are dropped (a note with one is refused; SQLite would keep one and PostgreSQL refuse it).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dreamer.agents import claude_code, codex, gemini, speakers
from dreamer.config import DEFAULT_NOTE_MAX_CHARS
from dreamer.errors import IngestFailed
from dreamer.memory import held, repeats
from dreamer.memory.workspace import Workspace
from dreamer.store import NewCrystal, content_hash
from dreamer.support import failures, tokens
from dreamer.support.encoding import unencodable
from dreamer.support.locks import hold
from dreamer.support.times import as_utc, parse_iso

CHUNK_TOKENS = 400
OVERLAP_TOKENS = 80
TOOL_TOKENS = 200
SESSION_IMPORTANCE = 0.5
MEMORY_FILE_IMPORTANCE = 0.75
TEXT_IMPORTANCE = 0.6
MAX_FILE_BYTES = 200 * 2**20  # read whole: past this, a file must be split first
FOLDER_SUFFIXES = (".jsonl", ".json", ".md", ".markdown", ".txt")
MEMORY_TYPES = {
    "user": "world_fact",
    "feedback": "directive",
    "project": "experience",
    "reference": "world_fact",
}
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(?P<head>.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)

Progress = Callable[[int, int], None]
"""Called as ``progress(bytes_done, bytes_total)`` while files are ingested."""


@dataclass
class Piece:
    """One crystal-to-be."""

    text: str
    at: datetime
    source: str
    semantic_type: str | None
    importance: float
    origin: str
    speaker: str | None = None  # who said it; None: the source's default (kinds.SOURCE_SPEAKERS)
    held: bool = False  # instruction-shaped words from a speaker that may not set rules


@dataclass
class FileResult:
    """What happened to one input file."""

    path: str
    kind: str | None = None  # transcript | memory | text
    crystals: int = 0  # windows in the file
    created: int = 0  # of which new crystals
    error: str | None = None


@dataclass
class IngestReport:
    """What an ingest run did, file by file."""

    files: list[FileResult] = field(default_factory=list)

    @property
    def created(self) -> int:
        """New crystals in all files."""
        return sum(f.created for f in self.files)

    @property
    def failed(self) -> list[FileResult]:
        """The files that could not be ingested."""
        return [f for f in self.files if f.error]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "files": [asdict(f) for f in self.files],
            "crystals": sum(f.crystals for f in self.files),
            "created": self.created,
            "failed": len(self.failed),
        }


def ingest(
    ws: Workspace,
    paths: Iterable[str | os.PathLike[str]],
    now: datetime,
    progress: Progress | None = None,
    *,
    live: bool = False,
    turn_ends: Mapping[str, int] | None = None,
) -> IngestReport:
    """Ingest files and folders as crystals; a failing file is reported, the rest still go in.

    A Claude Code session is read from where the last ingest of it stopped. By default it is
    taken whole; with ``live`` (a hook reading a session still being written) its last turn
    waits until a later prompt closes it or the file has been quiet for ``SETTLED_SECONDS``.
    ``turn_ends`` maps a Gemini CLI chat's path to its size when a hook saw a turn end there.
    """
    now = as_utc(now)
    report = IngestReport()
    files = _expand(paths, report)
    sizes = {path: _size(path) for path in files}
    total, done = sum(sizes.values()), 0
    for path in files:
        result = FileResult(str(path))
        report.files.append(result)

        def advance(share: float, base: int = done, size: int = sizes[path]) -> None:
            if progress:
                progress(base + int(size * share), total)

        if _agent(path):
            # Hooks and catch-ups may ingest one session at once: read the cursor, store, move
            # the cursor, one at a time, or both would store the same exchanges.
            with hold(ws.memory_dir / "ingest.lock"):
                until = (turn_ends or {}).get(str(path))
                _ingest_file(ws, path, result, now, live, advance, agent=_agent(path), until=until)
        else:
            _ingest_file(ws, path, result, now, live, advance)
        done += sizes[path]
        if progress:
            progress(done, total)
    return report


def _ingest_file(
    ws: Workspace,
    path: Path,
    result: FileResult,
    now: datetime,
    live: bool,
    advance: Callable[[float], Any],
    *,
    agent: str | None = None,
    until: int | None = None,
) -> None:
    cursor: tuple[str, claude_code.Cursor] | None = None
    try:
        if agent:
            result.kind = agent
            pieces, cursor = _claude_pieces(ws, path, now, live, agent=agent, until=until)
        else:
            result.kind, pieces = read_pieces(path, now, ws.settings.note_max_chars)
    except IngestFailed as e:
        result.error = str(e)
        return
    for piece in pieces:  # a JSON "\ud800" escape: text no store can hold
        at = unencodable(piece.text)
        if at is not None:
            result.error = (
                f"{path}: holds a lone surrogate (U+{ord(piece.text[at]):04X}), not Unicode "
                "text; nothing of the file was stored: fix the text or leave the file out"
            )
            return
    _land(ws, pieces, result, advance, cursor, now, live=live)


def _land(
    ws: Workspace,
    pieces: list[Piece],
    result: FileResult,
    advance: Callable[[float], Any],
    cursor: tuple[str, claude_code.Cursor] | None,
    now: datetime,
    *,
    live: bool,
) -> None:
    """Store the pieces and move the cursor in one transaction, holding the agent's notes of
    the session that only repeat what it read; a live capture's user words move the
    hormones."""
    with ws.store.transaction():  # the exchanges and the cursor land together
        _store(ws, pieces, result, advance)
        if live:  # what the user just said moves the hormones, as a note does
            _feel(ws, [p for p in pieces if p.speaker == "user" and not p.held])
        if cursor is not None:
            ws.store.records.set_meta(cursor[0], json.dumps(cursor[1].to_dict()))
        read = [p for p in pieces if p.held and p.speaker in ("tool", "subagent", "assistant")]
        if read:  # the agent's notes of the session that only repeat what it read
            held.hold_echoes(
                ws,
                [p.text.split(": ", 1)[-1] for p in read],
                min(p.at for p in pieces),
                max(p.at for p in pieces),
                now,
            )


# --- Claude Code transcripts (dreamer.agents.claude_code knows their format) -----------------

SETTLED_SECONDS = 600  # a session untouched this long is over: its last open turn is emitted


def _agent(path: Path) -> str | None:
    """The coding agent whose session file this is (its reader's name), or None."""
    if codex.is_rollout(path):
        return "codex"
    if gemini.is_chat(path):
        return "gemini"
    return "claude-code" if claude_code.is_session(path) else None


def _claude_bookkeeping(path: Path, folder: Path) -> bool:
    """A file of a Claude Code project that is no memory: index, metas, dumps, raw sessions."""
    parts = path.relative_to(folder).parts
    return (
        path.suffix.lower() == ".jsonl"  # the sessions come from the reader's own listing
        or path.name == "sessions-index.json"
        or path.name.endswith(".meta.json")
        or "tool-results" in parts
    )


def is_claude_project(folder: Path) -> bool:
    """Whether a folder is a Claude Code project folder (~/.claude/projects/<project>)."""
    if (folder / "sessions-index.json").is_file():
        return True
    return any(claude_code.is_session(path) for path in sorted(folder.glob("*.jsonl"))[:5])


def _claude_pieces(
    ws: Workspace,
    path: Path,
    now: datetime,
    live: bool,
    agent: str = "claude-code",
    until: int | None = None,
) -> tuple[list[Piece], tuple[str, claude_code.Cursor]]:
    """The exchanges completed since the last ingest of this file, and its new cursor.

    ``agent`` is ``claude-code`` (a session file), ``codex`` (a rollout file) or ``gemini`` (a
    chat file): the same cursor, windows and origins, each read by its own reader.
    """
    key = f"ingest.{agent}:{path.resolve()}"
    saved = ws.store.records.get_meta(key)
    cursor = claude_code.Cursor.from_dict(json.loads(saved)) if saved else None
    try:
        settled = now.timestamp() - path.stat().st_mtime >= SETTLED_SECONDS
        final = settled or not live
        if agent == "gemini":
            exchanges, cursor = gemini.read_chat(path, cursor, final=final, until=until)
        else:
            read = codex.read_rollout if agent == "codex" else claude_code.read_session
            exchanges, cursor = read(path, cursor, final=final)
    except (OSError, claude_code.UnreadableTranscript) as e:
        raise IngestFailed(str(e)) from None
    return _exchange_pieces(ws, exchanges, now, agent), (key, cursor)


def ingest_session(
    ws: Workspace,
    agent: str,
    session_id: str,
    read: Callable[
        [claude_code.Cursor | None], tuple[list[claude_code.Exchange], claude_code.Cursor]
    ],
    now: datetime,
) -> IngestReport:
    """Store a session an agent hands over instead of a file (OpenCode's plugin sends its
    messages): ``read`` gives the exchanges after the saved cursor, stored with the new cursor
    under ``memory/ingest.lock``, as a transcript file's are."""
    now = as_utc(now)
    result = FileResult(f"{agent}:{session_id}", kind=agent)
    key = f"ingest.{agent}:{session_id}"
    with hold(ws.memory_dir / "ingest.lock"):
        saved = ws.store.records.get_meta(key)
        cursor = claude_code.Cursor.from_dict(json.loads(saved)) if saved else None
        exchanges, cursor = read(cursor)
        pieces = _exchange_pieces(ws, exchanges, now, agent)
        _land(ws, pieces, result, lambda _share: None, (key, cursor), now, live=True)
    return IngestReport([result])


def _exchange_pieces(
    ws: Workspace, exchanges: list[claude_code.Exchange], now: datetime, agent: str
) -> list[Piece]:
    """The crystals-to-be of a coding agent's exchanges: windows, dated, with their origin."""
    pieces = []
    said_before = _read_before(ws, agent, exchanges)
    seen: list[str] = []  # the other sentences the session's tools returned
    before: dict[str, str] = {}  # each session's last answer, for a rule the next prompt confirms
    for exchange in exchanges:
        where = f"@{exchange.git_branch}" if exchange.git_branch else ""
        where += f" in {exchange.cwd}" if exchange.cwd else ""
        at = min(as_utc(exchange.at), now)
        answered_before = before.get(exchange.session_id, "")
        before[exchange.session_id] = exchange.assistant
        for said in speakers.split(exchange, said_before, seen, answered_before):
            text = clip_exchange(said.text, ws.settings.note_max_chars)
            for number, window in enumerate(_windows(text), start=1):
                part = f"#{number}" if number > 1 else ""
                part += f"/{said.part}" if said.part else ""
                pieces.append(
                    Piece(
                        window,
                        at,
                        "sessions",
                        said.semantic_type,
                        said.importance,
                        f"{agent}:{exchange.session_id}:{exchange.uuid}{part}{where}",
                        speaker=said.speaker,
                        held=said.held,
                    )
                )
    return pieces


def _read_before(ws: Workspace, agent: str, exchanges: list[claude_code.Exchange]) -> list[str]:
    """The instructions the sessions of ``exchanges`` read before: their held tool words."""
    sessions = {f"{agent}:{e.session_id}:" for e in exchanges}
    if not sessions:
        return []
    return [
        crystal.text.split(": ", 1)[-1]
        for crystal in ws.store.crystals.select(lifecycles=[held.HELD])
        if crystal.speaker in ("tool", "subagent")
        and any((crystal.origin or "").startswith(prefix) for prefix in sessions)
    ]


def read_pieces(
    path: Path, now: datetime, max_chars: int = DEFAULT_NOTE_MAX_CHARS
) -> tuple[str, list[Piece]]:
    """Parse one file into (kind, crystals-to-be), or raise IngestFailed naming the problem.

    An exchange of a transcript keeps at most ``max_chars`` characters (a note's limit).
    """
    text = _read(path)
    mtime = min(datetime.fromtimestamp(path.stat().st_mtime, UTC).replace(microsecond=0), now)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json"):
        messages = _jsonl_messages(path, text) if suffix == ".jsonl" else _json_messages(path, text)
        return "transcript", _session_pieces(messages, mtime, now, path, max_chars)
    front = _FRONTMATTER.match(text) if suffix in (".md", ".markdown") else None
    if front:
        return "memory", _memory_pieces(front["head"], text[front.end() :], mtime, path)
    return "text", [
        Piece(window, mtime, "memory", None, TEXT_IMPORTANCE, f"{path}#{number}")
        for number, window in enumerate(_windows(text), start=1)
    ]


# --- files --------------------------------------------------------------------------------


def _expand(paths: Iterable[str | os.PathLike[str]], report: IngestReport) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            claude = is_claude_project(path)
            walked = {
                p
                for p in path.rglob("*")
                if p.is_file()
                and p.suffix.lower() in FOLDER_SUFFIXES
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
                and not (claude and _claude_bookkeeping(p, path))
            }
            if claude:
                # Its sessions and subagents, as the reader lists them (no compaction runs).
                walked |= set(claude_code.project_sessions(path))
            files.extend(sorted(walked))
        elif path.is_file():
            files.append(path)
        elif path.exists():
            # A device, FIFO or socket: /dev/zero never ends and a FIFO blocks forever.
            report.files.append(
                FileResult(str(path), error=f"{path}: not a regular file; pass a file or a folder")
            )
        else:
            report.files.append(FileResult(str(path), error=f"{path}: no such file or folder"))
    return list(dict.fromkeys(files))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _read(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise IngestFailed(
                f"{path}: {size // 2**20} MB is over the {MAX_FILE_BYTES // 2**20} MB a file may"
                " have; split it (e.g. with split -C 50m) and ingest the parts"
            )
        data = path.read_bytes()
    except OSError as e:
        # One file's failure, reported with its true cause while the others still go in.
        why = failures.cannot_read(e, path, IngestFailed, f"{path}: cannot read it")
        raise IngestFailed(str(why)) from e
    if b"\x00" in data[:8192]:
        raise IngestFailed(f"{path}: looks like a binary file; pass text, JSON or Markdown")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise IngestFailed(
            f"{path}: not UTF-8 text ({e.reason} at byte {e.start}); convert it to UTF-8"
        ) from None


def _store(
    ws: Workspace, pieces: list[Piece], result: FileResult, advance: Callable[[float], Any]
) -> None:
    seen: set[str] = set()
    with ws.store.transaction():  # one transaction per file: fast, and a file lands whole
        for number, piece in enumerate(pieces, start=1):
            text = piece.text.replace("\x00", "")  # as ws.index stores it, so hashes agree
            digest = content_hash(text)
            if digest in seen:
                continue
            seen.add(digest)
            result.crystals += 1
            found = ws.store.crystals.find_by_hash(digest)
            if found is not None and not piece.held and piece.source == "sessions":
                _sighted(ws, found, piece)
            if found is None:
                ws.index(
                    NewCrystal(
                        text,
                        importance=piece.importance,
                        semantic_type=piece.semantic_type,
                        at=piece.at,
                        source=piece.source,
                        origin=piece.origin,
                        speaker=piece.speaker,
                        lifecycle=held.HELD if piece.held else "generated",
                    )
                )
                result.created += 1
            if number % 50 == 0:
                advance(number / len(pieces))


def _feel(ws: Workspace, said: list[Piece]) -> None:
    """The stimuli of the user's words in a session just captured, at the time each was said."""
    if not said:
        return
    from dreamer.memory import hormones

    lexicon = hormones.load_lexicon(ws)
    for piece in said:
        for hormone, delta, reason in hormones.stimuli_from_text(piece.text, lexicon):
            hormones.feel(ws, hormone, delta, reason, piece.at, source="capture")


def _sighted(ws: Workspace, crystal_id: int, piece: Piece) -> None:
    """The same words said again in another exchange (another day, another session): a
    sighting with its date, as a repeated note is; the same exchange read again is none."""
    (crystal,) = ws.store.crystals.crystals_by_id([crystal_id]) or (None,)
    if crystal is not None and crystal.origin != piece.origin and crystal.lifecycle != held.HELD:
        repeats.record(ws.store, crystal_id, piece.at)


def _windows(text: str) -> list[str]:
    return [w.strip() for w in tokens.chunks(text, CHUNK_TOKENS, OVERLAP_TOKENS) if w.strip()]


# --- memory files -------------------------------------------------------------------------


def parse_frontmatter(head: str) -> dict[str, str]:
    """``key: value`` lines of a frontmatter block (quotes stripped; other lines ignored)."""
    fields: dict[str, str] = {}
    for line in head.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not line.startswith((" ", "\t", "-")):
            fields[key.strip().lower()] = value.strip().strip("\"'").strip()
    return fields


def _memory_pieces(head: str, body: str, at: datetime, path: Path) -> list[Piece]:
    fields = parse_frontmatter(head)
    name = fields.get("name") or path.stem
    header = f"{name}: {fields['description']}" if fields.get("description") else name
    semantic_type = MEMORY_TYPES.get(fields.get("type", "").lower())
    body = body.strip()
    windows = _windows(body) if tokens.count(body) > CHUNK_TOKENS else [body]
    return [
        Piece(
            f"{header}\n\n{window}".strip(),
            at,
            "memory",
            semantic_type,
            MEMORY_FILE_IMPORTANCE,
            f"{path}#{number}",
        )
        for number, window in enumerate(windows, start=1)
    ]


# --- transcripts --------------------------------------------------------------------------


@dataclass
class _Message:
    role: str
    content: Any
    at: datetime | None
    where: str


def _json_messages(path: Path, text: str) -> list[_Message]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise IngestFailed(
            f"{path}: invalid JSON at line {e.lineno} column {e.colno} ({e.msg}); fix the file"
        ) from None
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    if not isinstance(data, list):
        raise IngestFailed(
            f"{path}: JSON but not a transcript; expected an array of {{role, content}} "
            'messages or {"messages": [...]}'
        )
    messages = [
        m
        for i, item in enumerate(data, start=1)
        if (m := _message(item, path, f"message {i}")) is not None
    ]
    if data and not messages:
        raise IngestFailed(f"{path}: JSON array without any {{role, content}} message")
    return messages


def _jsonl_messages(path: Path, text: str) -> list[_Message]:
    messages: list[_Message] = []
    unknown = 0  # lines that are neither a message nor a chat-log event
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as e:
            raise IngestFailed(
                f"{path}: line {number} is not valid JSON ({e.msg}); fix or remove that line"
            ) from None
        message = _message(item, path, f"line {number}")
        if message is not None:
            messages.append(message)
        elif not (isinstance(item, dict) and ("type" in item or "role" in item)):
            unknown += 1
    # A log of only events (a Claude Code session with just a summary) is empty, not wrong.
    if unknown and not messages:
        raise IngestFailed(
            f"{path}: no line is a chat message; expected role/content or type/message lines"
        )
    return messages


def _message(item: Any, path: Path, where: str) -> _Message | None:
    if not isinstance(item, dict) or item.get("isMeta"):
        return None
    message = item.get("message")
    body: dict[str, Any] = message if isinstance(message, dict) else item
    role = body.get("role") or item.get("type")
    if role not in ("user", "assistant") or "content" not in body:
        return None  # events such as summary, system or file-history-snapshot
    stamp = item.get("timestamp") or body.get("timestamp") or item.get("created_at")
    at = None
    if isinstance(stamp, str):
        try:
            at = parse_iso(stamp)
        except ValueError:
            raise IngestFailed(f"{path}: {where} has a bad timestamp {stamp!r}") from None
    return _Message(role, body["content"], at, where)


def _session_pieces(
    messages: list[_Message], fallback: datetime, now: datetime, path: Path, max_chars: int
) -> list[Piece]:
    exchanges: list[tuple[datetime | None, str, list[str]]] = []
    for message in messages:
        text, prompt = _render(message)
        if not text:
            continue
        if prompt or not exchanges:
            exchanges.append((message.at, message.where, []))
        at, where, lines = exchanges[-1]
        if at is None and message.at is not None:
            exchanges[-1] = (message.at, where, lines)
        lines.append(text)
    pieces = []
    for at, where, lines in exchanges:
        moment = min(at.replace(microsecond=0), now) if at else fallback
        text = clip_exchange("\n".join(lines), max_chars)
        for number, window in enumerate(_windows(text), start=1):
            pieces.append(
                Piece(
                    window,
                    moment,
                    "sessions",
                    "experience",
                    SESSION_IMPORTANCE,
                    f"{path}#{where.replace(' ', '-')}.{number}",
                )
            )
    return pieces


def _render(message: _Message) -> tuple[str, bool]:
    """(text of a message, whether it is a person's prompt rather than tool output)."""
    label = "User" if message.role == "user" else "Assistant"
    content = message.content
    if isinstance(content, str):
        text = _REMINDER.sub("", content).strip()
        return (f"{label}: {text}" if text else ""), message.role == "user" and bool(text)
    if not isinstance(content, list):
        return "", False
    parts: list[str] = []
    prompt = False
    for block in content:
        if isinstance(block, str):
            block = {"type": "text", "text": block}
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text = _REMINDER.sub("", str(block.get("text", ""))).strip()
            if text:
                parts.append(f"{label}: {text}")
                prompt = prompt or message.role == "user"
        elif kind == "tool_use":
            arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
            parts.append(f"Tool call {block.get('name', '?')}: {_clip(arguments)}")
        elif kind == "tool_result":
            parts.append(f"Tool result: {_clip(_result_text(block.get('content')))}")
        elif kind in ("image", "document"):
            parts.append(f"[{kind}]")
        # thinking and redacted_thinking are the model's scratch work: dropped on purpose
    return "\n".join(parts), prompt


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            if isinstance(b, dict) and b.get("type") == "text"
            else f"[{b.get('type', 'block')}]"
            if isinstance(b, dict)
            else str(b)
            for b in content
        )
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def clip_exchange(text: str, max_chars: int) -> str:
    """An exchange as stored: its first ``max_chars`` characters, the rest marked as clipped.

    A pasted log or a runaway answer is one exchange of megabytes; as windows it would make
    thousands of crystals that say nothing new, so it is bounded like a note.
    """
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars].rstrip()} … [clipped {len(text) - max_chars:,} chars]"


def _clip(text: str) -> str:
    text = text.strip()
    kept = tokens.trim(text, TOOL_TOKENS)
    if len(kept) == len(text):
        return text
    return f"{kept} … [clipped {len(text) - len(kept):,} chars]"
