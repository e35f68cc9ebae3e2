"""What the protocol path adds to a move, once the engine process is warm, and how often a
sequence of games reuses the warm processes.

For each position, the same bot (same config, same fixed depth) is asked for its move
in-process (the game's engine ``choose_move``) and through the worker's protocol path (pool ->
sandboxed ``arena-nboard`` / ``arena-gtp`` / ``pbrain-arena`` process -> NBoard / GTP /
Gomocup -> the same search), in alternating order, several rounds; the added time of a
move is the protocol wall time minus the in-process wall time of the same position in the
same round. The searches are shallow on purpose, so the figure is the overhead, not search
noise. The positions are unrelated to one another, so GTP, which cannot set up a position, pays its
worst case on every move: ``clear_board`` and a replay of the game (4-40 moves); in a game
that goes on, a warm GTP engine is sent only the moves since its last answer, which the
GTP row "in games" measures (the bot plays Black through GTP, random moves for White).

Last, what an engine's filesystem view (``services/worker/engines/view.py``) adds to a
start: the same engines started through sandboxes with and without it, alternating, each
start timed until its handshake is done (or, for ``true``, until it exits).

.venv/bin/python bench/protocol_overhead.py [--rounds 5] [--positions 30] [--games 8]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from arena.services.worker.engines.catalog import (
    EngineLimits,
    EngineSpec,
    checksum,
    resolve_executable,
)
from arena.services.worker.engines.client import PlayLimits
from arena.services.worker.engines.pool import CLIENTS, EnginePool
from arena.services.worker.engines.sandbox import Sandbox, SandboxLimits

from arena.engine.api import Limits
from arena.games import PASS, Color, GomokuBoard, OthelloBoard, Position
from arena.games import game as game_named
from arena.protocols.gomocup_brain import turn_budget_ms

MOVE_TIME_MS = 60_000  # never binding: every search stops at its depth
GOMOKU_PLIES = 30  # a reuse game of Gomoku stops here (the bots would fill the board)
BOTS = {
    # label: (game, protocol, console script, preset, depth)
    "othello": ("othello", "nboard", "arena-nboard", "arena-fast", 3),
    "othello-gtp": ("othello", "gtp", "arena-gtp", "arena-fast", 3),
    "gomoku": ("gomoku", "gomocup", "pbrain-arena", "sharpmoku-normal", 2),
}
REUSE_BOTS = ("othello", "gomoku")  # the interleaved games: one bot per game
Ask = Callable[[str, list[int]], int]  # a bot's move in a position (text, moves so far)


def spec_for(label: str) -> EngineSpec:
    game, protocol, script, preset, depth = BOTS[label]
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
        if not board.is_game_over() and board.legal_moves() != [PASS]:
            found.append((board.to_text(), board.move_stack))
    return found


def timed(call: Ask, text: str, history: list[int]
          ) -> tuple[float, int]:
    started = time.perf_counter()
    move = call(text, history)
    return (time.perf_counter() - started) * 1000, move


def overhead(label: str, pool: EnginePool, count: int, rounds: int) -> list[float]:
    game = BOTS[label][0]
    return _paired(local_and_remote(label, pool), positions(game, count, seed=7), rounds)


def local_and_remote(label: str, pool: EnginePool) -> tuple[Ask, Ask]:
    """The bot's move in-process, and through the protocol path."""
    spec = spec_for(label)
    game, _protocol, _script, preset, depth = BOTS[label]
    engine = game_named(game).engine()
    bot = engine.prepare(dict(engine.presets[preset]))
    limits = Limits(depth=depth)
    if game == "gomoku":  # the brain's own budget from timeout_turn
        limits = Limits(depth=depth, time_ms=turn_budget_ms(MOVE_TIME_MS))

    def local(text: str, history: list[int]) -> int:
        return engine.choose_move(bot, text, history, limits).move

    def remote(text: str, history: list[int]) -> int:
        return pool.play(spec, text, history, PlayLimits(MOVE_TIME_MS)).move

    return local, remote


def _pair(local: Ask, remote: Ask, remote_first: bool, text: str, history: list[int]
          ) -> tuple[float, int]:
    """Protocol minus in-process wall time for one position, and the move (both agree)."""
    first, second = (remote, local) if remote_first else (local, remote)
    (first_ms, first_move), (second_ms, second_move) = (
        timed(first, text, history), timed(second, text, history))
    if first_move != second_move:
        raise SystemExit(f"the protocol and in-process moves differ in {text}")
    return (first_ms - second_ms if remote_first else second_ms - first_ms), first_move


