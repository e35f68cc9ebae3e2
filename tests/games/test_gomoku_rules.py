"""Gomoku rules, checked by hand-made positions and against a naive whole-board scan
written here (every window of five points, instead of runs through the last stone)."""

from __future__ import annotations

import random

import pytest

from arena.games import Color, IllegalMoveError, InvalidMoveError, Termination
from arena.games.base import InvalidPositionError, Outcome, UnknownGameError
from arena.games.gomoku import GomokuBoard, parse_xy, xy_str

# --- a naive reference --------------------------------------------------------------------


def naive_winner(cells: list[str], size: int, exact: bool) -> str | None:
    """Scan every window of five; with ``exact`` the points just outside must differ."""
    for y in range(size):
        for x in range(size):
            for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
                end_x, end_y = x + 4 * dx, y + 4 * dy
                if not (0 <= end_x < size and 0 <= end_y < size):
                    continue
                window = {cells[(y + k * dy) * size + x + k * dx] for k in range(5)}
                if len(window) != 1 or "-" in window:
                    continue
                stone = window.pop()
                if exact and any(
                    0 <= px < size and 0 <= py < size and cells[py * size + px] == stone
                    for px, py in ((x - dx, y - dy), (end_x + dx, end_y + dy))
                ):
                    continue
                return stone
    return None


def naive_perft(cells: list[str], size: int, me: str, depth: int, exact: bool) -> int:
    if depth == 0 or naive_winner(cells, size, exact) or "-" not in cells:
        return 1
    total = 0
    for i, cell in enumerate(cells):
        if cell == "-":
            cells[i] = me
            total += naive_perft(cells, size, "O" if me == "X" else "X", depth - 1, exact)
            cells[i] = "-"
    return total


def perft(board: GomokuBoard, depth: int) -> int:
    moves = board.legal_moves()
    if depth == 0 or not moves:
        return 1
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        board.push(move)
        total += perft(board, depth - 1)
        board.pop()
    return total


def board_from_rows(rows: list[str], turn: str, rule: str = "freestyle") -> GomokuBoard:
    return GomokuBoard.from_text(f"{len(rows)} {rule} {'/'.join(rows)} {turn}")


# --- notation ---------------------------------------------------------------------------------


def test_notation_letter_number_and_gomocup_xy() -> None:
    board = GomokuBoard(15)
    move = board.parse_move("f13")
    assert move == 12 * 15 + 5
    assert board.move_to_str(move) == "f13"
    assert board.xy_str(move) == "5,12"
    assert board.parse_xy("5,12") == move
    assert board.parse_move("A1") == 0
    assert GomokuBoard(19).move_to_str(19 * 19 - 1) == "s19"  # no skipped letter
    assert parse_xy(" 3 , 4 ", 9) == 4 * 9 + 3 and xy_str(40, 9) == "4,4"
    for bad in ("p1", "a16", "a0", "15,0", "x", "", "1,2,3", "-1,2"):
        with pytest.raises(InvalidMoveError):
            if "," in bad or bad[:1].isdigit():
                board.parse_xy(bad)
            else:
                board.parse_move(bad)


# --- winning lines ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "last"),
    [
        ([(2, 4), (3, 4), (4, 4), (5, 4)], (6, 4)),  # horizontal
        ([(4, 0), (4, 1), (4, 2), (4, 4)], (4, 3)),  # vertical, completed in the middle
        ([(0, 0), (1, 1), (2, 2), (3, 3)], (4, 4)),  # diagonal
        ([(8, 0), (7, 1), (6, 2), (5, 3)], (4, 4)),  # anti-diagonal
    ],
)
def test_five_in_a_row_wins_in_every_direction(
    line: list[tuple[int, int]], last: tuple[int, int]
) -> None:
    board = GomokuBoard(9)
    fillers = [(0, 8), (2, 8), (4, 8), (6, 8), (8, 8)]  # white stones on the bottom row
    for (x, y), (fx, fy) in zip(line, fillers, strict=False):
        board.push(y * 9 + x)
        board.push(fy * 9 + fx)
    assert not board.is_game_over()
    board.push(last[1] * 9 + last[0])
    assert board.outcome() == Outcome(Color.BLACK, Termination.NORMAL, 1, 0)
    assert board.legal_moves() == []
    with pytest.raises(IllegalMoveError, match="game is over"):
        board.push(9 * 8 + 1)


OVERLINE_ROWS = [
    "XXX-XX---",
    "OOOO-----",
    "---------",
    "--------O",
    "---------",
    "---------",
    "---------",
    "---------",
    "---------",
]


def test_freestyle_overline_wins_and_exact_five_does_not() -> None:
    freestyle = board_from_rows(OVERLINE_ROWS, "X")
    freestyle.push_str("d1")  # makes six in a row
    assert freestyle.outcome() is not None and freestyle.outcome().winner is Color.BLACK  # type: ignore[union-attr]
    exact = board_from_rows(OVERLINE_ROWS, "X", "exact-five")
    exact.push_str("d1")
    assert exact.outcome() is None
    exact.push_str("e2")  # white makes exactly five
    assert exact.outcome() == Outcome(Color.WHITE, Termination.NORMAL, 0, 1)


