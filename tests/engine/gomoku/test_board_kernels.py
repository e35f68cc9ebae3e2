"""The board network in the search's kernels (``evaluation.BoardNet``): the kept cell
values and 5x5 sums against the numpy reference, exact whatever order the stones came in
and after any play and unplay, the weight file's board section, and a search with it."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import numpy as np
import pytest

from arena.engine.api import Limits
from arena.engine.gomoku import PRESETS, bots, choose_move, evaluator_hash, train, validate_config
from arena.engine.gomoku import evaluation as ev
from arena.engine.gomoku.board import EXACT_FIVE, FREESTYLE
from arena.engine.gomoku.config import (
    BOARD_WEIGHTS,
    PARAMETERS,
    SCREEN_WEIGHTS,
    TRAINED_WEIGHTS,
    resolved,
    screen_margin,
)
from arena.engine.gomoku.patterns import (
    B_DELTA,
    ST_EVAL,
    ST_SCREEN,
    board_view,
    cell_codes,
    flush_board,
    play,
    setup,
    unplay,
)
from arena.engine.gomoku.position import position_from_moves
from arena.engine.gomoku.search import EVAL_BOUND, evaluate, screened

from .test_board import random_game


def random_net(seed: int) -> ev.BoardNet:
    rng = np.random.default_rng(seed)
    channels = ev.BOARD_CHANNELS
    return ev.BoardNet(
        first=rng.normal(0, 0.5, (ev.CELL_INPUTS, channels)),
        taps=rng.normal(0, 0.3, (ev.BOARD_KERNEL, ev.BOARD_KERNEL, channels)),
        bias=rng.normal(0, 0.2, channels),
        head_in=rng.normal(0, 0.3, (2, 2 * channels, ev.BOARD_HEAD)),
        head_bias=rng.normal(0, 0.1, (2, ev.BOARD_HEAD)),
        head_out=rng.normal(0, 0.3, (2, ev.BOARD_HEAD)),
        head_out_bias=rng.normal(0, 0.1, 2))


def reference(net: ev.BoardNet, size: int, cells: np.ndarray, st: np.ndarray,
              black_to_move: bool) -> int:
    black = cell_codes(st, 1, size * size)[None]
    white = cell_codes(st, 2, size * size)[None]
    return int(ev.board_values(net, cells[None], black, white, size,
                               np.array([black_to_move]))[0])


def kept(st: np.ndarray) -> np.ndarray:
    """What the kernels keep of the board network for a position (not the scratch), once
    brought up to date."""
    flush_board(st)
    return board_view(st)[:B_DELTA].copy()


@pytest.mark.parametrize("size", [9, 15, 19])
def test_the_kernels_value_is_the_numpy_reference(size: int) -> None:
    rng = random.Random(size)
    for trial in range(8):
        net = random_net(trial)
        moves = random_game(size, "freestyle", rng)[: rng.randrange(1, 50)]
        cells, _pat, st, _table = setup(size, FREESTYLE, moves, ev.HAND_WEIGHTS, net)
        for me in (1, 2):
            expected = reference(net, size, cells, st, me == 1)
            # The heads run in floating point in both; their sums may round apart.
            assert abs(evaluate(st, me) - max(-EVAL_BOUND, min(EVAL_BOUND, expected))) <= 1


def test_a_walk_of_plays_and_unplays_is_evaluated_exactly_wherever_it_stops() -> None:
    """The cells are brought up to date only when a leaf is evaluated (or by
    ``flush_board``): whatever moves were played and taken back since (once, twice, or not
    at all), the leaf's value is the network's, and the kept values end as a fresh
    setup's."""
    rng = random.Random(11)
    net = random_net(5)
    for _ in range(6):
        game = random_game(15, "freestyle", rng)
        start = rng.randrange(0, 12)
        cells, pat, st, table = setup(15, FREESTYLE, game[:start], ev.HAND_WEIGHTS, net)
        line = list(game[:start])
        evaluations = 0
        for _step in range(120):
            if line and (len(line) >= len(game) - 1 or rng.random() < 0.45):
                unplay(cells, pat, st, table, line.pop())
            else:
                free = [c for c in range(225) if cells[c] == 0]
                move = game[len(line)] if rng.random() < 0.5 else rng.choice(free)
                if move in line:
                    move = rng.choice(free)
                play(cells, pat, st, table, move, 1 + len(line) % 2)
                line.append(move)
            if rng.random() < 0.1:
                flush_board(st)
            if rng.random() < 0.25:
                me = 1 + len(line) % 2
                expected = reference(net, 15, cells, st, me == 1)
                assert abs(evaluate(st, me) - max(-EVAL_BOUND, min(EVAL_BOUND, expected))) <= 1
                evaluations += 1
        fresh = setup(15, FREESTYLE, line, ev.HAND_WEIGHTS, net)[2]
        assert np.array_equal(kept(st), kept(fresh))
        assert evaluations > 10


