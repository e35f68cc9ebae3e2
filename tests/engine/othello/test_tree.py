"""Search tree capture: shape, values from the root player's view, budget, PV path."""

from __future__ import annotations

import random
from collections.abc import Iterator

from arena.engine.api import Limits, SearchResult, TreeNode
from arena.engine.othello import PRESETS, START_TEXT, choose_move, evaluate_position
from arena.engine.othello.bitboard import parse_position
from arena.games import PASS, game


def _position_of(tree: list[TreeNode], node: TreeNode) -> str:
    moves = []
    while node.parent != -1:
        moves.append(node.move)
        node = tree[node.parent]
    pos = parse_position(START_TEXT)
    for move in reversed(moves):
        pos = pos.play(move)
    return pos.to_text()


def test_plain_minimax_tree_is_complete_and_consistent() -> None:
    # Lab advanced: 4 plies, no pruning: 1 + 4 + 12 + 56 + 244 nodes from the start.
    result = choose_move(START_TEXT, PRESETS["lab-advanced"], Limits(), tree_budget=10_000)
    tree = result.tree
    assert tree is not None and len(tree) == 1 + 4 + 12 + 56 + 244
    root = tree[0]
    assert root.parent == -1 and root.kind == "max" and root.score == result.score
    for node in tree[1:]:
        parent = tree[node.parent]
        assert node.parent < node.id and node.depth == parent.depth - 1
        if node.kind == "leaf":
            # Leaf values are static evaluations, shown from the root player's (Black's) view.
            assert node.score == evaluate_position(
                _position_of(tree, node).replace(" O", " X"), PRESETS["lab-advanced"]
            )
        else:
            assert node.kind == ("min" if parent.kind == "max" else "max")
        assert not node.cutoff
    # Max nodes take the max of their children, min nodes the min.
    for node in tree:
        kids = [c.score for c in tree if c.parent == node.id]
        if kids:
            assert node.score == (max(kids) if node.kind == "max" else min(kids))
    pv_nodes = [n for n in tree if n.pv]
    assert [n.move for n in pv_nodes[1:]] == result.pv
    assert all(n.score == result.score for n in pv_nodes)


def test_a_tree_that_filled_its_budget_says_so() -> None:
    """Rows are kept for the root's children, so a tree the budget cut holds fewer rows
    than its budget: counting rows (the worker's test) took it for a whole one."""
    whole = choose_move(START_TEXT, PRESETS["lab-advanced"], Limits(), tree_budget=10_000)
    cut = choose_move(START_TEXT, PRESETS["lab-advanced"], Limits(), tree_budget=200)
    assert whole.tree is not None and cut.tree is not None
    assert len(whole.tree) == 317 and not whole.tree_truncated
    assert len(cut.tree) < 200 and cut.tree_truncated


def test_alpha_beta_tree_records_cutoffs_within_budget() -> None:
    result = choose_move(START_TEXT, PRESETS["ryo"], Limits(depth=4), tree_budget=5000)
    tree = result.tree
    assert tree is not None and 0 < len(tree) <= 5000
    assert any(n.cutoff for n in tree)
    assert all(n.alpha <= n.beta for n in tree)
    assert tree[0].score == result.score
    small = choose_move(START_TEXT, PRESETS["ryo"], Limits(depth=4), tree_budget=20)
    # within the budget, the rows kept for the root's children (twice the 4 moves) among
    # them: the 4 root moves are all there
    assert small.tree is not None and 12 <= len(small.tree) <= 20
    assert sorted(n.move for n in small.tree if n.parent == 0) == [19, 26, 37, 44]
    assert small.move == result.move
    assert choose_move(START_TEXT, PRESETS["ryo"], Limits(depth=2)).tree is None


def _random_positions(seed: int, games: int, plies: int, every: int,
                      offset: int) -> Iterator[str]:
    """Positions of seeded random games: ply ``offset`` and every ``every``-th after it,
    where the side to move has a move."""
    rng = random.Random(seed)
    othello = game("othello")
    for _ in range(games):
        position = othello.position_from_text(START_TEXT)
        for ply in range(plies):
            moves = position.legal_moves()
            if not moves or position.is_game_over():
                break
            if ply % every == offset and moves != [PASS]:
                yield position.to_text()
            position.push(rng.choice(moves))


