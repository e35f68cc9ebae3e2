"""What could a richer Gomoku evaluation read? Networks fitted to a teacher's labels.

    python bench/gomoku_eval_probe.py POSITIONS.npz [POSITIONS.npz ...] \\
        --model {lines,stones,classes,cells,depthwise} [--channels C] [--layers L] \\
        [--epochs E] [--lr R] [--holdout 0.2] [--seed S]

An offline probe, not an engine: it asks how much of a teacher's judgement a kind of
evaluation can carry, before anyone builds it into the search's kernels. The positions
are files of ``arena engine train gomoku --keep-positions`` labelled by a teacher
(``--teacher``), several joined as ``--positions`` joins them (the last file's last games
held out). Each model is fitted by Adam on the soft labels (one-cycle learning rate,
mini-batches of 256) and its held-out soft log-loss and agreement with the teacher (which
side is better) are printed after every pass, beside the labels' own entropy (the floor)
and a coin's 0.6931. Compare with ``arena engine train gomoku --positions FILE --l2 0.001
--hidden 16 --holdout 0.2``, the shipped evaluation's form on the same split.

Models, from the side to move's view:

- ``lines``: per empty candidate cell (a stone within two cells), per direction and side,
  a learned vector of the window of ``--half`` cells each way (empty, own, blocked by the
  other colour or the edge; a window and its mirror image share one); a cell sums its
  eight, rectified, the cells are summed, and two layers give the value. What an engine
  could keep up to date from the line indexes it keeps anyway (``patterns.ST_INDEX``).
- ``stones``: a residual convolutional network on the stones alone (``--channels``,
  ``--layers`` blocks of two 3x3 convolutions, a 5x5 first layer; mean and max pooled),
  each batch in one of the eight symmetries of the board.
- ``classes``: the same network on the stones and the exact line classes of every cell
  (``patterns``: per side, how many of its four directions make each class, 14 planes).
- ``cells``: ``classes`` with 1x1 convolutions only: a network per cell, no neighbours.
- ``depthwise``: per cell a 1x1 layer of its classes, then ``--layers`` depthwise
  convolutions (each channel its own ``--kernel`` square), pooled: mixing of neighbours
  cheap enough to keep up to date in a search (with ``--pool mean``: a maximum is not).
  With ``--view colour --channels 16 --layers 1 --kernel 5`` it is the form of the search's
  board network (``evaluation.BoardNet``, fitted in the project by ``arena engine train
  gomoku --board``): Black's view, a head per side to move.

Needs PyTorch, which Arena does not install: ``pip install torch==2.13.0`` into a separate
environment with Arena installed (``pip install -e .``), or into ``.venv``.
arena/engine/gomoku/README.md has the figures (2026-12-01).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

SIZE = 15
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))
BATCH = 256


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="gomoku_eval_probe.py",
        description="Fit evaluation networks to a teacher's labels of kept Gomoku positions "
                    "and print their held-out soft log-loss (needs PyTorch).")
    parser.add_argument("positions", nargs="+", type=Path,
                        help="files of arena engine train gomoku --keep-positions")
    parser.add_argument("--model", required=True,
                        choices=["lines", "stones", "classes", "cells", "depthwise"])
    parser.add_argument("--channels", type=int, default=32,
                        help="channels (lines: the cell vector's size) (32)")
    parser.add_argument("--layers", type=int, default=4,
                        help="residual blocks, or depthwise layers (4)")
    parser.add_argument("--kernel", type=int, default=3, help="depthwise: square side (3)")
    parser.add_argument("--pool", choices=["mean-max", "mean"], default="mean-max",
                        help="board models: pool the cells' channels by mean and maximum, "
                             "or by mean alone (a sum a search can keep up to date)")
    parser.add_argument("--view", choices=["move", "colour"], default="move",
                        help="board models: the stones and classes of the side to move and "
                             "the other side, one head; or of Black and White, a head per "
                             "side to move (the search's board network, evaluation.BoardNet)")
    parser.add_argument("--half", type=int, default=4, help="lines: cells each way (4)")
    parser.add_argument("--epochs", type=int, default=15, help="passes over the data (15)")
    parser.add_argument("--lr", type=float, default=2e-3, help="peak learning rate (0.002)")
    parser.add_argument("--holdout", type=float, default=0.2,
                        help="share of the last file's games held out (0.2)")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def read_positions(
    moves: list[tuple[int, ...]],
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """Per position, from one ``patterns.setup`` (the engine's own reading): the board
    (SIZE x SIZE: 0 empty, 1 the side to move's stone, 2 the other's) and, per side (to
    move, other) and direction, each cell's line class (NONE on stones)."""
    from arena.engine.gomoku.board import FREESTYLE
    from arena.engine.gomoku.evaluation import HAND_WEIGHTS
    from arena.engine.gomoku.patterns import setup

    board = np.zeros((len(moves), SIZE * SIZE), dtype=np.int8)
    classes = np.zeros((len(moves), 2, 4, SIZE * SIZE), dtype=np.int8)
    for i, played in enumerate(moves):
        cells, pat, _st, _table = setup(SIZE, FREESTYLE, list(played), HAND_WEIGHTS)
        me = 1 + len(played) % 2
        board[i] = np.where(cells == me, 1, np.where(cells == 3 - me, 2, 0))
        classes[i, 0], classes[i, 1] = pat[me], pat[3 - me]
    return (board.reshape(len(moves), SIZE, SIZE),
            classes.reshape(len(moves), 8, SIZE, SIZE))


def window_codes(board: npt.NDArray[np.int8], half: int) -> npt.NDArray[np.int64]:
    """Per position, (side, direction) and cell: the mirror-canonical code of the window of
    ``half`` cells each way seen by that side (0 empty, 1 own, 2 blocked), -1 where the
    cell is not an empty candidate (a stone within two cells)."""
    n = len(board)
    codes = np.zeros((n, 2, 4, SIZE, SIZE), dtype=np.int64)
    span = 3 ** half
    for side, own in ((0, 1), (1, 2)):
        seen = np.where(board == own, 1, np.where(board == 0, 0, 2))
        padded = np.full((n, SIZE + 2 * half, SIZE + 2 * half), 2, dtype=np.int64)
        padded[:, half:half + SIZE, half:half + SIZE] = seen
        for d, (dy, dx) in enumerate(DIRECTIONS):
            ahead = np.zeros((n, SIZE, SIZE), dtype=np.int64)
            behind = np.zeros((n, SIZE, SIZE), dtype=np.int64)
            for k in range(1, half + 1):
                y, x = half + k * dy, half + k * dx
                ahead += padded[:, y:y + SIZE, x:x + SIZE] * 3 ** (k - 1)
                y, x = half - k * dy, half - k * dx
                behind += padded[:, y:y + SIZE, x:x + SIZE] * 3 ** (k - 1)
            codes[:, side, d] = (np.minimum(ahead + span * behind, behind + span * ahead)
                                 + side * span * span)
    stones = np.pad(board != 0, ((0, 0), (2, 2), (2, 2)))
    near = np.zeros((n, SIZE, SIZE), dtype=bool)
    for dy in range(5):
        for dx in range(5):
            near |= stones[:, dy:dy + SIZE, dx:dx + SIZE]
    codes[np.broadcast_to(((board != 0) | ~near)[:, None, None], codes.shape)] = -1
    return codes.reshape(n, 8, SIZE * SIZE)


def build(args: argparse.Namespace, moves: list[tuple[int, ...]]) -> tuple[Any, Any, bool]:
    """(inputs as one tensor, the model, whether batches take a random symmetry)."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    board, classes = read_positions(moves)
    if args.model == "lines":
        codes = window_codes(board, args.half)
        kinds, index = np.unique(codes, return_inverse=True)
        index = index.reshape(codes.shape) - 1  # -1 (not a candidate) is kinds[0]
        windows = len(kinds) - 1
        index[index < 0] = windows
        print(f"{windows} windows", flush=True)

        class Lines(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.vectors = nn.Embedding(windows + 1, args.channels, padding_idx=windows)
                nn.init.normal_(self.vectors.weight, 0, 0.05)
                with torch.no_grad():
                    self.vectors.weight[windows].zero_()
                self.bias = nn.Parameter(torch.zeros(args.channels))
                self.cell = nn.Linear(args.channels, args.channels)
                self.head = nn.Sequential(nn.Linear(args.channels, 32), nn.ReLU(),
                                          nn.Linear(32, 1))

            def forward(self, x: Any) -> Any:
                used = (x[:, 0] != windows).unsqueeze(2)
                cells = F.relu(self.vectors(x).sum(1) + self.bias) * used
                cells = F.relu(self.cell(cells)) * used
                return self.head(cells.sum(1) / 32).squeeze(1)

        return torch.tensor(index.astype(np.int64)), Lines(), False

    planes = 0 if args.model == "stones" else 14
    colour = args.view == "colour"
    if colour:  # Black's view: swap the sides of the positions White is to move in
        white = np.array([len(m) % 2 == 1 for m in moves])
        board[white] = np.where(board[white] == 0, 0, 3 - board[white])
        classes[white] = np.concatenate([classes[white, 4:], classes[white, :4]], 1)
    inputs = board[:, None]
    if planes:
        inputs = np.concatenate([inputs, classes], 1)
    if colour:  # one more plane: 1 where Black is to move (a symmetry keeps it whole)
        black = np.array([len(m) % 2 == 0 for m in moves], dtype=np.int8)
        inputs = np.concatenate(
            [inputs, np.broadcast_to(black[:, None, None, None], (len(moves), 1, SIZE, SIZE))], 1)

    def first_planes(x: Any) -> Any:
        stones = x[:, 0]
        parts = [(stones == 1).float()[:, None], (stones == 2).float()[:, None],
                 torch.ones_like(stones, dtype=torch.float32)[:, None]]
        if planes:  # per side, how many of the four directions make each class
            hot = F.one_hot(x[:, 1:9].long(), 8)[..., 1:]
            hot = hot.reshape(len(x), 2, 4, SIZE, SIZE, 7).sum(2)
            parts.append(hot.permute(0, 1, 4, 2, 3).reshape(len(x), 14, SIZE, SIZE).float())
        return torch.cat(parts, 1)

    class Network(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            c, k = args.channels, 1 if args.model == "cells" else 3
            if args.model == "depthwise":
                self.first = nn.Conv2d(3 + planes, c, 1)
                self.blocks = nn.ModuleList(
                    nn.Conv2d(c, c, args.kernel, padding=args.kernel // 2, groups=c)
                    for _ in range(args.layers))
            else:
                self.first = nn.Conv2d(3 + planes, c, 5 if k == 3 else 1,
                                       padding=2 if k == 3 else 0)
                self.blocks = nn.ModuleList(
                    nn.Sequential(nn.Conv2d(c, c, k, padding=k // 2), nn.ReLU(),
                                  nn.Conv2d(c, c, k, padding=k // 2))
                    for _ in range(args.layers))
            pooled = c if args.pool == "mean" else 2 * c
            self.heads = nn.ModuleList(
                nn.Sequential(nn.Linear(pooled, 64), nn.ReLU(), nn.Linear(64, 1))
                for _ in range(2 if colour else 1))

        def forward(self, x: Any) -> Any:
            y = F.relu(self.first(first_planes(x)))
            for block in self.blocks:
                y = F.relu(block(y) if args.model == "depthwise" else y + block(y))
            pooled = y.mean((2, 3))
            if args.pool == "mean-max":
                pooled = torch.cat([pooled, y.amax((2, 3))], 1)
            value = self.heads[0](pooled).squeeze(1)
            if colour:  # the second head where White is to move
                value = torch.where(x[:, 9, 0, 0] == 1, value, self.heads[1](pooled).squeeze(1))
            return value

    # A batch in any symmetry of the board: the class planes sum over the directions,
    # which a symmetry permutes.
    return torch.tensor(inputs), Network(), True


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        import torch
        from torch.nn import functional as F
    except ImportError:
        print("gomoku_eval_probe.py needs PyTorch, which Arena does not install: "
              "pip install torch==2.13.0 (see --help)", file=sys.stderr)
        return 2
    from arena.engine.gomoku.train import joined, load_positions, log_loss
    from arena.engine.selfplay import held_out_games

    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    kept = [load_positions(path) for path in args.positions]
    data, games = joined(kept)
    held = data.game >= games - held_out_games(kept[-1].games, args.holdout)
    floor = log_loss(data.label[held], data.label[held])  # the labels' own entropy
    print(f"{len(data)} positions of {games} games, {int(held.sum())} held out; labels' "
          f"entropy {floor:.4f} on them, a coin 0.6931", flush=True)
    x, model, symmetric = build(args, data.moves)
    label = torch.tensor(data.label, dtype=torch.float32)
    print(f"{sum(p.numel() for p in model.parameters())} parameters", flush=True)
    train, heldout = np.flatnonzero(~held), np.flatnonzero(held)
    optimiser = torch.optim.Adam(model.parameters(), lr=args.lr)
    schedule = torch.optim.lr_scheduler.OneCycleLR(
        optimiser, args.lr, total_steps=args.epochs * math.ceil(len(train) / BATCH))
    best = math.inf
    for epoch in range(1, args.epochs + 1):
        started = time.perf_counter()
        model.train()
        rng.shuffle(train)
        for i in range(0, len(train), BATCH):
            rows = train[i:i + BATCH]
            batch = x[rows]
            if symmetric:
                batch = torch.rot90(batch, int(rng.integers(4)), (-2, -1))
                if rng.integers(2):
                    batch = torch.flip(batch, (-1,))
            loss = F.binary_cross_entropy_with_logits(model(batch), label[rows])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
        model.eval()
        with torch.no_grad():
            logits = torch.cat([model(x[heldout[i:i + 1024]])
                                for i in range(0, len(heldout), 1024)])
        loss_held = F.binary_cross_entropy_with_logits(logits, label[heldout]).item()
        agree = float(((logits > 0) == (label[heldout] > 0.5)).float().mean())
        best = min(best, loss_held)
        print(f"pass {epoch}: held-out soft log-loss {loss_held:.4f}, agrees {agree:.1%} "
              f"({time.perf_counter() - started:.0f} s)", flush=True)
    print(f"best held-out soft log-loss {best:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
