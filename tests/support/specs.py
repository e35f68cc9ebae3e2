"""Bot specs and pictures the tests register: small, valid, one per kind of bot."""

from __future__ import annotations

import base64
import struct
import zlib

from arena.v1 import bots_pb2


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_bytes(width: int = 2, height: int = 2) -> bytes:
    """A real, tiny greyscale PNG."""
    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + _chunk(b"IDAT", zlib.compress(rows)) + _chunk(b"IEND", b""))


def png_bomb(side: int) -> bytes:
    """A real black-and-white PNG of ``side`` x ``side`` pixels, all black: one bit a pixel
    deflated ~1000 to 1, so 20000 a side fits in about 50 KB."""
    row = b"\x00" + bytes((side + 7) // 8)
    deflate = zlib.compressobj(9)
    data = b"".join(deflate.compress(row) for _ in range(side)) + deflate.flush()
    return (b"\x89PNG\r\n\x1a\n"
            + _chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0))
            + _chunk(b"IDAT", data) + _chunk(b"IEND", b""))


# A 1x1 PNG as produced by common tools (not by the helper above).
TOOL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def othello_spec(name: str = "lucy-2", **config: object) -> bots_pb2.BotSpec:
    """A KReversi-style bot, with ``config`` merged over a small valid config."""
    spec = bots_pb2.BotSpec(name=name, game=1, description="test bot")
    base: dict[str, object] = {"evaluator": "kreversi", "depth": {"begin": 3, "middle": 3,
                                                                  "end": 4}}
    base.update(config)
    spec.builtin.config.update(base)
    return spec


def gomoku_spec(name: str = "moku", depth: int = 2) -> bots_pb2.BotSpec:
    spec = bots_pb2.BotSpec(name=name, game=2)
    spec.builtin.config.update({"evaluator": "sharpmoku", "depth": depth})
    return spec


def external_spec(name: str = "remote", address: str = "127.0.0.1:50051") -> bots_pb2.BotSpec:
    return bots_pb2.BotSpec(name=name, game=1, external=bots_pb2.ExternalEngine(
        address=address, move_deadline_ms=2000))
