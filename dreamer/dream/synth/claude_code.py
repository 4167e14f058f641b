"""The claude-code synthesizer: a dream written by the user's own ``claude`` CLI, in print mode.

For people who have Claude Code (a subscription, or whatever login it has) and no API key in
the environment of a background process. The only module in dreamer that spawns ``claude``.
One call per draft, measured against Claude Code 2.1.197::

    claude -p --input-format stream-json --output-format stream-json --verbose
           --json-schema S --tools "" --no-session-persistence
           --system-prompt P --model M --max-budget-usd B --strict-mcp-config
           --mcp-config '{"mcpServers":{}}'
           --settings '{"disableAllHooks":true,"alwaysThinkingEnabled":false}'
           (one user message on stdin, as a JSON line)

- ``--json-schema`` makes the CLI offer the model one tool, ``StructuredOutput``, whose input
  schema is the working-memory schema; the result object carries ``structured_output``,
  ``usage``/``modelUsage`` (tokens) and ``total_cost_usd`` (for a subscription, the API price
  of the same tokens, not a bill).
- ``--system-prompt`` replaces Claude Code's own system prompt (~13,700 tokens) with dreamer's;
  ``--tools ""`` leaves the model no tool but the answer; no MCP server starts; no extended
  thinking (the CLI turns it on by default; the API backend does not use it either);
  ``CLAUDE_CODE_DISABLE_CLAUDE_MDS`` keeps the user's CLAUDE.md files out of the dream.
- A dream must never be captured as a session: ``--no-session-persistence`` writes no
  transcript, ``disableAllHooks`` keeps every hook (dreamer's included) from firing, and
  ``DREAM_HOOKS_DISABLED=1`` in the child's environment makes dreamer's own hook a no-op should
  a hook run all the same (a managed policy, a plugin). ``--bare`` would skip hooks too, but it
  reads no OAuth login, so it cannot serve a subscription.
- A revision cannot replay a tool call into a fresh print-mode call, so its one message is the
  first message, the draft (``prompts/dream_replay.md``) and the critiques. The first message is
  a content block of its own, byte for byte the first call's, so the revision reads the prompt
  cache the first call wrote (the CLI marks the message's last block for caching, and the API
  finds a cached prefix at an earlier block's end): this is why the message goes in as
  stream-json, which keeps blocks apart, rather than as plain text, which is one block.
- The stream shows the CLI's own retries (``api_retry`` events): when the API behind it never
  answered at all (no HTTP status: a refused connection, an unreachable host), the dream fails
  saying so, not as a timeout.

Errors become dreamer's: the CLI missing or not logged in is ``ModelUnavailable`` /
``ModelAuthError`` (one line naming the fix, never a silent offline dream), the spend cap and
the CLI's own schema retries are named, a result that is not JSON keeps its raw text.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dreamer.config import HOOKS_DISABLED, Settings
from dreamer.dream.synth import Draft, DreamInputs, Usage
from dreamer.dream.synth.answer import Capped, too_large
from dreamer.dream.synth.calls import Backend
from dreamer.dream.synth.prompt import (
    as_raw,
    draft_changes,
    draft_from,
    input_schema,
    redacted,
    revise_prompt,
    system_prompt,
    unusable,
    user_prompt,
)
from dreamer.errors import (
    ModelAuthError,
    ModelOverloaded,
    ModelRateLimited,
    ModelTimeout,
    ModelUnavailable,
    SynthesisError,
)
from dreamer.support import prompts

TOOL = "StructuredOutput"  # the tool the CLI offers for --json-schema
# No hook fires for a dream; no extended thinking, as with the API backend (the same request).
CLI_SETTINGS = json.dumps({"disableAllHooks": True, "alwaysThinkingEnabled": False})
NO_MCP = json.dumps({"mcpServers": {}})
INSTALL_HINT = "npm install -g @anthropic-ai/claude-code"
SCRUB = "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB"


def find_cli(setting: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The path of the ``claude`` command to run, or ModelUnavailable naming the fix."""
    name = setting or "claude"
    env = os.environ if environ is None else environ
    found = shutil.which(name, path=env.get("PATH")) if os.sep not in name else name
    if found and Path(found).is_file() and os.access(found, os.X_OK):
        return found
    where = f"{name!r} is not an executable file" if os.sep in name else f"no {name!r} on PATH"
    raise ModelUnavailable(
        f"the claude-code synthesizer needs Claude Code's CLI ({where}); install it "
        f"({INSTALL_HINT}) and log in, or set DREAM_CLAUDE_CLI / memory.dream.claudeCli to it, "
        'or choose another memory.dream.synthesizer (e.g. "offline")'
    )


