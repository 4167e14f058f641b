"""A tiny PNG reader for tests (8-bit RGB or RGBA, not interlaced): enough for screenshots."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass
class Image:
    """Pixels as a (height, width, channels) uint8 array."""

    pixels: np.ndarray

    @property
    def width(self) -> int:
        """Pixels per row."""
        return int(self.pixels.shape[1])

    @property
    def height(self) -> int:
        """Rows."""
        return int(self.pixels.shape[0])

    def rgb(self) -> np.ndarray:
        """The red, green and blue channels only."""
        return self.pixels[:, :, :3]


def read(data: bytes) -> Image:
    """Decode a PNG file's bytes; ValueError for what this reader does not handle."""
    if not data.startswith(SIGNATURE):
        raise ValueError("not a PNG file")
    offset, chunks, header = len(SIGNATURE), [], b""
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        elif kind == b"IEND":
            break
        offset += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(
            f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}"
        )
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * bpp
    out = bytearray(height * stride)
    above = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        line = bytearray(raw[start + 1 : start + 1 + stride])
        _unfilter(raw[start], line, above, bpp)
        out[y * stride : (y + 1) * stride] = line
        above = line
    return Image(np.frombuffer(bytes(out), dtype=np.uint8).reshape(height, width, bpp))


def _unfilter(kind: int, line: bytearray, above: bytearray, bpp: int) -> None:
    """Undo one row's filter in place (PNG spec, section 9)."""
    n = len(line)
    if kind == 0:
        return
    if kind == 1:  # Sub: a running sum along the row, per channel
        sums = np.cumsum(np.frombuffer(bytes(line), dtype=np.uint8).reshape(-1, bpp), axis=0)
        line[:] = (sums & 0xFF).astype(np.uint8).tobytes()
    elif kind == 2:  # Up
        both = np.frombuffer(bytes(line), np.uint8).astype(np.uint16) + np.frombuffer(
            bytes(above), np.uint8
        )
        line[:] = (both & 0xFF).astype(np.uint8).tobytes()
    elif kind == 3:  # Average
        for x in range(n):
            left = line[x - bpp] if x >= bpp else 0
            line[x] = (line[x] + ((left + above[x]) >> 1)) & 0xFF
    elif kind == 4:  # Paeth
        for x in range(n):
            a = line[x - bpp] if x >= bpp else 0
            b = above[x]
            c = above[x - bpp] if x >= bpp else 0
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
    else:
        raise ValueError(f"unknown PNG filter {kind}")
