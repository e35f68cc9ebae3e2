"""Every validation rule over gRPC: INVALID_ARGUMENT naming the bad field, nothing stored.

One test per rule; the boundaries of every range are checked to be accepted, so nothing
valid is refused either.
"""

from __future__ import annotations

import struct
import zlib

import grpc
import pytest

from arena.bots.validation import AVATAR_MAX_BYTES
from arena.engine import othello
from arena.rpc import field_violations
from arena.v1 import bots_pb2, common_pb2, registry_pb2
from tests.registry.conftest import Registry, external_spec, gomoku_spec, othello_spec, png_bytes
from tests.support.specs import png_bomb


def rejected_fields(registry: Registry, spec: bots_pb2.BotSpec, from_preset: str = "") -> list[str]:
    """Register ``spec``; assert INVALID_ARGUMENT and that nothing was stored."""
    with pytest.raises(grpc.RpcError) as caught:
        registry.register(spec, from_preset=from_preset)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
    listed = registry.call("ListBots", registry_pb2.ListBotsRequest(include_retired=True))
    assert isinstance(listed, registry_pb2.ListBotsResponse) and not listed.bots
    return [v.field for v in field_violations(caught.value)]


def full_kreversi(**changes: object) -> bots_pb2.BotSpec:
    """The terra preset as an explicit config, with top-level ``changes``."""
    config = {**othello.PRESETS["terra"], **changes}
    spec = bots_pb2.BotSpec(name="full", game=common_pb2.GAME_KIND_OTHELLO)
    spec.builtin.config.update(config)
    return spec


def with_table_cell(phase: str, row: int, col: int, value: object) -> bots_pb2.BotSpec:
    tables = {p: [list(r) for r in t] for p, t in
              othello.PRESETS["terra"]["position_tables"].items()}  # type: ignore[attr-defined]
    tables[phase][row][col] = value
    return full_kreversi(position_tables=tables)


# -- names ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["", "x" * 65, "tab\there", "new\nline", "   ", ".", ".."])
def test_bad_names_are_refused(registry: Registry, name: str) -> None:
    assert rejected_fields(registry, othello_spec(name)) == ["spec.name"]


@pytest.mark.parametrize("name", ["x", "x" * 64, "Silver Blackshield", "Юки 大原 #2", "a:v:1",
                                  "...", ".x", "x/y", "%2E"])
def test_good_names_are_accepted(registry: Registry, name: str) -> None:
    assert registry.register(othello_spec(name)).spec.name == name


# -- game, description, engine ----------------------------------------------------------

def test_missing_game_is_refused(registry: Registry) -> None:
    spec = othello_spec()
    spec.game = common_pb2.GAME_KIND_UNSPECIFIED
    assert rejected_fields(registry, spec) == ["spec.game"]


def test_overlong_description_is_refused(registry: Registry) -> None:
    spec = othello_spec()
    spec.description = "d" * 10_001
    assert rejected_fields(registry, spec) == ["spec.description"]


def test_missing_engine_is_refused(registry: Registry) -> None:
    assert rejected_fields(registry, bots_pb2.BotSpec(name="x", game=1)) == ["spec.engine"]


def test_a_preset_without_a_configuration_points_at_from_preset(registry: Registry) -> None:
    """``preset`` only tags where a configuration came from; a spec with the tag and no
    engine (a bot file saying ``preset =`` for ``from_preset =``) is told so."""
    with pytest.raises(grpc.RpcError) as caught:
        registry.register(bots_pb2.BotSpec(name="x", game=1, preset="terra"))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    [violation] = field_violations(caught.value)
    assert violation.field == "spec.engine"
    assert "preset 'terra' only records where a configuration came from" in \
        violation.description
    assert "--from-preset" in violation.description


# -- avatar ------------------------------------------------------------------------------

