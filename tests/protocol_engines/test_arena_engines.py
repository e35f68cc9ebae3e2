"""Arena's own bots as protocol executables (``arena-nboard``, ``arena-gtp``,
``pbrain-arena``), played through the worker's clients in the sandbox: every move equals
the in-process engine's at the same fixed depth, they solve the protocol smoke positions,
and the pool keeps one warm process for a whole sequence of games."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from arena.services.worker.engines.catalog import Catalog, EngineSpec, parse_catalog
from arena.services.worker.engines.client import PlayLimits
from arena.services.worker.engines.pool import EnginePool
from arena.services.worker.engines.sandbox import Sandbox

from arena.engine.api import Limits
from arena.games import GomokuBoard, OthelloBoard
from arena.protocols import gomocup
from arena.protocols.gomocup_brain import turn_budget_ms
from tests.data import shared_data_dir
from tests.support.engines import choose, presets

pytestmark = pytest.mark.usefixtures("no_orphans")
MOVE_TIME_MS = 60_000  # never binding: the searches stop at their depth
OTHELLO_CONFIG = {**presets("othello")["arena-fast"], "time_ms": 60_000,
                  "endgame_empties": 10}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    folder = tmp_path_factory.mktemp("catalog")
    (folder / "othello.json").write_text(json.dumps(OTHELLO_CONFIG))
    text = f"""
        [engines.nboard-arena]
        games = ["othello"]
        protocol = "nboard"
        command = ["arena-nboard", "--config", "@{folder / 'othello.json'}"]
        options = {{ depth = 3 }}
        limits = {{ memory_mb = 1024, startup_ms = 300000 }}

        [engines.gtp-arena]
        games = ["othello"]
        protocol = "gtp"
        command = ["arena-gtp", "--config", "@{folder / 'othello.json'}", "--depth", "3"]
        limits = {{ memory_mb = 1024, startup_ms = 300000 }}

        [engines.nboard-arena-fast]
        games = ["othello"]
        protocol = "nboard"
        command = ["arena-nboard", "--preset", "arena-fast"]
        limits = {{ memory_mb = 1024, startup_ms = 300000 }}

        [engines.pbrain-sharpmoku]
        games = ["gomoku"]
        protocol = "gomocup"
        command = ["pbrain-arena", "--preset", "sharpmoku-normal", "--seed", "7"]
        limits = {{ memory_mb = 1024, startup_ms = 300000 }}

        [engines.pbrain-arena]
        games = ["gomoku"]
        protocol = "gomocup"
        command = "pbrain-arena --preset arena-gomoku --depth 3"
        limits = {{ memory_mb = 1024, startup_ms = 300000 }}
    """
    return parse_catalog(text, folder, "test catalog")


@pytest.mark.parametrize("engine", ["nboard-arena", "gtp-arena"])
def test_an_othello_game_through_nboard_and_gtp_matches_the_in_process_engine(
        sandbox: Sandbox, catalog: Catalog, engine: str) -> None:
    spec = catalog.get(engine)
    pool = EnginePool(sandbox)
    board, history = OthelloBoard(), []
    try:
        while not board.is_game_over():
            answer = pool.play(spec, board.to_text(), history, PlayLimits(MOVE_TIME_MS))
            expected = choose("othello", board.to_text(), [], OTHELLO_CONFIG,
                                            Limits(depth=3))
            assert answer.move == expected.move, f"ply {len(history)} in {board.to_text()}"
            if expected.pv and answer.search.pv:
                assert answer.search.pv[0] == expected.move
            board.push(answer.move)
            history.append(answer.move)
        assert pool.stats.starts == 1
    finally:
        pool.close()
    assert board.outcome() is not None and len(history) >= 58


@pytest.mark.parametrize(("engine", "preset", "depth", "seed"), [
    ("pbrain-sharpmoku", "sharpmoku-normal", None, 7),
    ("pbrain-arena", "arena-gomoku", 3, 0),
])
def test_gomoku_games_through_gomocup_match_the_in_process_engine(
        sandbox: Sandbox, catalog: Catalog, engine: str, preset: str, depth: int | None,
        seed: int) -> None:
    spec = catalog.get(engine)
    config = dict(presets("gomoku")[preset])
    limits = Limits(depth=depth, time_ms=turn_budget_ms(MOVE_TIME_MS))
    pool = EnginePool(sandbox)
    try:
        for opening in ([], [112, 113, 127]):  # from the empty board, and from an opening
            board = GomokuBoard(15, "freestyle")
            for move in opening:
                board.push(move)
            for _ply in range(16):
                if board.is_game_over():
                    break
                text, history = board.to_text(), board.move_stack
                answer = pool.play(spec, text, history, PlayLimits(MOVE_TIME_MS))
                expected = choose("gomoku", text, history, config, limits,
                                                seed=seed)
                assert answer.move == expected.move, f"after {history}"
                board.push(answer.move)
        assert pool.stats.starts == 1 and pool.stats.reuse_rate > 0.9
    finally:
        pool.close()


def smoke_positions() -> list[tuple[str, gomocup.Board, set[tuple[int, int]]]]:
    """The shared Gomocup smoke positions: (name, BOARD, the moves that are right)."""
    text = (shared_data_dir() / "gomoku" / "protocol-smoke-positions.txt").read_text()
    found = []
    parser = gomocup.CommandParser()
    name, expected = "", set()
    for line in text.splitlines():
        if line.startswith("#"):
            heading = re.match(r"#\s*([A-Z])\)", line)
            if heading:
                name = heading.group(1)
                answers = re.search(r"expect ([\d, or]+)", line)
                assert answers, line
                expected = {tuple(int(v) for v in a.split(","))
                            for a in answers.group(1).split(" or ")}
            continue
        command = parser.feed(line)
        if isinstance(command, gomocup.Board):
            found.append((name, command, expected))
    assert [name for name, _, _ in found] == ["A", "B", "C"]
    return found


def position_of(board: gomocup.Board) -> tuple[str, list[int]]:
    moves = gomocup.moves_from_board(board, 15)
    game = GomokuBoard(15, "freestyle")
    for move in moves:
        game.push(move)
    return game.to_text(), moves


def test_pbrain_arena_solves_the_protocol_smoke_positions(sandbox: Sandbox, catalog: Catalog
                                                          ) -> None:
    pool = EnginePool(sandbox)
    try:
        for name, board, expected in smoke_positions():
            text, moves = position_of(board)
            answer = pool.play(catalog.get("pbrain-arena"), text, moves, PlayLimits(10_000))
            assert (answer.move % 15, answer.move // 15) in expected, name
    finally:
        pool.close()


def test_nboard_reports_an_exact_endgame_score(sandbox: Sandbox, catalog: Catalog) -> None:
    """FForum position 1 (14 empties): G8 wins by 18; arena-fast solves 14 empties exactly
    and says so in its search line."""
    line = (shared_data_dir() / "othello" / "fforum-1-19.obf").read_text().splitlines()[0]
    position = line.split(";")[0].strip()
    spec: EngineSpec = catalog.get("nboard-arena-fast").with_options({"depth": 4})
    pool = EnginePool(sandbox)
    try:
        deep = pool.play(spec, position, [], PlayLimits(MOVE_TIME_MS))
    finally:
        pool.close()
    assert OthelloBoard.from_text(position).move_to_str(deep.move) == "g8"
    assert deep.search.score == pytest.approx(18.0)


def test_the_shipped_catalog_lists_arenas_protocol_engines() -> None:
    from arena.services.worker.engines.catalog import load_catalog, sample_catalog_path

    catalog = load_catalog(sample_catalog_path())
    assert {spec.protocol for spec in catalog.engines.values()} == {"nboard", "gtp", "gomocup"}
    for spec in catalog.engines.values():
        assert Path(spec.command[0]).is_file()
        assert len(spec.checksum) == 64
