"""One agent's memory: its folder, its store, its lock, and the note/search/get path.

Layout::

    <root>/MEMORY.md  MEMORY.md.seed-backup  dreamer.toml
    <root>/memory/scratch.md  DREAM.md  niche.json  crystals.db  dream.lock

With ``memory.store.url`` naming PostgreSQL, crystals.db and scratch.md are rows of the shared
database instead, and so is MEMORY.md's committed state (the file is this machine's copy).
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dreamer.config import DEFAULT_NOTE_MAX_CHARS, Settings, load_settings
from dreamer.errors import (
    DreamDeferred,
    InvalidNote,
    LeaseLost,
    NoteTooLarge,
    UsageError,
    WorkspaceError,
)
from dreamer.memory import location
from dreamer.memory.scratch_file import Note
from dreamer.store import NewCrystal, content_hash, open_store
from dreamer.store.kinds import (
    CRYSTAL_SOURCES,
    DEFAULT_IMPORTANCE,
    MAX_SEARCH_LIMIT,
    SEMANTIC_TYPES,
    SOURCE_SPEAKERS,
    SPEAKERS,
    infer_type,
)
from dreamer.support import failures
from dreamer.support.bounds import head
from dreamer.support.encoding import require_utf8
from dreamer.support.files import DIR_MODE, atomic_write
from dreamer.support.locks import hold
from dreamer.support.times import as_utc, parse_iso, utc_now

if TYPE_CHECKING:  # the search module loads numpy: imported when a search runs, not a note
    from dreamer.memory.forgetting import ForgetReport
    from dreamer.memory.scratch import ScratchLog
    from dreamer.memory.scratch_file import FileAppender
    from dreamer.retrieval.embed import Embedder
    from dreamer.retrieval.search import Hit
    from dreamer.store import Store
    from dreamer.store.rows import Crystal
    from dreamer.support.secrets import Redaction

# A shared (PostgreSQL) store's workspace lease: renewed every third of it while held.
LEASE_TTL = timedelta(minutes=2)


def resolve_root(path: str | os.PathLike[str] | None) -> Path:
    """The workspace folder: the path given, else as ``dreamer.memory.location`` resolves it."""
    return location.resolve(path)[0]


class Workspace:
    """An open workspace: paths, settings, store, and the agent's memory operations."""

    def __init__(self, root: Path, settings: Settings, embedder: Embedder | None = None):
        self.root = root
        self.settings = settings
        self._embedder = embedder  # made on first use: a note never embeds (dream note)
        self._store: Store | None = None
        self._store_lock = threading.Lock()
        self._fence: int | None = None  # the lease token while this process holds the lock
        # On a read-only file system (opened by a command that only reads): the store is read
        # as it is, and a search records nothing and embeds no waiting note.
        self.read_only = False

    # --- opening --------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        create: bool = True,
        overrides: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
        embedder: Embedder | None = None,
    ) -> Workspace:
        """Open the workspace at path (created on first use unless create=False)."""
        root = resolve_root(path)
        if root.exists() and not root.is_dir():
            raise WorkspaceError(f"{root} is a file, not a folder; pass a folder with -w PATH")
        memory = root / "memory"
        if not memory.is_dir():
            if not create:
                raise WorkspaceError(
                    f"no dreamer workspace at {root}; create one with 'dream init -w {root}'"
                )
            try:
                # Every folder made here (the root and any missing parent of it) is owner-only
                # whatever the umask; an existing folder the user chose is theirs.
                made = [folder for folder in (*reversed(root.parents), root) if not folder.exists()]
                for folder in [*made, memory]:
                    folder.mkdir(mode=DIR_MODE, exist_ok=True)
                    folder.chmod(DIR_MODE)
            except OSError as e:
                raise WorkspaceError(
                    f"cannot create a workspace at {root} ({e.strerror}); pick a writable folder"
                ) from e
        read_only = False
        if not os.access(memory, os.R_OK | os.W_OK | os.X_OK):
            if not failures.on_read_only_fs(memory):
                raise WorkspaceError(f"{memory} is not readable and writable; fix its permissions")
            if create or not os.access(memory, os.R_OK | os.X_OK):
                # A command that writes: named for what it is, not a permission to fix.
                raise failures.denied(memory, read_only_fs=True)
            read_only = True
        settings = load_settings(root / "dreamer.toml", environ=environ, overrides=overrides)
        ws = cls(root, settings, embedder)
        ws.read_only = read_only
        return ws

    def init(self) -> None:
        """Create the scratch and the database if they do not exist yet."""
        _ = self.store
        self._appender().init()

    @property
    def embedder(self) -> Embedder:
        """The embedder ``memory.search.embedder`` names (made, once, on first use)."""
        if self._embedder is None:
            from dreamer.retrieval.embed import embedder_for

            self._embedder = embedder_for(self.settings.embedder)
        return self._embedder

    # --- paths ----------------------------------------------------------------------------

    @property
    def memory_dir(self) -> Path:
        """``<root>/memory``."""
        return self.root / "memory"

    @property
    def memory_md(self) -> Path:
        """The committed state, ``<root>/MEMORY.md``."""
        return self.root / "MEMORY.md"

    @property
    def seed_backup(self) -> Path:
        """The seed migration's byte-for-byte copy of a hand-written MEMORY.md."""
        return self.root / "MEMORY.md.seed-backup"

    @property
    def report_html(self) -> Path:
        """The page ``dream report`` draws by default, ``memory/report.html``."""
        return self.memory_dir / "report.html"

    @property
    def scratch_path(self) -> Path:
        """The write-ahead log, ``memory/scratch.md``."""
        return self.memory_dir / "scratch.md"

    @property
    def scratch(self) -> ScratchLog:
        """The write-ahead log: ``memory/scratch.md``, or rows of a shared (PostgreSQL) store,
        which a fleet's machines all see without sharing this folder."""
        # Imported here: a search never needs the scratch's code (nor its lock's), and a note
        # not the store's contract (dreamer.store.base), whose shared-store parts these are.
        from dreamer.store.base import ScratchRows

        store = self.store
        if isinstance(store, ScratchRows):
            from dreamer.memory.scratch_rows import RowScratch

            return RowScratch(store, lambda: self._fence, self.scratch_path)
        from dreamer.memory.scratch import FileScratch

        return FileScratch(self.scratch_path)

    def _appender(self) -> ScratchLog | FileAppender:
        """What a note writes through: the scratch log, or for the file only its append (a
        fresh ``dream note`` loads no code that reads the log)."""
        if self.settings.store_url:  # without one the store is the SQLite file: no rows
            return self.scratch
        from dreamer.memory.scratch_file import FileAppender

        return FileAppender(self.scratch_path)

    def read_memory(self, *, errors: str = "strict") -> str:
        """MEMORY.md's committed state: a shared store's state row (the file on this machine
        may be older: another machine dreamt), else the file ("" when there is none)."""
        from dreamer.store.base import Leasing

        store = self.store
        if isinstance(store, Leasing):
            row = store.read_state()
            if row is not None:
                return row[0]
        from dreamer.memory.state import read_memory  # here: a note never reads MEMORY.md

        return read_memory(self.memory_md, errors=errors)

    @property
    def dream_md(self) -> Path:
        """The user's instructions to the dream, ``memory/DREAM.md``."""
        return self.memory_dir / "DREAM.md"

    @property
    def niche_json(self) -> Path:
        """Ecosystem data for The Niche, ``memory/niche.json``."""
        return self.memory_dir / "niche.json"

    @property
    def db_path(self) -> Path:
        """The crystal store, ``memory/crystals.db``."""
        return self.memory_dir / "crystals.db"

    @property
    def store(self) -> Store:
        """The open crystal store (opened, and migrated, on first use)."""
        with self._store_lock:  # two threads' first use must not open two connections
            if self._store is None:
                # The one place a workspace's backend is chosen: the SQLite file in memory/,
                # or, with memory.store.url set, this workspace's rows in PostgreSQL.
                self._store = open_store(
                    self.db_path,
                    url=self.settings.store_url,
                    key=str(self.root.resolve()),
                    read_only=self.read_only,
                )
            return self._store

    def close(self) -> None:
        """Close the database connection."""
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the workspace lock (non-blocking: raises LockHeld if another dreamer has it)."""
        busy = f"dream already running in {self.root} (pid {{pid}}); wait for it to finish"
        from dreamer.store.base import Leasing

        with hold(self.memory_dir / "dream.lock", wait=False, busy=busy):
            store = self.store
            if not isinstance(store, Leasing):
                yield
                return
            # Across machines the lock file is not enough: the store's lease decides, and its
            # token fences the state this holder may write.
            from dreamer.memory import lease

            with lease.held(store, self.root, LEASE_TTL) as token:
                self._fence = token
                try:
                    yield
                finally:
                    self._fence = None

    def write_memory(self, text: str, now: datetime, *, expected: str | None = None) -> None:
        """Commit MEMORY.md: on a shared store the fenced state row first, then the file.

        Call it holding ``lock()``. On a shared store whose lease passed to another worker
        meanwhile, nothing is written and LeaseLost says so: a newer state stands. With
        ``expected`` (the text the caller read), nothing is written when the file is no longer
        that text: a person's edit meanwhile raises DreamDeferred and stands.
        """
        from dreamer.store.base import Leasing

        store = self.store
        # A shared store's state row is the truth, and only the lease's holder writes it: a
        # row changed meanwhile means the lease passed on, which the fenced write tells.
        row = expected is not None and isinstance(store, Leasing) and store.read_state()
        if expected is not None and not row:
            from dreamer.memory.state import read_memory

            if read_memory(self.memory_md, errors="replace") != expected:
                raise DreamDeferred(
                    "MEMORY.md was edited during the dream; the edit is kept and the next "
                    "dream reads it"
                )
        if isinstance(store, Leasing) and (
            self._fence is None or not store.write_state(text, self._fence, now)
        ):
            raise LeaseLost(
                f"the workspace lease on {self.root} passed to another worker during this run; "
                "MEMORY.md is left as that worker wrote it (the notes go back to the scratch)"
            )
        atomic_write(self.memory_md, text)

    # --- the agent's memory operations ------------------------------------------------------

    def note(
        self,
        text: str,
        importance: float = DEFAULT_IMPORTANCE,
        type: str | None = None,
        at: datetime | str | None = None,
        *,
        source: str = "scratch",
        embed: bool = True,
        about: str | None = None,
        replaces: str | int | None = None,
        speaker: str | None = None,
    ) -> int:
        """Write a note to the scratch and index it as a crystal; return the crystal id.

        ``speaker`` is who said it (``dreamer.store.kinds.SPEAKERS``): the agent's own note by
        default; ``"user"`` for the user's own words.

        ``about`` names what the note is about ("Dagster migration target date"); ``replaces``
        what it replaces (a crystal id like "#12" or the int ``note`` returned, or the old
        words): the next dream states
        the new value and not the one replaced.

        ``embed=False`` stores the crystal without its vector, for a short-lived process that
        should not load the embedder (``dream note``): words find it at once, and the next
        search (in any process) or consolidation tick gives it its vector before ranking.
        """
        text, importance, semantic_type, moment = validate_note(
            text, importance, type, at, max_chars=self.settings.note_max_chars
        )
        about, replaces = note_fields(about, replaces)
        text = self.redact(text).text
        about = self.redact(about).text if about else None
        replaces = self.redact(replaces).text if replaces else None
        if source not in CRYSTAL_SOURCES:
            raise InvalidNote(f"unknown source {source!r}; use one of {', '.join(CRYSTAL_SOURCES)}")
        if speaker is not None and speaker not in SPEAKERS:
            raise InvalidNote(f"unknown speaker {speaker!r}; use one of {', '.join(SPEAKERS)}")
        # An unreadable database must fail before the scratch changes.
        self.store  # noqa: B018 - opening it is the check
        self._appender().append(
            Note(at=moment, importance=importance, text=text, about=about, replaces=replaces)
        )
        if source == "scratch":
            from dreamer.memory import hormones

            # An agent's own words move its hormones (auto/seed notes must not feed back).
            for hormone, delta, reason in hormones.stimuli_from_text(
                text, hormones.load_lexicon(self)
            ):
                hormones.feel(self, hormone, delta, reason, moment, source="note")
        again = self.store.crystals.find_by_hash(content_hash(text))
        crystal_id = self.index(
            NewCrystal(
                text,
                source=source,
                importance=importance,
                at=moment,
                semantic_type=semantic_type,
                about=about,
                replaces=replaces,
                speaker=speaker,
            ),
            embed=embed,
        )
        if again is not None:
            from dreamer.memory import repeats  # here: only a note seen before is a sighting

            repeats.record(self.store, again, moment)
        return crystal_id

    def index(self, crystal: NewCrystal, *, embed: bool = True) -> int:
        """Make a crystal unless its text already is one (by content hash); return its id.

        The text is redacted, a missing semantic type inferred, and the hormone levels at
        ``crystal.at`` recorded. A slow embedder (``deferred``, e.g. the minilm sentence model)
        never embeds here: the crystal waits without a vector, as with ``embed=False``.
        """
        require_utf8(crystal.text, "text")  # a door names it better; this is the last one
        # NUL: SQLite would keep it and PostgreSQL refuse the row; dropped the same on both
        # (a note with one is refused at the door, ingested text loses it).
        text = self.redact(crystal.text).text.replace("\x00", "")
        embed = embed and not getattr(self.embedder, "deferred", False)
        blob = None
        if embed:
            from dreamer.retrieval.embed import embed_texts, to_blob

            blob = to_blob(embed_texts(self.embedder, [text])[0])
        from dreamer.memory import hormones

        crystal_id, _created = self.store.crystals.add_crystal(
            replace(
                crystal,
                text=text,
                semantic_type=crystal.semantic_type or infer_type(head(text)),
                speaker=crystal.speaker or SOURCE_SPEAKERS.get(crystal.source),
                embedding=blob,
                embedder=self.embedder.name if embed else None,
                hormones=hormones.levels(self, crystal.at),
            )
        )
        return crystal_id

    def redact(self, text: str) -> Redaction:
        """Text as it may be stored: secrets replaced, unless memory.secrets.redact is off."""
        # Imported here: what only reads the memory (a session's start, a search) never redacts.
        from dreamer.support.secrets import Redaction, redact

        return redact(text) if self.settings.redact_secrets else Redaction(text, ())

    def forget(
        self, ids: Sequence[int], *, reason: str = "by request", now: datetime | None = None
    ) -> ForgetReport:
        """Forget these crystals everywhere, bytes included (see dreamer.memory.forgetting).

        ``ids`` is a list of ints: a string or any other value raises UsageError.
        """
        from dreamer.memory import forgetting

        checked = forgetting.crystal_ids(ids)
        require_utf8(reason, "reason")
        moment = as_utc(now) if now else utc_now()
        with self.lock():  # never under a running dream's feet
            return forgetting.forget(self, checked, reason=reason, now=moment)

    def search(
        self,
        query: str,
        limit: int = 6,
        search_type: str = "both",
        *,
        now: datetime | None = None,
    ) -> list[Hit]:
        """Hybrid search over the crystals (see dreamer.retrieval.search)."""
        if not isinstance(query, str):
            raise UsageError(f"a query is text (str), not {type_name(query)}")
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise UsageError(f"limit is a whole number from 1 to {MAX_SEARCH_LIMIT}, not {limit!r}")
        if limit > MAX_SEARCH_LIMIT:
            raise UsageError(f"limit must be at most {MAX_SEARCH_LIMIT}, not {limit}")
        require_utf8(query, "query")  # else the search log would refuse it at every later write
        from dreamer.retrieval.reindex import embed_waiting
        from dreamer.retrieval.search import search as run_search

        # One change mark for the whole search (a round trip on PostgreSQL, not one a read).
        with self.store.reading():
            # Notes stored without a vector (a fresh `dream note`) are found by meaning too.
            if not self.read_only:
                embed_waiting(self.store, self.embedder)
            return run_search(
                self.store,
                self.embedder,
                self.settings,
                query,
                now=as_utc(now) if now else utc_now(),
                limit=limit,
                search_type=search_type,
                record=not self.read_only,
            )

    def get(self, crystal_id: int) -> Crystal:
        """One crystal, whole."""
        return self.store.crystals.get(_crystal_id(crystal_id))


NOTE_FIELD_CHARS = 300  # about / replaces: a label or the old words, not a second note


def note_fields(about: Any, replaces: Any) -> tuple[str | None, str | None]:
    """Check a note's optional about/replaces; return them stripped or raise InvalidNote."""
    out: list[str | None] = []
    for name, value in (("about", about), ("replaces", replaces)):
        if value is None:
            out.append(None)
            continue
        if name == "replaces" and not isinstance(value, str):
            # The id Workspace.note returned (``replaces=ws.note(...)``) names that crystal.
            if type(value) is not int or value < 1:
                raise InvalidNote(
                    f'replaces is an earlier note\'s id (an int from 1, or text like "#12") '
                    f"or its old words, not {value!r}; or leave it out"
                )
            value = f"#{value}"
        if not isinstance(value, str):
            raise InvalidNote(f"{name} is text (str), not {type_name(value)}; or leave it out")
        require_utf8(value, f"note's {name}", InvalidNote)
        flat = " ".join(value.split())
        if not flat:
            raise InvalidNote(f"{name} is empty; name it in a few words, or leave it out")
        if len(flat) > NOTE_FIELD_CHARS:
            raise InvalidNote(
                f"{name} has {len(flat)} characters (at most {NOTE_FIELD_CHARS}); "
                "name it in a few words and put the rest in the note"
            )
        out.append(flat)
    return out[0], out[1]


