"""Search trees from the engines' ``TreeNode`` lists to the ``SearchTree`` protobuf."""

from __future__ import annotations

from collections.abc import Sequence

from arena.engine.api import TreeNode
from arena.v1 import common_pb2

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
