"""Bot files: TOML text <-> spec, exact round trips, clear errors on bad files."""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.bots import apply_preset, builtin_config, preset_configs
from arena.bots.botfile import BotFileError, parse_bot_file, spec_to_toml
from arena.bots.spec import config_to_struct
from arena.v1 import bots_pb2
from tests.support.specs import TOOL_PNG, external_spec

TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=20)
# -0.0 is integral, so it reads back as the integer 0: equal as a number, not bit for bit.
FLOATS = st.floats(allow_nan=False, allow_infinity=True).filter(lambda x: str(x) != "-0.0")
SCALARS = st.integers(-(2**53), 2**53) | st.booleans() | TEXT | FLOATS
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(TEXT, inner, max_size=4), max_leaves=20)
CONFIGS = st.dictionaries(TEXT, VALUES, max_size=6)


@st.composite
def specs(draw: st.DrawFn) -> bots_pb2.BotSpec:
    spec = bots_pb2.BotSpec(name=draw(TEXT), game=draw(st.sampled_from([1, 2])),
                            description=draw(TEXT), preset=draw(TEXT),
                            avatar_png=draw(st.binary(max_size=300)))
    engine = draw(st.sampled_from(["builtin", "external", "protocol"]))
    if engine == "builtin":
        spec.builtin.config.CopyFrom(config_to_struct(draw(CONFIGS)))
    elif engine == "external":
        spec.external.address = draw(TEXT)
        spec.external.move_deadline_ms = draw(st.integers(-(2**31), 2**31 - 1))
    else:
        spec.protocol.engine = draw(TEXT)
        spec.protocol.checksum = draw(TEXT)
        spec.protocol.options.CopyFrom(config_to_struct(draw(CONFIGS)))
    return spec


@settings(max_examples=150, deadline=None)
@given(specs())
def test_any_spec_round_trips_through_its_bot_file(spec: bots_pb2.BotSpec) -> None:
    text = spec_to_toml(spec, comment="exported for a test\nsecond line")
    parsed = parse_bot_file(text)
    assert parsed.spec == spec
    assert parsed.from_preset == ""


@pytest.mark.parametrize("preset", sorted(preset_configs()))
def test_every_preset_round_trips(preset: str) -> None:
    spec = apply_preset(bots_pb2.BotSpec(name=preset, avatar_png=TOOL_PNG), preset)
    assert parse_bot_file(spec_to_toml(spec)).spec == spec


def test_external_bot_round_trips() -> None:
    spec = external_spec("far", "[::1]:7000")
    text = spec_to_toml(spec)
    assert '[external]\naddress = "[::1]:7000"\nmove_deadline_ms = 2000\n' in text
    assert parse_bot_file(text).spec == spec


def test_tables_are_written_as_readable_rows() -> None:
    spec = apply_preset(bots_pb2.BotSpec(name="terra"), "terra")
    text = spec_to_toml(spec)
    assert "[builtin.depth]\nbegin = 6\nmiddle = 6\nend = 7\n" in text
    assert "  [ 100,  -60,   20,    5,    5,   20,  -60,  100],\n" in text
    assert tomllib.loads(text)["builtin"]["evaluator"] == "kreversi"


def test_hand_written_file_with_preset_overrides() -> None:
    parsed = parse_bot_file(
        '# my Terra\nname = "terra-deep"\nfrom_preset = "terra"\n\n'
        "[builtin.depth]\nend = 8\n"
    )
    assert parsed.from_preset == "terra"
    assert parsed.spec.name == "terra-deep"
    assert builtin_config(parsed.spec) == {"depth": {"end": 8}}


@pytest.mark.parametrize(("text", "message"), [
    ("name = ", "not a valid bot file"),
    ('name = "x"\ncolour = "red"\n', "unknown key 'colour'"),
    ("name = 3\n", "name must be a string"),
    ('game = "chess"\n', "unknown game 'chess'"),
    ('avatar_png = "@@@"\n', "avatar_png is not valid base64"),
    ("builtin = 3\n", "builtin must be a table"),
    ('[builtin]\nwhen = 1979-05-27\n',
     "builtin: config cannot be stored: when: a value of type date"),
    ('[builtin]\nevaluator = "lab"\n[external]\naddress = "h:1"\n',
     r"not \[builtin\] and \[external\]"),
    ('[protocol]\nengine = "edax"\nflavour = 1\n', "unknown key protocol.flavour"),
    ('[protocol]\nengine = "edax"\noptions = 3\n', "options must be a table"),
    ('[external]\nport = 1\n', "unknown key external.port"),
    ('[external]\nmove_deadline_ms = "soon"\n', "move_deadline_ms must be an integer"),
    ('[external]\nmove_deadline_ms = 9999999999\n', "out of range"),
    # Numbers Python does not write out or read: were its advice on
    # sys.set_int_max_str_digits, with no field named.
    ("[external]\nmove_deadline_ms = 0x" + "f" * 5000 + "\n",
     r"move_deadline_ms is out of range: \(a number too long to show\)"),
    ("[builtin]\nwidth = " + "9" * 5000 + "\n",
     "not a valid bot file: a number of more than 4,300 digits"),
])
def test_bad_bot_files_raise_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(BotFileError, match=message):
        parse_bot_file(text)