def validate_note(
    text: Any,
    importance: Any,
    type: Any,
    at: Any,
    *,
    max_chars: int = DEFAULT_NOTE_MAX_CHARS,
) -> tuple[str, float, str | None, datetime]:
    """Check a note's fields; return them normalised or raise InvalidNote naming the fix."""
    if not isinstance(text, str):
        raise InvalidNote(f"a note is text (str), not {type_name(text)}; pass the words to keep")
    check_note_size(len(text), max_chars)
    if not text.strip():
        raise InvalidNote("the note is empty; pass the text to remember")
    if "\x00" in text:
        # SQLite would keep it and PostgreSQL refuse it: one rule for both, at the door.
        at_char = text.index("\x00")
        raise InvalidNote(
            f"the note contains a NUL character (at character {at_char}); "
            "remove it (a note is text, not binary data)"
        )
    require_utf8(text, "note", InvalidNote)
    if isinstance(importance, bool) or not isinstance(importance, int | float):
        raise InvalidNote(f"importance must be a number from 0 to 1, not {importance!r}")
    if math.isnan(importance) or not 0.0 <= importance <= 1.0:
        raise InvalidNote(f"importance must be from 0 to 1, not {importance}")
    if type is not None and type not in SEMANTIC_TYPES:
        raise InvalidNote(f"unknown type {type!r}; use one of {', '.join(SEMANTIC_TYPES)}")
    if at is None:
        moment = utc_now()
    elif isinstance(at, datetime):
        moment = as_utc(at)
    else:
        try:
            moment = parse_iso(str(at))
        except ValueError as e:
            raise InvalidNote(str(e)) from None
    # Rounded as the scratch writes it, so the WAL and the crystal agree.
    return text, round(float(importance), 3), type, moment.replace(microsecond=0)


def check_note_size(chars: int, max_chars: int, *, more: bool = False) -> None:
    """Raise NoteTooLarge when a note of ``chars`` characters (``more``: at least) is too long."""
    if chars > max_chars:
        size = f"more than {max_chars:,}" if more else f"{chars:,}"
        raise NoteTooLarge(
            f"the note is {size} characters, over the limit of {max_chars:,} "
            "(memory.note.maxChars); nothing was stored: keep one fact per note, or store a "
            "long document with 'dream ingest FILE'"
        )


def type_name(value: Any) -> str:
    """A value's type as a user reads it in an error ("int", "NoneType" as "None")."""
    return "None" if value is None else type(value).__name__


def _crystal_id(value: Any) -> int:
    """A crystal id as an agent or a user may give it (an int, or digits), else UsageError."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise UsageError(f"a crystal id is a whole number, not {value!r}")
    try:
        return int(value)
    except ValueError:
        raise UsageError(f"a crystal id is a whole number, not {value!r}") from None