def _padded_png(total: int) -> bytes:
    """A valid PNG of exactly ``total`` bytes, padded with a private ancillary chunk."""
    base = png_bytes()
    body = b"\0" * (total - len(base) - 12)
    pad = struct.pack(">I", len(body)) + b"prVt" + body + struct.pack(
        ">I", zlib.crc32(b"prVt" + body))
    return base[:-12] + pad + base[-12:]


def test_avatar_of_the_maximum_size_is_accepted(registry: Registry) -> None:
    spec = othello_spec()
    spec.avatar_png = _padded_png(AVATAR_MAX_BYTES)
    assert len(registry.register(spec).spec.avatar_png) == AVATAR_MAX_BYTES


def test_oversized_avatar_is_refused(registry: Registry) -> None:
    spec = othello_spec()
    spec.avatar_png = _padded_png(AVATAR_MAX_BYTES + 1)
    assert rejected_fields(registry, spec) == ["spec.avatar_png"]


def test_an_avatar_that_decodes_to_gigabytes_is_refused(registry: Registry) -> None:
    """256 KiB was the only bound: a 20000x20000 black-and-white PNG of 50 KB is 1.6 GB
    in every viewer's browser (4 bytes a pixel). An avatar is at most 1024 a side."""
    bomb = png_bomb(20_000)
    assert len(bomb) < AVATAR_MAX_BYTES
    spec = othello_spec()
    spec.avatar_png = bomb
    with pytest.raises(grpc.RpcError) as caught:
        registry.register(spec)
    assert [v.field for v in field_violations(caught.value)] == ["spec.avatar_png"]
    assert "is 20000x20000 pixels; an avatar is at most 1024x1024" in str(
        caught.value.details())
    spec.avatar_png = png_bomb(1024)
    assert registry.register(spec).spec.avatar_png == spec.avatar_png


@pytest.mark.parametrize("damage", ["not-png", "bad-crc", "truncated", "no-idat", "trailing"])
def test_malformed_avatar_is_refused(registry: Registry, damage: str) -> None:
    good = png_bytes()
    data = {
        "not-png": b"GIF89a" + good[6:],
        "bad-crc": good[:40] + bytes([good[40] ^ 0xFF]) + good[41:],
        "truncated": good[:-5],
        "no-idat": good[:33] + good[-12:],
        "trailing": good + b"extra",
    }[damage]
    spec = othello_spec()
    spec.avatar_png = data
    assert rejected_fields(registry, spec) == ["spec.avatar_png"]


# -- evaluators ----------------------------------------------------------------------------

def test_unknown_evaluator_is_refused(registry: Registry) -> None:
    spec = othello_spec(evaluator="deep-blue")
    assert rejected_fields(registry, spec) == ["spec.builtin.config.evaluator"]


def test_missing_evaluator_is_refused(registry: Registry) -> None:
    spec = bots_pb2.BotSpec(name="x", game=1)
    spec.builtin.config.update({"depth": 3})
    assert rejected_fields(registry, spec) == ["spec.builtin.config.evaluator"]


def test_game_evaluator_mismatch_is_refused(registry: Registry) -> None:
    spec = gomoku_spec()
    spec.game = common_pb2.GAME_KIND_OTHELLO
    assert rejected_fields(registry, spec) == ["spec.builtin.config.evaluator"]
    spec = othello_spec()
    spec.game = common_pb2.GAME_KIND_GOMOKU
    assert rejected_fields(registry, spec) == ["spec.builtin.config.evaluator"]


def test_unknown_parameter_is_refused(registry: Registry) -> None:
    spec = othello_spec(search_extensions=True)
    assert rejected_fields(registry, spec) == ["spec.builtin.config.search_extensions"]


# -- KReversi ranges -----------------------------------------------------------------------

@pytest.mark.parametrize("value", [-351, 351])
def test_table_cell_out_of_range_is_refused(registry: Registry, value: int) -> None:
    assert rejected_fields(registry, with_table_cell("begin", 3, 4, value)) == [
        "spec.builtin.config.position_tables.begin[3][4]"]


