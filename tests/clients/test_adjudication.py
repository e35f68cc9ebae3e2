"""Adjudication by the exact solver (``--adjudicate-empties``), through the `arena` command
against real services: the referee ends an Othello game at N empty squares with the result
of perfect play, checked here against a plain minimax over the rules library."""

from __future__ import annotations

import json
import random

from arena.clients.sprt_commands import EXIT_NO_VERDICT

from arena.formats import parse_ggf
from arena.games import PASS, Color, game
from arena.games.othello import OthelloBoard
from tests.clients.conftest import InProcessStack, ok, one_line_error


def _empties(board: OthelloBoard) -> int:
    return board.empties


def _perfect_play(board: OthelloBoard) -> int:
    """Black's final score (discs, the empty squares to the winner) under perfect play:
    every line searched, no engine involved."""
    outcome = board.outcome()
    if outcome is not None:
        return outcome.wof_diff
    scores = []
    for move in board.legal_moves():
        after = board.copy()
        after.push(move)
        scores.append(_perfect_play(after))
    return max(scores) if board.turn is Color.BLACK else min(scores)


def _position_at(empties: int, seed: int) -> OthelloBoard:
    """A position of a random game with ``empties`` empty squares, the side to move able to
    move."""
    draw = random.Random(seed)
    while True:
        board = OthelloBoard()
        while _empties(board) > empties and not board.is_game_over():
            board.push(draw.choice(board.legal_moves()))
        if not board.is_game_over() and board.legal_moves() != [PASS]:
            return board


def _board(text: str) -> OthelloBoard:
    return OthelloBoard.from_text(text)


