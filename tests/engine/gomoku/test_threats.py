"""VCF and VCT: the tactics positions, random positions under both rules, soundness.

Every line a threat search returns is replayed by an independent checker
(``threatcheck``) and by the rules library. For the tactics positions the win must also
hold against every legal answer to its first move, not only the answers the search tries.
"""

from __future__ import annotations

import random

import pytest

from arena.engine.api import Limits
from arena.engine.gomoku import PRESETS, choose_move
from arena.engine.gomoku.bots import threat_line
from arena.engine.gomoku.position import GomokuPositionError, position_from_moves
from arena.engine.gomoku.root import DEFENCE_VCF_PLIES, DEFENCE_VCT_MOVES, VCF_NODES
from arena.engine.gomoku.search import EVAL_BOUND, WIN_BOUND
from arena.games.gomoku import GomokuBoard

from .positions import (
    DEFENDER_FOURS_VCTS,
    SLOW_THREATS,
    TACTICS,
    TRAPS,
    VCF_15,
    VCF_BLOCKS_THAT_FALL,
    WEIGHED_ANSWERS_VCTS,
    Tactic,
    Trap,
    xy,
)
from .test_board import random_game
from .threatcheck import check_threat_line


def line_of(moves: list[int], plies: int, threes: bool, rule: str = "freestyle",
            nodes: int = 0) -> list[int]:
    return threat_line(position_from_moves(15, rule, moves), plies, not threes, nodes)


def assert_wins_by_the_rules(moves: list[int], line: list[int], rule: str) -> None:
    board = GomokuBoard(15, rule)
    for move in moves + line:
        board.push(move)
    outcome = board.outcome()
    assert outcome is not None and outcome.winner == board.turn.other


@pytest.mark.parametrize("tactic", TACTICS, ids=lambda t: t.name)
def test_tactics_positions_are_solved_at_their_length(tactic: Tactic) -> None:
    threes = tactic.kind == "vct"
    line = line_of(tactic.moves, tactic.plies, threes, tactic.rule)
    assert 1 < len(line) <= tactic.plies
    check_threat_line(15, tactic.rule, tactic.moves, line, threes)
    assert_wins_by_the_rules(tactic.moves, line, tactic.rule)
    if tactic.plies > 3:  # nothing shorter: the length is the shortest win of that kind
        assert line_of(tactic.moves, tactic.plies - 2, threes, tactic.rule) == []


@pytest.mark.parametrize("trap", TRAPS, ids=lambda t: t.name)
def test_traps_are_real(trap: Trap) -> None:
    # After the move Arena played the opponent's VCT is a checked win; after each holding
    # move the same search, with the same budget, finds none.
    after = [*trap.moves, trap.lost]
    line = line_of(after, 25, threes=True, nodes=500_000)
    assert line
    check_threat_line(15, "freestyle", after, line, threes=True)
    assert_wins_by_the_rules(after, line, "freestyle")
    for move in trap.holds:
        assert line_of([*trap.moves, move], 25, threes=True, nodes=500_000) == [], move


@pytest.mark.parametrize("preset", ["arena-gomoku", "arena-gomoku-board"])
@pytest.mark.parametrize("trap", TRAPS, ids=lambda t: t.name)
def test_a_search_that_finds_every_move_lost_still_plays_one_that_holds(
    trap: Trap, preset: str
) -> None:
    # The tree tries only 16 answers a node, so its proof of the loss may be wrong; the
    # root then keeps the moves after which the opponent has no VCT, and searches those.
    # The tree finds them lost too, but the checks say otherwise: the loss is not
    # reported as proven (the worst evaluation instead of a loss in so many plies).
    result = choose_move(15, "freestyle", trap.moves, PRESETS[preset], Limits(depth=trap.depth))
    assert result.move in trap.holds, result
    assert result.score == -EVAL_BOUND and not result.exact, result
    # With VCTs turned off (``vct_plies`` 0) the root trusts the proof, as before.
    config = {**PRESETS[preset], "vct_plies": 0}
    result = choose_move(15, "freestyle", trap.moves, config, Limits(depth=trap.depth))
    assert result.score <= -WIN_BOUND and result.exact and result.move == trap.lost, result


@pytest.mark.parametrize(("moves", "depth"), SLOW_THREATS,
                         ids=lambda v: f"depth {v}" if isinstance(v, int) else f"{len(v)} stones")