def test_table_cell_limits_are_accepted(registry: Registry) -> None:
    spec = with_table_cell("end", 0, 0, 350)
    spec.builtin.config["position_tables"]["end"][7][7] = -350
    assert registry.register(spec).version == 1


def test_table_with_seven_rows_is_refused(registry: Registry) -> None:
    tables = dict(othello.PRESETS["terra"]["position_tables"])  # type: ignore[call-overload]
    tables["middle"] = tables["middle"][:7]
    assert rejected_fields(registry, full_kreversi(position_tables=tables)) == [
        "spec.builtin.config.position_tables.middle"]


def test_table_row_of_nine_is_refused(registry: Registry) -> None:
    tables = {p: [list(r) for r in t] for p, t in
              othello.PRESETS["terra"]["position_tables"].items()}  # type: ignore[attr-defined]
    tables["end"][2].append(5)
    assert rejected_fields(registry, full_kreversi(position_tables=tables)) == [
        "spec.builtin.config.position_tables.end[2]"]


@pytest.mark.parametrize("value", [0, 11])
def test_depth_out_of_range_is_refused(registry: Registry, value: int) -> None:
    spec = othello_spec(depth={"begin": 3, "middle": 3, "end": value})
    assert rejected_fields(registry, spec) == ["spec.builtin.config.depth.end"]


def test_depth_limits_are_accepted(registry: Registry) -> None:
    spec = othello_spec(depth={"begin": 1, "middle": 10, "end": 10})
    assert registry.register(spec).version == 1


def test_non_integral_depth_is_refused(registry: Registry) -> None:
    spec = othello_spec(depth={"begin": 3.5, "middle": 3, "end": 4})
    assert rejected_fields(registry, spec) == ["spec.builtin.config.depth.begin"]


@pytest.mark.parametrize("value", [-71, 71])
def test_mobility_out_of_range_is_refused(registry: Registry, value: int) -> None:
    spec = othello_spec(mobility={"begin": 0, "middle": value, "end": 0})
    assert rejected_fields(registry, spec) == ["spec.builtin.config.mobility.middle"]


@pytest.mark.parametrize("value", [-61, 61])
def test_stable_disc_score_out_of_range_is_refused(registry: Registry, value: int) -> None:
    spec = othello_spec(stable_disc_score=value)
    assert rejected_fields(registry, spec) == ["spec.builtin.config.stable_disc_score"]


@pytest.mark.parametrize("value", [-2001, 2001])
def test_force_pass_score_out_of_range_is_refused(registry: Registry, value: int) -> None:
    spec = othello_spec(force_pass_score=value)
    assert rejected_fields(registry, spec) == ["spec.builtin.config.force_pass_score"]


@pytest.mark.parametrize("value", [0, 61])
def test_time_limit_out_of_range_is_refused(registry: Registry, value: int) -> None:
    spec = othello_spec(time_limit_s=value)
    assert rejected_fields(registry, spec) == ["spec.builtin.config.time_limit_s"]


def test_use_position_table_must_be_a_flag(registry: Registry) -> None:
    spec = othello_spec(use_position_table="yes")
    assert rejected_fields(registry, spec) == ["spec.builtin.config.use_position_table"]


def test_kreversi_range_limits_are_accepted(registry: Registry) -> None:
    for index, (mobility, stable, force, seconds) in enumerate(
            [(-70, -60, -2000, 1), (70, 60, 2000, 60)]):
        spec = othello_spec(f"limits-{index}", mobility={"begin": mobility, "middle": 0,
                                                         "end": mobility},
                            stable_disc_score=stable, force_pass_score=force,
                            time_limit_s=seconds, use_position_table=False)
        assert registry.register(spec).version == 1


def test_every_bad_field_is_reported_at_once(registry: Registry) -> None:
    spec = othello_spec("", stable_disc_score=99, time_limit_s=0)
    spec.avatar_png = b"junk"
    assert sorted(rejected_fields(registry, spec)) == [
        "spec.avatar_png", "spec.builtin.config.stable_disc_score",
        "spec.builtin.config.time_limit_s", "spec.name"]