def test_a_match_ends_at_the_threshold_with_perfect_plays_result(
        cli_stack: InProcessStack) -> None:
    for name in ("ann", "ben"):
        ok(cli_stack.run("bot", "register", "--name", name, "--from-preset", "lab-beginner"))
    for seed in (1, 2):
        start = _position_at(12, seed)
        # The bots answer in microseconds; the long move time keeps a pause of the test
        # process's worker thread (once, 744 ms of its CPU time in one move under make
        # test) from forfeiting a game this test wants adjudicated.
        created = json.loads(ok(cli_stack.run(
            "match", "create", "--black", "ann", "--white", "ben", "--start", start.to_text(),
            "--adjudicate-empties", "8", "--move-time-ms", "3000", "--json")))
        ok(cli_stack.run("match", "watch", created["id"]))
        match = json.loads(ok(cli_stack.run("match", "show", created["id"], "--json")))
        result, moves = match["result"], match["moves"]
        assert result["termination"] == "TERMINATION_ADJUDICATED", result
        final = _board(moves[-1]["position_after"])
        before = _board(moves[-2]["position_after"]) if len(moves) > 1 else start
        assert _empties(final) <= 8 < _empties(before)  # not a ply sooner, not later
        black = _perfect_play(final)
        assert result.get("score", 0) == black
        assert result.get("winner", "COLOR_UNSPECIFIED") == (
            "COLOR_BLACK" if black > 0 else "COLOR_WHITE" if black < 0 else "COLOR_UNSPECIFIED")
        # The counts are perfect play's (the empty squares the winner's): they agree with
        # the winner, where the board as it stands may not.
        assert (result["black_count"], result["white_count"]) == ((64 + black) // 2,
                                                                  (64 - black) // 2)
        verdict = "a draw" if black == 0 else \
            f"{'Black' if black > 0 else 'White'} wins by {abs(black)}"
        assert result["detail"] == (f"exact solve at {_empties(final)} empty squares: "
                                    f"{verdict} with perfect play")
        assert result["detail"] in ok(cli_stack.run("match", "show", created["id"]))
        ggf = parse_ggf(ok(cli_stack.run("match", "export", created["id"], "--format", "ggf")))
        assert len(ggf.moves) == len(moves)  # the record ends where the game was judged
        assert ggf.result_score() == black, ggf.result
        # Imported back, from either record, it keeps perfect play's result (the counts of
        # the last board were stored, and exported again as RE[+46.000] for a +10).
        for fmt in ("native", "ggf"):
            record = ok(cli_stack.run("match", "export", created["id"], "--format", fmt))
            imported = json.loads(ok(cli_stack.run("match", "import", "-", "--json",
                                                   stdin=record)))["id"]
            again = json.loads(ok(cli_stack.run("match", "show", imported, "--json")))["result"]
            assert again["termination"] == "TERMINATION_ADJUDICATED", (fmt, again)
            assert (again["black_count"], again["white_count"], again.get("score", 0)) == (
                result["black_count"], result["white_count"], black), (fmt, again)
            exported = parse_ggf(ok(cli_stack.run("match", "export", imported, "--format",
                                                  "ggf")))
            assert exported.result_score() == black, (fmt, exported.result)

    # A start already at the threshold: adjudicated before anyone moves.
    start = _position_at(7, 3)
    created = json.loads(ok(cli_stack.run(
        "match", "create", "--black", "ann", "--white", "ben", "--start", start.to_text(),
        "--adjudicate-empties", "8", "--json")))
    ok(cli_stack.run("match", "watch", created["id"]))
    match = json.loads(ok(cli_stack.run("match", "show", created["id"], "--json")))
    assert match.get("moves", []) == []
    assert match["result"]["termination"] == "TERMINATION_ADJUDICATED"
    assert match["result"].get("score", 0) == _perfect_play(start)


def test_a_ladder_adjudicates_each_game_and_rates_the_results(
        cli_stack: InProcessStack) -> None:
    for name in ("cal", "dee"):
        ok(cli_stack.run("bot", "register", "--name", name, "--from-preset", "lab-beginner"))
    created = json.loads(ok(cli_stack.run(
        "ladder", "create", "cal", "dee", "--games-per-pairing", "2", "--move-time-ms", "500",
        "--adjudicate-empties", "6", "--json")))
    ok(cli_stack.run("ladder", "watch", created["id"]))
    listed = json.loads(ok(cli_stack.run("match", "list", "--ladder", created["id"],
                                         "--json")))
    assert len(listed) == 2
    for summary in listed:
        match = json.loads(ok(cli_stack.run("match", "show", summary["id"], "--json")))
        assert match["config"]["adjudicate_empties"] == 6
        assert match["result"]["termination"] == "TERMINATION_ADJUDICATED"
        final = _board(match["moves"][-1]["position_after"])
        assert match["result"].get("score", 0) == _perfect_play(final)
    standings = json.loads(ok(cli_stack.run("ladder", "standings", created["id"], "--json")))
    assert sum(row["games"] for row in standings["rows"]) == 4  # both games rated, twice
    # A version test's games too.
    run = cli_stack.run("test", "cal", "dee", "--max-games", "2", "--adjudicate-empties", "6",
                        "--json")
    assert run.code == EXIT_NO_VERDICT, run.err  # two games decide nothing
    tested = json.loads(run.out)["ladder"]
    assert tested["config"]["adjudicate_empties"] == 6
    for summary in json.loads(ok(cli_stack.run("match", "list", "--ladder", tested["id"],
                                               "--json"))):
        match = json.loads(ok(cli_stack.run("match", "show", summary["id"], "--json")))
        assert match["result"]["termination"] == "TERMINATION_ADJUDICATED"


def test_adjudication_is_refused_where_it_cannot_be_done(cli_stack: InProcessStack) -> None:
    ok(cli_stack.run("bot", "register", "--name", "eve", "--from-preset", "lab-beginner"))
    ok(cli_stack.run("bot", "register", "--name", "gus", "--from-preset", "sharpmoku-normal"))
    one_line_error(cli_stack.run("match", "create", "--black", "eve", "--white", "eve",
                                 "--adjudicate-empties", "19"),
                   "--adjudicate-empties: must be in 0..18, got 19")
    one_line_error(cli_stack.run("ladder", "create", "eve", "eve@1", "--adjudicate-empties",
                                 "40"), "--adjudicate-empties: must be in 0..18, got 40")
    one_line_error(cli_stack.run("match", "create", "--black", "gus", "--white", "gus",
                                 "--adjudicate-empties", "5"),
                   "--adjudicate-empties: Gomoku has no exact solver")
    one_line_error(cli_stack.run("ladder", "create", "gus", "gus@1", "--adjudicate-empties",
                                 "5"), "--adjudicate-empties: Gomoku has no exact solver")


def test_the_exact_score_agrees_with_minimax_where_the_side_to_move_must_pass() -> None:
    """The referee may adjudicate at a position whose side to move has no move: the
    solver's score is still perfect play's (checked against the plain minimax)."""
    draw, checked = random.Random(3), 0
    engine = game("othello").engine()
    while checked < 4:
        board = OthelloBoard()
        while not board.is_game_over():
            if board.legal_moves() == [PASS] and _empties(board) <= 10:
                score = engine.exact_score(board.to_text(), 10**7)
                assert score is not None
                black = score if board.turn is Color.BLACK else -score
                assert black == _perfect_play(board), board.to_text()
                checked += 1
                break
            board.push(draw.choice(board.legal_moves()))
    assert game("gomoku").engine().exact_score("", 10**7) is None  # no solver
