"""arena-gomoku: smoke positions, VCF, limits, tree capture, configs."""

from __future__ import annotations

import re
import threading

import pytest

from arena.engine.api import Limits, StopFlag
from arena.engine.gomoku import PRESETS, choose_move, evaluator_hash, validate_config
from arena.engine.gomoku.train import SELF_PLAY
from arena.errors import InvalidArgumentError
from arena.games.gomoku import GomokuBoard

from .positions import SHARED, VCF_13, VCF_15, staircase_vcf, xy

SMOKE_FILE = SHARED / "protocol-smoke-positions.txt"
VCF_ONLY: dict[str, object] = {**PRESETS["arena-gomoku"], "vct_plies": 0}


def smoke_positions() -> list[tuple[str, list[int], set[int]]]:
    """(name, moves in played order, expected answers) from the Gomocup BOARD file."""
    cases = []
    expected: set[int] = set()
    name = ""
    moves: list[int] = []
    for line in SMOKE_FILE.read_text().splitlines():
        found = re.match(r"#\s*([A-Z])\).*expect (.*)$", line)
        if found:
            name = found.group(1)
            expected = {xy(int(a), int(b)) for a, b in re.findall(r"(\d+),(\d+)", found.group(2))}
        elif line == "BOARD":
            moves = []
        elif re.fullmatch(r"\d+,\d+,\d", line):
            x, y, _field = (int(v) for v in line.split(","))
            moves.append(xy(x, y))
        elif line == "DONE":
            cases.append((name, moves, expected))
    return cases


@pytest.mark.parametrize("preset", ["arena-gomoku", "sharpmoku-normal", "sharpmoku-hard"])
def test_smoke_positions(preset: str) -> None:
    cases = smoke_positions()
    assert len(cases) == 3
    for name, moves, expected in cases:
        result = choose_move(15, "freestyle", moves, PRESETS[preset], Limits(time_ms=1000))
        assert result.move in expected, (preset, name, result)


@pytest.mark.parametrize(("moves", "plies"), [(VCF_15, 15), (VCF_13, 13)])
def test_long_vcf_is_found_only_with_enough_plies(moves: list[int], plies: int) -> None:
    config: dict[str, object] = {"evaluator": "arena-gomoku", "max_depth": 1, "vct_plies": 0}
    found = choose_move(15, "freestyle", moves, {**config, "vcf_plies": plies}, Limits())
    assert found.exact and len(found.pv) == plies and found.score == 1_000_000 - plies
    short = choose_move(15, "freestyle", moves, {**config, "vcf_plies": plies - 2}, Limits())
    assert not short.exact


@pytest.mark.parametrize("moves", [VCF_15, VCF_13, staircase_vcf(2), staircase_vcf(6)])
def test_vcf_line_is_a_real_win(moves: list[int]) -> None:
    result = choose_move(15, "freestyle", moves, VCF_ONLY, Limits(time_ms=2000))
    assert result.exact and result.score > 0
    line = result.pv
    assert line[0] == result.move and len(line) % 2 == 1
    for ply in range(0, len(line) - 1, 2):
        # Each attacking move threatens five; the reply is a square that stops it.
        threats = _five_points(moves + line[: ply + 1])
        assert threats and line[ply + 1] in threats
        if ply < len(line) - 3:
            assert threats == {line[ply + 1]}
    board = GomokuBoard(15)
    for move in moves + line:
        board.push(move)
    outcome = board.outcome()
    assert outcome is not None and outcome.winner == board.turn.other


def _five_points(moves: list[int]) -> set[int]:
    """Squares where the side that made the last move would make five, per the rules."""
    occupied = set(moves)
    spare = next(m for m in (224, 210, 14, 0, 196) if m not in occupied)  # a pass stand-in
    found = set()
    for square in range(225):
        if square in occupied or square == spare:
            continue
        board = GomokuBoard(15)
        for move in [*moves, spare, square]:
            board.push(move)
        outcome = board.outcome()
        if outcome is not None and outcome.winner is not None:
            found.add(square)
    return found


