"""Search trees in the cache Redis: compressed, capped in size, one key per (match, ply).

A worker stores the tree of a move it was asked to capture (``keys.tree``, zlib-compressed
``SearchTree`` bytes); the referee serves it (GetSearchTree) and deletes it with its match.
A tree whose compressed form exceeds the cap keeps its first nodes (the root and the
earliest, shallowest part of the search) and is marked ``truncated``.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import redis
from arena.services.common.protocol.keys import tree

from arena.errors import NotFoundError
from arena.text import shown
from arena.v1 import common_pb2

OWNER = "worker"
SHARED_WITH = ("referee",)  # serves and deletes them

MAX_TREE_BYTES = 1 << 20  # compressed
TREE_TTL_S = 30 * 24 * 3600


def compress_tree(search_tree: common_pb2.SearchTree, max_bytes: int = MAX_TREE_BYTES) -> bytes:
    """Compressed bytes within ``max_bytes``, dropping the latest nodes if needed."""
    packed = zlib.compress(search_tree.SerializeToString(), 6)
    while len(packed) > max_bytes and len(search_tree.nodes) > 1:
        keep = max(1, len(search_tree.nodes) * max_bytes // len(packed) * 9 // 10)
        del search_tree.nodes[keep:]
        search_tree.truncated = True
        packed = zlib.compress(search_tree.SerializeToString(), 6)
    return packed


def store_tree(cache: redis.Redis, match_id: str, ply: int, search_tree: common_pb2.SearchTree,
               max_bytes: int = MAX_TREE_BYTES) -> int:
    """Store a ply's tree; returns the compressed size."""
    packed = compress_tree(search_tree, max_bytes)
    cache.set(tree(match_id, ply), packed, ex=TREE_TTL_S)
    return len(packed)


def load_tree(cache: redis.Redis, match_id: str, ply: int) -> common_pb2.SearchTree:
    packed: Any = cache.get(tree(match_id, ply))
    if packed is None:
        raise NotFoundError(f"no search tree stored for match {shown(match_id)} ply {ply}")
    return common_pb2.SearchTree.FromString(zlib.decompress(packed))


def delete_trees(cache: redis.Redis, match_id: str, plies: Sequence[int]) -> None:
    if plies:
        cache.delete(*(tree(match_id, ply) for ply in plies))