def test_each_defence_is_checked_as_long_as_finding_the_threat_took(
    moves: list[int], depth: int
) -> None:
    # The root found the opponent's VCT only after thousands of nodes; a check of a
    # candidate with fewer nodes than that would miss the same VCT after a move that does
    # not stop it, and keep the move. What the root guarantees is no VCT within its own
    # budget: a move played here may fall to a longer VCT found in more nodes (62 in the
    # last position, positions.py).
    config = PRESETS["arena-gomoku-board"]
    result = choose_move(15, "freestyle", moves, config, Limits(depth=depth))
    plies, nodes = config["vct_plies"], config["vct_nodes"]
    assert isinstance(plies, int) and isinstance(nodes, int)
    assert line_of([*moves, result.move], plies, threes=True, nodes=nodes) == [], result


@pytest.mark.parametrize("moves", [SLOW_THREATS[0][0], SLOW_THREATS[2][0]],
                         ids=lambda v: f"{len(v)} stones")
@pytest.mark.parametrize("preset", ["arena-gomoku", "arena-gomoku-board"])
def test_no_root_move_kept_falls_to_a_vct_within_the_roots_own_budget(
    moves: list[int], preset: str
) -> None:
    # After some candidates the opponent's VCT takes more nodes to find than it took
    # before them (after 68 and 84 in the first position, 20,000 against 6,777): checks
    # at the first VCT's cost pass them, checks growing round by round up to
    # ``vct_nodes`` (the nodes the root gives its own VCT) do not. The moves the root
    # keeps are its children in the tree of a depth-1 search.
    config = PRESETS[preset]
    result = choose_move(15, "freestyle", moves, config, Limits(depth=1), tree_budget=10_000)
    assert result.tree is not None
    kept = {node.move for node in result.tree[1:] if node.parent == 0}
    assert 1 <= len(kept) < DEFENCE_VCT_MOVES, kept  # fewer than the candidates checked
    plies, nodes = config["vct_plies"], config["vct_nodes"]
    assert isinstance(plies, int) and isinstance(nodes, int)
    for move in kept:
        assert line_of([*moves, move], plies, threes=True, nodes=nodes) == [], (move, kept)


@pytest.mark.parametrize("preset", ["arena-gomoku", "arena-gomoku-board"])
def test_when_every_candidate_checked_falls_the_root_checks_the_others(preset: str) -> None:
    # In SLOW_THREATS' first position the 12 candidates the root checks all fall to the
    # opponent's VCT within the root's budget, the last (86) only in the round of 20,000
    # nodes. The rounds stopped at one move left, so version 15 kept 86 unchecked at that
    # budget, and played it; the moves that hold are the 13th and 14th candidates.
    moves = SLOW_THREATS[0][0]
    config = PRESETS[preset]
    result = choose_move(15, "freestyle", moves, config, Limits(depth=1), tree_budget=10_000)
    assert result.tree is not None
    kept = {node.move for node in result.tree[1:] if node.parent == 0}
    assert kept == {160, 176} and result.move in kept, (result.move, kept)
    for move in kept:  # and they hold well beyond the root's own budget
        assert line_of([*moves, move], 21, threes=True, nodes=500_000) == [], move


@pytest.mark.parametrize(("moves", "falls"), VCF_BLOCKS_THAT_FALL,
                         ids=lambda v: f"{len(v)} stones" if isinstance(v, list) else str(v))
@pytest.mark.parametrize("preset", ["arena-gomoku", "arena-gomoku-board"])
def test_the_blocks_of_a_vcf_are_checked_against_the_vct_too(
    moves: list[int], falls: int, preset: str
) -> None:
    # Stopping the opponent's open three is not enough when the block leaves it a longer
    # VCT (after ``falls``, within the root's own budget). The moves kept are the root's
    # children in the tree of a depth-1 search.
    config = PRESETS[preset]
    plies, nodes = config["vct_plies"], config["vct_nodes"]
    assert isinstance(plies, int) and isinstance(nodes, int)
    def vcf(move: int) -> list[int]:  # the opponent's, as the root looks for it
        return line_of([*moves, move], DEFENCE_VCF_PLIES, threes=False, nodes=VCF_NODES)

    assert vcf(0) != [] and vcf(falls) == []  # a VCF unless blocked, and ``falls`` blocks it
    assert line_of([*moves, falls], plies, threes=True, nodes=nodes) != []  # but not the VCT
    result = choose_move(15, "freestyle", moves, config, Limits(depth=1), tree_budget=10_000)
    assert result.tree is not None
    kept = {node.move for node in result.tree[1:] if node.parent == 0}
    assert kept and falls not in kept and result.move in kept, (result.move, kept)
    for move in kept:
        assert line_of([*moves, move], plies, threes=True, nodes=nodes) == [], (move, kept)


@pytest.mark.parametrize("moves", DEFENDER_FOURS_VCTS + WEIGHED_ANSWERS_VCTS,
                         ids=lambda m: f"{len(m)} stones")
