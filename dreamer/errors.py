"""Every failure dreamer reports, as one hierarchy.

    DreamError                      base; exit code 1
    ├── UsageError                  bad input from the caller; exit code 2
    │   ├── InvalidNote             empty note, importance outside 0..1, unknown type, bad time
    │   │   └── NoteTooLarge        a note longer than memory.note.maxChars
    │   ├── InvalidSetting          a dreamer.toml key or value, or a DREAM_* variable, is wrong
    │   ├── CrystalNotFound         no crystal has that id
    │   ├── InvalidStimulus         unknown hormone, delta not a number from -1 to 1, bad lexicon
    │   ├── InvalidToolInput        an agent's tool call names no known tool or breaks its schema
    │   ├── DreamNotFound           no dream in the journal has that id
    │   ├── NoCandidate             review mode: no candidate waits to be adopted or discarded
    │   └── PinNotFound             no pinned fact has that id
    ├── WorkspaceError              the workspace folder is missing, unreadable or not writable
    │   ├── PermissionDenied        this user may not read or write a workspace file
    │   └── LinkRefused             a file dreamer writes is a symbolic link
    ├── DiskFull                    no space left on the disk (or quota) for a write
    ├── FileSizeLimit               a write passed the process's file-size limit (ulimit -f)
    ├── OpenFilesLimit              the process reached its open-files limit (ulimit -n)
    ├── StorageIOError              the disk failed a read or write; no damage found in the file
    ├── StoreCorrupt                crystals.db is damaged (quick_check says so) or not SQLite
    ├── StoreUnavailable            the PostgreSQL store cannot be reached, or psycopg is missing
    ├── LockHeld                    another dreamer holds the workspace lock
    ├── LeaseLost                   the workspace's lease passed to another worker mid-dream
    ├── CandidateStale              MEMORY.md changed since the candidate was written
    ├── ScratchError                the scratch file cannot be read or written
    ├── TokenizerError              the offline token encoding is missing or damaged
    ├── IngestFailed                a file given to 'dream ingest' cannot be read or understood
    ├── SynthesisError              the synthesizer failed (raw output kept in .raw)
    │   ├── ModelAuthError          the API key was refused
    │   ├── ModelRateLimited        the API said slow down
    │   ├── ModelOverloaded         the API is overloaded or answered 5xx
    │   ├── ModelTimeout            the API did not answer in time
    │   ├── ModelUnavailable        the configured backend cannot be used (CLI missing, refused)
    │   └── ModelOutputInvalid      the model's answer did not fit the schema
    ├── DreamRejected               the guards rejected every candidate; exit code 3
    └── DreamDeferred               MEMORY.md was edited during the dream, kept; exit code 4

Messages are one line and name the fix.

The exit codes, the one table every command uses (``dream run``, ``tick``, ``consolidate``...):

    0  done (a skipped dream is a done job that reports "skipped")
    1  an error: DreamError, or a job that failed or was interrupted
    2  bad input: UsageError and its subclasses
    3  the guards rejected the dream: MEMORY.md unchanged
    4  the dream deferred: MEMORY.md was edited while it ran; the edit stands, the notes wait
"""

from __future__ import annotations

from typing import Any

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_REJECTED, EXIT_DEFERRED = 0, 1, 2, 3, 4
_OUTCOME_EXIT = {
    "failed": EXIT_ERROR,
    "interrupted": EXIT_ERROR,
    "rejected": EXIT_REJECTED,
    "deferred": EXIT_DEFERRED,
}


def exit_code(outcome: str) -> int:
    """The exit code of a job or dream outcome ("committed", "rejected", "failed", ...)."""
    return _OUTCOME_EXIT.get(outcome, EXIT_OK)


class DreamError(Exception):
    """Base class of every error dreamer raises on purpose."""

    exit_code = EXIT_ERROR
    dream_id: int | None = None  # the journal row that recorded this failure, if any


class UsageError(DreamError):
    """The caller asked for something that cannot be done as asked."""

    exit_code = EXIT_USAGE


