"""One agent's memory on disk: its paths, its store, its lock, and the note/search/get path.

Layout::

    <root>/MEMORY.md  MEMORY.md.seed-backup  dreamer.toml
    <root>/memory/scratch.md  DREAM.md  niche.json  crystals.db  dream.lock
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dreamer.config import Settings, load_settings
from dreamer.errors import InvalidNote, UsageError, WorkspaceError
from dreamer.kinds import CRYSTAL_SOURCES, SEMANTIC_TYPES, infer_type
from dreamer.memory import forgetting, hormones, location, scratch
from dreamer.memory.forgetting import ForgetReport
from dreamer.retrieval.embed import Embedder, embedder_for, to_blob
from dreamer.retrieval.reindex import embed_waiting
from dreamer.store import Crystal, Store, open_store
from dreamer.support.files import DIR_MODE, atomic_write
from dreamer.support.locks import hold
from dreamer.support.secrets import Redaction, redact
from dreamer.support.times import as_utc, parse_iso, utc_now

if TYPE_CHECKING:  # the search module loads numpy: imported when a search runs, not a note
    from dreamer.retrieval.search import Hit

DEFAULT_IMPORTANCE = 0.7
MAX_SEARCH_LIMIT = 1000  # nobody reads more; SQLite also caps how many ids one query binds


def resolve_root(path: str | os.PathLike[str] | None) -> Path:
    """The workspace folder: the path given, else as ``dreamer.memory.location`` resolves it."""
    return location.resolve(path)[0]


class Workspace:
    """An open workspace: paths, settings, store, and the agent's memory operations."""

    def __init__(self, root: Path, settings: Settings, embedder: Embedder | None = None):
        self.root = root
        self.settings = settings
        self.embedder = embedder or embedder_for(settings.embedder)
        self._store: Store | None = None
        self._store_lock = threading.Lock()

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
                new_root = not root.exists()
                root.mkdir(parents=True, exist_ok=True)
                memory.mkdir(mode=DIR_MODE, exist_ok=True)
                # Owner-only whatever the umask; an existing folder the user chose is theirs.
                for folder in (root, memory) if new_root else (memory,):
                    folder.chmod(DIR_MODE)
            except OSError as e:
                raise WorkspaceError(
                    f"cannot create a workspace at {root} ({e.strerror}); pick a writable folder"
                ) from e
        if not os.access(memory, os.R_OK | os.W_OK | os.X_OK):
            raise WorkspaceError(f"{memory} is not readable and writable; fix its permissions")
        settings = load_settings(root / "dreamer.toml", environ=environ, overrides=overrides)
        return cls(root, settings, embedder)

    def init(self) -> None:
        """Create the scratch file and the database if they do not exist yet."""
        _ = self.store
        with scratch.locked(self.scratch_path):  # two inits at once must not both write it
            if not self.scratch_path.exists():
                atomic_write(self.scratch_path, scratch.HEADER + "\n")

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
    def scratch_path(self) -> Path:
        """The write-ahead log, ``memory/scratch.md``."""
        return self.memory_dir / "scratch.md"

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
                self._store = open_store(self.db_path)
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
        with hold(self.memory_dir / "dream.lock", wait=False, busy=busy):
            yield

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
    ) -> int:
        """Write a note to the scratch and index it as a crystal; return the crystal id.

        ``embed=False`` stores the crystal without its vector, for a short-lived process that
        should not load the embedder (``dream note``): words find it at once, and the next
        search (in any process) or consolidation tick gives it its vector before ranking.
        """
        text, importance, semantic_type, moment = validate_note(text, importance, type, at)
        text = self.redact(text).text
        if source not in CRYSTAL_SOURCES:
            raise InvalidNote(f"unknown source {source!r}; use one of {', '.join(CRYSTAL_SOURCES)}")
        _ = self.store  # an unreadable database must fail before the scratch changes
        scratch.append(self.scratch_path, text, moment, importance)
        if source == "scratch":
            # An agent's own words move its hormones (auto/seed notes must not feed back).
            for hormone, delta, reason in hormones.stimuli_from_text(
                text, hormones.load_lexicon(self)
            ):
                hormones.feel(self, hormone, delta, reason, moment, source="note")
        return self.index(
            text,
            importance=importance,
            semantic_type=semantic_type,
            at=moment,
            source=source,
            embed=embed,
        )

    def index(
        self,
        text: str,
        *,
        importance: float,
        semantic_type: str | None,
        at: datetime,
        source: str,
        lifecycle: str = "generated",
        origin: str | None = None,
        embed: bool = True,
    ) -> int:
        """Make text a crystal unless it already is one (by content hash); return its id."""
        text = self.redact(text).text
        blob = to_blob(self.embedder.embed([text])[0]) if embed else None
        crystal_id, _created = self.store.add_crystal(
            text,
            source=source,
            semantic_type=semantic_type or infer_type(text),
            importance=importance,
            at=at,
            embedding=blob,
            embedder=self.embedder.name if embed else None,
            hormones=hormones.levels(self, at),
            lifecycle=lifecycle,
            origin=origin,
        )
        return crystal_id

    def redact(self, text: str) -> Redaction:
        """Text as it may be stored: secrets replaced, unless memory.secrets.redact is off."""
        return redact(text) if self.settings.redact_secrets else Redaction(text, ())

    def forget(
        self, ids: Sequence[int], *, reason: str = "by request", now: datetime | None = None
    ) -> ForgetReport:
        """Forget these crystals everywhere, bytes included (see dreamer.memory.forgetting)."""
        with self.lock():  # never under a running dream's feet
            return forgetting.forget(
                self.store,
                self.memory_md,
                self.scratch_path,
                [_crystal_id(i) for i in ids],
                reason=reason,
                now=as_utc(now) if now else utc_now(),
            )

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
        from dreamer.retrieval.search import search as run_search

        # Notes stored without a vector (a fresh `dream note`) are found by meaning too.
        embed_waiting(self.store, self.embedder)
        return run_search(
            self.store,
            self.embedder,
            self.settings,
            query,
            now=as_utc(now) if now else utc_now(),
            limit=limit,
            search_type=search_type,
        )

    def get(self, crystal_id: int) -> Crystal:
        """One crystal, whole."""
        return self.store.get(_crystal_id(crystal_id))


def validate_note(
    text: Any, importance: Any, type: Any, at: Any
) -> tuple[str, float, str | None, datetime]:
    """Check a note's fields; return them normalised or raise InvalidNote naming the fix."""
    if not isinstance(text, str):
        raise InvalidNote(f"a note is text (str), not {type_name(text)}; pass the words to keep")
    if not text.strip():
        raise InvalidNote("the note is empty; pass the text to remember")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidNote("the note has lone surrogates, not Unicode text; pass UTF-8") from None
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
