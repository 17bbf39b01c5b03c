"""A tiny PNG (8x8, one colour) for the image-only prompts, built with the standard library."""

from __future__ import annotations

import struct
import zlib


def tiny_png(width: int = 8, height: int = 8) -> bytes:
    """A valid PNG image of `width` x `height` red pixels."""
    rows = b"".join(b"\x00" + bytes((200, 50, 50)) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows))
        + _chunk(b"IEND", b"")
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )
