"""Search trees: converted to protobuf, compressed, capped in size, stored per (match, ply).

Trees live in the cache Redis (``arena:tree:{match}:{ply}``) as zlib-compressed
``SearchTree`` bytes. A tree whose compressed form exceeds the cap keeps its first nodes
(the root and the earliest, shallowest part of the search) and is marked ``truncated``.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import redis
from arena.services.referee.matches import tree_key

from arena.engine.api import TreeNode
from arena.errors import NotFoundError
from arena.v1 import common_pb2

MAX_TREE_BYTES = 1 << 20  # compressed
TREE_TTL_S = 30 * 24 * 3600
_KINDS = {"max": common_pb2.NODE_KIND_MAX, "min": common_pb2.NODE_KIND_MIN,
          "leaf": common_pb2.NODE_KIND_LEAF}


def tree_to_proto(
    root: common_pb2.Position, nodes: Sequence[TreeNode], truncated: bool = False
) -> common_pb2.SearchTree:
    return common_pb2.SearchTree(
        root=root, truncated=truncated,
        nodes=[common_pb2.SearchTreeNode(
            id=n.id, parent=n.parent, move=n.move, depth=n.depth, alpha=n.alpha, beta=n.beta,
            score=n.score, kind=_KINDS.get(n.kind, common_pb2.NODE_KIND_UNSPECIFIED),
            cutoff=n.cutoff, pv=n.pv) for n in nodes],
    )


def compress_tree(tree: common_pb2.SearchTree, max_bytes: int = MAX_TREE_BYTES) -> bytes:
    """Compressed bytes within ``max_bytes``, dropping the latest nodes if needed."""
    packed = zlib.compress(tree.SerializeToString(), 6)
    while len(packed) > max_bytes and len(tree.nodes) > 1:
        keep = max(1, len(tree.nodes) * max_bytes // len(packed) * 9 // 10)
        del tree.nodes[keep:]
        tree.truncated = True
        packed = zlib.compress(tree.SerializeToString(), 6)
    return packed


def store_tree(cache: redis.Redis, match_id: str, ply: int, tree: common_pb2.SearchTree,
               max_bytes: int = MAX_TREE_BYTES) -> int:
    """Store a ply's tree; returns the compressed size."""
    packed = compress_tree(tree, max_bytes)
    cache.set(tree_key(match_id, ply), packed, ex=TREE_TTL_S)
    return len(packed)


def load_tree(cache: redis.Redis, match_id: str, ply: int) -> common_pb2.SearchTree:
    packed: Any = cache.get(tree_key(match_id, ply))
    if packed is None:
        raise NotFoundError(f"no search tree stored for match {match_id!r} ply {ply}")
    return common_pb2.SearchTree.FromString(zlib.decompress(packed))