def test_kept_values_depend_on_the_position_only() -> None:
    """Integers throughout: the same stones reached in another order, or after moves
    played and taken back, keep the very same cell values and sums."""
    rng = random.Random(3)
    net = random_net(1)
    for _ in range(10):
        rule = rng.choice([FREESTYLE, EXACT_FIVE])
        moves = random_game(15, "freestyle", rng)[: rng.randrange(4, 40)]
        st = setup(15, rule, moves, ev.HAND_WEIGHTS, net)[2]
        blacks, whites = moves[0::2], moves[1::2]
        rng.shuffle(blacks)
        rng.shuffle(whites)
        pairs = zip(blacks, whites, strict=False)
        shuffled = [m for pair in pairs for m in pair] + blacks[len(whites):]
        cells2, pat2, st2, table2 = setup(15, rule, shuffled, ev.HAND_WEIGHTS, net)
        extra = rng.sample([c for c in range(225) if cells2[c] == 0], 6)
        for i, move in enumerate(extra):
            play(cells2, pat2, st2, table2, move, 1 + (len(moves) + i) % 2)
            assert evaluate(st2, 1 + (len(moves) + i + 1) % 2) == max(-EVAL_BOUND, min(
                EVAL_BOUND, reference(net, 15, cells2, st2, (len(moves) + i) % 2 == 1)))
        for move in reversed(extra):
            unplay(cells2, pat2, st2, table2, move)
        assert np.array_equal(kept(st), kept(st2))
        assert evaluate(st, 1) == evaluate(st2, 1)


