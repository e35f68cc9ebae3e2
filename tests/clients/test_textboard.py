"""Text rendering: boards, trees, standings, progress bars (pure functions)."""

from __future__ import annotations

from arena.engine.api import TreeNode
from arena.games import new_position
from arena.textboard import (
    StandingLine,
    board_summary,
    format_duration,
    progress_bar,
    render_board,
    render_standings,
    render_tree,
)


def test_board_has_coordinates_marks_and_the_last_move() -> None:
    board = new_position("othello")
    board.push(board.parse_move("f5"))
    text = render_board(board, last_move=37, marks=board.legal_moves())
    lines = text.splitlines()
    assert lines[0] == lines[-1] == "  a b c d e f g h"
    assert lines[5] == "5 . . . X X(X). . 5"  # f5 framed
    assert lines[4] == "4 . . . O X * . . 4"  # legal replies marked
    assert board_summary(board) == "black X 4  white O 1  -  white to move"


def test_last_move_on_the_edges_and_gomoku() -> None:
    board = new_position("gomoku", size=9)
    board.push(0)
    board.push(8)
    lines = render_board(board, last_move=8).splitlines()
    assert lines[0] == "  a b c d e f g h i"
    assert lines[1] == "1 X . . . . . . .(O)1"
    first = new_position("gomoku", size=15)
    first.push(14 * 15)
    assert render_board(first, last_move=14 * 15).splitlines()[15].startswith("15(X). .")


def _node(i: int, parent: int, move: int, kind: str, score: int, pv: bool = False,
          cutoff: bool = False) -> TreeNode:
    return TreeNode(id=i, parent=parent, move=move, depth=0, alpha=-9, beta=9, score=score,
                    kind=kind, cutoff=cutoff, pv=pv)  # type: ignore[arg-type]


def test_tree_shows_kinds_cutoffs_and_pv() -> None:
    nodes = [
        _node(0, -1, -1, "max", 3, pv=True),
        _node(1, 0, 19, "min", 3, pv=True),
        _node(2, 1, 18, "leaf", 3, pv=True),
        _node(3, 0, 26, "min", 1, cutoff=True),
        _node(4, 3, 18, "leaf", 1),
    ]
    board = new_position("othello")
    text = render_tree(nodes, board.move_to_str)
    assert text.splitlines() == [
        "5 nodes",
        "      3 [root] Max  (a=-9, b=9) <= PV",
        "|--       3 [d3] Min  (a=-9, b=9) <= PV",
        "|   `--       3 [c3] Leaf <= PV",
        "`--       1 [c4] Min cut  (a=-9, b=9)",
        "    `--       1 [c3] Leaf",
    ]
    shallow = render_tree(nodes, board.move_to_str, max_depth=1, truncated=True)
    assert "tree truncated" in shallow and shallow.count("more below") == 2
    assert "\x1b[1m" in render_tree(nodes, board.move_to_str, color=True)


def test_standings_and_progress() -> None:
    table = render_standings([StandingLine(1, "terra", 10, 8, 0, 2, 80.0, 144.4, -34, 322)])
    assert "terra" in table and "+144" in table and "[-34, +322]" in table and "80.0%" in table
    assert progress_bar(15, 60, 30.0, width=4) == (
        "[#---] 15/60  25%  elapsed 0:30  ETA 1:30")
    assert progress_bar(0, 60, 1.0).endswith("ETA ?")
    assert format_duration(3725) == "1:02:05"
