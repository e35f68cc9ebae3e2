"""The Python side of the Othello engine: iterative deepening, limits, tree capture, solving.

Limits combine as "the stricter wins": the bot's own depth and time (from its config) and the
caller's ``Limits``. The time limit is hard, on the clock ``Limits.clock`` names (wall, or the
searching thread's CPU time; see ``budget.py``): the kernels read that clock every
``POLL_NODES`` (1024) nodes and unwind once the deadline has passed (no helper thread whose
scheduling could be late), and the best move of the last finished iteration (or a better
root move already proven in the unfinished one) is returned.
"""

from __future__ import annotations

import random
import time

import numpy as np
import numpy.typing as npt

from arena.engine.api import (
    Limits,
    NodeKind,
    SearchResult,
    StopFlag,
    TreeNode,
    captured,
    tree_budget_spent,
)
from arena.engine.othello.bitboard import (
    PASS,
    Position,
    legal_moves,
    opening_placements,
    parse_position,
)
from arena.engine.othello.budget import SOFT_TIME_SHARE as SOFT_TIME_SHARE  # for the worker
from arena.engine.othello.budget import SOLVER_TIME_SHARE, TimeBudget
from arena.engine.othello.config import BotSpec, compile_config
from arena.engine.othello.endgame import EndgameSolver
from arena.engine.othello.evaluate import kreversi_phase
from arena.engine.othello.search import (
    DEEPEN_ABORTED,
    DEEPEN_OUT_OF_NODES,
    DEEPEN_OUT_OF_TIME,
    DEEPEN_STEP,
    DP_ABORT_MOVE,
    DP_ABORT_PV,
    DP_ABORT_PV_LEN,
    DP_DEPTH,
    DP_MOVE,
    DP_NODES,
    DP_PV,
    DP_PV_LEN,
    DP_ROOT_SCORES,
    DP_SCORE,
    DP_TREE_N,
    INF,
    ST_ABORTED,
    ST_CLOCK,
    ST_DEADLINE,
    ST_NODES,
    ST_ORDER,
    ST_PC_TABLE,
    ST_PROBCUT,
    ST_PRUNE,
    ST_ROOT_BEST,
    ST_ROOT_COLOR,
    ST_ROOT_FULL,
    ST_SIZE,
    ST_TREE_RESERVE,
    ST_USE_TT,
    TREE_ALPHA,
    TREE_BETA,
    TREE_CUTOFF,
    TREE_DEPTH,
    TREE_FLIP,
    TREE_KIND,
    TREE_MOVE,
    TREE_PARENT,
    TREE_SCORE,
    per_thread,
    thread_buffers,
)

RANDOM_TIE_MAX_DISCS = 14  # KReversi randomises tied root moves while discs <= 14
# FForum position 1 (14 empties): exercises every endgame kernel in about 10 ms.
_WARM_UP_ENDGAME = "--XXXXX--OOOXX-O-OOOXXOX-OXOXOXXOXXXOXXX--XOXOXX-XXXOOO--OOOOO-- X"


class GameOverError(ValueError):
    """The position has no move for either side: there is nothing to search."""


