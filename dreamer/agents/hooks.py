"""Claude Code hooks: ``dream hook EVENT`` reads the hook's JSON on stdin and never fails.

Claude Code runs the hook command on its events with a JSON object on stdin (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``, and per event ``source``, ``model``,
``trigger``, ``reason``). What dreamer does:

- **SessionStart**: prints ``hookSpecificOutput.additionalContext``, the bootstrap block sized
  to the model's window and cut below Claude Code's 10,000-character limit (after a ``compact``
  only the pending notes and a line about ``memory_search``: the working memory was already in
  the conversation); then a detached ``dream ingest`` catches up on this project's transcripts.
- **PreCompact**, **SessionEnd**: ingests ``transcript_path`` from its cursor (a turn still in
  progress waits; at SessionEnd the session is over and taken whole), then starts a detached
  ``dream tick`` (consolidation, and a dream when one is due).
- **UserPromptSubmit**: nothing unless ``DREAM_HOOK_RECALL=1``; then at most 3 strong hits.

A hook must never break the agent: every failure is written to ``memory/hooks.log`` of the
workspace (when there is one) and the hook exits 0. A read-only event never creates a
workspace. The workspace is resolved from the hook's ``cwd`` as the CLI would resolve it there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from dreamer.agents.bootstrap import bootstrap_block
from dreamer.agents.ingest import ingest
from dreamer.memory import location, scratch
from dreamer.memory.workspace import Workspace
from dreamer.support.times import iso

EVENTS = ("session-start", "pre-compact", "session-end", "user-prompt-submit")
CONTEXT_LIMIT = 9_500  # Claude Code cuts additionalContext at 10,000 characters
MODEL_WINDOWS = {"opus": 200_000, "sonnet": 200_000, "haiku": 200_000}
RECALL_HITS = 3
RECALL_MIN_SCORE = 0.6
CUT = "\n[memory cut to fit the hook limit; more via memory_search]"


def run(
    event: str,
    stdin: TextIO,
    stdout: TextIO,
    now: datetime,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Handle one hook event; always 0 (failures go to memory/hooks.log)."""
    env = os.environ if environ is None else environ
    payload: dict[str, Any] = {}
    root: Path | None = None
    try:
        # Where to log if the input itself is bad: the workspace of the current folder.
        root = location.resolve(env.get("DREAM_WORKSPACE") or None, environ=env)[0]
        raw = stdin.read()
        payload = json.loads(raw) if raw.strip() else {}
        if not isinstance(payload, dict):
            raise ValueError("the hook input is not a JSON object")
        cwd = Path(payload.get("cwd") or os.getcwd())
        root = location.resolve(env.get("DREAM_WORKSPACE") or None, environ=env, cwd=cwd)[0]
        writes = event in ("pre-compact", "session-end")
        if not writes and not (root / "memory").is_dir():
            return 0  # nothing remembered here yet, and a read must not create a workspace
        with Workspace.open(root, create=writes) as ws:
            output = _handle(event, ws, payload, now, env)
        if output is not None:
            stdout.write(json.dumps(output, ensure_ascii=False))
            stdout.flush()
    except Exception:  # noqa: BLE001 - a hook must never fail the agent; the log keeps it
        _log(root, event, traceback.format_exc(), now)
    return 0


def _handle(
    event: str, ws: Workspace, payload: dict[str, Any], now: datetime, env: Mapping[str, str]
) -> dict[str, Any] | None:
    if event == "session-start":
        context = _session_context(ws, payload, now)
        _detached(["ingest", *_project_folders(payload), "-w", str(ws.root)], ws)
        return {
            "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}
        }
    if event in ("pre-compact", "session-end"):
        transcript = payload.get("transcript_path")
        if transcript and Path(transcript).is_file():
            ingest(ws, [transcript], now, live=event == "pre-compact")
        _detached(["tick", "-w", str(ws.root)], ws)
        return None
    if event == "user-prompt-submit" and env.get("DREAM_HOOK_RECALL") == "1":
        prompt = str(payload.get("prompt") or "")
        hits = (
            [
                hit
                for hit in ws.search(prompt, limit=RECALL_HITS, now=now)
                if hit.score >= RECALL_MIN_SCORE
            ]
            if prompt.strip()
            else []
        )
        if hits:
            lines = ["Possibly relevant memories (memory_get for more):"]
            lines += [f"- #{hit.id} ({hit.created_at[:10]}) {hit.text[:300]}" for hit in hits]
            return {
                "hookSpecificOutput": {
                    "hookEventName": "UserPromptSubmit",
                    "additionalContext": "\n".join(lines),
                }
            }
    return None


def _session_context(ws: Workspace, payload: dict[str, Any], now: datetime) -> str:
    if payload.get("source") == "compact":
        notes = scratch.parse(ws.scratch_path).notes
        lines = ["Notes written since the last dream (not yet in working memory):"]
        lines += [f"- [{iso(n.at)}] {n.text}" for n in notes] or ["- (none)"]
        lines.append("Older memories: use memory_search; the working memory is MEMORY.md.")
        text = "\n".join(lines)
    else:
        text = bootstrap_block(ws, context_window=_window(payload.get("model")), now=now)
    return text if len(text) <= CONTEXT_LIMIT else text[: CONTEXT_LIMIT - len(CUT)] + CUT


def _window(model: Any) -> int | None:
    name = str(model or "").lower()
    return next((size for key, size in MODEL_WINDOWS.items() if key in name), None)


def _project_folders(payload: dict[str, Any]) -> list[str]:
    """The Claude Code project folder of this session (where its transcripts are)."""
    transcript = payload.get("transcript_path")
    return [str(Path(transcript).parent)] if transcript else []


def _detached(args: list[str], ws: Workspace) -> None:
    """Start ``dream ARGS`` in the background, its output in memory/hooks.log."""
    if args[0] == "ingest" and len(args) == 3:
        return  # no transcript folder known: nothing to catch up on
    fd = os.open(ws.memory_dir / "hooks.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        subprocess.Popen(
            [sys.executable, "-m", "dreamer.cli", *args],
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(fd)


def _log(root: Path | None, event: str, text: str, now: datetime) -> None:
    if root is None or not (root / "memory").is_dir():
        return
    try:
        fd = os.open(root / "memory" / "hooks.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(f"[{iso(now)}] {event}: {text.rstrip()}\n")
    except OSError:
        pass  # nowhere left to tell; the agent still goes on
