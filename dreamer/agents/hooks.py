"""Claude Code and Codex CLI hooks: ``dream hook EVENT`` reads JSON on stdin, never fails.

Claude Code runs the hook command on its events with a JSON object on stdin (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``, and per event ``source``, ``model``,
``trigger``, ``reason``). The Codex CLI sends the same fields (and ``turn_id`` to Stop) and reads
the same SessionStart answer; its transcripts are rollout files (:mod:`dreamer.agents.codex`).
The Gemini CLI sends them too and reads ``hookSpecificOutput.additionalContext`` likewise; its
transcripts are chat files (:mod:`dreamer.agents.gemini`).
What dreamer does:

- **SessionStart**: prints ``hookSpecificOutput.additionalContext``, the bootstrap block sized
  to the model's window and cut below Claude Code's 10,000-character limit (after a ``compact``
  only the pending notes and a line about ``memory_search``: the working memory was already in
  the conversation; after a ``resume`` or ``fork`` of a conversation that holds the block, one
  short line); then a detached ``dream ingest --live`` catches up on this project's
  transcripts from their cursors.
- **PreCompact**: ingests ``transcript_path`` and its subagents' transcripts from their cursors
  (a turn still in progress waits),
  then starts a detached ``dream tick`` (consolidation, and a dream when one is due).
- **SessionEnd**: the same, taking the session whole, in a detached process: Claude Code gives
  SessionEnd hooks about 1.5 s before it kills them, too little to embed a long session.
- **Stop** (Codex CLI, after each turn): in a detached process, ingests ``transcript_path``
  (the rollout file) once the turn's ``task_complete`` is written (Codex runs Stop hooks just
  before it writes it; waits at most ``STOP_WAIT`` seconds, after which the next read takes
  the turn), then starts a detached ``dream tick``.
- **AfterAgent** (Gemini CLI, once a turn's final answer is written): notes the chat file's
  size, then in a detached process ingests ``transcript_path`` up to there as a finished turn
  (a prompt typed meanwhile waits for its own turn) and starts a detached ``dream tick``.
- **session-idle** (OpenCode, through dreamer's plugin, once a turn is over): the session's
  messages come on stdin (not a file); in a detached process, the turns not stored yet are
  stored (:func:`dreamer.agents.ingest.ingest_session`), then a detached ``dream tick``.
- **UserPromptSubmit**: nothing unless asked (``--recall``, or ``DREAM_HOOK_RECALL=1``); then
  at most 3 strong hits as context, found by a search door when one is open (``dream serve``'s,
  or the one the previous prompt's search left: ``dreamer.memory.search_client``).

A dream written through the ``claude-code`` synthesizer is itself a Claude Code run; it sets
``DREAM_HOOKS_DISABLED=1`` for the CLI (and turns hooks off with ``disableAllHooks``), and a hook
that sees the marker does nothing at all, so a dream is never captured as a session.

A hook must never break the agent: every failure is written to ``memory/hooks.log`` of the
workspace (when there is one) and the hook exits 0, within its time budget whatever happens (a
watchdog ends the process). A read-only event never creates a workspace. The workspace is
resolved from the hook's ``cwd`` as the CLI would resolve it there.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from dreamer.agents import hook_log, team
from dreamer.agents.bootstrap import bootstrap_block
from dreamer.config import HOOKS_DISABLED
from dreamer.dream import health
from dreamer.memory import location, search_client
from dreamer.memory.workspace import Workspace
from dreamer.support.times import iso

if TYPE_CHECKING:
    from dreamer.agents.ingest import IngestReport

WRITES = (
    "pre-compact",
    "session-end",
    "stop",
    "after-agent",
    "session-idle",
)  # events that store a transcript
STOP_WAIT = 30.0  # seconds a Stop hook's background half waits for Codex to close the turn
CONTEXT_LIMIT = 9_500  # Claude Code cuts additionalContext at 10,000 characters
MODEL_WINDOWS = {"opus": 200_000, "sonnet": 200_000, "haiku": 200_000}
RECALL_HITS = 3
RECALL_MIN_SCORE = 0.6
# A resumed or forked conversation carries the block of its start: it gets this line instead.
RESUMED = ("resume", "fork")
LOADED_MARK = "Your memory has three layers"  # the bootstrap block's first sentence
LOADED_LINE = (
    "dreamer: your long-term memory was loaded earlier in this conversation; notes written "
    "since are in dreamer://scratch.md, and memory_search finds the rest."
)
CUT = "\n[memory cut to fit the hook limit; more via memory_search]"


def run(
    event: str,
    stdin: TextIO,
    stdout: TextIO,
    now: datetime,
    environ: Mapping[str, str] | None = None,
    *,
    budget: float | None = None,
    recall: bool = False,
    background: bool = False,
) -> int:
    """Handle one hook event; always 0 (failures go to memory/hooks.log).

    ``budget``: seconds after which the process logs that it gave up and exits 0, wherever it
    is (a slow disk or a huge transcript must not hold up the agent). ``background``: this is
    the detached half of a hook (SessionEnd's ingest), with no budget.
    """
    env = os.environ if environ is None else environ
    if env.get(HOOKS_DISABLED) == "1":
        return 0  # a dream's own Claude Code run: nothing of it is remembered
    payload: dict[str, Any] = {}
    loading = False
    where: list[Path | None] = [None]
    watchdog = _watchdog(budget, where, event, now) if budget else None
    try:
        # Where to log if the input itself is bad: the workspace of the current folder.
        where[0] = location.resolve(env.get("DREAM_WORKSPACE") or None, environ=env)[0]
        raw = stdin.read()
        payload = json.loads(raw) if raw.strip() else {}
        if not isinstance(payload, dict):
            raise ValueError("the hook input is not a JSON object")
        loading = True  # from here a failure is a memory that did not load, and is said
        cwd = Path(payload.get("cwd") or os.getcwd())
        root = location.resolve(env.get("DREAM_WORKSPACE") or None, environ=env, cwd=cwd)[0]
        where[0] = root
        writes = event in WRITES
        # The project's committed model choice (dreamer.agents.team): taken up, or named.
        adopted = team.adopt(root, cwd, env, write=writes or (root / "memory").is_dir())
        notice = adopted.line if adopted else None
        if adopted and adopted.wrote and event != "session-start":
            hook_log.write(root, event, adopted.line, now)
        if event in ("session-end", "stop", "after-agent", "session-idle") and not background:
            Workspace.open(root, create=True).close()  # made here, so the log has a home
            if event == "after-agent":  # the turn ends here, whatever is written after
                raw = json.dumps(
                    {**payload, "turn_end": _size(Path(str(payload.get("transcript_path"))))}
                )
            hook_log.start(event, root, ["hook", event, "--in-background", "-w", str(root)], raw)
            return 0
        if not writes and not (root / "memory").is_dir():
            if notice and event == "session-start":  # nothing remembered yet, but this is said
                stdout.write(json.dumps(_started(notice, notice), ensure_ascii=False))
            return 0  # nothing remembered here yet, and a read must not create a workspace
        if event == "user-prompt-submit":
            recalled = recall or env.get("DREAM_HOOK_RECALL") == "1"
            output = _recall(root, str(payload.get("prompt") or ""), now) if recalled else None
        else:
            with Workspace.open(root, create=writes) as ws:
                output = _handle(event, ws, payload, now)
            if notice and event == "session-start" and output is not None:
                context = output["hookSpecificOutput"]["additionalContext"]
                output = _started(f"{notice}\n\n{context}", notice)
        if output is not None:
            stdout.write(json.dumps(output, ensure_ascii=False))
            stdout.flush()
    except Exception as e:  # noqa: BLE001 - a hook must never fail the agent; the log keeps it
        hook_log.write(where[0], event, traceback.format_exc(), now)
        if event == "session-start" and loading:  # the memory block never goes silently
            stdout.write(json.dumps(_started(*[failed_line(where[0], e)] * 2), ensure_ascii=False))
            stdout.flush()
    finally:
        if watchdog is not None:
            watchdog.cancel()
    return 0


def failed_line(root: Path | None, error: BaseException | str) -> str:
    """The one line a SessionStart that could not load the memory says instead of it."""
    cause = error if isinstance(error, str) else (str(error).splitlines() or [""])[0][:300]
    cause = cause or type(error).__name__
    log = f"; details in {root / 'memory' / 'hooks.log'}" if root else ""
    return f"dreamer: the long-term memory was not loaded this session ({cause}){log}"


def _started(context: str, message: str) -> dict[str, Any]:
    """A SessionStart answer: context for the model, and a line shown to the person."""
    return {
        "systemMessage": message,
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context},
    }


def _watchdog(
    budget: float, where: list[Path | None], event: str, now: datetime
) -> threading.Timer:
    """A timer that logs and ends the process once the budget is spent (a hard limit)."""

    def give_up() -> None:
        gave_up = f"gave up after {budget:g} s (the hook's budget); exited 0"
        hook_log.write(where[0], event, gave_up, now)
        if event == "session-start":  # said, not silently missing
            line = failed_line(where[0], f"it took longer than {budget:g} s")
            sys.stdout.write(json.dumps(_started(line, line), ensure_ascii=False))
        sys.stdout.flush()
        os._exit(0)  # not an exception: a long SQLite or numpy call would not see one

    timer = threading.Timer(budget, give_up)
    timer.daemon = True
    timer.start()
    return timer


def _handle(
    event: str, ws: Workspace, payload: dict[str, Any], now: datetime
) -> dict[str, Any] | None:
    if event == "session-start":
        health.session_started(ws, now)
        context = _session_context(ws, payload, now)
        folders = _project_folders(payload)
        if folders:  # catch up on this project's other sessions, from their cursors
            hook_log.start(event, ws.root, ["ingest", "--live", *folders, "-w", str(ws.root)])
        return {
            "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}
        }
    if event in WRITES:
        from dreamer.agents.ingest import ingest  # here: a session start does not ingest

        transcript = str(payload.get("transcript_path") or "")
        if event == "session-idle":  # OpenCode's plugin hands the session's messages over
            source, agent = f"opencode session {payload.get('session_id')}", "opencode"
        else:
            source = transcript if transcript and Path(transcript).is_file() else ""
            agent = _agent_of(Path(transcript)) if source else "claude-code"
        if source:
            try:
                if event == "session-idle":
                    report = _opencode_session(ws, payload, now)
                    created = report.created
                elif event == "stop":
                    turn = str(payload.get("turn_id") or "")
                    created, report = _await_turn(ws, Path(transcript), turn, now)
                elif event == "after-agent":
                    end = payload.get("turn_end")
                    ends = {str(Path(transcript)): end} if isinstance(end, int) else None
                    report = ingest(ws, [transcript], now, live=True, turn_ends=ends)
                    created = report.created
                else:
                    files = [transcript, *_subagents(Path(transcript))]
                    report = ingest(ws, files, now, live=event == "pre-compact")
                    created = report.created
            except Exception as e:
                health.capture_result(ws, now, f"{type(e).__name__}: {e}", agent=agent)
                raise
            failed = "; ".join(f"{f.path}: {f.error}" for f in report.failed)
            health.capture_result(ws, now, failed or None, agent=agent)
            stored = f"stored {created} new crystals of {source}"
            hook_log.write(ws.root, event, stored + (f" (failed: {failed})" if failed else ""), now)
        hook_log.start(event, ws.root, ["tick", "-w", str(ws.root)])
    return None


def _opencode_session(ws: Workspace, payload: dict[str, Any], now: datetime) -> IngestReport:
    """Store the turns of an OpenCode session its plugin handed over (from their cursor)."""
    from dreamer.agents import opencode
    from dreamer.agents.ingest import ingest_session

    session_id = str(payload.get("session_id") or "")
    if not session_id:
        raise ValueError("the session-idle input names no session_id")
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    messages = payload.get("messages")
    return ingest_session(
        ws, "opencode", session_id, lambda c: opencode.read_messages(messages, c, cwd=cwd), now
    )


def _recall(root: Path, prompt: str, now: datetime) -> dict[str, Any] | None:
    """UserPromptSubmit with recall: the memories the prompt finds, as the agent's context.
    A search door answers when one is open (a serve's, or one an earlier search left);
    otherwise this process searches and leaves one for the next prompt."""
    if not prompt.strip():
        return None
    hits = search_client.ask(str(root), prompt, RECALL_HITS, "both")
    if hits is None:
        with Workspace.open(root, create=False) as ws:
            hits = [hit.to_dict() for hit in ws.search(prompt, limit=RECALL_HITS, now=now)]
            minutes = ws.settings.search_warm_minutes
        search_client.leave_open(root, minutes)
    kept = [hit for hit in hits if hit["score"] >= RECALL_MIN_SCORE]
    if not kept:
        return None
    lines = ["Possibly relevant memories (memory_get for more):"]
    lines += [f"- #{hit['id']} ({hit['created_at'][:10]}) {hit['text'][:300]}" for hit in kept]
    return {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "\n".join(lines),
        }
    }


def _await_turn(
    ws: Workspace, transcript: Path, turn_id: str, now: datetime
) -> tuple[int, IngestReport]:
    """Ingest a Codex rollout until the turn ``turn_id`` is stored or ``STOP_WAIT`` passed:
    the crystals created in all, and the last read's report (one read when no turn is named)."""
    from dreamer.agents.ingest import ingest

    key = f"ingest.codex:{transcript.resolve()}"
    deadline = time.monotonic() + STOP_WAIT
    created = 0
    while True:
        report = ingest(ws, [transcript], now, live=True)
        created += report.created
        saved = ws.store.records.get_meta(key)
        if not turn_id or report.failed or time.monotonic() > deadline:
            break
        cursor = json.loads(saved) if saved else {}
        if cursor.get("last_uuid") == turn_id or cursor.get("offset") == _size(transcript):
            break  # the turn is stored, or was closed with nothing to store (no prompt)
        time.sleep(0.2)
    return created, report


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def _loaded_before(payload: dict[str, Any]) -> bool:
    """Whether a resumed (or forked) conversation already holds the memory block: its
    transcript has it, or there is no transcript to look in (Claude Code writes it later)."""
    if payload.get("source") not in RESUMED:
        return False
    transcript = payload.get("transcript_path")
    try:
        with open(transcript or "", "rb") as handle:
            return LOADED_MARK.encode() in handle.read()
    except OSError:
        return True


def _session_context(ws: Workspace, payload: dict[str, Any], now: datetime) -> str:
    if _loaded_before(payload):
        text = LOADED_LINE
    elif payload.get("source") == "compact":
        notes = ws.scratch.notes()
        lines = ["Notes written since the last dream (not yet in working memory):"]
        lines += [f"- [{iso(n.at)}] {n.text}" for n in notes] or ["- (none)"]
        lines.append("Older memories: use memory_search; the working memory is MEMORY.md.")
        text = "\n".join(lines)
    else:
        text = bootstrap_block(ws, context_window=_window(payload.get("model")), now=now)
    warnings = health.lines(ws, now)  # quiet when all is well
    if warnings:
        text = "\n".join(f"dreamer health: {line}" for line in warnings) + "\n\n" + text
    return text if len(text) <= CONTEXT_LIMIT else text[: CONTEXT_LIMIT - len(CUT)] + CUT


def _window(model: Any) -> int | None:
    name = str(model or "").lower()
    if "[1m]" in name:  # Claude Code's name for a model run with the 1M-token window
        return 1_000_000
    return next((size for key, size in MODEL_WINDOWS.items() if key in name), None)


def _subagents(transcript: Path) -> list[str]:
    """A session's subagent transcripts (``<session>/subagents/agent-*.jsonl``): their exchanges
    carry the session's id, so they are stored linked to it (each once: cursors)."""
    folder = transcript.with_suffix("") / "subagents"
    return sorted(str(p) for p in folder.rglob("agent-*.jsonl") if p.is_file())


def _project_folders(payload: dict[str, Any]) -> list[str]:
    """The Claude Code project folder of this session (where its transcripts are), once it
    holds a session: a project's first session starts before Claude Code makes it. For the
    Gemini CLI, the project's chat files. None for a Codex rollout: its folder holds one day's
    sessions of every project."""
    transcript = payload.get("transcript_path")
    if not transcript or Path(transcript).name.startswith("rollout-"):
        return []
    folder = Path(transcript).parent
    # Only a folder of sessions: a transcript path that leads nowhere ("/missing.jsonl", or a
    # relative one read from '/') must not send the catch-up through the whole disk.
    if not folder.is_absolute() or not folder.is_dir() or folder == Path(folder.anchor):
        return []
    if folder.name == "chats" and Path(transcript).name.startswith("session-"):
        return sorted(str(p) for p in folder.glob("session-*.jsonl") if p.is_file())
    return [str(folder)] if next(folder.glob("*.jsonl"), None) is not None else []


def _agent_of(transcript: Path) -> str:
    """Which agent wrote a transcript: a Codex rollout, a Gemini CLI chat file, or Claude Code."""
    from dreamer.agents.codex import is_rollout

    if is_rollout(transcript):
        return "codex"
    if transcript.parent.name == "chats" and transcript.name.startswith("session-"):
        return "gemini"
    return "claude-code"
