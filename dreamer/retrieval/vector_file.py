"""The vector file: a store's crystal vectors where a scan reads them in blocks, not as objects.

Row ``i - 1`` holds crystal ``i`` (ids only grow, so a row never moves, and an id is its own
address): a flag (no vector, a note's, a session turn's, or waiting for its vector), an int8
random-projection sketch of ``SKETCH_DIM`` numbers with its scale (what a scan reads), and the
float16 vector itself (what a shortlist is scored with, exactly). Rows are grouped in blocks of
``BLOCK_ROWS`` laid out as ``[flags][scales][sketches][vectors]``, so a scan reads about 100
bytes a row, one read a block, into buffers it reuses: memory stays flat whatever the size.

Crash safety: the file starts with two header slots, each with a sequence number and a CRC.
A change writes its rows, fsyncs, then overwrites the older slot and fsyncs, so a crash leaves
the previous header or the new one whole, never a header that counts rows not written. What
lies past the counted rows (an append cut short) is zeroed and cut off by ``repair`` before
the next write. Writes go through ``os.lseek`` and ``os.write``; reads through ``os.pread``
where the platform has it. Callers serialise writers (a lock file, see
``dreamer.retrieval.vectors``); readers never wait: the counted rows are whole.
"""

from __future__ import annotations

import os
import struct
import threading
import zlib
from dataclasses import dataclass, replace

import numpy as np

from dreamer.support.files import write_all

MAGIC = b"DRVEC001"
SLOT_BYTES = 1024
HEADER_BYTES = 4096  # two slots, then the first block on a page boundary
BLOCK_ROWS = 4096
SKETCH_DIM = 96
SKETCH_SEED = 20260312
EMPTY, NOTE, SESSION, WAITING_NOTE, WAITING_SESSION = 0, 1, 2, 3, 4
_HEAD = struct.Struct("<8sQQIIIQQ64s128s")  # then a CRC32 of these bytes


@dataclass(frozen=True)
class Header:
    """What a header slot says: how many rows are whole, and what they were built from."""

    seq: int
    rows: int  # rows 0 .. rows-1 (crystal ids 1 .. rows) are written and whole
    dim: int
    sketch_dim: int
    block_rows: int
    tombstones: int  # the store's forget count when the rows were last cleared of forgotten
    waiting: int  # rows whose crystal had no vector yet
    generation: str  # the store's vectors.generation the rows were read under
    embedder: str

    def pack(self) -> bytes:
        """The slot's bytes: the fields and their CRC32."""
        body = _HEAD.pack(
            MAGIC,
            self.seq,
            self.rows,
            self.dim,
            self.sketch_dim,
            self.block_rows,
            self.tombstones,
            self.waiting,
            self.generation.encode()[:64],
            self.embedder.encode()[:128],
        )
        return body + struct.pack("<I", zlib.crc32(body))

    @classmethod
    def unpack(cls, data: bytes) -> Header | None:
        """The header in a slot's bytes, or None when torn, foreign or empty."""
        size = _HEAD.size
        if len(data) < size + 4:
            return None
        body = data[:size]
        if struct.unpack("<I", data[size : size + 4])[0] != zlib.crc32(body):
            return None
        magic, seq, rows, dim, sketch, block, tombstones, waiting, gen, name = _HEAD.unpack(body)
        if magic != MAGIC:
            return None
        return cls(
            seq,
            rows,
            dim,
            sketch,
            block,
            tombstones,
            waiting,
            gen.rstrip(b"\0").decode(errors="replace"),
            name.rstrip(b"\0").decode(errors="replace"),
        )


def stamp(text: str, size: int = 128) -> str:
    """``text`` as a header slot keeps it (its first ``size`` bytes), to compare with one."""
    return text.encode()[:size].decode(errors="replace")


