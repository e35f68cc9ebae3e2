"""Opening suites: symmetry de-duplication, stable counts, embedded Gomoku data, names."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.games import GomokuBoard, OthelloBoard
from arena.openings import (
    UnknownSuiteError,
    canonical_key,
    distinct_openings,
    load_suite,
    select_openings,
    start_position_after,
)
from arena.openings.othello import SYMMETRIES

Square = tuple[int, int]

# The 8 symmetries written square by square on (row, col), independently of the bit tricks.
NAIVE: list[Callable[[int, int], Square]] = [
    lambda r, c: (r, c),
    lambda r, c: (7 - r, c),
    lambda r, c: (r, 7 - c),
    lambda r, c: (7 - r, 7 - c),
    lambda r, c: (c, r),
    lambda r, c: (7 - c, r),
    lambda r, c: (c, 7 - r),
    lambda r, c: (7 - c, 7 - r),
]


def _naive_map(bits: int, where: Callable[[int, int], Square]) -> int:
    out = 0
    for square in range(64):
        if bits >> square & 1:
            r, c = where(*divmod(square, 8))
            out |= 1 << (r * 8 + c)
    return out


def _naive_key(board: OthelloBoard) -> tuple[int, int, int]:
    return min(
        (_naive_map(board.black_bits, f), _naive_map(board.white_bits, f), int(board.turn))
        for f in NAIVE
    )


def _after(*moves: str) -> OthelloBoard:
    board = OthelloBoard()
    for move in moves:
        board.push_str(move)
    return board


def test_bit_symmetries_are_the_eight_square_maps() -> None:
    rng = random.Random(3)
    samples = [rng.getrandbits(64) for _ in range(50)] + [1, 1 << 63, 0x8040201008040201]
    images = {tuple(symmetry(bits) for bits in samples) for symmetry in SYMMETRIES}
    naive = {tuple(_naive_map(bits, f) for bits in samples) for f in NAIVE}
    assert images == naive and len(images) == 8


def _start_keeping_maps() -> list[Callable[[int, int], Square]]:
    start = OthelloBoard()
    return [
        f
        for f in NAIVE
        if (_naive_map(start.black_bits, f), _naive_map(start.white_bits, f))
        == (start.black_bits, start.white_bits)
    ]


def test_only_the_diagonal_symmetries_keep_the_standard_start() -> None:
    keeping = _start_keeping_maps()
    assert len(keeping) == 4
    assert all(f(0, 0) in {(0, 0), (7, 7)} for f in keeping)  # a1 stays on the a1-h8 diagonal


def test_the_four_first_moves_are_one_position() -> None:
    # Row 1 is at the top (a1 = square 0), so black's four first moves are d3, c4, f5, e6.
    assert [OthelloBoard().move_to_str(m) for m in OthelloBoard().legal_moves()] == [
        "d3",
        "c4",
        "f5",
        "e6",
    ]
    keys = {canonical_key(_after(move)) for move in ("d3", "c4", "f5", "e6")}
    assert len(keys) == 1
    assert len(distinct_openings(1)) == 1


def _mapped(move: str, f: Callable[[int, int], Square]) -> str:
    r, c = f(int(move[1]) - 1, "abcdefgh".index(move[0]))
    return "abcdefgh"[c] + str(r + 1)


@pytest.mark.parametrize("second", ["f4", "d6", "f6"])  # diagonal, perpendicular, parallel
def test_known_symmetric_pairs_share_a_key(second: str) -> None:
    line = ("f5", second)
    images = {tuple(_mapped(m, f) for m in line) for f in _start_keeping_maps()}
    assert len(images) == 4  # four different move sequences ...
    assert len({canonical_key(_after(*image)) for image in images}) == 1  # ... one position


def test_the_three_second_moves_are_three_openings() -> None:
    # f5 d6 is the perpendicular opening, f5 f6 the parallel, f5 f4 the diagonal.
    assert canonical_key(_after("f5", "d6")) == canonical_key(_after("e6", "f4"))
    assert canonical_key(_after("f5", "f6")) == canonical_key(_after("e6", "f6"))
    boards = [_after("f5", m) for m in ("f4", "d6", "f6")]
    assert len({canonical_key(b) for b in boards}) == 3
    assert len(distinct_openings(2)) == 3


@pytest.mark.parametrize(("plies", "count"), [(0, 1), (1, 1), (2, 3), (3, 14), (4, 60), (5, 322)])
def test_counts_are_stable_and_match_a_naive_deduplication(plies: int, count: int) -> None:
    openings = distinct_openings(plies)
    assert len(openings) == count
    naive_keys = [_naive_key(_after_moves(o.moves)) for o in openings]
    assert len(set(naive_keys)) == count  # no two listed openings are symmetric
    if plies <= 4:  # every reachable position is covered by one of them
        assert {_naive_key(b) for b in _all_positions(plies)} == set(naive_keys)
    assert openings == distinct_openings(plies)  # deterministic
    for opening in openings:
        assert _after_moves(opening.moves).to_text() == opening.position


def _after_moves(moves: tuple[int, ...]) -> OthelloBoard:
    board = OthelloBoard()
    for move in moves:
        board.push(move)
    return board


def _all_positions(plies: int) -> list[OthelloBoard]:
    level = [OthelloBoard()]
    for _ in range(plies):
        nxt = []
        for board in level:
            for move in board.legal_moves():
                child = board.copy()
                child.push(move)
                nxt.append(child)
        level = nxt
    return level


def test_gomoku_suite_matches_the_shared_file(shared_data: Path) -> None:
    suite = load_suite("gomoku-balanced15")
    lines = [
        line
        for line in (shared_data / "gomoku" / "balanced-openings-freestyle15.txt")
        .read_text()
        .splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert len(suite.openings) == len(lines) == 12
    for opening, line in zip(suite.openings, lines, strict=True):
        compact, xy, _ = (part.strip() for part in line.split("|"))
        assert opening.name == compact
        pairs = [tuple(map(int, p.split(","))) for p in xy.split()]
        assert opening.moves == tuple(y * 15 + x for x, y in pairs)
        assert GomokuBoard.from_text(opening.position).move_stack == []  # a plain position
        assert start_position_after("gomoku", "freestyle", 15, opening) == opening.position


def test_suite_names_and_fit_to_the_game() -> None:
    assert load_suite("").name == "none" and load_suite("none").openings[0].moves == ()
    assert len(load_suite("othello-balanced").openings) == 60
    assert len(load_suite("othello-balanced-3").openings) == 14
    assert load_suite("international").resolve("othello", "", 0) == ("international", 8)
    assert load_suite("othello-balanced").resolve("othello", "", 8) == ("standard", 8)
    assert load_suite("gomoku-balanced15").resolve("gomoku", "exact-five", 0) == ("exact-five", 15)
    assert load_suite("none").resolve("gomoku", "freestyle", 19) == ("freestyle", 19)
    bad = [
        ("nonsense", None),
        ("othello-balanced-9", None),
        ("othello-balanced", ("gomoku", "freestyle", 15)),
        ("international", ("othello", "standard", 8)),
        ("gomoku-balanced15", ("gomoku", "freestyle", 19)),
    ]
    for name, game in bad:
        with pytest.raises(UnknownSuiteError):
            load_suite(name).resolve(*game) if game else load_suite(name)
    # A name that long is not echoed whole (the list of known suites still is).
    for name in ("x" * 5_000, "othello-balanced-" + "9" * 5_000):
        with pytest.raises(UnknownSuiteError) as raised:
            load_suite(name)
        assert "x" * 400 in str(raised.value) or "9" * 400 in str(raised.value)
        assert len(str(raised.value)) < 1_000


def test_selection_is_seeded_and_covers_the_suite_before_repeating() -> None:
    suite = load_suite("othello-balanced-3")
    first = select_openings(suite, 20, seed=5)
    assert first == select_openings(suite, 20, seed=5)
    assert first != select_openings(suite, 20, seed=6)
    assert len(set(first[:14])) == 14 and first[14:] == first[:6]
    assert select_openings(load_suite("none"), 3, seed=1) == list(load_suite("none").openings) * 3
    with pytest.raises(ValueError):
        select_openings(suite, -1, seed=0)