def _paired(calls: tuple[Ask, Ask], asked: list[tuple[str, list[int]]], rounds: int
            ) -> list[float]:
    """The added time of each position, in alternating order, round 0 not counted."""
    added: list[float] = []
    for round_index in range(rounds + 1):  # round 0 warms both sides up
        for index, (text, history) in enumerate(asked):
            ms, _move = _pair(*calls, (index + round_index) % 2 == 0, text, history)
            if round_index:
                added.append(ms)
    return added


def gtp_in_games(pool: EnginePool, games: int) -> list[float]:
    """The added time per move of the GTP bot playing Black (random moves for White) in
    games that go on: each request sends only the moves since its last answer."""
    local, remote = local_and_remote("othello-gtp", pool)
    rng = random.Random(11)
    added: list[float] = []
    for game_index in range(games + 1):  # game 0 warms both sides up
        board = OthelloBoard()
        while not board.is_game_over():
            if board.turn is Color.WHITE or board.legal_moves() == [PASS]:
                board.push(rng.choice(board.legal_moves()))
                continue
            ms, move = _pair(local, remote, board.ply % 4 == 0, board.to_text(),
                             board.move_stack)
            if game_index:
                added.append(ms)
            board.push(move)
    return added


def reuse(pool: EnginePool, games: int) -> None:
    """Othello and Gomoku games interleaved move by move, as a worker serving several
    matches at once: every move goes to the warm process of its engine."""
    specs = {BOTS[label][0]: spec_for(label) for label in REUSE_BOTS}
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


def start_times(sandbox: Sandbox, rounds: int) -> None:
    """Engine starts with and without the filesystem view, in alternating order."""
    if not sandbox.protections.view:
        print(f"starts: no filesystem view on this machine ({sandbox.protections.view_note})")
        return
    boxes = {"view": sandbox,
             "no view": Sandbox(replace(sandbox.protections, view=False), sandbox.root)}
    true = shutil.which("true") or "/bin/true"
    spec = spec_for("gomoku")
    starts: dict[tuple[str, str], list[float]] = {}
    for index in range(rounds * 2 + 1):  # the first pair warms the caches up
        order = list(boxes) if index % 2 == 0 else list(reversed(boxes))
        for name in order:
            box = boxes[name]
            started = time.perf_counter()
            process = box.start([true], SandboxLimits())
            process.popen.communicate()
            process.release()
            if index > 1:
                starts.setdefault(("true", name), []).append(time.perf_counter() - started)
            started = time.perf_counter()
            CLIENTS[spec.protocol].start(spec, box).close()
            if index > 1:
                starts.setdefault(("pbrain-arena", name), []).append(
                    time.perf_counter() - started)
    for engine, until in (("true", "its exit"), ("pbrain-arena", "its handshake")):
        with_view, without = (statistics.median(starts[(engine, name)]) * 1000
                              for name in boxes)
        print(f"start of {engine} to {until}: with its view {with_view:.1f} ms, "
              f"without {without:.1f} ms (medians of {len(starts[(engine, 'view')])}; "
              f"ratio {with_view / without:.2f})")


def report(what: str, added: list[float]) -> None:
    quartiles = statistics.quantiles(added, n=4)
    print(f"{what}: added per move median {statistics.median(added):.2f} ms (quartiles "
          f"{quartiles[0]:.2f} / {quartiles[2]:.2f} ms, {len(added)} moves)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--positions", type=int, default=30)
    parser.add_argument("--games", type=int, default=8)
    args = parser.parse_args()
    sandbox = Sandbox()
    pool = EnginePool(sandbox)
    try:
        for label in BOTS:
            report(f"{BOTS[label][0]} ({BOTS[label][1]})",
                   overhead(label, pool, args.positions, args.rounds))
        report("othello (gtp, in games)", gtp_in_games(pool, args.games))
        reuse(pool, args.games)
        stats = pool.stats
        print(f"whole run: {stats.moves} engine moves, {stats.starts} processes started, "
              f"reuse rate {stats.reuse_rate:.4f}")
    finally:
        pool.close()
    start_times(sandbox, args.rounds * 2)


if __name__ == "__main__":
    main()