def test_a_vct_is_found_within_the_roots_budget_where_the_defender_has_fours(
    moves: list[int]
) -> None:
    # Answering with its own fours first, the defender refutes at once the attacks that
    # leave it a VCF; with the key points first the search spent the whole budget on them.
    # Within each kind of answer, those on the cells that weigh most for both sides come
    # first (WEIGHED_ANSWERS_VCTS: by cell index, the search took more than the budget).
    config = PRESETS["arena-gomoku"]
    plies, nodes = config["vct_plies"], config["vct_nodes"]
    assert isinstance(plies, int) and isinstance(nodes, int)
    line = line_of(moves, plies, threes=True, nodes=nodes)
    assert line, "no VCT found within the root's budget"
    check_threat_line(15, "freestyle", moves, line, True)
    assert_wins_by_the_rules(moves, line, "freestyle")


@pytest.mark.parametrize("tactic", [t for t in TACTICS if t.plies >= 9], ids=lambda t: t.name)
def test_tactics_hold_against_every_answer(tactic: Tactic) -> None:
    threes = tactic.kind == "vct"
    first = line_of(tactic.moves, tactic.plies, threes, tactic.rule)[0]
    after = [*tactic.moves, first]
    for answer in range(225):
        if answer in after:
            continue
        try:
            position_from_moves(15, tactic.rule, [*after, answer])
        except GomokuPositionError:
            pytest.fail(f"answer {answer} ends the game")
        assert line_of([*after, answer], tactic.plies, threes, tactic.rule), answer


@pytest.mark.parametrize("tactic", TACTICS, ids=lambda t: t.name)
def test_the_bot_plays_the_win(tactic: Tactic) -> None:
    result = choose_move(15, tactic.rule, tactic.moves, PRESETS["arena-gomoku"],
                         Limits(depth=4))
    assert result.exact and result.score > 0
    assert_wins_by_the_rules(tactic.moves, result.pv, tactic.rule)


def test_a_vct_is_shorter_than_any_vcf() -> None:
    assert line_of(VCF_15, 13, threes=False) == []
    line = line_of(VCF_15, 9, threes=True)
    assert len(line) == 9
    check_threat_line(15, "freestyle", VCF_15, line, threes=True)
    assert_wins_by_the_rules(VCF_15, line, "freestyle")


@pytest.mark.parametrize("rule", ["freestyle", "exact-five"])
def test_every_line_found_in_random_positions_is_a_real_win(rule: str) -> None:
    rng = random.Random(len(rule))
    checked = {False: 0, True: 0}
    for _game in range(4):
        moves = random_game(15, rule, rng)
        for cut in range(8, len(moves) - 1, 4):
            position = moves[:cut]
            for threes in (False, True):
                line = line_of(position, 15, threes, rule, nodes=20_000)
                if len(line) > 1:
                    check_threat_line(15, rule, position, line, threes)
                    assert_wins_by_the_rules(position, line, rule)
                    checked[threes] += 1
    assert checked[False] >= 5 and checked[True] >= 5, checked


def test_exact_five_threats_ignore_overlines() -> None:
    # Black X X X X _ X from the edge: the gap makes six, a win only in freestyle.
    black = [xy(x, 7) for x in (0, 1, 2, 3, 5)]
    white = [xy(9, 0), xy(9, 2), xy(9, 4), xy(9, 6), xy(9, 9)]
    moves = [m for pair in zip(black, white, strict=True) for m in pair]
    assert line_of(moves, 3, threes=False, rule="freestyle") == [xy(4, 7)]
    assert line_of(moves, 9, threes=True, rule="exact-five") == []


@pytest.mark.parametrize("limit", [1, 3, 16, 40, 76])
def test_the_best_moves_come_first_in_the_order_a_full_sort_gives(limit: int) -> None:
    import numpy as np

    from arena.engine.gomoku.threats import best_by_keys

    rng = random.Random(limit)
    for count in (0, 1, 2, limit - 1, limit, limit + 1, 76):
        keys = rng.sample(range(-500, 10_000), count)
        work = np.zeros(2 * 100, dtype=np.int64)
        work[:count] = np.arange(count) + 1000  # the moves
        work[100 : 100 + count] = keys
        best_by_keys(work, 0, 100, count, limit)
        ranked = sorted(range(count), key=lambda i: -keys[i])[:limit]
        assert work[: len(ranked)].tolist() == [1000 + i for i in ranked]
        assert work[100 : 100 + len(ranked)].tolist() == [keys[i] for i in ranked]
        # Nothing is lost: the rest of the list holds the other moves.
        assert sorted(work[:count].tolist()) == list(range(1000, 1000 + count))
