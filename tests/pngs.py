"""Reading the PNG files a build writes: their chunks, and their pixels (8-bit RGBA, as resvg
writes them), with the standard library alone."""

from __future__ import annotations

import struct
import zlib
from typing import NamedTuple

SIGNATURE = b"\x89PNG\r\n\x1a\n"


class Png(NamedTuple):
    width: int
    height: int
    chunks: tuple[bytes, ...]  # their types, in order
    rows: tuple[bytes, ...]  # each row's pixels, RGBA, unfiltered

    def pixel(self, x: int, y: int) -> tuple[int, ...]:
        return tuple(self.rows[y][4 * x : 4 * x + 4])


def read_png(data: bytes) -> Png:
    """``data`` as a PNG; AssertionError if it is not one, or not 8-bit RGBA non-interlaced."""
    assert data.startswith(SIGNATURE), data[:8]
    offset, chunks, idat, header = len(SIGNATURE), [], b"", b""
    while offset < len(data):
        (length,), kind = (
            struct.unpack(">I", data[offset : offset + 4]),
            data[offset + 4 : offset + 8],
        )
        body = data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        chunks.append(kind)
        header = body if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
        offset += 12 + length
    assert chunks[0] == b"IHDR" and chunks[-1] == b"IEND", chunks
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert (depth, colour, interlace) == (8, 6, 0), (depth, colour, interlace)
    raw, stride, rows = zlib.decompress(idat), 4 * width, []
    previous = bytes(stride)
    for y in range(height):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            left, up = line[i - 4] if i >= 4 else 0, previous[i]
            corner = previous[i - 4] if i >= 4 else 0
            line[i] = (line[i] + _predict(kind, left, up, corner)) & 0xFF
        rows.append(previous := bytes(line))
    return Png(width, height, tuple(chunks), tuple(rows))


def _predict(kind: int, left: int, up: int, corner: int) -> int:
    if kind == 0:
        return 0
    if kind == 1:
        return left
    if kind == 2:
        return up
    if kind == 3:
        return (left + up) // 2
    estimate = left + up - corner  # Paeth
    distances = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
    return (left, up, corner)[distances.index(min(distances))]