# -- other evaluators ----------------------------------------------------------------------

def test_sharpmoku_depth_out_of_range_is_refused(registry: Registry) -> None:
    assert rejected_fields(registry, gomoku_spec(depth=7)) == ["spec.builtin.config.depth"]


def test_lab_look_ahead_must_be_a_level(registry: Registry) -> None:
    spec = bots_pb2.BotSpec(name="lab", game=1)
    spec.builtin.config.update({"evaluator": "lab", "look_ahead": 2})
    assert rejected_fields(registry, spec) == ["spec.builtin.config.look_ahead"]


# -- external bots -------------------------------------------------------------------------

@pytest.mark.parametrize("address", [
    "", "localhost", "localhost:", ":50051", "localhost:0", "localhost:65536", "host:port",
    "bad_host:80", "-bad.example:80", "300.1.1.1:80", "[::1:80", "[zz::1]:80",
    "http://bot:80", "a b:80",
])
def test_external_address_must_be_host_port(registry: Registry, address: str) -> None:
    assert rejected_fields(registry, external_spec(address=address)) == [
        "spec.external.address"]


@pytest.mark.parametrize("address", [
    "localhost:1", "10.0.0.1:65535", "[::1]:50051", "bot-7.example.org:443",
])
def test_good_external_addresses_are_accepted(registry: Registry, address: str) -> None:
    assert registry.register(external_spec(address=address)).spec.external.address == address


def test_negative_external_deadline_is_refused(registry: Registry) -> None:
    spec = external_spec()
    spec.external.move_deadline_ms = -1
    assert rejected_fields(registry, spec) == ["spec.external.move_deadline_ms"]


# -- presets -------------------------------------------------------------------------------

def test_unknown_preset_is_refused(registry: Registry) -> None:
    assert rejected_fields(registry, bots_pb2.BotSpec(name="x"), "no-such") == ["from_preset"]


def test_preset_of_the_other_game_is_refused(registry: Registry) -> None:
    spec = bots_pb2.BotSpec(name="x", game=common_pb2.GAME_KIND_GOMOKU)
    assert rejected_fields(registry, spec, "terra") == ["spec.game"]


def test_preset_overrides_are_validated(registry: Registry) -> None:
    spec = bots_pb2.BotSpec(name="x")
    spec.builtin.config.update({"depth": {"end": 11}})
    assert rejected_fields(registry, spec, "terra") == ["spec.builtin.config.depth.end"]


def test_unknown_preset_label_is_refused(registry: Registry) -> None:
    spec = othello_spec()
    spec.preset = "no-such"
    assert rejected_fields(registry, spec) == ["spec.preset"]


# -- update --------------------------------------------------------------------------------

def test_update_cannot_rename_or_change_game(registry: Registry) -> None:
    registry.register(othello_spec("stay"))
    for spec, field in ((othello_spec("moved"), "spec.name"),
                        (gomoku_spec("stay"), "spec.game")):
        with pytest.raises(grpc.RpcError) as caught:
            registry.call("UpdateBot", registry_pb2.UpdateBotRequest(name="stay", spec=spec))
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert [v.field for v in field_violations(caught.value)] == [field]


def test_invalid_update_stores_nothing(registry: Registry) -> None:
    registry.register(othello_spec("steady"))
    with pytest.raises(grpc.RpcError) as caught:
        registry.call("UpdateBot", registry_pb2.UpdateBotRequest(
            name="steady", spec=othello_spec("steady", time_limit_s=99)))
    assert [v.field for v in field_violations(caught.value)] == [
        "spec.builtin.config.time_limit_s"]
    latest = registry.call("GetBot", registry_pb2.GetBotRequest(
        bot=common_pb2.BotRef(name="steady")))
    assert isinstance(latest, bots_pb2.BotVersion) and latest.version == 1
