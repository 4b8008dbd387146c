"""Reading the PNG files a build writes. Pillow decodes them; the chunk list is read here, since
Pillow keeps no record of which chunks a file held (what the metadata test asks)."""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image


def read_png(data: bytes) -> Image.Image:
    """``data`` decoded; AssertionError if it is not a PNG (each chunk's CRC right) of 8-bit
    RGBA, as resvg writes them."""
    chunk_types(data)
    image = Image.open(io.BytesIO(data))
    assert (image.format, image.mode) == ("PNG", "RGBA"), (image.format, image.mode)
    image.load()
    return image


def chunk_types(data: bytes) -> list[bytes]:
    """The types of ``data``'s chunks, in order, from IHDR to IEND."""
    assert data.startswith(b"\x89PNG\r\n\x1a\n"), data[:8]
    offset, kinds = 8, []
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind, body = data[offset + 4 : offset + 8], data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        kinds.append(kind)
        offset += 12 + length
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND", kinds
    return kinds