def test_vcf_blocks_are_not_needed_to_defend_a_lost_position() -> None:
    # The defender (White) to move, facing Black's VCF: the result says it is lost
    # or finds a move that breaks it; either way the search reports a bounded score.
    moves = staircase_vcf(4)[:-1]
    result = choose_move(15, "freestyle", moves, PRESETS["arena-gomoku"], Limits(time_ms=500))
    assert 0 <= result.move < 225 and result.move not in moves


def test_stop_flag_and_node_limit_end_the_search() -> None:
    moves = [112, 113, 127, 98, 142, 97]
    stop = StopFlag()
    timer = threading.Timer(0.2, stop.set)
    timer.start()
    result = choose_move(15, "freestyle", moves, PRESETS["arena-gomoku"], Limits(), stop)
    timer.cancel()
    assert result.elapsed_ms < 5000 and 0 <= result.move < 225
    limited = choose_move(15, "freestyle", moves, PRESETS["arena-gomoku"], Limits(nodes=3000))
    assert limited.nodes <= 3000 + 50
    assert result.cut_short and limited.cut_short  # the shared cache must not keep them


# A crowded board (71 stones, Black to move) where the opponent's VCF tree is huge: the
# root's check of the candidates against it once ran past 50 million nodes at depth 1.
CROWDED = [57, 72, 54, 100, 69, 42, 74, 84, 85, 68, 52, 53, 98, 27, 38, 70, 56, 114, 86, 71,
           55, 58, 97, 83, 66, 80, 81, 96, 112, 65, 110, 142, 50, 67, 34, 82, 51, 156, 128,
           116, 132, 36, 48, 49, 62, 76, 117, 78, 77, 92, 131, 129, 144, 145, 109, 111, 147,
           162, 161, 175, 160, 176, 174, 141, 126, 146, 124, 154, 157, 93, 123]


def test_root_threat_searches_are_bounded_on_a_crowded_board() -> None:
    from arena.engine.gomoku.root import DEFENCE_NODES, VCF_NODES

    result = choose_move(15, "freestyle", CROWDED, PRESETS["arena-gomoku"],
                         Limits(depth=1, nodes=20_000_000))
    assert not result.cut_short and result.depth == 1, result
    assert result.move not in CROWDED
    # Own VCF, the opponent's, the candidates' checks, a VCT: within their caps.
    assert result.nodes <= 2 * VCF_NODES + DEFENCE_NODES + VCF_NODES + 100_000, result