def test_a_search_with_a_board_network_is_deterministic(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """A whole search evaluated by a board network: a fixed-depth search gives the same
    move and score twice (the table's entries carry each search's salt)."""
    net = random_net(7)
    moves = [192, 159, 158, 143, 160, 178, 148, 190, 174]  # a quiet middlegame
    board = PRESETS["arena-gomoku-board"]
    plain = choose_move(15, "freestyle", moves, PRESETS["arena-gomoku"], Limits(depth=4))
    monkeypatch.setattr(bots, "load_board", lambda name: net)
    first = choose_move(15, "freestyle", moves, board, Limits(depth=4))
    again = choose_move(15, "freestyle", moves, board, Limits(depth=4))
    assert (first.move, first.score, first.nodes) == (again.move, again.score, again.nodes)
    assert first.nodes > 100 and not first.exact
    assert first.score != plain.score  # the network, not the linear weights, evaluated


def test_a_screened_leaf_is_the_networks_unless_the_linear_value_lies_beyond_the_window(
) -> None:
    """``screened``: where the linear value lies more than the margin beyond the window,
    that value moved by the margin toward the window (so on the same side of it); else the
    network's value. Skipped leaves leave the network's kept values waiting, and the next
    leaf it evaluates is exact. Without a screen, every leaf is the network's."""
    rng = random.Random(21)
    linear, net = ev.load_weights(TRAINED_WEIGHTS)[0], ev.load_board(BOARD_WEIGHTS)
    margin = 700
    kinds = {"above": 0, "below": 0, "network": 0}
    for _ in range(5):
        game = random_game(15, "freestyle", rng)
        cut = rng.randrange(6, len(game) - 1)
        cells, pat, st, table = setup(15, FREESTYLE, game[: cut - 4], linear, net, margin)
        cells0, pat0, unscreened, table0 = setup(15, FREESTYLE, game[: cut - 4], linear, net, 0)
        for ply in range(cut - 4, cut):
            play(cells, pat, st, table, game[ply], 1 + ply % 2)
            play(cells0, pat0, unscreened, table0, game[ply], 1 + ply % 2)
            plain = setup(15, FREESTYLE, game[: ply + 1], linear, None)[2]
            networked = setup(15, FREESTYLE, game[: ply + 1], linear, net)[2]
            for me in (1, 2):
                guess, value = evaluate(plain, me), evaluate(networked, me)
                for beta in (guess - 3000, guess - 701, guess - 699, guess, guess + 699,
                             guess + 701, guess + 3000):
                    for alpha in (beta - 1, beta - 1000):
                        got = screened(st, me, alpha, beta)
                        if guess - margin >= beta:
                            assert got == guess - margin >= beta
                            kinds["above"] += 1
                        elif guess + margin <= alpha:
                            assert got == guess + margin <= alpha
                            kinds["below"] += 1
                        else:
                            assert got == value
                            kinds["network"] += 1
                        assert screened(unscreened, me, alpha, beta) == evaluate(networked, me)
        assert np.array_equal(kept(st), kept(networked))
    assert min(kinds.values()) > 20, kinds


QUIET = [[112, 113, 127, 98, 142, 97], [192, 159, 158, 143, 160, 178, 148, 190, 174],
         [112, 128, 96, 111, 126]]


@pytest.mark.parametrize("moves", QUIET)
def test_the_board_preset_evaluates_with_the_shipped_board_network(moves: list[int]) -> None:
    """A depth-1 search of ``arena-gomoku-board`` without its screen scores the best of
    the children as the shipped board network values them; ``arena-gomoku``, with the
    linear set."""
    scores = {}
    for name, weights in (("arena-gomoku-board", BOARD_WEIGHTS),
                          ("arena-gomoku", TRAINED_WEIGHTS)):
        cells, pat, st, table = setup(15, FREESTYLE, moves, ev.load_weights(weights)[0],
                                      ev.load_board(weights))
        me = 1 + len(moves) % 2
        children = []
        for cell in np.flatnonzero(cells == 0):
            play(cells, pat, st, table, int(cell), me)
            children.append(-evaluate(st, 3 - me))
            unplay(cells, pat, st, table, int(cell))
        found = choose_move(15, "freestyle", moves, {**PRESETS[name], "screen": 0},
                            Limits(depth=1))
        assert found.depth == 1 and found.score == max(children), name
        scores[name] = found.score
    assert scores["arena-gomoku-board"] != scores["arena-gomoku"]


def test_the_board_preset_screens_its_leaves_with_the_linear_set() -> None:
    """``arena-gomoku-board`` searches with its default screen, judged by the linear set
    (the board set's own linear weights are all zero); ``screen`` 0 turns it off, and
    without the board network it does nothing."""
    board = PRESETS["arena-gomoku-board"]
    default = PARAMETERS["arena-gomoku"]["screen"][0]
    assert default > 0 and screen_margin(resolved(board)) == default
    assert screen_margin(resolved({**board, "screen": 0})) == 0
    assert screen_margin(resolved({**PRESETS["arena-gomoku"], "screen": 900})) == 0
    pos = position_from_moves(15, "freestyle", QUIET[1])
    for screen, linear in ((default, SCREEN_WEIGHTS), (0, BOARD_WEIGHTS)):
        state = bots._ArenaState(pos, resolved({**board, "screen": screen}), 0)
        assert state.st[ST_SCREEN] == screen
        assert np.array_equal(state.st[ST_EVAL : ST_EVAL + ev.FEATURES],
                              ev.load_weights(linear)[0][: ev.FEATURES])
    # A fixed-depth search with the screen is as deterministic as one without, and takes
    # another path: the screened leaves' values are the linear set's.
    limits = Limits(depth=5)
    first = choose_move(15, "freestyle", QUIET[1], board, limits)
    again = choose_move(15, "freestyle", QUIET[1], board, limits)
    plain = choose_move(15, "freestyle", QUIET[1], {**board, "screen": 0}, limits)
    assert (first.move, first.score, first.nodes) == (again.move, again.score, again.nodes)
    assert first.nodes != plain.nodes


def test_the_shipped_board_set_records_how_it_was_made() -> None:
    path = ev.WEIGHTS_DIR / f"{BOARD_WEIGHTS}.json"
    body = json.loads(path.read_text())
    net = ev.load_board(BOARD_WEIGHTS)
    assert net is not None and net.channels == ev.BOARD_CHANNELS
    assert not ev.load_weights(BOARD_WEIGHTS)[0].any()  # the network evaluates alone
    assert body["command"].startswith("arena engine train gomoku --positions ")
    assert " --board " in body["command"]
    metrics = body["metrics"]
    held = metrics["heldout"]
    # Held out, better than the hand weights, a coin, and the linear set (fitted on other
    # labels of the same games, holding out the same last games: its folds, whose games it
    # partly trained on, would flatter it).
    assert held["trained"]["log_loss"] < min(held["hand"]["log_loss"],
                                             held["untrained"]["log_loss"],
                                             held["shipped"]["log_loss"])
    # as many folds as the command asked for (train.FOLDS unless it says --folds)
    asked = re.search(r" --folds (\d+) ", body["command"])
    assert len(metrics["folds"]) == (int(asked.group(1)) if asked else train.FOLDS)
    assert all(f["trained"]["log_loss"] < f["hand"]["log_loss"] for f in metrics["folds"])
    # fitted from several starts, it kept the one that fitted its training games best
    assert metrics["train"]["trained"]["log_loss"] == min(metrics["starts"])


def test_the_board_presets_hash_follows_its_own_file(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    board, linear = PRESETS["arena-gomoku-board"], PRESETS["arena-gomoku"]
    shipped = {name: evaluator_hash(config) for name, config in (("board", board),
                                                                  ("linear", linear))}
    assert shipped["board"] != shipped["linear"]
    folder = tmp_path / "weights"
    folder.mkdir()
    for name in (BOARD_WEIGHTS, TRAINED_WEIGHTS):
        (folder / f"{name}.json").write_bytes((ev.WEIGHTS_DIR / f"{name}.json").read_bytes())
    monkeypatch.setattr(ev, "WEIGHTS_DIR", folder)
    assert evaluator_hash(board) == shipped["board"]
    body = json.loads((folder / f"{BOARD_WEIGHTS}.json").read_text())
    body["board"]["bias"][0] += 0.25
    (folder / f"{BOARD_WEIGHTS}.json").write_text(json.dumps(body))
    assert evaluator_hash(board) != shipped["board"]
    assert evaluator_hash(linear) == shipped["linear"]  # not its file


def test_the_board_presets_hash_follows_its_screen(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The screen's margin and the screen's weight file are part of what the board preset
    plays; without the board network, ``screen`` changes nothing and no hash."""
    board, linear = PRESETS["arena-gomoku-board"], PRESETS["arena-gomoku"]
    unscreened = {**board, "screen": 0}
    shipped = {name: evaluator_hash(config) for name, config in (
        ("board", board), ("unscreened", unscreened), ("linear", linear))}
    assert len(set(shipped.values())) == 3
    assert evaluator_hash({**board, "screen": 1500}) != shipped["board"]
    assert evaluator_hash({**linear, "screen": 1500}) == shipped["linear"]
    assert evaluator_hash({**linear, "screen": 0}) == shipped["linear"]
    folder = tmp_path / "weights"
    folder.mkdir()
    for name in (BOARD_WEIGHTS, TRAINED_WEIGHTS):
        (folder / f"{name}.json").write_bytes((ev.WEIGHTS_DIR / f"{name}.json").read_bytes())
    monkeypatch.setattr(ev, "WEIGHTS_DIR", folder)
    body = json.loads((folder / f"{SCREEN_WEIGHTS}.json").read_text())
    body["weights"][0] += 1
    (folder / f"{SCREEN_WEIGHTS}.json").write_text(json.dumps(body))
    assert evaluator_hash(board) != shipped["board"]
    assert evaluator_hash(unscreened) == shipped["unscreened"]  # not read
    assert validate_config({**board, "screen": 20_001}) != []
    assert validate_config({**board, "screen": -1}) != []


def test_one_evaluation_at_a_time() -> None:
    config = {**PRESETS["arena-gomoku-board"], "hand_eval": True}
    assert [(v.field, v.description) for v in validate_config(config)] == [
        ("board_eval", "cannot be true with hand_eval: each picks the evaluation (set "
                       "board_eval false to use hand_eval)")]
    assert validate_config({**config, "board_eval": False}) == []


def test_a_weight_file_carries_its_board_network(tmp_path: Path) -> None:
    net = random_net(2)
    body = {"weights": [0] * ev.FEATURES, "board": net.to_json()}
    path = tmp_path / "w.json"
    path.write_text(json.dumps(body))
    read = ev.read_board(path)
    assert read is not None
    assert np.allclose(read.taps, net.taps, atol=1e-6)
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"weights": [0] * ev.FEATURES}))
    assert ev.read_board(plain) is None


@pytest.mark.parametrize(("change", "words"), [
    (lambda b: b.pop("taps"), "lacks or garbles 'taps'"),
    (lambda b: b.update(bias=[1.0, 2.0]), "bias must have shape (16,)"),
    (lambda b: b.update(first=[[0.0] * 40] * ev.CELL_INPUTS), "first must have shape (17, 16)"),
    (lambda b: b.update(bias=[1e9] * 16), "too large for the kernels' integers"),
    (lambda b: b.update(taps=[[[40.0] * 16] * 5] * 5), "a 5x5 sum could leave"),
    (lambda b: b.update(head_out_bias=[float("nan"), 0.0]), "not finite"),
])
def test_a_malformed_board_section_is_refused_with_its_reason(
        tmp_path: Path, change: object, words: str) -> None:
    board = random_net(2).to_json()
    change(board)  # type: ignore[operator]
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"weights": [0] * ev.FEATURES, "board": board}))
    with pytest.raises(ValueError, match=None) as raised:
        ev.read_board(path)
    assert words in str(raised.value) and str(path) in str(raised.value)


def test_a_threat_search_leaves_the_kept_values_as_it_found_them() -> None:
    """Threat searches pause the board network (they never evaluate) and take back every
    stone they play: after one, the kept values are those of the position, and the
    network is on again."""
    from arena.engine.api import StopFlag
    from arena.engine.gomoku.bots import thread_tables
    from arena.engine.gomoku.control import new_context
    from arena.engine.gomoku.patterns import ST_BOARD
    from arena.engine.gomoku.root import search_threats

    from .positions import TACTICS

    net = random_net(4)
    for case in TACTICS[:4]:
        rule = FREESTYLE if case.rule == "freestyle" else EXACT_FIVE
        cells, pat, st, table = setup(15, rule, list(case.moves), ev.HAND_WEIGHTS, net)
        before = kept(st)
        tables = thread_tables(16)
        for fours_only in (True, False):
            ctx = new_context(0, 0, 0, salt=tables.next_salt())
            search_threats(cells, pat, st, table, 1 + len(case.moves) % 2, 15, 20_000,
                           fours_only, tables.memo, tables.work, ctx, StopFlag().array)
            assert st[ST_BOARD] == 1
            assert np.array_equal(kept(st), before)