def _stricter(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def convert_tree(rows: npt.NDArray[np.int64], pv: list[int]) -> list[TreeNode]:
    """Kernel tree rows -> TreeNodes, values turned to the root player's point of view."""
    nodes: list[TreeNode] = []
    children: dict[int, list[int]] = {}
    for i, row in enumerate(rows.tolist()):
        flip = row[TREE_FLIP] == 1
        alpha, beta, score = row[TREE_ALPHA], row[TREE_BETA], row[TREE_SCORE]
        if flip:
            alpha, beta, score = -beta, -alpha, -score
        kind: NodeKind = "leaf" if row[TREE_KIND] == 2 else "min" if flip else "max"
        nodes.append(
            TreeNode(
                id=i,
                parent=row[TREE_PARENT],
                move=row[TREE_MOVE],
                depth=row[TREE_DEPTH],
                alpha=max(-INF, min(INF, alpha)),
                beta=max(-INF, min(INF, beta)),
                score=score,
                kind=kind,
                cutoff=row[TREE_CUTOFF] == 1,
                pv=False,
            )
        )
        children.setdefault(row[TREE_PARENT], []).append(i)
    on_pv: set[int] = {0} if nodes else set()
    node = 0
    for move in pv:
        # A PVS re-search visits a move twice; the later visit holds the true value.
        matches = [c for c in children.get(node, []) if nodes[c].move == move]
        if not matches:
            break
        node = matches[-1]
        on_pv.add(node)
    return [TreeNode(**{**n.__dict__, "pv": True}) if n.id in on_pv else n for n in nodes]


def solved_line(result: SearchResult, empties: int, tree_budget: int) -> list[TreeNode]:
    """The tree of an exact solve, for viewers: the solver keeps none of its search, so
    its proven line stands for it. The root, then each move of the PV (a pass too), at
    most ``tree_budget`` nodes, each with the solved score (the root player's point of
    view, as every tree's) and the empty squares left as its depth; a full board is a
    leaf."""
    nodes: list[TreeNode] = []
    line = [-1, *result.pv][:tree_budget]
    for i, move in enumerate(line):
        if move not in (-1, PASS):
            empties -= 1
        kind: NodeKind = "leaf" if empties == 0 else "max" if i % 2 == 0 else "min"
        nodes.append(TreeNode(id=i, parent=i - 1, move=move, depth=empties, alpha=-64,
                              beta=64, score=result.score, kind=kind, cutoff=False, pv=True))
    return nodes


def _elapsed_ms(started_ns: int) -> float:
    return (time.monotonic_ns() - started_ns) / 1e6


def search_template(
    spec: BotSpec, pos: Position, budget: TimeBudget
) -> npt.NDArray[np.int64]:
    """What every iteration's state vector starts from (``deepen`` adds salt, first move and
    node budget)."""
    st = np.zeros(ST_SIZE, dtype=np.int64)
    st[ST_PRUNE] = int(spec.prune)
    st[ST_ORDER] = int(spec.ordered)
    st[ST_USE_TT] = int(spec.use_tt)
    st[ST_ROOT_COLOR] = pos.turn
    st[ST_DEADLINE] = budget.hard_ns
    st[ST_CLOCK] = budget.clock_id
    discs = 64 - pos.empties()
    st[ST_ROOT_FULL] = int(spec.random_ties and discs <= RANDOM_TIE_MAX_DISCS)
    if spec.probcut is not None:
        st[ST_PROBCUT] = 1
        st[ST_PC_TABLE : ST_PC_TABLE + len(spec.probcut)] = spec.probcut
    return st


def iterative_deepening(
    spec: BotSpec,
    pos: Position,
    max_plies: int,
    node_limit: int | None,
    budget: TimeBudget,
    stop_ext: npt.NDArray[np.int64],
    tree_budget: int,
    seed: int,
) -> SearchResult:
    started = time.monotonic_ns()
    buffers = thread_buffers(tree_budget)
    legal = legal_moves(pos)
    result = SearchResult(move=legal[0], score=0, depth=0, nodes=0, elapsed_ms=0.0, pv=[])
    tree_rows: npt.NDArray[np.int64] | None = None
    nodes = 0
    template = search_template(spec, pos, budget)
    # every root move searched twice at most (a PVS re-search), all but the root's row
    template[ST_TREE_RESERVE] = max(0, min(2 * len(legal), tree_budget - 1))
    # The kernel deepens on its own, unless an iteration's outcome needs Python: a draw
    # among tied root moves (which also decides the next iteration's first move) or a tree.
    ties = bool(template[ST_ROOT_FULL])
    out = buffers.out
    status = DEEPEN_STEP
    while status == DEEPEN_STEP:
        nodes_left = 0 if node_limit is None else max(1, node_limit - nodes)
        status = buffers.deepen(
            pos.player, pos.opponent, pos.turn, (result.depth + 1, max_plies), pos.empties(),
            result.move, nodes_left, budget.soft_ns, ties or tree_budget > 0, spec.params,
            template, stop_ext,
        )
        nodes += int(out[DP_NODES])
        if out[DP_DEPTH] > 0:  # an iteration finished
            result.move, result.score = int(out[DP_MOVE]), int(out[DP_SCORE])
            result.depth = int(out[DP_DEPTH])
            result.pv = out[DP_PV : DP_PV + int(out[DP_PV_LEN])].tolist()
            result.ties = []
            if ties:
                scores = out[DP_ROOT_SCORES : DP_ROOT_SCORES + 64]
                result.ties = sorted(sq for sq in legal if scores[sq] == result.score)
                pick_tied(result, seed)
            if tree_budget > 0:
                tree_rows = buffers.tree[: int(out[DP_TREE_N])].copy()
                result.tree_truncated = tree_budget_spent(
                    len(tree_rows), tree_budget, int(template[ST_TREE_RESERVE]))
    if status == DEEPEN_ABORTED:
        result.cut_short = True
        if out[DP_ABORT_MOVE] >= 0:
            result.move = int(out[DP_ABORT_MOVE])  # proven at least as good
            if result.move not in result.ties:
                result.ties = []
            if result.pv[:1] != [result.move]:  # the line was the replaced move's
                line = out[DP_ABORT_PV : DP_ABORT_PV + int(out[DP_ABORT_PV_LEN])].tolist()
                result.pv = line or [result.move]
    elif status in (DEEPEN_OUT_OF_NODES, DEEPEN_OUT_OF_TIME):
        result.cut_short = True
    result.nodes = nodes
    result.elapsed_ms = _elapsed_ms(started)
    if tree_budget > 0 and tree_rows is not None:
        rows, pv = tree_rows, result.pv
        result.tree, result.capture_ms = captured(lambda: convert_tree(rows, pv))
    elif tree_budget > 0:
        result.tree = []
    return result


def _solve(
    pos: Position,
    wld: bool,
    node_limit: int | None,
    budget: TimeBudget,
    stop_ext: npt.NDArray[np.int64],
) -> SearchResult | None:
    """Exact (or win/loss/draw) solve; None when a limit stopped it."""
    started = time.monotonic_ns()
    solver = _endgame_solver()
    alpha, beta = (-1, 1) if wld else (-64, 64)
    score, st = solver.solve(
        pos.player, pos.opponent, alpha, beta, node_limit or 0, stop_ext, budget.hard_ns,
        budget.clock_id,
    )
    if st[ST_ABORTED]:
        return None
    legal = legal_moves(pos)
    move = int(st[ST_ROOT_BEST]) if st[ST_ROOT_BEST] >= 0 else (legal[0] if legal else PASS)
    pv = solver.principal_variation(pos.player, pos.opponent)
    return SearchResult(
        move=move,
        score=score,
        depth=pos.empties(),
        nodes=int(st[ST_NODES]),
        elapsed_ms=_elapsed_ms(started),
        pv=pv,
        exact=not wld,
    )


def _endgame_solver() -> EndgameSolver:
    """This thread's solver (a 16 MiB table, touched once), created on first use."""
    return per_thread("solver", EndgameSolver)


def choose_move(
    position_text: str,
    config: dict[str, object],
    limits: Limits,
    stop: StopFlag | None = None,
    tree_budget: int = 0,
    seed: int = 0,
) -> SearchResult:
    """Run the bot described by ``config`` on the position; see the package docstring."""
    cpu_started = time.thread_time_ns()
    wall_started = time.monotonic_ns()
    result = _choose_move(position_text, config, limits, stop, tree_budget, seed)
    result.elapsed_ms = _elapsed_ms(wall_started)
    result.cpu_ms = (time.thread_time_ns() - cpu_started) / 1e6
    return result


def _choose_move(
    position_text: str,
    config: dict[str, object],
    limits: Limits,
    stop: StopFlag | None,
    tree_budget: int,
    seed: int,
) -> SearchResult:
    spec = compile_config(config)
    budget = TimeBudget.start(limits.clock, _stricter(spec.time_ms, limits.time_ms))
    pos = parse_position(position_text)
    legal = legal_moves(pos)
    if not legal:
        raise GameOverError(f"game over, no move to choose in {position_text!r}")
    if tree_budget < 0:
        raise ValueError(f"tree_budget must be >= 0, got {tree_budget}")
    if pos.in_opening():
        return _opening_placement(pos, tree_budget, seed)
    if legal == [PASS]:
        return SearchResult(
            move=PASS, score=0, depth=0, nodes=0, elapsed_ms=0.0, pv=[PASS],
            tree=[] if tree_budget else None,
        )  # fmt: skip
    stop_ext = stop.array if stop is not None else np.zeros(1, dtype=np.int64)
    plies = _stricter(spec.plies[kreversi_phase(64 - pos.empties())], limits.depth)
    assert plies is not None
    gave_up = False  # a solve that a limit stopped
    if 0 <= pos.empties() <= spec.endgame_empties:
        # The solver gets its share of the time; if it cannot finish, the midgame search
        # gets the rest. A tree asked for changes nothing here: it is the arena's record
        # (with one, the solver was skipped, and a match with trees played its endgames
        # by the midgame search instead: other moves, other results).
        solved = _solve(pos, False, limits.nodes, budget.share(SOLVER_TIME_SHARE), stop_ext)
        if solved is not None:
            if tree_budget > 0:
                solved.tree = solved_line(solved, pos.empties(), tree_budget)
                solved.tree_truncated = len(solved.tree) <= len(solved.pv)
            return solved
        gave_up = True
    result = iterative_deepening(
        spec, pos, max(1, plies), limits.nodes, budget.rest(), stop_ext, tree_budget, seed
    )
    result.cut_short = result.cut_short or gave_up
    return result


def _opening_placement(pos: Position, tree_budget: int, seed: int) -> SearchResult:
    """A move of International Reversi's opening: drawn with the seed among the empty
    centre squares, for every evaluator.

    The console program that has this rule places its opening discs at random on the empty
    centre squares; a placement captures nothing and no evaluator here can tell the
    arrangements apart without searching the whole game, so every placement is a tie. They
    are reported in ``ties`` and drawn by ``pick_tied``: the same seed gives the same game,
    and a cached result is redrawn under another seed.
    """
    placements = opening_placements(pos)
    result = SearchResult(
        move=placements[0], score=0, depth=0, nodes=0, elapsed_ms=0.0, pv=[placements[0]],
        tree=[] if tree_budget else None, ties=placements,
    )  # fmt: skip
    return pick_tied(result, seed)


def pick_tied(result: SearchResult, seed: int) -> SearchResult:
    """Draw ``result.move`` among ``result.ties`` with ``seed`` (KReversi's random tie
    rule; a no-op without ties). The draw depends only on the tied moves and the seed, so
    a search's result can be reused under another seed by drawing again. The tied moves
    are part of the generator's seed: a game's successive draws under one seed (the four
    opening placements of International Reversi) are then independent, so every
    arrangement can occur."""
    if result.ties:
        draw = random.Random(f"{seed}:{','.join(map(str, result.ties))}")
        result.move = draw.choice(result.ties)
        if result.pv[:1] != [result.move]:
            result.pv = [result.move]
    return result


def solve(
    position_text: str,
    *,
    wld: bool = False,
    limits: Limits | None = None,
    stop: StopFlag | None = None,
) -> SearchResult:
    """Exact endgame solve (OBF score: final disc difference for the side to move).

    ``wld=True`` only proves win (score > 0), draw (0) or loss (< 0). Raises
    ``TimeoutError`` when a limit or the stop flag ends the solve first.
    """
    pos = parse_position(position_text)
    if pos.in_opening():
        raise ValueError(f"no exact solve in International Reversi's opening: {position_text!r}")
    limits = limits or Limits()
    cpu_started = time.thread_time_ns()
    budget = TimeBudget.start(limits.clock, limits.time_ms)
    stop_ext = stop.array if stop is not None else np.zeros(1, dtype=np.int64)
    result = _solve(pos, wld, limits.nodes, budget, stop_ext)
    if result is None:
        raise TimeoutError(f"solve of {position_text!r} stopped before it finished")
    result.cpu_ms = (time.thread_time_ns() - cpu_started) / 1e6
    return result


def warm_up() -> float:
    """Compile (or load from the on-disk cache) every kernel; returns the seconds it took."""
    from arena.engine.othello.bitboard import START_TEXT, perft
    from arena.engine.othello.presets import PRESETS

    started = time.monotonic()
    perft(START_TEXT, 3)
    for name in ("kreversi-default", "lab-beginner", "arena-fast", "arena-pattern"):
        choose_move(START_TEXT, PRESETS[name], Limits(depth=2), tree_budget=50)
        choose_move(START_TEXT, PRESETS[name], Limits(depth=2))
    solve(_WARM_UP_ENDGAME)
    return time.monotonic() - started


def warm_thread() -> None:
    """Allocate and touch this thread's search and solver tables (32 MiB): a thread's
    first search would otherwise fault them in inside its time (70 ms measured, a 100 ms
    move's search cut to depth 1). For a thread that will search, before it does; a
    thread that has them keeps them as they are."""
    from arena.engine.othello.search import ready_thread_buffers

    ready_thread_buffers()
    _endgame_solver()


def evaluate_position(position_text: str, config: dict[str, object]) -> int:
    """The bot's static evaluation of the position, for the side to move."""
    from arena.engine.othello.evaluate import evaluate

    spec = compile_config(config)
    pos = parse_position(position_text)
    return int(evaluate(np.uint64(pos.player), np.uint64(pos.opponent), pos.turn, spec.params))
