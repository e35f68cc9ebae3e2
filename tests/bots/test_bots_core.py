"""The core of arena.bots without a server: Struct numbers, merging, PNG and address checks."""

from __future__ import annotations

import pytest
from google.protobuf import struct_pb2

from arena.bots import config_from_struct, config_to_struct, merge_config
from arena.bots.validation import address_problem, png_problem, validate_name
from tests.support.specs import TOOL_PNG, png_bytes


def test_struct_numbers_become_ints_only_when_integral() -> None:
    struct = struct_pb2.Struct()
    struct.update({"a": 6, "b": 6.5, "c": [1, 2.0, True], "d": {"e": -0.0}, "f": 1e300})
    config = config_from_struct(struct)
    assert config == {"a": 6, "b": 6.5, "c": [1, 2, True], "d": {"e": 0}, "f": 1e300}
    assert [type(v) for v in config["c"]] == [int, int, bool]  # type: ignore[union-attr]
    assert isinstance(config["f"], float)  # beyond 2**53 a double is not an exact integer


def test_config_to_struct_refuses_what_a_struct_cannot_hold() -> None:
    with pytest.raises(ValueError, match="cannot be stored: when: a value of type object "):
        config_to_struct({"when": object()})
    # An integer past a double's range (`arena bot register --set width=999...9`, 400
    # digits) once escaped as an OverflowError and a traceback, then was refused in
    # Python's words ("int too large to convert to float") without the field's name.
    with pytest.raises(ValueError, match="cannot be stored: width: an integer past what a number"):
        config_to_struct({"width": 10**400})
    with pytest.raises(ValueError, match=r"cannot be stored: depth\.end\[1\]: an integer past"):
        config_to_struct({"depth": {"begin": 3, "end": [1, -(10**399)]}})
    with pytest.raises(ValueError, match="cannot be stored: depth has a key that is not text"):
        config_to_struct({"depth": {7: 1}})


def test_merge_config_merges_tables_and_replaces_lists() -> None:
    base = {"depth": {"begin": 6, "end": 7}, "weights": [1, 2], "keep": True}
    merged = merge_config(base, {"depth": {"end": 8}, "weights": [3]})
    assert merged == {"depth": {"begin": 6, "end": 8}, "weights": [3], "keep": True}
    assert base["depth"] == {"begin": 6, "end": 7}  # the preset itself is untouched


def test_png_checks() -> None:
    assert png_problem(TOOL_PNG) is None
    assert png_problem(png_bytes(64, 64)) is None
    assert "signature" in (png_problem(b"") or "")
    bad_ihdr = png_bytes()[:16] + b"\0\0\0\0" + png_bytes()[20:]
    assert png_problem(bad_ihdr) is not None


@pytest.mark.parametrize(("address", "ok"), [
    ("localhost:50051", True), ("[2001:db8::1]:443", True), ("1.2.3.4:1", True),
    ("xn--bcher-kva.example:80", True), ("1.2.3:80", False), ("host:080x", False),
    ("host:٣", False), ("bot\n:80", False), ("a..b:80", False), ("x" * 64 + ".com:80", False),
])
def test_address_problem(address: str, ok: bool) -> None:
    assert (address_problem(address) is None) == ok


def test_name_rules_name_the_given_field() -> None:
    assert validate_name("", "bot.name")[0].field == "bot.name"
    assert validate_name("ok name") == []
