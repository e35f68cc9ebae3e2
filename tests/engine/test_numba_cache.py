"""The compiled-kernel cache follows the engine sources as a whole
(arena/engine/numba_cache.py)."""

from __future__ import annotations

from pathlib import Path

import numba

import arena.engine.othello
from arena.engine.numba_cache import engine_source_hash


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_change_in_any_kernel_file_moves_the_cache(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"othello/search.py": "a", "othello/bitboard.py": "b",
                            "gomoku/board.py": "c", "dispatch.py": "d"})
    before = engine_source_hash(root)
    assert engine_source_hash(root) == before  # stable
    (root / "othello" / "bitboard.py").write_text("b2")  # a callee, not the caller's file
    after_callee = engine_source_hash(root)
    assert after_callee != before
    (root / "dispatch.py").write_text("d2")  # not compiled: does not throw the cache away
    assert engine_source_hash(root) == after_callee
    (root / "gomoku" / "new_kernel.py").write_text("e")
    assert engine_source_hash(root) != after_callee


def test_numba_caches_under_the_source_hash() -> None:
    assert numba.config.CACHE_DIR.endswith(engine_source_hash())
    assert Path(arena.engine.othello.__file__).parent.parent.name == "engine"
