"""Shared fixtures: random positions reached by random play from the start."""

from __future__ import annotations

import random

import pytest

from arena.games.othello import OthelloBoard
from tests.data import shared_data_dir

DATA = shared_data_dir() / "othello"


def random_boards(count: int, seed: int) -> list[OthelloBoard]:
    """``count`` positions (game not over) from random games, a few per game."""
    rng = random.Random(seed)
    boards: list[OthelloBoard] = []
    while len(boards) < count:
        board = OthelloBoard.start()
        while len(boards) < count:
            moves = board.legal_moves()
            if not moves:
                break
            if rng.random() < 0.25:
                boards.append(board.copy())
            board.push(rng.choice(moves))
    return boards


def read_obf(name: str) -> list[tuple[str, dict[str, int]]]:
    """(position text, {move name: score}) for each position of an OBF file."""
    out = []
    for line in (DATA / name).read_text().splitlines():
        line = line.split("%")[0].strip()
        if not line:
            continue
        text, _, rest = line.partition(";")
        scores = {}
        for item in rest.split(";"):
            if ":" in item:
                move, score = item.split(":")
                scores[move.strip().lower()] = int(score)
        out.append((text.strip(), scores))
    return out


@pytest.fixture(scope="session")
def boards() -> list[OthelloBoard]:
    return random_boards(10_000, seed=2024)
