"""``dream note``, ``dream search`` and ``dream hook`` without click, when their arguments are
plain; and the body of ``dream note``, which its click command runs too (those of search and
hook are in ``reading.py``, which a note never loads).

An agent starts these three as new processes, often (a hook at every session start), and
importing click costs such a process about a fifth of its time. So ``dreamer.cli.run`` first
offers the arguments to ``run`` here, which parses a strict subset of what click accepts: the
command, its one argument, and its options each given once as ``--name VALUE``,
``--name=VALUE`` or ``-w VALUE`` (flags bare), with values click would convert the same way.
Anything else (``--help``, ``--``, a value or an argument that starts with ``-``, an option
twice, a value click would refuse, a workspace about to be created or kept in PostgreSQL,
Windows) returns None before any work, and click parses it as always, with its messages.
``tests/test_cli_fast.py`` runs the same command lines both ways and compares what they print
and store.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import sys
from collections.abc import Callable

from dreamer.errors import DreamError, InvalidNote
from dreamer.kinds import MAX_SEARCH_LIMIT, SEARCH_TYPES
from dreamer.support import failures

TYPE_CHECKING = False  # as typing's, without importing typing (~2 ms of a fresh note)
if TYPE_CHECKING:
    from typing import IO, Any

    from dreamer.memory.workspace import Workspace

Echo = Callable[..., None]  # click.echo's signature: (message, *, err=False)
HOOK_EVENTS = ("session-start", "pre-compact", "session-end", "stop", "user-prompt-submit")
DEFAULT_IMPORTANCE = 0.7
DEFAULT_LIMIT = 6
DEFAULT_BUDGET = 5.0
# click strips these from what it prints to anything but a terminal (click._compat._ansi_re).
_ANSI = re.compile(r"\033\[[0-?]*[ -/]*[@-~]")


# --- the note's body, shared with its click command ----------------------------------------


def note_in(
    ws: Workspace,
    text: str,
    importance: float,
    semantic_type: str | None,
    at: str | None,
    about: str | None,
    replaces: str | None,
    echo: Echo,
) -> None:
    """``dream note``: store the note, print its id, say what was redacted."""
    with ws:
        if text == "-":
            text = read_stdin(ws.settings.note_max_chars)
        # No embedder in a one-shot process (~70 ms to load): the next search or tick embeds
        # the note; words find it at once.
        echo(
            ws.note(
                text,
                importance=importance,
                type=semantic_type,
                at=at,
                embed=False,
                about=about,
                replaces=replaces,
            )
        )
        found = ws.redact(text).found  # after the note: a refused note is not scanned
    if found:
        kinds = ", ".join(dict.fromkeys(finding.kind for finding in found))
        echo(
            f"Redacted {len(found)} secret{'s' if len(found) > 1 else ''} ({kinds}) before "
            "storing; only the [secret:...] placeholders were kept.",
            err=True,
        )


def read_stdin(max_chars: int) -> str:
    """The note on standard input, read no further than a note may be long."""
    # Bytes, decoded here: text-mode stdin would follow the locale and could alter them.
    # UTF-8 takes at most 4 bytes a character: past that many bytes the note is surely too
    # long, and a 200 MB pipe is refused without being held in memory.
    limit = 4 * max_chars
    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        # Imported here: a search the serve's door answers never loads the workspace.
        from dreamer.memory.workspace import check_note_size

        check_note_size(limit + 1, max_chars, more=True)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InvalidNote(
            f"standard input is not UTF-8 (byte {e.start}); convert it, e.g. with iconv"
        ) from None


# --- the fast path --------------------------------------------------------------------------


def _float(value: str) -> float:
    return float(value)  # what click's FLOAT does


def _limit(value: str) -> int:
    number = int(value)  # what click's INT does; out of range is click's error to tell
    if not 1 <= number <= MAX_SEARCH_LIMIT:
        raise ValueError(value)
    return number


def _budget(value: str) -> float:
    seconds = float(value)
    if not 0.1 <= seconds <= 600:
        raise ValueError(value)
    return seconds


def _choice(choices: tuple[str, ...]) -> Callable[[str], str]:
    def convert(value: str) -> str:
        if value not in choices:
            raise ValueError(value)
        return value

    return convert


def _text(value: str) -> str:
    return value


_WORKSPACE = {"-w": ("workspace", _text), "--workspace": ("workspace", _text)}
# command: (its argument: (name, converter), its options: {flag: (name, converter)}, flags)
_SPECS: dict[str, tuple[tuple[str, Callable[[str], Any]], dict[str, Any], dict[str, str]]] = {
    "note": (
        ("text", _text),
        {
            "--importance": ("importance", _float),
            "--type": ("semantic_type", _text),
            "--at": ("at", _text),
            "--about": ("about", _text),
            "--replaces": ("replaces", _text),
            **_WORKSPACE,
        },
        {},
    ),
    "search": (
        ("query", _text),
        {
            "--limit": ("limit", _limit),
            "--type": ("search_type", _choice(SEARCH_TYPES)),
            **_WORKSPACE,
        },
        {"--json": "as_json"},
    ),
    "hook": (
        ("event", _choice(HOOK_EVENTS)),
        {"--budget": ("budget", _budget), **_WORKSPACE},
        {"--recall": "recall", "--in-background": "background"},
    ),
}


def parse(args: list[str]) -> tuple[str, dict[str, Any]] | None:
    """The command and its values, when ``args`` are plain; None when click should parse."""
    if not args or args[0] not in _SPECS:
        return None
    command, rest = args[0], args[1:]
    (argument, convert_argument), options, flags = _SPECS[command]
    values: dict[str, Any] = {}
    given: list[str] = []
    i = 0
    while i < len(rest):
        token = rest[i]
        i += 1
        if not token.startswith("-") or token == "-":
            given.append(token)
            continue
        name, equals, value = token.partition("=")
        if name in flags:
            if equals or flags[name] in values:
                return None
            values[flags[name]] = True
            continue
        if name not in options or (equals and name == "-w"):
            return None  # click reads -w=x as the value "=x"; let it
        if not equals:
            if i == len(rest):
                return None
            value = rest[i]
            i += 1
        destination, convert = options[name]
        if destination in values or not value or value.startswith("-"):
            return None
        try:
            values[destination] = convert(value)
        except ValueError:
            return None
    if len(given) != 1:
        return None
    try:
        values[argument] = convert_argument(given[0])
    except ValueError:
        return None
    if "workspace" not in values:
        values["workspace"] = os.environ.get("DREAM_WORKSPACE") or None  # click's envvar rule
    return command, values


def run(args: list[str]) -> int | None:
    """Run ``dream ARGS`` without click and return its exit code; None to leave it to click."""
    if os.name != "posix" or any(_plain_stream(s) is None for s in (sys.stdout, sys.stderr)):
        return None  # Windows consoles and ASCII streams are click's to handle
    if any(name.startswith("_") and name.endswith("_COMPLETE") for name in os.environ):
        return None  # shell completion
    parsed = parse(args)
    if parsed is None:
        return None
    command, values = parsed
    if failures.file_size_limit() is not None:  # without one, no write ends in SIGXFSZ
        failures.ignore_file_size_signal()
    try:
        try:
            return _dispatch(command, values)
        except DreamError as e:
            _echo(f"Error: {e}", err=True)
            return e.exit_code
        except OSError as e:
            known = failures.explain_os_error(e)
            if known is None:
                raise
            _echo(f"Error: {known}", err=True)
            return known.exit_code
    except (EOFError, KeyboardInterrupt):
        _echo("", err=True)
        _echo("Aborted!", err=True)
        return 1
    except OSError as e:
        if e.errno != errno.EPIPE:
            raise
        # The reader went away (| head): exit 1 without a flush error, as click does.
        sys.stdout = _Quiet(sys.stdout)
        sys.stderr = _Quiet(sys.stderr)
        return 1


def _dispatch(command: str, values: dict[str, Any]) -> int | None:
    if command == "hook":
        from dreamer.cli.reading import hook_in

        return hook_in(
            values["event"],
            values.get("budget", DEFAULT_BUDGET),
            values.get("recall", False),
            values.get("background", False),
            values["workspace"],
        )
    if command == "search":
        from dreamer.cli.reading import search_in, show_hits
        from dreamer.memory import door  # a running door answers without numpy or store

        query, limit = values["query"], values.get("limit", DEFAULT_LIMIT)
        hits = door.ask(values["workspace"], query, limit, values.get("search_type", "both"))
        if hits is not None:
            show_hits(hits, query, values.get("as_json", False), _echo)
            return 0
    ws = _open(values["workspace"], create=command == "note")
    if ws is None:
        return None
    if command == "note":
        note_in(
            ws,
            values["text"],
            values.get("importance", DEFAULT_IMPORTANCE),
            values.get("semantic_type"),
            values.get("at"),
            values.get("about"),
            values.get("replaces"),
            _echo,
        )
    else:
        search_in(
            ws,
            values["query"],
            values.get("limit", DEFAULT_LIMIT),
            values.get("search_type", "both"),
            values.get("as_json", False),
            _echo,
        )
        door.leave_open(ws.root, ws.settings.search_warm_minutes)  # for the next search
    return 0


def _open(path: str | None, *, create: bool) -> Workspace | None:
    """The workspace, as ``open_workspace`` opens it when it has nothing to announce; None
    when it would announce something (a workspace it creates, one kept in PostgreSQL)."""
    from dreamer.memory import location
    from dreamer.memory.workspace import Workspace

    root, _how = location.resolve(path)
    if create and not (root / "memory").is_dir():
        return None
    ws = Workspace.open(root, create=create)
    if ws.settings.store_url:
        ws.close()
        return None
    return ws


def _plain_stream(stream: IO[str] | None) -> IO[str] | None:
    """The stream, unless click would rewrap it (no stream, or an ASCII one)."""
    if stream is None:
        return None
    try:
        ascii = codecs.lookup(getattr(stream, "encoding", None) or "ascii").name == "ascii"
    except LookupError:
        ascii = False
    return None if ascii else stream


def _echo(message: object = "", *, err: bool = False) -> None:
    """What click.echo does with a text for a standard stream."""
    stream = sys.stderr if err else sys.stdout
    out = f"{message}\n"
    try:
        terminal = stream.isatty()
    except Exception:  # noqa: BLE001 - click.isatty's rule: a stream that cannot tell is none
        terminal = False
    if not terminal:
        out = _ANSI.sub("", out)
    stream.write(out)
    stream.flush()


class _Quiet:
    """A stream whose flush ignores a closed pipe (click's PacifyFlushWrapper)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as e:
            if e.errno != errno.EPIPE:
                raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