class ClaudeCodeSynthesizer(Backend):
    """Writes the candidate state with the user's ``claude`` CLI and its login."""

    name = "claude-code"

    def __init__(self, settings: Settings, environ: Mapping[str, str] | None = None):
        self.environ = dict(os.environ if environ is None else environ)
        self.cli = find_cli(settings.claude_cli, self.environ)
        self.model: str | None = settings.model_for("claude-code")
        self.budget = settings.max_budget_usd
        self.rest = dict(settings.hormone_rest)
        self.input_budget = settings.input_tokens
        self.timeout = settings.timeout_seconds
        self.retries = settings.retries

    def command(self) -> list[str]:
        """The argument vector of one call (the data goes on stdin)."""
        return [
            self.cli,
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",  # stream-json output needs it; it adds the events, not chatter
            "--json-schema",
            json.dumps(input_schema(), ensure_ascii=False),
            "--tools",
            "",
            "--no-session-persistence",
            "--system-prompt",
            system_prompt(tool_name=TOOL),
            "--model",
            str(self.model),
            "--max-budget-usd",
            f"{self.budget:g}",
            "--settings",
            CLI_SETTINGS,
            "--strict-mcp-config",
            "--mcp-config",
            NO_MCP,
        ]

    def request(
        self,
        inputs: DreamInputs,
        *,
        critique: list[str] | None = None,
        previous: Draft | None = None,
    ) -> list[str]:
        """The text blocks of the one message of a draft ([first message]), or of a revision
        ([first message, draft and critiques]: the first block as the first call sent it)."""
        first = user_prompt(inputs, self.rest, self.input_budget, tool_name=TOOL)
        if critique is None and previous is None:
            return [first]
        if previous is None:
            raise ValueError("a revision needs the previous draft")
        draft = json.dumps(draft_changes(previous, inputs.old), indent=2, ensure_ascii=False)
        replay = prompts.render("dream_replay", tool_name=TOOL, draft=draft)
        return [first, "\n\n".join([replay, revise_prompt(critique or [], previous, TOOL)])]

    def without_secrets(self, request: list[str]) -> list[str]:
        """The message's blocks with every secret replaced."""
        return [redacted(block) for block in request]

    def _call(self, blocks: list[str], inputs: DreamInputs, previous: Draft | None) -> Draft:
        content = [{"type": "text", "text": block} for block in blocks]
        message = {"type": "user", "message": {"role": "user", "content": content}}
        code, out, err = self._run(json.dumps(message, ensure_ascii=False) + "\n")
        result = _result(out)
        if not isinstance(result, dict):
            said = _first_line(err) or _first_line(out) or "no output"
            if code != 0:
                update = (
                    " (this Claude Code is too old: run 'claude update')"
                    if ("unknown option" in said)
                    else ""
                )
                raise ModelUnavailable(
                    f"the claude CLI failed (exit {code}: {said}){update}; run 'claude -p hello' "
                    f"to see why{_scrubbed(self.environ)}",
                    out or err,
                )
            raise unusable(
                f"the claude CLI answered, but not with a JSON result ({said}); run "
                "'dream run' again",
                out,
                Usage(),
            )
        usage = _usage(result)
        if result.get("is_error") or code != 0:
            raise self._failed(result, out, usage)
        answer = result.get("structured_output")
        if answer is None:
            raise unusable(
                f"the model answered without calling {TOOL} (stop reason "
                f"{result.get('stop_reason')}); run 'dream run' again",
                str(result.get("result") or out),
                usage,
            )
        return draft_from(answer, as_raw(answer), inputs, usage, previous)

    def _run(self, text: str) -> tuple[int, str, str]:
        env = {**self.environ, HOOKS_DISABLED: "1", "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1"}
        # Set in the environment of the hooks Claude Code runs, this would make the nested CLI
        # demand bubblewrap to isolate subprocesses; a dream's CLI starts none (no tools, no
        # hooks, no MCP server), so there is nothing for it to scrub.
        env.pop(SCRUB, None)
        with tempfile.TemporaryDirectory(prefix="dream-claude-") as cwd:
            try:
                child = subprocess.Popen(
                    self.command(),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    cwd=cwd,  # no project's settings, CLAUDE.md or .mcp.json join the dream
                    env=env,
                    start_new_session=True,  # so a timeout ends the CLI and all it started
                )
            except OSError as e:
                raise ModelUnavailable(
                    f"cannot run the claude CLI {self.cli} ({e.strerror}); check "
                    "DREAM_CLAUDE_CLI / memory.dream.claudeCli"
                ) from e
            try:
                out, err = _exchange(child, text.encode("utf-8"), self.timeout)
            except subprocess.TimeoutExpired as e:
                _kill(child)
                said = (e.output or b"").decode("utf-8", "replace")
                tries = _unanswered(said)
                if tries:
                    where = self.environ.get("ANTHROPIC_BASE_URL") or "the Anthropic API"
                    raise ModelUnavailable(
                        f"the claude CLI could not reach {where} ({tries} tries in "
                        f"{self.timeout:g} s, none answered: a refused connection or an "
                        "unreachable host); check the network, or ANTHROPIC_BASE_URL if it is "
                        "set, and run 'claude -p hello' to see it",
                        said,
                    ) from e
                raise ModelTimeout(
                    f"the claude CLI did not answer within {self.timeout:g} s"
                ) from e
            if out.over:  # a runaway CLI: never read whole, never redacted whole, never kept
                _kill(child)
                raise unusable(too_large("the claude CLI"), out.text(), Usage())
        return child.returncode, out.text(), err.text()

    def _failed(self, result: dict[str, Any], out: str, usage: Usage) -> SynthesisError:
        """dreamer's error for a result the CLI marked as an error."""
        kind = str(result.get("subtype") or "")
        errors = result.get("errors")
        said = " ".join(
            str(result.get("result") or "; ".join(map(str, errors or [])) or kind).split()
        )
        status = result.get("api_error_status")
        if kind == "error_max_budget_usd":
            return SynthesisError(
                f"the dream reached its spend cap of ${self.budget:g} per call "
                f"(${result.get('total_cost_usd') or 0:.4f} spent); raise "
                "memory.dream.maxBudgetUsd or lower memory.dream.inputTokens",
                out,
                usage,
            )
        if kind == "error_max_structured_output_retries":
            return unusable(
                f"the model's answer did not fit the working-memory schema ({said}); run "
                "'dream run' again",
                out,
                usage,
            )
        if "not logged in" in said.lower() or "/login" in said or status in (401, 403):
            return ModelAuthError(
                f"Claude Code cannot log in ({said[:160]}); run 'claude' and /login (or 'claude "
                f"setup-token') as the user who runs dreamer{_scrubbed(self.environ)}",
                out,
                usage,
            )
        if status == 429:
            return ModelRateLimited(
                f"Claude Code was rate-limited ({said[:160]}); run 'dream run' again later",
                out,
                usage,
            )
        if isinstance(status, int) and status >= 500:
            return ModelOverloaded(
                f"the API behind Claude Code failed ({said[:160]}); run 'dream run' again later",
                out,
                usage,
            )
        return SynthesisError(
            f"the claude CLI failed ({said[:200] or 'no reason given'}); run 'claude -p hello' "
            "to see why",
            out,
            usage,
        )


