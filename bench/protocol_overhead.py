"""What the protocol path adds to a move, once the engine process is warm, and how often a
sequence of games reuses the warm processes.

For each position, the same bot (same config, same fixed depth) is asked for its move
in-process (``dispatch.choose_move``) and through the worker's protocol path (pool ->
sandboxed ``arena-nboard`` / ``pbrain-arena`` process -> NBoard / Gomocup -> the same
search), in alternating order, several rounds; the added time of a move is the protocol
wall time minus the in-process wall time of the same position in the same round. The
searches are shallow on purpose, so the figure is the overhead, not search noise.

.venv/bin/python bench/protocol_overhead.py [--rounds 5] [--positions 30] [--games 8]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from arena.services.worker.engines.catalog import (
    EngineLimits,
    EngineSpec,
    checksum,
    resolve_executable,
)
from arena.services.worker.engines.client import PlayLimits
from arena.services.worker.engines.pool import EnginePool
from arena.services.worker.engines.sandbox import Sandbox

from arena.engine import dispatch
from arena.engine.api import Limits
from arena.games import GomokuBoard, OthelloBoard, Position
from arena.protocols.gomocup_brain import turn_budget_ms

MOVE_TIME_MS = 60_000  # never binding: every search stops at its depth
GOMOKU_PLIES = 30  # a reuse game of Gomoku stops here (the bots would fill the board)
BOTS = {
    # game: (protocol, console script, preset, depth)
    "othello": ("nboard", "arena-nboard", "arena-fast", 3),
    "gomoku": ("gomocup", "pbrain-arena", "sharpmoku-normal", 2),
}


def spec_for(game: str) -> EngineSpec:
    protocol, script, preset, depth = BOTS[game]
    executable = resolve_executable(script, Path.cwd())
    if executable is None:
        raise SystemExit(f"{script} not found: run `make setup` first")
    command = (str(executable), "--preset", preset, "--depth", str(depth))
    return EngineSpec(f"bench-{script}", protocol, (game,), command, checksum(executable),
                      limits=EngineLimits(startup_ms=300_000))


def positions(game: str, count: int, seed: int) -> list[tuple[str, list[int]]]:
    """Positions of random games (the position and the moves from the start)."""
    rng = random.Random(seed)
    found: list[tuple[str, list[int]]] = []
    while len(found) < count:
        board: Position = OthelloBoard() if game == "othello" else GomokuBoard(15, "freestyle")
        for _ in range(rng.randrange(4, 40)):
            if board.is_game_over():
                break
            board.push(rng.choice(board.legal_moves()))
        if not board.is_game_over() and board.legal_moves() != [64]:
            found.append((board.to_text(), board.move_stack))
    return found


def timed(call: Callable[[str, list[int]], int], text: str, history: list[int]
          ) -> tuple[float, int]:
    started = time.perf_counter()
    move = call(text, history)
    return (time.perf_counter() - started) * 1000, move


def overhead(game: str, pool: EnginePool, count: int, rounds: int) -> list[float]:
    spec = spec_for(game)
    _protocol, _script, preset, depth = BOTS[game]
    config = dict(dispatch.presets(game)[preset])
    limits = Limits(depth=depth)
    if game == "gomoku":  # the brain's own budget from timeout_turn
        limits = Limits(depth=depth, time_ms=turn_budget_ms(MOVE_TIME_MS))

    def local(text: str, history: list[int]) -> int:
        return dispatch.choose_move(game, text, history, config, limits, validated=True).move

    def remote(text: str, history: list[int]) -> int:
        return pool.play(spec, text, history, PlayLimits(MOVE_TIME_MS)).move

    added: list[float] = []
    for round_index in range(rounds + 1):  # round 0 warms both sides up
        for index, (text, history) in enumerate(positions(game, count, seed=7)):
            order = (local, remote) if (index + round_index) % 2 else (remote, local)
            (first_ms, first_move), (second_ms, second_move) = (
                timed(order[0], text, history), timed(order[1], text, history))
            if first_move != second_move:
                raise SystemExit(f"{game}: the protocol and in-process moves differ in {text}")
            local_ms, remote_ms = ((first_ms, second_ms) if order[0] is local
                                   else (second_ms, first_ms))
            if round_index:
                added.append(remote_ms - local_ms)
    return added


def reuse(pool: EnginePool, games: int) -> None:
    """Othello and Gomoku games interleaved move by move, as a worker serving several
    matches at once: every move goes to the warm process of its engine."""
    specs = {game: spec_for(game) for game in BOTS}
    rng = random.Random(3)
    boards: list[Position] = []
    for index in range(games):
        board: Position = OthelloBoard() if index % 2 == 0 else GomokuBoard(15, "freestyle")
        for _ in range(4):  # a different opening for each game
            board.push(rng.choice(board.legal_moves()))
        boards.append(board)
    before = (pool.stats.moves, pool.stats.reused, pool.stats.starts)
    while boards:
        for board in boards:
            answer = pool.play(specs[board.game], board.to_text(), board.move_stack,
                               PlayLimits(MOVE_TIME_MS))
            board.push(answer.move)
        boards = [b for b in boards if not b.is_game_over()
                  and not (b.game == "gomoku" and len(b.move_stack) >= GOMOKU_PLIES)]
    moves = pool.stats.moves - before[0]
    reused = pool.stats.reused - before[1]
    print(f"reuse: {games} games interleaved, {moves} engine moves, "
          f"{pool.stats.starts - before[2]} processes started, reuse rate {reused / moves:.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--positions", type=int, default=30)
    parser.add_argument("--games", type=int, default=8)
    args = parser.parse_args()
    sandbox = Sandbox()
    pool = EnginePool(sandbox)
    try:
        for game in BOTS:
            added = overhead(game, pool, args.positions, args.rounds)
            quartiles = statistics.quantiles(added, n=4)
            print(f"{game} ({BOTS[game][0]}): added per move median "
                  f"{statistics.median(added):.2f} ms (quartiles {quartiles[0]:.2f} / "
                  f"{quartiles[2]:.2f} ms, {len(added)} moves)")
        reuse(pool, args.games)
        stats = pool.stats
        print(f"whole run: {stats.moves} engine moves, {stats.starts} processes started, "
              f"reuse rate {stats.reuse_rate:.4f}")
    finally:
        pool.close()


if __name__ == "__main__":
    main()
