"""Perft leaves/s from the start position (median of several runs), bulk-counted last ply.

.venv/bin/python bench/othello_perft.py --depths 10 11 12 --runs 3
.venv/bin/python bench/othello_perft.py --depths 11 --runs 5 --edax /path/to/edax-binary

With ``--edax`` the same run also times Edax's console ``perft`` command (single task),
alternating with ours so that load from other processes hits both alike, and prints the
ratio. Times are process CPU seconds on both sides (Edax prints getrusage times; ours are
``time.process_time``), which other jobs on the machine disturb much less than wall time.
Edax needs an evaluation file to start (``--edax-eval``, default ``data/eval.dat`` beside the
binary's folder); its content does not matter for perft.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from arena.engine.othello import START_TEXT, perft


def time_ours(depth: int) -> tuple[int, float]:
    started = time.process_time()
    leaves = perft(START_TEXT, depth)
    return leaves, time.process_time() - started


def _seconds(text: str) -> float:
    """Edax's ``[[h:]m:]ss.mmm`` time as seconds."""
    total = 0.0
    for part in text.strip().split(":"):
        total = total * 60 + float(part)
    return total


def time_edax(binary: Path, eval_file: Path, depth: int) -> tuple[int, float]:
    """(moves + passes at ``depth``, CPU seconds of that depth) from Edax's perft table."""
    with tempfile.TemporaryDirectory() as scratch:
        command = [
            str(binary), "-n", "1", "-l", "1", "-eval-file", str(eval_file),
            "-book-file", str(Path(scratch) / "none.book"),
        ]  # fmt: skip
        proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=scratch
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(f"perft {depth}\n")
        proc.stdin.flush()
        row: list[str] = []
        for line in proc.stdout:
            fields = [f.strip() for f in line.split(",")]
            if len(fields) >= 8 and fields[0].isdigit() and int(fields[0]) == depth:
                row = fields
            if line.startswith("Total"):
                break
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        proc.wait(timeout=60)
    if not row:
        raise RuntimeError(f"no depth-{depth} row in Edax's perft output")
    # ply, moves+passes, passes, wins, draws, losses, mobility, time, speed
    return int(row[1]), _seconds(row[7])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--depths", type=int, nargs="+", default=[10, 11, 12])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--edax", type=Path, default=None, help="Edax binary to compare with")
    parser.add_argument("--edax-eval", type=Path, default=None)
    args = parser.parse_args()
    eval_file = args.edax_eval
    if args.edax is not None and eval_file is None:
        eval_file = args.edax.resolve().parent.parent / "data" / "eval.dat"
    perft(START_TEXT, 2)  # load the compiled kernel
    header = f"{'depth':>5} {'leaves':>14} {'median s':>9} {'M leaves/s':>11}"
    if args.edax is not None:
        header += f" {'edax leaves':>14} {'edax s':>8} {'edax M/s':>9} {'ratio':>6}"
    print(header, flush=True)
    for depth in args.depths:
        ours: list[float] = []
        theirs: list[float] = []
        leaves = edax_leaves = 0
        for _ in range(args.runs):
            leaves, seconds = time_ours(depth)
            ours.append(seconds)
            if args.edax is not None:
                edax_leaves, seconds = time_edax(args.edax, eval_file, depth)
                theirs.append(seconds)
        median = statistics.median(ours)
        speed = leaves / median / 1e6
        line = f"{depth:>5} {leaves:>14} {median:>9.3f} {speed:>11.1f}"
        if theirs:
            edax_median = statistics.median(theirs)
            edax_speed = edax_leaves / edax_median / 1e6
            line += (
                f" {edax_leaves:>14} {edax_median:>8.3f} {edax_speed:>9.1f}"
                f" {speed / edax_speed:>6.2f}"
            )
        print(line, flush=True)


if __name__ == "__main__":
    main()
