"""ProbCut: the config switch, the cut itself at a fixed depth, determinism whatever the
table holds, and the fit."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

from arena.engine.api import Limits, SearchResult
from arena.engine.othello import PRESETS, choose_move, evaluator_hash, patterns, validate_config
from arena.engine.othello import probcut as pc
from arena.engine.othello.bitboard import legal_moves, parse_position
from arena.engine.othello.config import compile_config, normalize_config
from arena.engine.othello.search import PC_BUCKETS, PC_DEPTHS, probcut_depth
from tests.engine.othello.conftest import random_boards

# Fixed depth, no solver, no clock: what a search returns depends on the position only.
OFF = {**PRESETS["arena-pattern"], "probcut": 0, "endgame_empties": 0, "time_ms": 600_000}
ON = {**OFF, "probcut": 15}
MIDGAME = [b.to_text() for b in random_boards(300, seed=41)
           if 24 <= b.empties <= 44 and len(b.legal_moves()) >= 5][:8]


def _search(text: str, config: dict[str, object], depth: int) -> SearchResult:
    return choose_move(text, config, Limits(depth=depth))


def test_the_switch_is_validated() -> None:
    for bad in (-1, 41, 1.5, "15", True, None):
        fields = [v.field for v in validate_config({**ON, "probcut": bad})]
        assert fields == ["probcut"], bad
    assert validate_config({**ON, "probcut": 40}) == []
    arena = {"evaluator": "arena", "probcut": 15}
    assert [v.field for v in validate_config(arena)] == ["probcut"]  # pattern only
    wrong = {**ON, "probcut_sha256": "0" * 64}
    assert [v.field for v in validate_config(wrong)] == ["probcut_sha256"]
    assert [v.field for v in validate_config({**OFF, "probcut_sha256": "0" * 64})] == [
        "probcut_sha256"
    ]
    assert validate_config({**ON, "weights": "no-such-set"})[0].field == "weights"


def test_the_switch_and_the_table_are_part_of_the_hash() -> None:
    on, off = normalize_config(ON), normalize_config(OFF)
    assert on["probcut_sha256"] == pc.load_table("arena-pattern")[1]
    assert "probcut_sha256" not in off
    hashes = {evaluator_hash(c) for c in (ON, OFF, {**ON, "probcut": 20})}
    assert len(hashes) == 3
    assert validate_config(on) == []  # a normalized config is valid as it stands
    assert compile_config(OFF).probcut is None
    rows = compile_config(ON).probcut
    assert rows is not None and rows.shape == (PC_BUCKETS * PC_DEPTHS * 3,)


def test_the_shipped_table_fits_the_shipped_weights() -> None:
    assert pc.table_problem("arena-pattern") is None
    table, _ = pc.load_table("arena-pattern")
    rows = table["rows"]
    assert isinstance(rows, list) and rows
    assert all(r["a"] > 0 and r["sigma"] > 0 for r in rows)
    assert str(table["command"]).startswith("arena engine probcut othello ")


def test_probcut_cuts_the_tree_and_keeps_clear_moves() -> None:
    off_nodes = on_nodes = 0
    for text in MIDGAME:
        off, on = _search(text, OFF, 6), _search(text, ON, 6)
        assert off.depth == on.depth == 6 and on.move in legal_moves(parse_position(text))
        off_nodes += off.nodes
        on_nodes += on.nodes
    assert on_nodes < 0.9 * off_nodes
    # Below the first depth it cuts at, ProbCut changes nothing.
    text = MIDGAME[0]
    assert _search(text, ON, 3).nodes == _search(text, OFF, 3).nodes


def test_a_move_far_ahead_of_the_others_is_still_found() -> None:
    """Where the plain search's best move beats every other by 10 discs or more (each move
    searched on its own), the selective search plays it too."""
    clear = 0
    for board in random_boards(120, seed=7):
        if not 20 <= board.empties <= 44 or len(board.legal_moves()) < 3:
            continue
        text = board.to_text()
        pos = parse_position(text)
        values = {}
        for move in legal_moves(pos):
            after = pos.play(move)
            if legal_moves(after) in ([], [64]):
                break
            values[move] = -_search(after.to_text(), OFF, 5).score
        else:
            best, second = sorted(values.values(), reverse=True)[:2]
            if best - second >= 1000:
                clear += 1
                assert _search(text, ON, 6).move == max(values, key=lambda m: values[m])
        if clear == 4:
            break
    assert clear == 4


def test_fixed_depth_results_do_not_depend_on_earlier_searches() -> None:
    """The shared cache's premise: a new thread (cold table), then after other searches
    left their entries (warm table), the same search answers the same."""
    def key(r: SearchResult) -> tuple[object, ...]:
        return r.move, r.score, r.depth, r.nodes, r.pv

    first: list[SearchResult] = []
    thread = threading.Thread(target=lambda: first.append(_search(MIDGAME[1], ON, 7)))
    thread.start()
    thread.join()
    for text in MIDGAME[2:5]:
        _search(text, ON, 7)
    _search(MIDGAME[1], ON, 5)
    again = _search(MIDGAME[1], ON, 7)
    assert key(first[0]) == key(again)


def test_tree_capture_leaves_out_the_shallow_searches() -> None:
    text = MIDGAME[2]
    result = choose_move(text, ON, Limits(depth=5), tree_budget=200_000)
    plain = _search(text, ON, 5)
    assert result.tree and (result.move, result.score) == (plain.move, plain.score)
    by_id = {n.id: n for n in result.tree}
    assert all(n.parent in by_id or n.parent == -1 for n in result.tree)
    # A square is played once in a line: a child that repeats its parent's move would be a
    # shallow search of the parent's position recorded as its child.
    assert not [n for n in result.tree if n.parent in by_id and n.move != 64
                and n.move == by_id[n.parent].move]


def test_fit_recovers_a_known_line() -> None:
    rng = np.random.default_rng(3)
    n = 400
    x = rng.normal(0, 800, size=(n, 6)).astype(np.int64)
    values = x.copy()
    for depth in range(3, 6):
        shallow = int(probcut_depth(depth))
        values[:, depth] = np.round(1.2 * values[:, shallow] - 50 + rng.normal(0, 100, n))
    discs = np.full(n, 35)
    rows = [r for r in pc.fit_rows(discs, values, 5) if r["bucket"] == 3]
    assert [r["depth"] for r in rows] == [3, 4, 5]
    for r in rows:
        assert not r["pooled"] and r["samples"] == n
        assert abs(r["a"] - 1.2) < 0.02 and abs(r["b"] + 50) < 15 and 90 < r["sigma"] < 110


def test_a_tiny_fit_run_gives_finite_lines() -> None:
    table = pc.fit(positions=6, seed=3, max_depth=4, weights="arena-pattern")
    rows = table["rows"]
    assert isinstance(rows, list) and {r["depth"] for r in rows} == {3, 4}
    for r in rows:
        assert np.isfinite([r["a"], r["b"], r["sigma"]]).all() and r["a"] > 0
    assert table["weights_sha256"] == pc.load_table("arena-pattern")[0]["weights_sha256"]
    again = pc.fit(positions=6, seed=3, max_depth=4, weights="arena-pattern")
    assert again["rows"] == rows  # seeded


def test_kernel_rows_extend_past_the_fitted_depths() -> None:
    rows = [{"bucket": b, "depth": d, "a": a, "b": 10.0 * d, "sigma": 100.0}
            for b in range(PC_BUCKETS) for d, a in ((3, 1.0), (4, 0.9), (5, 0.1))]
    kernel = pc.kernel_rows({"rows": rows}, 20).reshape(PC_BUCKETS, PC_DEPTHS, 3)
    assert kernel[2, 3].tolist() == [1000, 30, 200]  # t * sigma = 2.0 * 100
    assert kernel[2, 5].tolist() == [0, 0, 0]  # too flat a line: no cut
    assert kernel[2, 6].tolist() == kernel[2, 4].tolist()  # deeper: same parity
    assert kernel[2, 7].tolist() == [0, 0, 0]
    assert kernel[2, 2].tolist() == [0, 0, 0]


@pytest.mark.parametrize("name", ["arena-pattern+probcut=15", "arena-pattern"])
def test_bench_names(name: str) -> None:
    from arena.engine.othello.presets import named_config

    config = named_config(name)
    assert validate_config(config) == []
    assert config["probcut"] == (15 if "+" in name else PRESETS["arena-pattern"]["probcut"])
    with pytest.raises(ValueError):
        named_config("arena-pattern+probcut")


def test_the_hash_follows_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = evaluator_hash(ON)
    weights = tmp_path / "weights"
    weights.mkdir()
    for name in ("arena-pattern.npz", "arena-pattern.probcut.json"):
        shutil.copy(patterns.WEIGHTS_DIR / name, weights / name)
    monkeypatch.setattr(patterns, "WEIGHTS_DIR", weights)
    assert evaluator_hash(ON) == shipped
    table = json.loads((weights / "arena-pattern.probcut.json").read_text())
    table["rows"][0]["sigma"] += 1
    (weights / "arena-pattern.probcut.json").write_text(json.dumps(table))
    assert evaluator_hash(ON) != shipped
    (weights / "arena-pattern.probcut.json").unlink()
    assert [v.field for v in validate_config(ON)] == ["probcut"]
    assert validate_config(OFF) == []