def _usage(result: dict[str, Any]) -> Usage:
    """Tokens and cost of a CLI result: per-model counts when given (they include every call)."""

    def whole(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    usage = Usage()
    models = result.get("modelUsage")
    if isinstance(models, dict) and models:
        for counts in models.values():
            if isinstance(counts, dict):
                usage.input_tokens += whole(counts.get("inputTokens"))
                usage.output_tokens += whole(counts.get("outputTokens"))
                usage.cache_read_tokens += whole(counts.get("cacheReadInputTokens"))
                usage.cache_write_tokens += whole(counts.get("cacheCreationInputTokens"))
    else:
        raw = result.get("usage")
        counts = raw if isinstance(raw, dict) else {}
        usage.input_tokens = whole(counts.get("input_tokens"))
        usage.output_tokens = whole(counts.get("output_tokens"))
        usage.cache_read_tokens = whole(counts.get("cache_read_input_tokens"))
        usage.cache_write_tokens = whole(counts.get("cache_creation_input_tokens"))
    cost = result.get("total_cost_usd")
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        usage.cost_usd = round(float(cost), 6)
    return usage


def _exchange(child: subprocess.Popen[bytes], data: bytes, timeout: float) -> tuple[Capped, Capped]:
    """Write ``data`` to the CLI and read its stdout and stderr, each up to answer.MAX_BYTES:
    what ``communicate`` does, but a stdout past the limit stops the reading (``over``)."""
    assert child.stdin and child.stdout and child.stderr
    deadline = time.monotonic() + timeout
    out, err = Capped(), Capped()
    os.set_blocking(child.stdin.fileno(), False)
    sent = 0
    with selectors.DefaultSelector() as selector:
        if data:
            selector.register(child.stdin, selectors.EVENT_WRITE)
        else:
            child.stdin.close()
        selector.register(child.stdout, selectors.EVENT_READ, out)
        selector.register(child.stderr, selectors.EVENT_READ, err)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:  # what it said so far tells a refused connection from a slow answer
                raise subprocess.TimeoutExpired(child.args, timeout, output=bytes(out.data))
            for key, _ in selector.select(left):
                if key.fileobj is child.stdin:
                    try:
                        sent += os.write(key.fd, data[sent : sent + 65536])
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:  # the CLI stopped reading: its answer says why
                        sent = len(data)
                    if sent >= len(data):
                        selector.unregister(child.stdin)
                        child.stdin.close()
                    continue
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                if not key.data.add(chunk) and key.data is out:
                    return out, err
                # stderr past the limit is read and dropped, so the CLI never blocks on it
    child.stdout.close()
    child.stderr.close()
    try:
        child.wait(max(deadline - time.monotonic(), 0.001))
    except subprocess.TimeoutExpired:
        raise subprocess.TimeoutExpired(child.args, timeout, output=bytes(out.data)) from None
    return out, err


def _kill(child: subprocess.Popen[bytes]) -> None:
    """End the CLI and everything it started, then reap it."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    child.wait()
    for pipe in (child.stdin, child.stdout, child.stderr):
        if pipe is not None:
            pipe.close()


def _events(out: str) -> list[dict[str, Any]]:
    """The JSON objects of a stream-json output, one a line (other lines left out)."""
    found = []
    for line in out.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            found.append(event)
    return found


def _result(out: str) -> dict[str, Any] | None:
    """The stream's last ``result`` event: the call's answer, usage and cost."""
    results = [event for event in _events(out) if event.get("type") == "result"]
    return results[-1] if results else None


def _unanswered(out: str) -> int:
    """How many of the CLI's tries so far got no HTTP answer at all, when none did (0 else)."""
    retries = [e for e in _events(out) if e.get("subtype") == "api_retry"]
    if not retries or any(e.get("error_status") is not None for e in retries):
        return 0
    return len(retries)


# The line of a crash that names the exception: "TypeError: x is not a function" (Node),
# "ValueError: ..." (Python), "Error: ...".
_EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w.]*)?(?:Error|Exception)\b.*:")


def _first_line(text: str) -> str:
    """The line that says what went wrong: the exception of a crash (the last one named: a
    traceback ends with it), else the first 'error' line, else the first line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    crashed = [line for line in lines if _EXCEPTION.match(line)]
    said = next((line for line in lines if line.lower().startswith("error")), None)
    return (crashed[-1] if crashed else said or (lines[0] if lines else ""))[:200]


def _scrubbed(environ: Mapping[str, str]) -> str:
    if environ.get(SCRUB, "") not in ("", "0"):
        return (
            " (CLAUDE_CODE_SUBPROCESS_ENV_SCRUB is set: Claude Code removed credentials from "
            "the environment of the hooks it runs, so a dream started by a hook may not see "
            "a token passed in the environment)"
        )
    return ""
