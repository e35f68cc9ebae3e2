"""Othello and international Reversi rules, checked against data files and against a
deliberately naive grid implementation written here (no bitboards, no shared code)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from arena.games import Color, IllegalMoveError, InvalidMoveError, Termination
from arena.games.base import InvalidPositionError, Outcome, UnknownGameError
from arena.games.othello import PASS, OthelloBoard, perft

START_TEXT = "---------------------------OX------XO--------------------------- X"

# --- a naive reference: a list of 64 cells, walking each direction square by square ---

Grid = list[str]  # "X", "O" or "-" per square, a1..h8
STEPS = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0)]
CENTRE = {27, 28, 35, 36}


def naive_flips(grid: Grid, me: str, square: int) -> list[int]:
    if grid[square] != "-":
        return []
    them = "O" if me == "X" else "X"
    flipped: list[int] = []
    row, col = divmod(square, 8)
    for dr, dc in STEPS:
        line = []
        r, c = row + dr, col + dc
        while 0 <= r < 8 and 0 <= c < 8 and grid[r * 8 + c] == them:
            line.append(r * 8 + c)
            r, c = r + dr, c + dc
        if line and 0 <= r < 8 and 0 <= c < 8 and grid[r * 8 + c] == me:
            flipped.extend(line)
    return flipped


def naive_moves(grid: Grid, me: str, international: bool) -> list[int]:
    if international and sum(cell != "-" for cell in grid) < 4:
        return sorted(sq for sq in CENTRE if grid[sq] == "-")
    moves = [sq for sq in range(64) if naive_flips(grid, me, sq)]
    them = "O" if me == "X" else "X"
    if not moves and any(naive_flips(grid, them, sq) for sq in range(64)):
        return [PASS]
    return moves


def naive_play(grid: Grid, me: str, move: int) -> Grid:
    new = list(grid)
    if move != PASS:
        for sq in naive_flips(grid, me, move):
            new[sq] = me
        new[move] = me
    return new


def naive_perft(grid: Grid, me: str, depth: int, international: bool) -> int:
    moves = naive_moves(grid, me, international)
    if depth == 0 or not moves:
        return 1
    them = "O" if me == "X" else "X"
    return sum(naive_perft(naive_play(grid, me, m), them, depth - 1, international) for m in moves)


def grid_of(board: OthelloBoard) -> tuple[Grid, str]:
    squares, side = board.to_text().split()[:2]
    return list(squares), side


# --- coordinates and the start position -------------------------------------------------


def test_square_numbering_and_notation() -> None:
    board = OthelloBoard()
    assert board.move_to_str(0) == "a1"
    assert board.move_to_str(7) == "h1"
    assert board.move_to_str(8) == "a2"
    assert board.move_to_str(63) == "h8"
    assert board.move_to_str(19) == "d3"
    assert board.move_to_str(PASS) == "pass"
    assert board.parse_move("d3") == 19
    assert board.parse_move("F5") == 37
    assert board.legal_moves() == [19, 26, 37, 44]  # d3 c4 f5 e6


def test_standard_start() -> None:
    board = OthelloBoard.start()
    assert board == OthelloBoard() == OthelloBoard.from_text(START_TEXT)
    assert board.to_text() == START_TEXT
    assert board.turn is Color.BLACK
    assert board.piece_at(35) is Color.BLACK  # d5
    assert board.piece_at(28) is Color.BLACK  # e4
    assert board.piece_at(27) is Color.WHITE  # d4
    assert board.piece_at(36) is Color.WHITE  # e5
    assert board.black_bits == (1 << 28) | (1 << 35)
    assert board.white_bits == (1 << 27) | (1 << 36)


def test_flips_in_all_eight_directions() -> None:
    # Black on d4 surrounded by white discs, each backed by a black disc.
    rows = [
        "--------",
        "-X-X-X--",
        "--OOO---",
        "-XO-OX--",
        "--OOO---",
        "-X-X-X--",
        "--------",
        "--------",
    ]
    board = OthelloBoard.from_text("".join(rows) + " X")
    assert bin(board.flips(27)).count("1") == 8
    board.push(27)
    assert board.count(Color.WHITE) == 0
    assert board.count(Color.BLACK) == 8 + 8 + 1


def test_flips_do_not_wrap_around_the_edge() -> None:
    # h3 white, a4 black: on a wrapping board black at g3 would "capture" h3 via a4.
    grid = ["-"] * 64
    grid[23], grid[24], grid[0] = "O", "X", "X"  # h3, a4, a1 (a1 so black has discs)
    board = OthelloBoard.from_text("".join(grid) + " X")
    assert 22 not in board.legal_moves()  # g3


def test_pass_only_when_no_move_and_game_end() -> None:
    # White to move has no move but black has one: white must pass.
    grid = ["-"] * 64
    grid[0], grid[1] = "X", "O"  # a1 black, b1 white: black can play c1
    board = OthelloBoard.from_text("".join(grid) + " O")
    assert board.legal_moves() == [PASS]
    assert not board.is_game_over()
    board.push(PASS)
    assert board.legal_moves() == [2]
    with pytest.raises(IllegalMoveError):
        board.push(PASS)  # black has a move, so may not pass
    board.push(2)
    assert board.is_game_over()
    assert board.legal_moves() == []
    outcome = board.outcome()
    assert outcome == Outcome(Color.BLACK, Termination.NORMAL, 3, 0, 61)
    with pytest.raises(IllegalMoveError):
        board.push(PASS)


def test_outcome_scores_raw_and_wof() -> None:
    outcome = Outcome(Color.BLACK, Termination.NORMAL, 33, 30, 1)
    assert outcome.disc_diff == 3
    assert outcome.wof_scores == (34, 30)
    assert outcome.wof_diff == 4
    assert outcome.result == "1-0"
    assert outcome.score_for(Color.WHITE) == -3
    white_win = Outcome(Color.WHITE, Termination.NORMAL, 10, 20, 34)
    assert white_win.wof_scores == (10, 54)
    draw = Outcome(None, Termination.NORMAL, 20, 20, 24)
    assert draw.wof_scores == (32, 32)
    assert draw.result == "1/2-1/2" and draw.is_draw


def test_a_full_game_ends_with_consistent_outcome() -> None:
    rng = random.Random(7)
    board = OthelloBoard()
    while not board.is_game_over():
        board.push(rng.choice(board.legal_moves()))
    outcome = board.outcome()
    assert outcome is not None
    black, white = board.count(Color.BLACK), board.count(Color.WHITE)
    assert (outcome.black_score, outcome.white_score) == (black, white)
    assert outcome.empties == 64 - black - white
    assert sum(outcome.wof_scores) == 64


# --- perft ----------------------------------------------------------------------------------


def read_perft(path: Path) -> dict[int, int]:
    counts = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            depth, leaves = line.split()
            counts[int(depth)] = int(leaves)
    return counts


def test_perft_from_start_matches_data_file_through_depth_9(shared_data: Path) -> None:
    expected = read_perft(shared_data / "othello" / "perft.txt")
    board = OthelloBoard()
    for depth in range(1, 10):
        assert perft(board, depth) == expected[depth], depth
    assert board.move_stack == [] and board == OthelloBoard()


def api_perft(board: OthelloBoard, depth: int) -> int:
    moves = board.legal_moves()
    if depth == 0 or not moves:
        return 1
    total = 0
    for move in moves:
        board.push(move)
        total += api_perft(board, depth - 1)
        board.pop()
    return total


def test_perft_through_push_and_pop_agrees_with_fast_perft() -> None:
    board = OthelloBoard()
    assert api_perft(board, 5) == perft(board, 5) == 1396


@pytest.mark.parametrize("depth", range(1, 8))
def test_international_perft_matches_naive_brute_force(depth: int) -> None:
    board = OthelloBoard.international()
    assert perft(board, depth) == naive_perft(["-"] * 64, "X", depth, international=True)


def test_perft_from_random_midgame_positions_matches_naive() -> None:
    rng = random.Random(11)
    for _ in range(5):
        board = OthelloBoard()
        for _ in range(rng.randrange(10, 40)):
            if board.is_game_over():
                break
            board.push(rng.choice(board.legal_moves()))
        grid, side = grid_of(board)
        assert perft(board, 3) == naive_perft(grid, side, 3, international=False)


@pytest.mark.parametrize("variant", ["standard", "international"])
def test_random_games_agree_with_naive_rules(variant: str) -> None:
    rng = random.Random(variant)
    for _ in range(20):
        board = OthelloBoard(variant)
        while True:
            grid, side = grid_of(board)
            expected = naive_moves(grid, side, variant == "international")
            assert board.legal_moves() == expected, board
            if not expected:
                break
            move = rng.choice(expected)
            board.push(move)
            assert grid_of(board)[0] == naive_play(grid, side, move)


# --- international opening -------------------------------------------------------------------


def test_international_opening_rules() -> None:
    board = OthelloBoard.international()
    assert board.to_text() == "-" * 64 + " X international"
    assert board.legal_moves() == [27, 28, 35, 36]
    with pytest.raises(IllegalMoveError):
        board.push(19)  # d3 is not a centre square
    # A parallel arrangement is allowed: black d4, white e4, black d5, white e5.
    for name in ["d4", "e4", "d5", "e5"]:
        board.push_str(name)
    assert board.count(Color.BLACK) == 2 and board.count(Color.WHITE) == 2
    assert board.piece_at(27) is Color.BLACK and board.piece_at(35) is Color.BLACK
    assert not board.in_opening()
    assert board.turn is Color.BLACK
    for move in board.legal_moves():
        assert board.flips(move) != 0  # from the fifth move on every move captures


def test_international_text_round_trip_and_validation() -> None:
    board = OthelloBoard.international()
    board.push_str("e5")
    again = OthelloBoard.from_text(board.to_text())
    assert again == board and again.variant == "international"
    assert again != OthelloBoard.from_text(board.to_text().replace(" international", ""))
    # The default variant may be named too (' standard' was refused as an unknown variant).
    start = OthelloBoard().to_text()
    assert OthelloBoard.from_text(f"{start} standard") == OthelloBoard()
    with pytest.raises(InvalidPositionError, match="known: standard, international"):
        OthelloBoard.from_text(f"{start} reversi")
    off_centre = ["-"] * 64
    off_centre[0] = "X"
    with pytest.raises(InvalidPositionError):
        OthelloBoard.from_text("".join(off_centre) + " O international")
    with pytest.raises(InvalidPositionError):  # white cannot have placed first
        OthelloBoard.from_bits(0, 1 << 27, Color.BLACK, "international")


# --- custom start positions ------------------------------------------------------------------

BOARD01 = "---------O----X---X--O-----OX------XO-----O--X---X----O---------"


def test_custom_start_positions_are_accepted_and_validated() -> None:
    board = OthelloBoard.from_start_text(BOARD01 + " X")
    assert board.count(Color.BLACK) == 6 and board.count(Color.WHITE) == 6
    white_must_pass = ["-"] * 64
    white_must_pass[0], white_must_pass[1] = "X", "O"
    text = "".join(white_must_pass) + " O"
    with pytest.raises(InvalidPositionError, match="allow_pass_first"):
        OthelloBoard.from_start_text(text)
    assert OthelloBoard.from_start_text(text, allow_pass_first=True).legal_moves() == [PASS]
    with pytest.raises(InvalidPositionError, match="already over"):
        OthelloBoard.from_start_text("X" * 64 + " O")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "X",
        START_TEXT[:-2],
        "-" * 63 + " X",
        "-" * 65 + " X",
        "-" * 63 + "B X",
        START_TEXT.replace(" X", " B"),
        START_TEXT + " chess",
        START_TEXT + " international extra",
        "-" * 100,
    ],
)
def test_bad_text_forms_are_rejected(text: str) -> None:
    with pytest.raises(InvalidPositionError):
        OthelloBoard.from_text(text)


def test_from_bits_validation() -> None:
    with pytest.raises(InvalidPositionError):
        OthelloBoard.from_bits(1, 1, Color.BLACK)
    with pytest.raises(InvalidPositionError):
        OthelloBoard.from_bits(1 << 64, 0, Color.BLACK)
    with pytest.raises(InvalidPositionError):
        OthelloBoard.from_bits(-1, 0, Color.BLACK)
    with pytest.raises(InvalidPositionError):
        OthelloBoard.from_bits(1, 2, 2)
    with pytest.raises(UnknownGameError):
        OthelloBoard.from_bits(1, 2, 0, "anti")
    board = OthelloBoard.from_bits(1 << 28 | 1 << 35, 1 << 27 | 1 << 36, 0)
    assert board == OthelloBoard()


# --- errors, copy, repr ---------------------------------------------------------------------


def test_move_errors_name_the_input_and_the_position() -> None:
    board = OthelloBoard()
    with pytest.raises(InvalidMoveError) as invalid:
        board.parse_move("z9")
    assert "'z9'" in str(invalid.value) and START_TEXT in str(invalid.value)
    with pytest.raises(IllegalMoveError) as illegal:
        board.parse_move("a1")
    assert "'a1'" in str(illegal.value) and START_TEXT in str(illegal.value)
    with pytest.raises(IllegalMoveError, match="d4"):
        board.push(27)
    for bad in (-1, 65, "d3", 3.0, True, None):
        with pytest.raises(InvalidMoveError):
            board.push(bad)  # type: ignore[arg-type]
    with pytest.raises(IllegalMoveError):
        board.parse_move("pass")
    assert isinstance(IllegalMoveError("x"), ValueError)
    assert isinstance(InvalidMoveError("x"), ValueError)


def test_copy_repr_and_hash() -> None:
    board = OthelloBoard()
    board.push_str("f5")
    clone = board.copy()
    assert clone == board and hash(clone) == hash(board)
    assert clone.move_stack == [37]
    clone.push_str("d6")
    assert clone != board and board.move_stack == [37]
    assert eval(repr(board), {"OthelloBoard": OthelloBoard}) == board
    assert "black to move" not in str(board) and "white to move" in str(board)
    assert clone.pop() == 43 and clone == board
    with pytest.raises(IndexError):
        OthelloBoard().pop()


def test_a_history_checks_against_the_position_it_is_said_to_end_in() -> None:
    """Every suffix of a played game (passes too) ends in its position; numbers that are no
    square, squares played twice or empty, two passes running, and a last move whose disc
    is not its player's do not. (The analysis API took any history for Othello.)"""
    rng = random.Random(5)
    for _ in range(20):
        board, played = OthelloBoard(rng.choice(["standard", "international"])), []
        while not board.is_game_over() and len(played) < rng.randint(1, 70):
            move = rng.choice(board.legal_moves())
            board.push(move)
            played.append(move)
        if board.is_game_over():
            continue
        there = OthelloBoard.from_text(board.to_text())
        for start in range(len(played) + 1):
            there.check_history(played[start:])
    board = OthelloBoard()
    for move in ("f5", "d6", "c3"):
        board.push_str(move)
    there = OthelloBoard.from_text(board.to_text())
    f5, d6, c3 = 37, 43, 18
    for bad, words in [([99], "neither a square"), ([-1], "neither a square"),
                       ([True], "neither a square"), ([f5, f5], "plays f5 twice"),
                       ([0], "a1 is an empty square"), ([PASS, PASS, c3], "passes twice"),
                       ([f5, d6], "d6 holds no disc of black, who played it")]:
        with pytest.raises(InvalidPositionError, match=words):
            there.check_history(bad)
    there.check_history([d6, c3])