class InvalidNote(UsageError):
    """A note, its importance, type or time is not acceptable."""


class NoteTooLarge(InvalidNote):
    """A note is longer than the workspace's ``memory.note.maxChars``; nothing was stored."""


class InvalidSetting(UsageError):
    """A setting in dreamer.toml or the environment is unknown or of the wrong type."""


class CrystalNotFound(UsageError):
    """No crystal has the requested id."""


class InvalidStimulus(UsageError):
    """A hormone stimulus names an unknown hormone or has a delta that is not from -1 to 1."""


class InvalidToolInput(UsageError):
    """An agent's tool call names an unknown tool or its input does not fit the tool's schema."""


class DreamNotFound(UsageError):
    """No dream in the journal has the requested id."""


class NoCandidate(UsageError):
    """Review mode: no candidate waits to be adopted or discarded."""


class PinNotFound(UsageError):
    """No pinned fact has that id."""


class CandidateStale(DreamError):
    """MEMORY.md changed after the candidate was written; adopting it would lose that change."""


class WorkspaceError(DreamError):
    """The workspace folder is missing, unreadable or not writable."""


class PermissionDenied(WorkspaceError):
    """This user may not read or write a file or folder of the workspace."""


class LinkRefused(WorkspaceError):
    """A file dreamer would write is a symbolic link: the write could land outside the folder."""


class DiskFull(DreamError):
    """The disk (or the user's quota) has no space left for a write."""


class FileSizeLimit(DreamError):
    """A write passed the process's file-size limit (``ulimit -f``, systemd's LimitFSIZE)."""


class OpenFilesLimit(DreamError):
    """The process reached its open-files limit (``ulimit -n``, systemd's LimitNOFILE)."""


class StorageIOError(DreamError):
    """The disk failed a read or write of the store, and its integrity check finds no damage."""


class StoreCorrupt(DreamError):
    """crystals.db is damaged (its integrity check says so) or is not a SQLite database."""


class StoreUnavailable(DreamError):
    """The PostgreSQL store cannot be reached or used, or its driver is not installed."""


class LockHeld(DreamError):
    """Another dreamer process holds the workspace lock."""


class LeaseLost(DreamError):
    """The workspace's lease expired and another worker took it: this one may not commit."""


class ScratchError(DreamError):
    """The scratch write-ahead log could not be read or written."""


class TokenizerError(DreamError):
    """The shipped token encoding file is missing or fails its hash check."""


class IngestFailed(DreamError):
    """A file given to ``dream ingest`` cannot be read or is not in a format dreamer reads."""


class SynthesisError(DreamError):
    """The synthesizer could not produce a candidate state."""

    retry = True  # False when the server said not to try again (x-should-retry: false)

    def __init__(self, message: str, raw: str | None = None, usage: Any = None):
        super().__init__(message)
        self.raw = raw  # the model's answer as it came, for the journal
        self.usage = usage  # what an unusable answer still cost (a synth Usage), if known


class ModelAuthError(SynthesisError):
    """The Anthropic API refused the key."""


class ModelRateLimited(SynthesisError):
    """The Anthropic API rate-limited the request."""


class ModelOverloaded(SynthesisError):
    """The Anthropic API is overloaded or failed on its side."""


class ModelTimeout(SynthesisError):
    """The Anthropic API did not answer in time."""


class ModelUnavailable(SynthesisError):
    """The configured synthesizer cannot run: its CLI is missing, not logged in, or refused."""


class ModelOutputInvalid(SynthesisError):
    """The model answered, but not in the shape the schema asks for."""


class DreamRejected(DreamError):
    """The guards rejected the candidate state and every revision of it."""

    exit_code = EXIT_REJECTED

    def __init__(self, message: str, reasons: list[str] | None = None):
        super().__init__(message)
        self.reasons: list[str] = reasons or []  # every critique of the last candidate


class DreamDeferred(DreamError):
    """MEMORY.md changed while the dream ran: the edit stands and the notes wait for the next."""

    exit_code = EXIT_DEFERRED