def test_an_iteration_cut_short_keeps_the_root_moves_it_finished() -> None:
    # A node limit cuts depth 6 short at a fixed place, so this is deterministic.
    moves = [112, 113, 127, 98, 142, 97]
    config = PRESETS["arena-gomoku"]
    five = choose_move(15, "freestyle", moves, config, Limits(depth=5))
    six = choose_move(15, "freestyle", moves, config, Limits(depth=6))
    assert not five.cut_short and not six.cut_short and six.nodes > five.nodes + 1000
    # Past the first root move of depth 6 (the previous best, searched first): that
    # iteration's result is played, marked cut short, at its depth.
    late = choose_move(15, "freestyle", moves, config,
                       Limits(nodes=six.nodes - (six.nodes - five.nodes) // 10))
    assert late.cut_short and late.depth == 6, late
    assert late.pv[0] == late.move and late.move not in moves
    # Before depth 6 finished any root move, depth 5's result stands.
    early = choose_move(15, "freestyle", moves, config, Limits(nodes=five.nodes + 50))
    assert early.cut_short and (early.depth, early.move, early.score) == (
        5, five.move, five.score), (early, five)


@pytest.mark.parametrize("preset", ["arena-gomoku", "sharpmoku-normal"])
def test_a_search_that_reaches_its_depth_is_not_cut_short(preset: str) -> None:
    moves = [112, 113, 127, 98]
    assert not choose_move(15, "freestyle", moves, PRESETS[preset], Limits(depth=2)).cut_short
    assert choose_move(15, "freestyle", moves, PRESETS[preset], Limits(nodes=20)).cut_short


def test_time_limit_is_kept() -> None:
    moves = [112, 113, 127, 98]
    result = choose_move(15, "freestyle", moves, PRESETS["arena-gomoku"], Limits(time_ms=300))
    assert result.elapsed_ms < 1500  # hard limit 300 ms plus set-up; generous for CI load
    assert result.depth >= 1 and result.pv and result.pv[0] == result.move


def test_tree_capture_marks_root_and_pv() -> None:
    moves = [112, 113, 127, 98]
    result = choose_move(15, "freestyle", moves, PRESETS["arena-gomoku"], Limits(depth=3),
                         tree_budget=200)
    assert result.tree is not None and 0 < len(result.tree) <= 200
    root = result.tree[0]
    assert root.parent == -1 and root.move == -1 and root.kind == "max" and root.pv
    assert root.score == result.score
    pv_nodes = [n for n in result.tree if n.pv]
    assert [n.move for n in pv_nodes[1:]] == result.pv[: len(pv_nodes) - 1]
    assert root.depth == result.depth == 3
    plies = {0: 0}
    for node in result.tree[1:]:
        parent = result.tree[node.parent]
        plies[node.id] = plies[node.parent] + 1
        # the plies left to search: one fewer than its parent's, as many after a forced
        # block (searched even with none left), two or three fewer after a reduction
        assert 0 <= node.depth <= parent.depth
        if node.kind != "leaf":
            assert node.kind == ("max" if plies[node.id] % 2 == 0 else "min")


# Positions of games against Rapfi where, before rows were kept for the root's children,
# a tree of 2,000 nodes at depth 6 did not hold the move played: the first root moves'
# subtrees took every row, and the best move changed in the last iteration.
BEST_MOVE_CHANGED = [
    [111, 127, 97, 155, 185, 217, 169, 82, 213],
    [80, 66, 52, 97, 79, 50, 82, 81, 96, 65, 49, 64, 63, 36, 78, 35, 51, 21, 5, 113, 129, 22,
     8, 68, 67, 83, 53, 20, 77, 76, 19, 111, 69, 37, 38],
    [63, 47, 75],
]


@pytest.mark.parametrize(("moves", "depth", "budget"),
                         [(moves, 6, 2000) for moves in BEST_MOVE_CHANGED]
                         + [(BEST_MOVE_CHANGED[0], 4, 40)])
def test_a_captured_tree_holds_the_move_played(moves: list[int], depth: int,
                                               budget: int) -> None:
    """The viewer shows the move played among the root's children, on the PV, with the
    score the search reported, within the node budget; every node read was scored."""
    result = choose_move(15, "freestyle", moves, PRESETS["arena-gomoku"],
                         Limits(depth=depth), tree_budget=budget)
    assert result.tree is not None and 0 < len(result.tree) <= budget
    played = [n for n in result.tree if n.parent == 0 and n.move == result.move]
    assert played and played[-1].pv, [(n.move, n.score) for n in result.tree if n.parent == 0]
    assert result.tree[0].score == result.score
    assert all(n.id == i for i, n in enumerate(result.tree))
    assert result.tree[0].depth == result.depth
    assert all(0 <= n.depth <= result.tree[n.parent].depth for n in result.tree[1:])


def test_a_tree_cut_short_by_the_clock_is_the_reported_iteration_s() -> None:
    """A search stopped inside an iteration reports the best root move that iteration
    finished: the tree is that iteration's, its root scored as reported, and the nodes the
    stop left open (never scored) are not in it."""
    trees = 0
    for time_ms in (60, 120, 250, 500):
        result = choose_move(15, "freestyle", BEST_MOVE_CHANGED[2], PRESETS["arena-gomoku"],
                             Limits(time_ms=time_ms), tree_budget=5000)
        assert result.tree is not None
        if not result.tree:  # depth 1 unfinished (a loaded machine): no tree to show
            continue
        trees += 1
        root = result.tree[0]
        assert root.kind == "max" and root.score == result.score, (time_ms, root, result)
        assert result.move in {n.move for n in result.tree if n.parent == 0 and n.pv}
    assert trees


@pytest.mark.parametrize("root_width", [2, 16, 32, 225])
def test_the_root_searches_root_width_moves_and_the_tree_width(root_width: int) -> None:
    """The root (the move played) looks at ``root_width`` candidates, the nodes below it
    at ``width``: a quiet position with more candidates than either."""
    moves = [112, 113, 127, 98]
    config = {**PRESETS["arena-gomoku"], "root_width": root_width, "width": 8}
    result = choose_move(15, "freestyle", moves, config, Limits(depth=2), tree_budget=100_000)
    assert result.tree is not None
    children: dict[int, int] = {}
    for node in result.tree[1:]:
        children[node.parent] = children.get(node.parent, 0) + 1
    stones = [divmod(move, 15) for move in moves]
    candidates = len({(y + dy, x + dx) for y, x in stones for dy in range(-2, 3)
                      for dx in range(-2, 3)} - set(stones))  # empty, within two of a stone
    assert candidates == 36
    assert children[0] == min(root_width, candidates)
    below = [count for parent, count in children.items() if parent != 0]
    assert below and max(below) <= 8


def test_late_move_reductions_reach_a_depth_in_fewer_nodes() -> None:
    """A node's late quiet moves (after its first three; no four nor open three for either
    side) are searched a ply shallower first, and at full depth only when they beat the
    best so far: the same depth in fewer nodes, here the same move and score. The
    training's self-play searches without them, as versions 2 to 9 did."""
    moves = [112, 113, 127, 98]
    on = choose_move(15, "freestyle", moves, PRESETS["arena-gomoku"], Limits(depth=7))
    off = choose_move(15, "freestyle", moves, {**PRESETS["arena-gomoku"], "reductions": False},
                      Limits(depth=7))
    assert on.depth == off.depth == 7
    assert (on.move, on.score) == (off.move, off.score)
    assert on.nodes < 0.9 * off.nodes  # 29,728 against 40,051 when written
    assert SELF_PLAY["reductions"] is False


def test_exact_five_rule_is_respected() -> None:
    # Black X X X _ X X on row 7: filling the gap makes six, no win under exact-five.
    black = [xy(x, 7) for x in (2, 3, 4, 6, 7)]
    white = [xy(0, 0), xy(0, 2), xy(0, 4), xy(0, 6), xy(0, 8)]
    moves = [m for pair in zip(black, white, strict=True) for m in pair]
    free = choose_move(15, "freestyle", moves, PRESETS["arena-gomoku"], Limits(time_ms=300))
    assert free.move == xy(5, 7) and free.exact
    exact = choose_move(15, "exact-five", moves, PRESETS["arena-gomoku"], Limits(time_ms=300))
    assert exact.move != xy(5, 7)


def test_config_validation_field_by_field() -> None:
    assert validate_config(PRESETS["arena-gomoku"]) == []
    assert validate_config({"evaluator": "sharpmoku", "depth": 6}) == []
    bad = validate_config({"evaluator": "sharpmoku", "depth": 7, "width": 3})
    assert {v.field for v in bad} == {"depth", "width"}
    assert [v.field for v in validate_config({"evaluator": "nope"})] == ["evaluator"]
    assert [v.field for v in validate_config({"evaluator": "arena-gomoku", "width": True})] == [
        "width"
    ]
    with pytest.raises(InvalidArgumentError):
        choose_move(15, "freestyle", [], {"evaluator": "sharpmoku", "depth": 0}, Limits())


def test_evaluator_hash_is_stable_and_fills_defaults() -> None:
    a = evaluator_hash({"evaluator": "sharpmoku"})
    assert a == evaluator_hash({"evaluator": "sharpmoku", "depth": 2})
    assert a != evaluator_hash(PRESETS["sharpmoku-hard"])
    assert len({evaluator_hash(c) for c in PRESETS.values()}) == len(PRESETS)
    assert re.fullmatch(r"[0-9a-f]{64}", a)