def _assert_the_tree_holds_the_move(result: SearchResult, budget: int) -> None:
    """The move played is a child of the root, its last visit on the PV, in the budget."""
    assert result.tree is not None and 0 < len(result.tree) <= budget
    played = [n for n in result.tree if n.parent == 0 and n.move == result.move]
    assert played and played[-1].pv, result.move


def test_a_captured_tree_holds_the_move_played() -> None:
    """The first root moves' subtrees took the whole budget: at depth 6 and 2,000 nodes,
    32 of 209 positions of random games gave a tree without the move played (the best
    move changed late in the last iteration). Rows are now kept for the root's children:
    the move played is among them, on the principal variation, within the budget."""
    searched = 0
    for text in _random_positions(1, 12, 40, 6, 3):
        result = choose_move(text, PRESETS["arena-strong"], Limits(depth=6), tree_budget=2000)
        _assert_the_tree_holds_the_move(result, 2000)
        searched += 1
    assert searched >= 60


def test_a_search_stopped_in_an_iteration_reports_the_line_of_its_move() -> None:
    """A search its node limit (or clock) stopped inside an iteration plays the best root
    move that iteration proved at least as good; its principal variation was still the
    last finished iteration's, led by another move (13 of 405 clocked searches of random
    games), and the tree marked that one. Then it was the move alone; it is now that
    move's line as the stopped iteration searched it, which can be played out."""
    replaced = 0
    for text in _random_positions(3, 8, 44, 5, 2):
        for nodes in (3_000, 12_000, 40_000):
            result = choose_move(text, PRESETS["arena-strong"], Limits(nodes=nodes),
                                 tree_budget=3000)
            assert result.pv[:1] == [result.move], (text, nodes)
            _assert_the_tree_holds_the_move(result, 3000)
            finished = choose_move(text, PRESETS["arena-strong"], Limits(depth=result.depth))
            if result.cut_short and finished.move != result.move:
                replaced += 1
                assert len(result.pv) > 1, (text, nodes)
                line = game("othello").position_from_text(text)
                for move in result.pv:
                    line.push(move)  # raises on an illegal move
    assert replaced  # some searches did play a move their last iteration's line did not


def test_a_tree_asked_for_changes_no_endgame_move() -> None:
    """With a tree asked for, the exact solver was skipped: a match with trees played its
    endgames by the midgame search (arena-fast here: h3 at depth 4 where the solver plays
    h4, +56), and 26 of a 60-game ladder's games came out otherwise than without trees.
    The solve's tree is its proven line, each node with the exact score."""
    text = "XXXXXXXXXXXXXXXOXXXXXXO-XXXXOOO-XXXXXOO-X-XOXO-----OOOX----OXXXX X"
    limits = Limits(time_ms=5000)
    choose_move(text, PRESETS["arena-fast"], limits)  # the solver's tables, readied
    plain = choose_move(text, PRESETS["arena-fast"], limits)
    treed = choose_move(text, PRESETS["arena-fast"], limits, tree_budget=2000)
    assert plain.exact and treed.exact
    assert (treed.move, treed.score, treed.pv) == (plain.move, plain.score, plain.pv)
    tree = treed.tree
    assert tree is not None and [node.move for node in tree] == [-1, *treed.pv]
    assert all(node.score == treed.score and node.pv for node in tree)
    assert [node.kind for node in tree[:3]] == ["max", "min", "max"]
    assert tree[0].depth == text.count("-") and tree[1].parent == 0
    position = game("othello").position_from_text(text)
    for node in tree[1:]:  # a legal line from the position
        assert position.is_legal(node.move)
        position.push(node.move)
    short = choose_move(text, PRESETS["arena-fast"], limits, tree_budget=3)
    assert short.tree is not None and len(short.tree) == 3