def projection(dim: int) -> np.ndarray:
    """The sketch's random projection: signs (±1/√SKETCH_DIM) from a fixed integer hash.

    A sign matrix sketches as well as a Gaussian one (Achlioptas), and needs no numpy.random,
    whose import is a noticeable part of a fresh ``dream search``; the same in every process.
    """
    # splitmix64 of each cell's index: well-mixed bits, the same on every machine
    mixed = np.arange(dim * SKETCH_DIM, dtype=np.uint64) + np.uint64(SKETCH_SEED)
    mixed *= np.uint64(0x9E3779B97F4A7C15)
    mixed ^= mixed >> np.uint64(30)
    mixed *= np.uint64(0xBF58476D1CE4E5B9)
    mixed ^= mixed >> np.uint64(27)
    mixed *= np.uint64(0x94D049BB133111EB)
    mixed ^= mixed >> np.uint64(31)
    signs = np.where(mixed >> np.uint64(63), 1.0, -1.0).astype(np.float32)
    return (signs / np.sqrt(SKETCH_DIM)).reshape(dim, SKETCH_DIM).astype(np.float32)


def sketch_of(vectors: np.ndarray, project: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 sketches, float32 scales) of float16 vectors: ``sketch × scale ≈ vector @ P``.

    int8, not float: numpy widens int8 to float32 about 30 times faster than float16, and a
    scan does that for every row.
    """
    rough = vectors.astype(np.float32) @ project
    scales = np.abs(rough).max(axis=1) / 127.0 if len(rough) else np.zeros(0, np.float32)
    safe = np.where(scales > 0, scales, 1.0)
    sketches = np.rint(rough / safe[:, None]).astype(np.int8)
    return sketches, scales.astype(np.float32)


if hasattr(os, "pread"):

    def _read_at(fd: int, size: int, offset: int, _lock: threading.Lock) -> bytes:
        return os.pread(fd, size, offset)

else:  # Windows: no pread; a seek and a read, never split by another thread

    def _read_at(fd: int, size: int, offset: int, _lock: threading.Lock) -> bytes:
        with _lock:
            os.lseek(fd, offset, os.SEEK_SET)
            return os.read(fd, size)


class VectorFile:
    """One open vector file (a file descriptor) of a fixed vector size."""

    def __init__(self, fd: int, dim: int, block_rows: int | None = None):
        self.fd = fd
        self.dim = dim
        self.block_rows = rows = block_rows or BLOCK_ROWS
        self.block_bytes = rows * (1 + 4 + SKETCH_DIM + 2 * dim)
        # where each section starts within a block
        self.at_flags, self.at_scales = 0, rows
        self.at_sketch = 5 * rows
        self.at_vectors = (5 + SKETCH_DIM) * rows
        self._lock = threading.Lock()

    # --- header ------------------------------------------------------------------------------

    def header(self) -> Header | None:
        """The newer whole header slot, or None (a new, foreign or wrecked file)."""
        data = self._read(2 * SLOT_BYTES, 0)
        found = [Header.unpack(data[i * SLOT_BYTES : (i + 1) * SLOT_BYTES]) for i in (0, 1)]
        whole = [h for h in found if h is not None and h.dim == self.dim]
        usable = [h for h in whole if h.block_rows == self.block_rows]
        return max(usable, key=lambda h: h.seq) if usable else None

    def write_header(self, header: Header) -> Header:
        """Make the rows written so far count: fsync them, then the older slot; the header."""
        os.fsync(self.fd)
        header = replace(header, seq=header.seq + 1)
        self._write(header.pack(), (header.seq % 2) * SLOT_BYTES)
        os.fsync(self.fd)
        return header

    # --- rows --------------------------------------------------------------------------------

    def _block(self, row: int) -> tuple[int, int]:
        return divmod(row, self.block_rows)

    def _offset(self, block: int, section: int, index: int, width: int) -> int:
        return HEADER_BYTES + block * self.block_bytes + section + index * width

    def write_rows(
        self,
        start: int,
        flags: np.ndarray,
        vectors: np.ndarray,
        project: np.ndarray,
    ) -> None:
        """Write rows start, start+1, ... whole (vector, sketch, scale, then the flag)."""
        sketches, scales = sketch_of(vectors, project)
        done = 0
        while done < len(flags):
            block, index = self._block(start + done)
            take = min(self.block_rows - index, len(flags) - done)
            part = slice(done, done + take)
            # The flag last: a reader that sees it set finds the row written.
            for section, width, data in (
                (self.at_vectors, 2 * self.dim, vectors[part]),
                (self.at_sketch, SKETCH_DIM, sketches[part]),
                (self.at_scales, 4, scales[part]),
                (self.at_flags, 1, flags[part]),
            ):
                at = self._offset(block, section, index, width)
                self._write(np.ascontiguousarray(data).tobytes(), at)
            done += take

    def clear_rows(self, rows: list[int]) -> None:
        """Zero these rows: flag first, so no reader takes a half-cleared row for a vector."""
        zero_vector, zero_sketch = bytes(2 * self.dim), bytes(SKETCH_DIM)
        for row in rows:
            block, index = self._block(row)
            for section, width, data in (
                (self.at_flags, 1, b"\0"),
                (self.at_scales, 4, bytes(4)),
                (self.at_sketch, SKETCH_DIM, zero_sketch),
                (self.at_vectors, 2 * self.dim, zero_vector),
            ):
                self._write(data, self._offset(block, section, index, width))

    def head(
        self, block: int, rows: int, buffer: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(flags, scales, int8 sketches) of the first ``rows`` rows of a block, read in one
        go into ``buffer`` (``head_bytes`` of uint8, reused: no fresh memory per block)."""
        self._read_into(buffer, HEADER_BYTES + block * self.block_bytes)
        flags = buffer[:rows]
        scales = buffer[self.at_scales : self.at_scales + 4 * rows].view(np.float32)
        sketches = buffer[self.at_sketch : self.at_sketch + SKETCH_DIM * rows].view(np.int8)
        return flags, scales, sketches.reshape(rows, SKETCH_DIM)

    @property
    def head_bytes(self) -> int:
        """The size of a block's flags, scales and sketches: what a scan reads of it."""
        return self.at_vectors

    def flags(self, rows: int) -> np.ndarray:
        """The flags of rows 0 .. rows-1."""
        parts = []
        for block in range(-(-rows // self.block_rows)):
            take = min(self.block_rows, rows - block * self.block_rows)
            data = self._read(take, HEADER_BYTES + block * self.block_bytes)
            parts.append(np.frombuffer(data.ljust(take, b"\0"), dtype=np.uint8))
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint8)

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        """The float16 vectors of these rows, in their order: one read each.

        Not through a map of the file: each row touched in a map stays in the process's
        resident memory (a large page of it with it), so a long-running process would end up
        holding the whole file; reads keep memory flat.
        """
        width = 2 * self.dim
        block, index = np.divmod(rows.astype(np.int64), self.block_rows)
        offsets = HEADER_BYTES + block * self.block_bytes + self.at_vectors + index * width
        data = b"".join(self._read(width, at).ljust(width, b"\0") for at in offsets.tolist())
        return np.frombuffer(data, dtype=np.float16).reshape(len(rows), self.dim)

    def pick(
        self, rows: np.ndarray, flags: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(flags, float16 vectors) of these rows (ascending, distinct): the flags in one read
        a block (unless given, read before), then the vectors in one read per run of
        consecutive rows (a search's candidates come with their neighbours: runs are common)."""
        width = 2 * self.dim
        if not len(rows):
            return np.zeros(0, dtype=np.uint8), np.zeros((0, self.dim), dtype=np.float16)
        rows = rows.astype(np.int64)
        block, index = np.divmod(rows, self.block_rows)
        if flags is None:
            # The flags first: a row is written vector first, flag last (see write_rows).
            flags = np.zeros(len(rows), dtype=np.uint8)
            cut = (np.flatnonzero(np.diff(block)) + 1).tolist()
            for start, end in zip([0, *cut], [*cut, len(rows)], strict=True):
                take = int(index[end - 1]) + 1
                data = self._read(take, HEADER_BYTES + int(block[start]) * self.block_bytes)
                found = np.frombuffer(data.ljust(take, b"\0"), np.uint8)
                flags[start:end] = found[index[start:end]]
        cut = (np.flatnonzero((np.diff(rows) != 1) | (np.diff(block) != 0)) + 1).tolist()
        starts, ends = [0, *cut], [*cut, len(rows)]
        offsets = HEADER_BYTES + block * self.block_bytes + self.at_vectors + index * width
        parts = []
        for start, end, at in zip(starts, ends, offsets[starts].tolist(), strict=True):
            size = (end - start) * width
            parts.append(self._read(size, at).ljust(size, b"\0"))
        vectors = np.frombuffer(b"".join(parts), dtype=np.float16)
        return flags, vectors.reshape(len(rows), self.dim)

    def all_vectors(self, rows: int) -> np.ndarray:
        """The float16 vectors of rows 0 .. rows-1: one read a block."""
        width = 2 * self.dim
        parts = []
        for block in range(-(-rows // self.block_rows)):
            take = min(self.block_rows, rows - block * self.block_rows)
            at = HEADER_BYTES + block * self.block_bytes + self.at_vectors
            parts.append(self._read(take * width, at).ljust(take * width, b"\0"))
        data = b"".join(parts)
        return np.frombuffer(data, dtype=np.float16).reshape(rows, self.dim)

    def close(self) -> None:
        """Release the file descriptor."""
        os.close(self.fd)

    def repair(self, rows: int) -> bool:
        """Zero and cut off what lies past the first ``rows`` rows (an append cut short).

        Returns whether anything was there. Past the counted rows a crash may have left a
        vector the header never counted, of a crystal forgotten since: it must not stay.
        """
        block, index = self._block(rows)
        if index == 0:
            block, index = block - 1, self.block_rows  # the last counted block is full
        end = HEADER_BYTES + (block + 1) * self.block_bytes if rows else HEADER_BYTES
        size = os.fstat(self.fd).st_size
        found = size > end
        if rows and index < self.block_rows:
            # rows index.. of the last counted block: each section's tail
            for section, width in (
                (self.at_flags, 1),
                (self.at_scales, 4),
                (self.at_sketch, SKETCH_DIM),
                (self.at_vectors, 2 * self.dim),
            ):
                start = self._offset(block, section, index, width)
                length = (self.block_rows - index) * width
                tail = self._read(length, start)
                if tail.strip(b"\0"):
                    found = True
                    self._write(bytes(len(tail)), start)
        if size > end:
            os.ftruncate(self.fd, end)
        return found

    def reset(self) -> None:
        """Empty the file (a rebuild in place, for a private file no other process reads)."""
        os.ftruncate(self.fd, 0)

    # --- bytes ---------------------------------------------------------------------------------

    def _read(self, size: int, offset: int) -> bytes:
        return _read_at(self.fd, size, offset, self._lock)

    def _read_into(self, buffer: np.ndarray, offset: int) -> None:
        """Fill buffer from offset; what lies past the end of the file reads as zeros."""
        if hasattr(os, "preadv"):
            got = os.preadv(self.fd, [buffer.data], offset)
        else:
            data = self._read(len(buffer), offset)
            got = len(data)
            buffer[:got] = np.frombuffer(data, dtype=np.uint8)
        buffer[got:] = 0  # a sparse tail never written

    def _write(self, data: bytes, offset: int) -> None:
        with self._lock:
            os.lseek(self.fd, offset, os.SEEK_SET)
            write_all(self.fd, data)
