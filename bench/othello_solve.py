"""Exact solve of FFO endgame files: time per position, nodes, correct or not; Edax paired.

.venv/bin/python bench/othello_solve.py                      # fforum-1-19 and 20-39
.venv/bin/python bench/othello_solve.py --files fforum-20-39.obf --runs 3
.venv/bin/python bench/othello_solve.py --files fforum-20-39.obf --runs 3 --edax /path/to/edax
.venv/bin/python bench/othello_solve.py --files /path/to/ffo-40-49.obf --runs 2 --edax ...

Times are the solving thread's CPU seconds (``time.thread_time``), which other jobs on a
shared machine disturb much less than wall time. With ``--edax`` every position is solved by
us and then at once by Edax (single-threaded, full depth: ``-n 1 -l 60 -solve`` on a file
holding that one position; its CPU time is read from its summary line), so the machine's
drift over minutes hits both alike. Each figure is the median over ``--runs``; the totals
are sums of those medians, and the ratio of the totals is printed with the median of the
per-run ratios. Edax needs an evaluation file to start (``--edax-eval``, default
``data/eval.dat`` beside the binary's folder); with an all-zero file it orders moves without
its pattern evaluation.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from arena.documents import read_text_document
from arena.engine.othello import solve, warm_up
from arena.engine.othello.bitboard import parse_position, square_name
from arena.formats import parse_obf_file

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.data import shared_data_dir

DATA = shared_data_dir() / "othello"
_EDAX_ROW = re.compile(r"^\s*(\d+)\|\s*(\d+)\s+([+-]\d+)\s+([\d:.]+)\s+(\d+)")
_EDAX_CPU = re.compile(r"\(cpu =\s*([\d:.]+)")  # Edax may leave the ")" out


def _seconds(text: str) -> float:
    total = 0.0
    for part in text.strip().split(":"):
        total = total * 60 + float(part)
    return total


@dataclass
class Row:
    """One position's figures over the runs."""

    text: str
    expected: int
    score: int = 0
    move: int = -1
    nodes: int = 0
    cpu: list[float] = field(default_factory=list)
    edax_score: int | None = None
    edax_nodes: int = 0
    edax_cpu: list[float] = field(default_factory=list)


def solve_ours(row: Row) -> None:
    started = time.thread_time()
    result = solve(row.text)
    row.cpu.append(time.thread_time() - started)
    row.score, row.move, row.nodes = result.score, result.move, result.nodes


def solve_edax(binary: Path, eval_file: Path, row: Row) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        problem = Path(scratch) / "one.obf"
        problem.write_text(row.text + ";\n")
        command = [
            str(binary), "-n", "1", "-l", "60", "-eval-file", str(eval_file),
            "-book-file", str(Path(scratch) / "none.book"), "-solve", str(problem),
        ]  # fmt: skip
        out = subprocess.run(
            command, capture_output=True, text=True, cwd=scratch, timeout=3600, check=True
        ).stdout
    rows = [m for m in map(_EDAX_ROW.match, out.splitlines()) if m]
    cpu = _EDAX_CPU.search(out)
    if not rows or cpu is None:
        raise RuntimeError(f"unexpected Edax output:\n{out}")
    row.edax_score, row.edax_nodes = int(rows[0].group(3)), int(rows[0].group(5))
    row.edax_cpu.append(_seconds(cpu.group(1)))


def bench_file(path: Path, runs: int, edax: Path | None, eval_file: Path | None) -> None:
    print(f"== {path.name} (median of {runs} run(s) per position)", flush=True)
    positions = parse_obf_file(read_text_document(path, "OBF file"))
    missing = [index for index, p in enumerate(positions, start=1) if p.best_score is None]
    if missing:
        raise SystemExit(f"{path}: positions {missing} list no score to check against")
    rows = [Row(p.board.to_text(), p.best_score) for p in positions if p.best_score is not None]
    for _ in range(runs):
        for row in rows:
            solve_ours(row)
            if edax is not None and eval_file is not None:
                solve_edax(edax, eval_file, row)
    header = f"{'#':>3} {'empt':>4} {'score':>5} {'move':>4} {'ok':>3} {'nodes':>11} {'cpu s':>8}"
    header += f" {'Mn/s':>6}"
    if edax:
        header += f" {'edax nodes':>11} {'edax cpu s':>10} {'ratio':>6}"
    print(header)
    wrong = 0
    for index, row in enumerate(rows):
        seconds = statistics.median(row.cpu)
        ok = row.score == row.expected and row.edax_score in (None, row.expected)
        wrong += not ok
        line = (
            f"{index + 1:>3} {parse_position(row.text).empties():>4} {row.score:>+5d} "
            f"{square_name(row.move):>4} {'yes' if ok else 'NO':>3} {row.nodes:>11} "
            f"{seconds:>8.3f} {row.nodes / seconds / 1e6 if seconds else 0:>6.1f}"
        )
        if edax:
            theirs = statistics.median(row.edax_cpu)
            ratio = f"{seconds / theirs:>6.2f}" if theirs else f"{'-':>6}"
            line += f" {row.edax_nodes:>11} {theirs:>10.3f} {ratio}"
        print(line)
    ours_total = sum(statistics.median(row.cpu) for row in rows)
    print(f"ours: total CPU {ours_total:.2f} s; {wrong} wrong score(s)")
    if edax:
        edax_total = sum(statistics.median(row.edax_cpu) for row in rows)
        per_run = [
            sum(row.cpu[r] for row in rows) / sum(row.edax_cpu[r] for row in rows)
            for r in range(runs)
        ]
        print(
            f"edax: total CPU {edax_total:.2f} s; ours / edax = {ours_total / edax_total:.2f} "
            f"(per run: {', '.join(f'{r:.2f}' for r in per_run)}; "
            f"median {statistics.median(per_run):.2f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--files", nargs="+", default=["fforum-1-19.obf", "fforum-20-39.obf"],
        help="OBF files: a name in the shared data folder, or a path",
    )  # fmt: skip
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--edax", type=Path, default=None, help="Edax binary to compare with")
    parser.add_argument("--edax-eval", type=Path, default=None)
    args = parser.parse_args()
    eval_file = args.edax_eval
    if args.edax is not None and eval_file is None:
        eval_file = args.edax.resolve().parent.parent / "data" / "eval.dat"
    warm_up()
    for name in args.files:
        path = Path(name) if Path(name).is_file() else DATA / name
        bench_file(path, args.runs, args.edax, eval_file)


if __name__ == "__main__":
    main()
