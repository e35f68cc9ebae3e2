"""Exact solve of FFO endgame files: time per position, nodes, correct or not.

.venv/bin/python bench/othello_solve.py                      # fforum-1-19 and 20-39
.venv/bin/python bench/othello_solve.py --files fforum-20-39.obf --runs 3
.venv/bin/python bench/othello_solve.py --files fforum-20-39.obf --runs 2 --edax /path/to/edax

Times are process CPU seconds (``time.process_time``: the solver is single-threaded), which
other jobs on a shared machine disturb much less than wall time. With ``--edax`` each run of
ours is followed by Edax solving the same file single-threaded at full depth (``-n 1 -l 60
-solve``); Edax's total CPU time is read from its summary line and the ratio is printed.
Edax needs an evaluation file to start (``--edax-eval``, default ``data/eval.dat`` beside the
binary's folder); with an all-zero file it orders moves without its pattern evaluation.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.engine.othello import solve, warm_up
from arena.engine.othello.bitboard import parse_position, square_name
from arena.engine.othello.cli import _read_obf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.data import shared_data_dir

DATA = shared_data_dir() / "othello"
_EDAX_ROW = re.compile(r"^\s*(\d+)\|\s*(\d+)\s+([+-]\d+)\s+([\d:.]+)\s+(\d+)")
_EDAX_CPU = re.compile(r"\(cpu =\s*([\d:.]+)\)")


def _seconds(text: str) -> float:
    total = 0.0
    for part in text.strip().split(":"):
        total = total * 60 + float(part)
    return total


def run_ours(path: Path) -> list[tuple[str, int, int, int, float, bool]]:
    """(text, score, move, nodes, CPU s, correct) per position."""
    rows = []
    for text, scores in _read_obf(path):
        started = time.process_time()
        result = solve(text)
        seconds = time.process_time() - started
        rows.append(
            (text, result.score, result.move, result.nodes, seconds,
             result.score == max(scores.values()))
        )  # fmt: skip
    return rows


def run_edax(binary: Path, eval_file: Path, path: Path) -> tuple[float, list[tuple[int, float]]]:
    """(total CPU s, [(nodes, wall s)] per position) of Edax solving ``path``."""
    with tempfile.TemporaryDirectory() as scratch:
        command = [
            str(binary), "-n", "1", "-l", "60", "-eval-file", str(eval_file),
            "-book-file", str(Path(scratch) / "none.book"), "-solve", str(path),
        ]  # fmt: skip
        out = subprocess.run(
            command, capture_output=True, text=True, cwd=scratch, timeout=3600, check=True
        ).stdout
    rows = []
    for line in out.splitlines():
        match = _EDAX_ROW.match(line)
        if match:
            rows.append((int(match.group(5)), _seconds(match.group(4))))
    cpu = _EDAX_CPU.search(out)
    if cpu is None:
        raise RuntimeError("no CPU total in Edax's -solve output")
    return _seconds(cpu.group(1)), rows


def bench_file(path: Path, runs: int, edax: Path | None, eval_file: Path | None) -> None:
    print(f"== {path.name} (median of {runs} run(s) per position)", flush=True)
    ours: list[list[tuple[str, int, int, int, float, bool]]] = []
    theirs: list[tuple[float, list[tuple[int, float]]]] = []
    for _ in range(runs):
        ours.append(run_ours(path))
        if edax is not None and eval_file is not None:
            theirs.append(run_edax(edax, eval_file, path))
    header = f"{'#':>3} {'empt':>4} {'score':>5} {'move':>4} {'ok':>3} {'nodes':>11} {'cpu s':>8}"
    header += f" {'Mn/s':>6}"
    if theirs:
        header += f" {'edax nodes':>11} {'edax wall s':>11}"
    print(header)
    wrong = 0
    totals = [sum(row[4] for row in run) for run in ours]
    for index, row in enumerate(ours[0]):
        text, score, move, nodes, _, ok = row
        seconds = statistics.median(run[index][4] for run in ours)
        wrong += not ok
        line = (
            f"{index + 1:>3} {parse_position(text).empties():>4} {score:>+5d} "
            f"{square_name(move):>4} {'yes' if ok else 'NO':>3} {nodes:>11} {seconds:>8.3f} "
            f"{nodes / seconds / 1e6 if seconds else 0:>6.1f}"
        )
        if theirs and index < len(theirs[0][1]):
            edax_nodes = theirs[0][1][index][0]
            edax_wall = statistics.median(run[1][index][1] for run in theirs if index < len(run[1]))
            line += f" {edax_nodes:>11} {edax_wall:>11.3f}"
        print(line)
    ours_total = statistics.median(totals)
    print(f"ours: total CPU {ours_total:.2f} s (runs: {', '.join(f'{t:.2f}' for t in totals)})")
    print(f"{wrong} wrong score(s)")
    if theirs:
        edax_totals = [total for total, _ in theirs]
        edax_total = statistics.median(edax_totals)
        print(
            f"edax: total CPU {edax_total:.2f} s "
            f"(runs: {', '.join(f'{t:.2f}' for t in edax_totals)}); "
            f"ours / edax = {ours_total / edax_total:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", nargs="+", default=["fforum-1-19.obf", "fforum-20-39.obf"])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--edax", type=Path, default=None, help="Edax binary to compare with")
    parser.add_argument("--edax-eval", type=Path, default=None)
    args = parser.parse_args()
    eval_file = args.edax_eval
    if args.edax is not None and eval_file is None:
        eval_file = args.edax.resolve().parent.parent / "data" / "eval.dat"
    warm_up()
    for name in args.files:
        bench_file(DATA / name, args.runs, args.edax, eval_file)


if __name__ == "__main__":
    main()
