"""Arena's own balanced Gomoku openings (`arena.openings.balance`): the seeded draw, the
symmetry key, and the shipped `gomoku-wide15` suite the draw made."""

from __future__ import annotations

import itertools
import random
import re
from importlib import resources

from arena.games import GomokuBoard
from arena.openings import load_suite, start_position_after
from arena.openings.balance import (
    CENTRE_REACH,
    SPREAD,
    TRIES_PER_OPENING,
    candidates,
    canonical,
)
from arena.openings.gomoku import SIZE, WIDE_FILE, compact, read_suite

CENTRE = SIZE // 2


def _xy(move: int) -> tuple[int, int]:
    y, x = divmod(move, SIZE)
    return x, y


def test_the_draw_is_seeded_and_keeps_to_its_bounds() -> None:
    first = [tuple(b.move_stack) for b in itertools.islice(candidates(5, (2, 7)), 300)]
    assert first == [tuple(b.move_stack) for b in itertools.islice(candidates(5, (2, 7)), 300)]
    assert first != [tuple(b.move_stack) for b in itertools.islice(candidates(6, (2, 7)), 300)]
    assert {len(m) for m in first} == {2, 3, 4, 5, 6, 7}  # too few stones for a five
    for moves in first:
        x, y = _xy(moves[0])
        assert max(abs(x - CENTRE), abs(y - CENTRE)) <= CENTRE_REACH
        for k, move in enumerate(moves[1:], start=1):
            mx, my = _xy(move)
            assert any(max(abs(mx - px), abs(my - py)) <= SPREAD
                       for px, py in map(_xy, moves[:k])), moves
        assert len(set(moves)) == len(moves)


def test_the_symmetry_key_is_the_same_for_the_8_images_and_any_order() -> None:
    rng = random.Random(3)
    images = [lambda x, y: (x, y), lambda x, y: (14 - x, y), lambda x, y: (x, 14 - y),
              lambda x, y: (14 - x, 14 - y), lambda x, y: (y, x), lambda x, y: (14 - y, x),
              lambda x, y: (y, 14 - x), lambda x, y: (14 - y, 14 - x)]
    for board in itertools.islice(candidates(9, (3, 9)), 50):
        moves = board.move_stack
        key = canonical(moves)
        for image in images:
            moved = [image(*_xy(m)) for m in moves]
            assert canonical([y * SIZE + x for x, y in moved]) == key
        black, white = list(moves[0::2]), list(moves[1::2])
        rng.shuffle(black)
        rng.shuffle(white)
        shuffled = [m for pair in itertools.zip_longest(black, white) for m in pair
                    if m is not None]
        assert canonical(shuffled) == key
        if len(moves) % 2 == 0:  # the same points with the colours swapped: another opening
            swapped = [m for pair in zip(white, black, strict=True) for m in pair]
            assert canonical(swapped) != key


def test_the_shipped_wide_suite_is_the_seeded_draw_the_judge_kept() -> None:
    """`gomoku-wide15`: 200 openings, none twice under the symmetries, each a legal 15x15
    position with no five and 3-9 stones, each scored within the recorded window, and
    in the order of the draw its recorded seed makes (so the file came from the command it
    records, with only the judge's choice between)."""
    text = resources.files("arena.openings").joinpath(WIDE_FILE).read_text()
    made_by = next(line for line in text.splitlines() if line.startswith("# made by: "))
    options = dict(re.findall(r"--([a-z-]+) (\S+)", made_by))
    assert made_by.startswith("# made by: arena engine openings gomoku ")
    assert options["count"] == "200" and options["stones"] == "3-9"
    window = float(options["window"])
    suite = load_suite("gomoku-wide15")
    assert [o.name for o in suite.openings] == read_suite(text)
    assert len(suite.openings) == 200
    assert len({canonical(o.moves) for o in suite.openings}) == 200
    for opening, line in zip(suite.openings, [ln for ln in text.splitlines()
                                              if not ln.startswith("#")], strict=True):
        assert 3 <= len(opening.moves) <= 9
        board = GomokuBoard.from_text(opening.position)
        assert not board.is_game_over()
        assert start_position_after("gomoku", "freestyle", 15, opening) == opening.position
        assert abs(float(line.split("|")[1])) <= window
    wanted = [o.name for o in suite.openings]
    found = []
    for board in itertools.islice(candidates(int(options["seed"]), (3, 9)),
                                  TRIES_PER_OPENING * 200):
        if len(found) < len(wanted) and compact(board) == wanted[len(found)]:
            found.append(compact(board))
    assert found == wanted


def test_the_wide_suite_plays_either_rule_on_15x15() -> None:
    suite = load_suite("gomoku-wide15")
    assert suite.resolve("gomoku", "", 0) == ("freestyle", 15)
    assert suite.resolve("gomoku", "exact-five", 15) == ("exact-five", 15)
