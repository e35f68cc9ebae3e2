"""Text rendering for terminals: boards, search trees, standings and progress bars.

Pure functions from values to strings (no I/O), shared by ``arena play``, ``arena match``
and ``arena ladder``. Boards use ``X`` for black, ``O`` for white, ``.`` for an empty
point and ``*`` for a legal move (in the games whose description asks for it: not in
Gomoku, where every empty point is one); the last move is framed by parentheses, which
survives copy-paste and needs no colour.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arena.games import Color, Outcome, Position, Termination, game_of

if TYPE_CHECKING:
    from arena.engine.api import TreeNode

_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_PIECES = {Color.BLACK: "X", Color.WHITE: "O", None: "."}
BOLD, REVERSE, DIM, RESET = "\x1b[1m", "\x1b[7m", "\x1b[2m", "\x1b[0m"


def render_board(
    position: Position,
    last_move: int | None = None,
    marks: Iterable[int] = (),
    mark: str = "*",
) -> str:
    """The board with column letters and row numbers (row 1 on top, as in the move
    names), ``last_move`` framed as ``(X)`` and every square of ``marks`` shown as
    ``mark`` (legal moves, usually)."""
    size = position.size
    marked = set(marks)
    width = len(str(size))
    header = " " * (width + 1) + " ".join(_LETTERS[:size])
    lines = [header]
    for row in range(size):
        text = f"{row + 1:>{width}}"
        for col in range(size + 1):
            square = row * size + col
            if col < size and square == last_move:
                text += "("
            elif col > 0 and square - 1 == last_move:
                text += ")"
            else:
                text += " "
            if col < size:
                piece = _PIECES[_piece_at(position, square)]
                text += mark if piece == "." and square in marked else piece
        lines.append(f"{text}{row + 1}")
    lines.append(header)
    return "\n".join(lines)


def legal_marks(position: Position) -> list[int]:
    """The squares a board of ``position`` marks as legal moves (see the module docstring)."""
    if position.is_game_over() or not game_of(position).shows_legal_moves:
        return []
    return position.legal_moves()


def move_names(position: Position, moves: Sequence[int]) -> list[str]:
    """The names of ``moves`` played in turn from ``position``, up to the first that is not
    legal there (a principal variation may run past what the position allows)."""
    board = position.copy()
    names = []
    for move in moves:
        if not board.is_legal(move):
            break
        names.append(board.move_to_str(move))
        board.push(move)
    return names


def _piece_at(position: Position, square: int) -> Color | None:
    piece_at: Callable[[int], Color | None] = getattr(position, "piece_at")  # noqa: B009
    return piece_at(square)


def _count(position: Position, color: Color) -> int:
    count: Callable[[Color], int] = getattr(position, "count")  # noqa: B009
    return count(color)


def board_summary(position: Position) -> str:
    """Disc/stone counts and the side to move (or the result)."""
    black = _count(position, Color.BLACK)
    white = _count(position, Color.WHITE)
    counts = f"black X {black}  white O {white}"
    outcome = position.outcome()
    if outcome is not None:
        return f"{counts}  -  {describe_outcome(outcome, game_of(position).counts_discs)}"
    return f"{counts}  -  {position.turn.name.lower()} to move"


def describe_outcome(outcome: Outcome, counts_discs: bool = True) -> str:
    """``white wins 40-24 (0-1)``; a game the rules did not end says how it ended:
    ``white wins by resignation, 2-2 (0-1)``. In a game not decided by discs (Gomoku) the
    scores are game points, said once: ``white wins (0-1)``, ``draw, the board is full
    (1/2-1/2)``."""
    if not counts_discs:
        if outcome.winner is None:
            full = outcome.termination is Termination.FULL_BOARD
            return f"draw{', the board is full' if full else ''} ({outcome.result})"
        how = ("" if outcome.termination is Termination.NORMAL
               else f" by {outcome.termination.value.replace('_', ' ')}")
        return f"{outcome.winner.name.lower()} wins{how} ({outcome.result})"
    if outcome.winner is None:
        return f"draw ({outcome.black_score}-{outcome.white_score})"
    how = ("" if outcome.termination in (Termination.NORMAL, Termination.FULL_BOARD)
           else f" by {outcome.termination.value.replace('_', ' ')},")
    return (
        f"{outcome.winner.name.lower()} wins{how} {outcome.black_score}-{outcome.white_score}"
        f" ({outcome.result})"
    )


# -- search trees (KReversi's minimax viewer, as text) ------------------------------------


def render_tree(
    nodes: Sequence[TreeNode],
    move_name: Callable[[int], str],
    max_depth: int | None = None,
    color: bool = False,
    truncated: bool = False,
) -> str:
    """An indented tree, one node per line: ``score [move] Max|Min|Leaf``, with
    ``cut`` on nodes where a cut-off happened and the principal variation marked
    ``<= PV`` (and bold when ``color``). ``max_depth`` counts levels below the root."""
    children: dict[int, list[TreeNode]] = {}
    roots: list[TreeNode] = []
    for node in nodes:
        if node.parent < 0:
            roots.append(node)
        else:
            children.setdefault(node.parent, []).append(node)
    title = f"{len(nodes)} nodes" + (" (node budget reached: tree truncated)" if truncated else "")
    lines = [title]

    def walk(node: TreeNode, level: int, prefix: str, last: bool, is_root: bool) -> None:
        branch = "" if is_root else ("`-- " if last else "|-- ")
        lines.append(prefix + branch + _tree_label(node, move_name, color))
        kids = children.get(node.id, [])
        inner = prefix + ("" if is_root else ("    " if last else "|   "))
        if max_depth is not None and level >= max_depth and kids:
            lines.append(inner + f"... {len(kids)} more below")
            return
        for index, kid in enumerate(kids):
            walk(kid, level + 1, inner, index == len(kids) - 1, False)

    for root in roots:
        walk(root, 0, "", True, True)
    return "\n".join(lines)


def _tree_label(node: TreeNode, move_name: Callable[[int], str], color: bool) -> str:
    kind = {"max": "Max", "min": "Min", "leaf": "Leaf"}[node.kind]
    move = "root" if node.move < 0 else move_name(node.move)
    label = f"{node.score:>7} [{move}] {kind}"
    if node.cutoff:
        label += " cut"
    label += f"  (a={node.alpha}, b={node.beta})" if node.kind != "leaf" else ""
    if node.pv:
        label = f"{BOLD}{label} <= PV{RESET}" if color else f"{label} <= PV"
    return label


# -- ladders ------------------------------------------------------------------------------


@dataclass(frozen=True)
class StandingLine:
    """One row of a standings table."""

    rank: int
    name: str
    games: int
    wins: int
    draws: int
    losses: int
    score_pct: float
    elo: float
    elo_low: float
    elo_high: float
    # A rating list's row: the ladders and distinct opponents its games came from.
    spread: tuple[int, int] | None = None


def render_standings(lines: Sequence[StandingLine]) -> str:
    """A fixed-width table: rank, bot, Elo with its 95% interval, W/D/L, score %, and a
    rating list's ladders and opponents. A bot without a counted game has no rating yet:
    its Elo and score read ``-`` and its interval ``no games yet`` (its interval is
    infinite)."""
    name_width = max([len("bot"), *(len(line.name) for line in lines)])
    spread = any(line.spread is not None for line in lines)
    header = (
        f"{'#':>3}  {'bot':<{name_width}}  {'Elo':>6}  {'95% interval':>15}  "
        f"{'games':>5}  {'W':>4} {'D':>4} {'L':>4}  {'score':>6}"
        + (f"  {'ladders':>7}  {'opponents':>9}" if spread else "")
    )
    rows = [header, "-" * len(header)]
    for line in lines:
        rated = line.games > 0 and math.isfinite(line.elo_low) and math.isfinite(line.elo_high)
        interval = f"[{line.elo_low:+.0f}, {line.elo_high:+.0f}]" if rated else "no games yet"
        elo = f"{line.elo:>+6.0f}" if rated else f"{'-':>6}"
        score = f"{line.score_pct:>5.1f}%" if line.games else f"{'-':>6}"
        ladders, opponents = line.spread or (0, 0)
        rows.append(
            f"{line.rank:>3}  {line.name:<{name_width}}  {elo}  {interval:>15}  "
            f"{line.games:>5}  {line.wins:>4} {line.draws:>4} {line.losses:>4}  {score}"
            + (f"  {ladders:>7}  {opponents:>9}" if spread else "")
        )
    return "\n".join(rows)


def render_head_to_head(names: Sequence[str],
                        records: Mapping[tuple[str, str], tuple[int, int, int]]) -> str:
    """The crosstable: a row per bot in ``names``' order (``#1 name``), a column per
    opponent (``#1``), each cell the row bot's wins-draws-losses against it (``records``
    by (bot, opponent)); ``-`` on the diagonal, blank for a pair that plays no games."""
    labels = [f"#{i}" for i in range(1, len(names) + 1)]
    heads = [f"{label} {name}" for label, name in zip(labels, names, strict=True)]
    cells = [["-" if bot == opponent else "{}-{}-{}".format(*records[bot, opponent])
              if (bot, opponent) in records else "" for opponent in names] for bot in names]
    width = max([len(label) for label in labels] + [len(c) for row in cells for c in row])
    head_width = max(len(head) for head in heads)
    lines = [" " * head_width + "".join(f"  {label:>{width}}" for label in labels)]
    lines += [f"{head:<{head_width}}" + "".join(f"  {cell:>{width}}" for cell in row)
              for head, row in zip(heads, cells, strict=True)]
    return "\n".join(line.rstrip() for line in lines)


def count_text(count: int, noun: str) -> str:
    """``1 ladder``, ``0 ladders``, ``1,200 games`` (a noun made plural with an s)."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def format_duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def progress_bar(done: int, total: int, elapsed_s: float, width: int = 30) -> str:
    """``[#######-----]  12/60  20%  elapsed 0:42  ETA 2:48`` (ETA from the mean pace)."""
    total = max(total, 0)
    fraction = done / total if total else 1.0
    filled = round(width * min(fraction, 1.0))
    bar = "#" * filled + "-" * (width - filled)
    eta = "?" if done == 0 or done > total else format_duration(elapsed_s / done * (total - done))
    return (
        f"[{bar}] {done:>{len(str(total))}}/{total} {fraction * 100:3.0f}%  "
        f"elapsed {format_duration(elapsed_s)}  ETA {eta}"
    )