def test_exact_five_stone_can_win_along_another_line() -> None:
    rows = ["---------"] * 9
    rows[0] = "XXX-XX---"
    rows[1] = "---X-----"
    rows[2] = "---X-----"
    rows[3] = "---X-----"
    rows[4] = "---X-----"
    rows[5] = "OOOO-O---"
    rows[6] = "OOO-O----"
    board = board_from_rows(rows, "X", "exact-five")
    board.push_str("d1")  # six across, exactly five down
    assert board.outcome() == Outcome(Color.BLACK, Termination.NORMAL, 1, 0)


def test_draw_on_a_full_board() -> None:
    # Pairs of columns alternating colour, shifted by one pair each row: no five
    # anywhere on 9x9, and 41 black to 40 white stones as after black's last move.
    cells = ["XO"[(x // 2 + y) % 2] for y in range(9) for x in range(9)]
    assert naive_winner(cells, 9, exact=False) is None and cells.count("X") == 41
    last = cells.index("X")
    cells[last] = "-"
    rows = ["".join(cells[y * 9 : (y + 1) * 9]) for y in range(9)]
    board = board_from_rows(rows, "X")
    board.push(last)
    assert board.outcome() == Outcome(None, Termination.FULL_BOARD, 0, 0)
    assert board.is_game_over() and board.legal_moves() == []


# --- perft against the naive scan ---------------------------------------------------------------

NEAR_WIN = ["XXXX-----", "OOOO-----", "---------", "---------", "---------",
            "---------", "---------", "---------", "--------X"]  # fmt: skip


@pytest.mark.parametrize("rule", ["freestyle", "exact-five"])
def test_perft_matches_naive_brute_force(rule: str) -> None:
    exact = rule == "exact-five"
    empty9 = GomokuBoard(9, rule)
    assert perft(empty9, 2) == naive_perft(["-"] * 81, 9, "X", 2, exact) == 81 * 80
    board = board_from_rows(NEAR_WIN, "O", rule)
    cells = list("".join(NEAR_WIN))
    assert perft(board, 3) == naive_perft(cells, 9, "O", 3, exact)


def test_random_games_agree_with_naive_winner() -> None:
    rng = random.Random(5)
    for rule in ("freestyle", "exact-five"):
        for _ in range(30):
            board = GomokuBoard(9, rule)
            while not board.is_game_over():
                board.push(rng.choice(board.legal_moves()))
            cells = list(board.to_text().split()[2].replace("/", ""))
            expected = naive_winner(cells, 9, rule == "exact-five")
            outcome = board.outcome()
            assert outcome is not None
            winner = outcome.winner
            assert (None if winner is None else winner.symbol) == expected


# --- text form and validation --------------------------------------------------------------------


def test_text_form_round_trip_and_contents() -> None:
    board = GomokuBoard(9, "exact-five")
    board.push_str("e5")
    text = board.to_text()
    assert text.startswith("9 exact-five ") and text.endswith(" O")
    assert text.split()[2].split("/")[4] == "----X----"
    assert GomokuBoard.from_text(text) == board
    assert eval(repr(board), {"GomokuBoard": GomokuBoard}) == board
    assert GomokuBoard(15).to_text().count("/") == 14


@pytest.mark.parametrize(
    "text",
    [
        "",
        "9 freestyle X",
        "9 renju " + "/".join(["-" * 9] * 9) + " X",
        "4 freestyle " + "/".join(["-" * 4] * 4) + " X",
        "9 freestyle " + "/".join(["-" * 9] * 8) + " X",
        "9 freestyle " + "/".join(["-" * 8] * 9) + " X",
        "9 freestyle " + "/".join(["-" * 9] * 9) + " O",  # white cannot move first
        "9 freestyle " + "/".join(["X--------"] + ["-" * 9] * 8) + " X",
        "9 freestyle " + "/".join(["B--------"] + ["-" * 9] * 8) + " O",
        "9 freestyle " + "/".join(["XXXXX----", "OOOOO----"] + ["-" * 9] * 7) + " X",
    ],
)
def test_bad_text_forms_are_rejected(text: str) -> None:
    with pytest.raises(InvalidPositionError):
        GomokuBoard.from_text(text)


def test_position_with_a_finished_line_is_game_over() -> None:
    rows = ["XXXXX----", "OOOO-----"] + ["-" * 9] * 7
    board = board_from_rows(rows, "O")
    assert board.outcome() == Outcome(Color.BLACK, Termination.NORMAL, 1, 0)
    with pytest.raises(InvalidPositionError):
        board_from_rows(rows, "X")  # the winner cannot also be the side to move


def test_sizes_and_rules_are_checked() -> None:
    for size in (9, 15, 19):
        assert len(GomokuBoard(size).legal_moves()) == size * size
    with pytest.raises(UnknownGameError):
        GomokuBoard(4)
    with pytest.raises(UnknownGameError):
        GomokuBoard(15, "renju")


def test_errors_name_input_and_position() -> None:
    board = GomokuBoard(9)
    board.push_str("a1")
    with pytest.raises(IllegalMoveError) as error:
        board.parse_move("a1")
    assert "'a1': the point is occupied in" in str(error.value)
    assert board.to_text() in str(error.value)
    with pytest.raises(InvalidMoveError) as bad:
        board.parse_move("j1")
    assert "'j1'" in str(bad.value) and board.to_text() in str(bad.value)
    for move in (-1, 81, "a1", None, False):
        with pytest.raises(InvalidMoveError):
            board.push(move)  # type: ignore[arg-type]
    assert board.pop() == 0
    with pytest.raises(IndexError):
        board.pop()
