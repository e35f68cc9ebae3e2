"""`arena bot ...` against a real registry: every command, --json, one-line errors."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena.clients.cli import main
from arena.services.common.config import Config
from arena.services.common.embedded_redis import EmbeddedRedis

from arena.bots.botfile import parse_bot_file
from arena.engine import gomoku, othello
from tests.support.servers import ADMIN_TOKEN, Server, client, serve
from tests.support.specs import png_bytes

ENV = ("ARENA_HOME", "ARENA_REGISTRY", "ARENA_REFEREE", "ARENA_LADDER", "ARENA_ENGINE",
       "ARENA_TOKEN")


@pytest.fixture
def arena(registry_server: Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
          ) -> Iterator[Server]:
    """The registry, reached through the environment (the CLI writes it, so undo it)."""
    for name in ENV:
        monkeypatch.setenv(name, "unset")
        monkeypatch.delenv(name)
    monkeypatch.setenv("ARENA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ARENA_REGISTRY", registry_server.target)
    monkeypatch.setenv("ARENA_TOKEN", "alice-token")
    yield registry_server


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["bot", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert isinstance(data, dict)
    return data


def fails(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code, _out, err = run(capsys, *argv)
    assert code != 0
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    return err


def test_register_from_preset_with_a_parameter_option(
        arena: Server, capsys: pytest.CaptureFixture[str]) -> None:
    bot = run_json(capsys, "register", "--name", "terra-deep", "--from-preset", "terra",
                   "--depth-end", "8", "--no-random-tied-root-moves")
    assert bot["version"] == 1 and bot["owner"] == "alice"
    config = bot["spec"]["builtin"]["config"]  # type: ignore[index]
    assert config["depth"] == {"begin": 6, "middle": 6, "end": 8}
    assert config["random_tied_root_moves"] is False
    assert config["position_tables"] == othello.PRESETS["terra"]["position_tables"]


def test_every_arena_gomoku_parameter_is_an_option(
        arena: Server, capsys: pytest.CaptureFixture[str]) -> None:
    """The Gomoku preset spells its parameters out, so each is an option as Othello's are
    (`--max-depth 6` was an unrecognized argument)."""
    bot = run_json(capsys, "register", "--name", "g6", "--from-preset", "arena-gomoku",
                   "--max-depth", "6", "--width", "8", "--hand-eval")
    config = bot["spec"]["builtin"]["config"]  # type: ignore[index]
    assert (config["max_depth"], config["width"], config["hand_eval"]) == (6, 8, True)
    assert config["vcf_plies"] == gomoku.PRESETS["arena-gomoku"]["vcf_plies"]
    preset = run_json(capsys, "register", "--name", "g20", "--from-preset", "arena-gomoku")
    # Spelling the defaults out changed nothing the engine plays.
    assert preset["evaluator_hash"] == gomoku.evaluator_hash({"evaluator": "arena-gomoku"})


def test_register_builtin_external_and_set(arena: Server, capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    moku = run_json(capsys, "register", "--name", "moku", "--evaluator", "sharpmoku",
                    "--depth", "4", "--description", "hard")
    assert moku["spec"]["game"] == "GAME_KIND_GOMOKU"  # type: ignore[index]
    avatar = tmp_path / "face.png"
    avatar.write_bytes(png_bytes())
    code, out, err = run(capsys, "register", "--name", "fast", "--from-preset", "arena-fast",
                         "--set", "weights.mobility=[100, 60]", "--avatar", str(avatar))
    assert code == 0, err
    assert "arena (preset arena-fast)" in out and "avatar          " in out
    remote = run_json(capsys, "register", "--name", "remote", "--game", "othello",
                      "--external", "localhost:7000", "--deadline-ms", "1500")
    assert remote["spec"]["external"] == {  # type: ignore[index]
        "address": "localhost:7000", "move_deadline_ms": 1500}


def test_a_config_file_goes_on_top_of_the_preset(
        arena: Server, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`--from-preset` with `--config FILE`: the file's parameters over the preset's,
    `--set` over both; a missing or bad file is an error, not a file left unread (both
    were dropped without a word)."""
    config = tmp_path / "wide.json"
    config.write_text(json.dumps({"width": 24, "max_depth": 9}))
    bot = run_json(capsys, "register", "--name", "wide", "--from-preset", "arena-gomoku",
                   "--config", str(config), "--set", "max_depth=7")
    settings = bot["spec"]["builtin"]["config"]  # type: ignore[index]
    assert settings["width"] == 24 and settings["max_depth"] == 7
    assert settings["vcf_plies"] == 21  # the preset's, kept
    assert "no such" in fails(capsys, "register", "--name", "w2", "--from-preset",
                              "arena-gomoku", "--config", str(tmp_path / "missing.json"))
    config.write_text(json.dumps({"width": 100_000}))
    assert "engine parameter width: must be in 2..64, got 100000" in fails(
        capsys, "register", "--name", "w3", "--from-preset", "arena-gomoku", "--config",
        str(config))
    # A file naming another evaluator than the preset's replaced it, and each of the
    # preset's parameters was refused as unknown to that evaluator, in one long line.
    config.write_text(json.dumps({"evaluator": "sharpmoku"}))
    for command in (["register", "--name", "w4", "--from-preset", "arena-gomoku"],
                    ["update", "wide", "--preset", "arena-gomoku"]):
        assert fails(capsys, *command, "--config", str(config)).endswith(
            "arena: error: --from-preset: preset 'arena-gomoku' plays the 'arena-gomoku' "
            "evaluator, and the engine parameters name 'sharpmoku': leave the evaluator out "
            "of them, or give it without the preset\n")
    config.write_text(json.dumps({"evaluator": "arena-gomoku", "width": 12}))  # its own: fine
    assert run_json(capsys, "register", "--name", "w5", "--from-preset", "arena-gomoku",
                    "--config", str(config))["version"] == 1


def test_a_config_file_says_the_game_as_set_does(
        arena: Server, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """'evaluator' in --config names the bot's game, as --evaluator and --set evaluator=
    do: the file's was refused with '--game is required'. An evaluator that is no name
    says nothing of the game (the registry refuses it)."""
    config = tmp_path / "c7.json"
    config.write_text(json.dumps({"evaluator": "arena", "depth": 3}))
    bot = run_json(capsys, "register", "--name", "c7", "--config", str(config))
    assert bot["spec"]["game"] == "GAME_KIND_OTHELLO"  # type: ignore[index]
    config.write_text(json.dumps({"evaluator": "arena-gomoku"}))
    bot = run_json(capsys, "register", "--name", "c8", "--config", str(config))
    assert bot["spec"]["game"] == "GAME_KIND_GOMOKU"  # type: ignore[index]
    config.write_text(json.dumps({"evaluator": ["arena"]}))
    assert "--game is required" in fails(capsys, "register", "--name", "c9", "--config",
                                         str(config))


def test_invalid_registration_is_one_line_naming_the_field(
        arena: Server, capsys: pytest.CaptureFixture[str]) -> None:
    err = fails(capsys, "register", "--name", "bad", "--from-preset", "terra",
                "--depth-end", "11")
    assert "engine parameter depth.end" in err
    assert "a bot needs an engine: an evaluator" in fails(capsys, "register", "--name", "x")
    assert "cannot read avatar" in fails(capsys, "register", "--name", "x", "--from-preset",
                                         "lucy", "--avatar", "/nonexistent.png")
    assert "PATH=VALUE" in fails(capsys, "register", "--name", "x", "--from-preset", "lucy",
                                 "--set", "nothing")
    huge = "9" * 400  # past a double's range: once an OverflowError and a traceback
    assert "config cannot be stored: width: an integer past what a number can hold" in fails(
        capsys, "register", "--name", "x", "--from-preset", "arena-gomoku", "--set",
        f"width={huge}")
    # Past the digits Python reads at all: was its advice to call sys.set_int_max_str_digits.
    assert "--set width: a number of more than 4,300 digits" in fails(
        capsys, "register", "--name", "x", "--from-preset", "arena-gomoku", "--set",
        f"width={'9' * 5000}")


def test_a_bot_without_an_engine_or_with_two_says_so(
        arena: Server, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`bot register --name e5 --game gomoku` said '--evaluator: unknown evaluator None', an
    option not given; `--from-preset arena-fast --external ADDRESS` said 'an external bot
    takes no engine parameters', none given."""
    for given in (["--game", "gomoku"], ["--game", "othello", "--depth", "3"], []):
        said = fails(capsys, "register", "--name", "e5", *given)
        assert said == ("arena: error: a bot needs an engine: an evaluator (--evaluator NAME, "
                        "or 'evaluator' in --config or --set), a preset (--from-preset "
                        "PRESET), an external bot (--external HOST:PORT) or a protocol engine "
                        "(--engine NAME)\n"), said
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"evaluator": "arena"}))
    for option, what in (("--from-preset", "a preset"), ("--config", "an engine config")):
        value = "arena-fast" if option == "--from-preset" else str(config)
        said = fails(capsys, "register", "--name", "x", option, value, "--external",
                     "1.2.3.4:5")
        assert said == (f"arena: error: {option} and --external cannot be combined: {what} "
                        "sets up a built-in engine; an external bot runs its own\n"), said
    assert "an external bot takes no engine parameters" in fails(
        capsys, "register", "--name", "x", "--depth", "3", "--external", "1.2.3.4:5")
    assert run(capsys, "list")[1].strip() == "no bots"


def test_a_preset_s_name_is_refused_in_one_line(
        arena: Server, capsys: pytest.CaptureFixture[str]) -> None:
    """`arena play --bot arena-strong` plays the preset: a user's bot of that name (a
    lab-beginner bot, say) passed for it in ladders and standings."""
    for name, clash in (("arena-strong", "is a preset's"),
                        ("Arena-Strong", "reads as the preset 'arena-strong'")):
        err = fails(capsys, "register", "--name", name, "--from-preset", "lab-beginner")
        assert err == (f"arena: error: the bot name {name!r} {clash} (`arena bot presets`): "
                       "a preset's name is kept for the preset, so that no bot passes for "
                       "one; choose another\n")
    assert run_json(capsys, "list")["bots"] == []


def test_an_unknown_parameter_names_the_known_ones_and_the_closest(
        arena: Server, capsys: pytest.CaptureFixture[str]) -> None:
    """Each game names its search depth its own way: `--depth` on arena-gomoku, or
    `max_depth` on an Othello bot, gets the name the evaluator has."""
    gomoku_err = fails(capsys, "register", "--name", "g", "--from-preset", "arena-gomoku",
                       "--depth", "3")
    assert "engine parameter depth: unknown key for the arena-gomoku evaluator" in gomoku_err
    assert "did you mean 'max_depth'?" in gomoku_err and "width" in gomoku_err
    othello_err = fails(capsys, "register", "--name", "o", "--from-preset", "arena-strong",
                        "--set", "max_depth=9")
    assert "did you mean 'depth'?" in othello_err and "endgame_empties" in othello_err
    assert "did you mean" not in fails(capsys, "register", "--name", "o", "--from-preset",
                                       "lab-beginner", "--set", "zzz=1")


def test_a_parameter_of_another_evaluators_shape_says_whose_it_is(
        arena: Server, capsys: pytest.CaptureFixture[str]) -> None:
    """The parameter options are those of every preset: `--depth-end` (KReversi's depth
    per phase) on an arena preset, `--depth` on a KReversi one, a table where Gomoku takes
    a number. Each is refused in one line that says what the evaluator takes instead."""
    err = fails(capsys, "register", "--name", "x", "--from-preset", "arena-strong",
                "--depth-end", "30")
    assert "engine parameter depth: must be one integer, not a table" in err
    assert "depth.begin, depth.middle and depth.end, is the kreversi evaluator's" in err
    err = fails(capsys, "register", "--name", "x", "--from-preset", "ryo", "--depth", "5")
    assert "engine parameter depth: must be a table with keys begin, middle, end, got 5" in err
    assert "`depth = N`, is the arena and pattern evaluators'" in err
    err = fails(capsys, "register", "--name", "x", "--from-preset", "arena-gomoku",
                "--set", "max_depth.end=9")
    assert "engine parameter max_depth: must be one integer, not a table" in err
    code, _out, err = run(capsys, "show", "x")  # and nothing was registered
    assert code != 0 and "no bot named 'x'" in err


@pytest.mark.parametrize(("preset", "option", "message"), [
    ("arena-gomoku-board", "--screen", "engine parameter screen: must be an integer in "
                                       "0..20000, got 1e+20"),
    ("arena-strong", "--depth", "engine parameter depth: must be an integer in 1..60, "
                                "got 1e+20"),
])
def test_an_integer_beyond_a_doubles_precision_is_refused_with_its_range(
        arena: Server, capsys: pytest.CaptureFixture[str], preset: str, option: str,
        message: str) -> None:
    """A config travels as a protobuf Struct, whose numbers are doubles: an integer past
    2**53 comes back as a float. It is refused in one line that says what is allowed."""
    err = fails(capsys, "register", "--name", "x", "--from-preset", preset, option,
                "99999999999999999999")
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    code, _out, err = run(capsys, "show", "x")
    assert code != 0 and "no bot named 'x'" in err


def test_show_list_update_retire(arena: Server, capsys: pytest.CaptureFixture[str]) -> None:
    run_json(capsys, "register", "--name", "ryo-1", "--from-preset", "ryo")
    run_json(capsys, "register", "--name", "moku", "--from-preset", "sharpmoku-hard")
    updated = run_json(capsys, "update", "ryo-1", "--stable-disc-score", "20",
                       "--description", "calmer")
    assert updated["version"] == 2
    config = updated["spec"]["builtin"]["config"]  # type: ignore[index]
    assert config["stable_disc_score"] == 20 and config["depth"]["end"] == 6
    first = run_json(capsys, "show", "ryo-1@1")
    assert first["version"] == 1
    assert first["spec"]["builtin"]["config"]["stable_disc_score"] == 40  # type: ignore[index]
    code, out, _ = run(capsys, "show", "ryo-1")
    assert code == 0 and "version         2" in out and "[builtin.depth]" in out
    # Only a registry runs here: the bot is shown, and its ratings are said to be unknown.
    assert "rated           unknown: the ladder service did not answer" in out

    code, out, _ = run(capsys, "list")
    assert code == 0
    assert out.splitlines()[0].split() == ["NAME", "VER", "GAME", "OWNER", "ENGINE", "RETIRED"]
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["moku", "ryo-1"]
    listed = run_json(capsys, "list", "--game", "gomoku")
    assert [b["spec"]["name"] for b in listed["bots"]] == ["moku"]  # type: ignore[attr-defined]
    paged = run_json(capsys, "list", "--page-size", "1")
    assert len(paged["bots"]) == 1 and paged["next_page_token"]  # type: ignore[arg-type]

    retired = run_json(capsys, "retire", "moku")
    assert retired["retired"] is True
    assert [b["spec"]["name"] for b in run_json(capsys, "list")["bots"]] == [  # type: ignore[attr-defined]
        "ryo-1"]
    everything = run_json(capsys, "list", "--all")["bots"]
    assert [b["spec"]["name"] for b in everything] == ["moku", "ryo-1"]  # type: ignore[attr-defined]


def test_update_switches_to_a_preset_and_back_to_parameters(
        arena: Server, capsys: pytest.CaptureFixture[str]) -> None:
    run_json(capsys, "register", "--name", "shifty", "--from-preset", "lucy")
    madoka = run_json(capsys, "update", "shifty", "--preset", "madoka",  # analyze's name
                      "--time-limit-s", "2")
    config = madoka["spec"]["builtin"]["config"]  # type: ignore[index]
    assert madoka["spec"]["preset"] == "madoka"  # type: ignore[index]
    assert config["stable_disc_score"] == 60 and config["time_limit_s"] == 2


def test_export_then_import_reproduces_the_bot(
        arena: Server, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    run_json(capsys, "register", "--name", "terra-x", "--from-preset", "terra",
             "--depth-end", "9", "--description", "exported")
    path = tmp_path / "terra-x.toml"
    written = run_json(capsys, "export", "terra-x", "-o", str(path))
    assert written["version"] == 1 and path.exists()
    assert "Arena bot file: terra-x version 1 by alice" in path.read_text()
    assert "exists" in fails(capsys, "export", "terra-x", "-o", str(path))

    copy = run_json(capsys, "import", str(path), "--name", "terra-y")
    original = run_json(capsys, "show", "terra-x")
    assert copy["spec"]["builtin"] == original["spec"]["builtin"]  # type: ignore[index]
    assert copy["evaluator_hash"] == original["evaluator_hash"]
    assert copy["spec"]["description"] == "exported"  # type: ignore[index]

    assert "a bot named 'terra-x' already exists, owned by alice (--name NAME imports it " \
        "under another name; --update adds a version to a bot of yours)" in fails(
            capsys, "import", str(path))
    # Bob, importing alice's file, learns the name is hers (names are shared), not mine.
    taken = fails(capsys, "import", str(path), "--token", "bob-token")
    assert "already exists, owned by alice (--name NAME" in taken, taken
    assert "owned by alice" in fails(capsys, "register", "--name", "terra-x", "--from-preset",
                                     "terra", "--token", "bob-token")
    assert run_json(capsys, "import", str(path), "--name", "terra-b",
                    "--token", "bob-token")["owner"] == "bob"
    # The name given is the option's, not the request's field ('spec.name: must be ...').
    assert fails(capsys, "import", str(path), "--name", "t" * 65).endswith(
        "arena: error: --name: must be at most 64 characters, got 65\n")
    # The file holds the bot as it is: updating from it changes nothing, so no new version.
    again = run_json(capsys, "import", str(path), "--update")
    assert again["version"] == 1 and again["content_hash"] == original["content_hash"]


def test_export_to_stdout_is_a_bot_file(arena: Server,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    run_json(capsys, "register", "--name", "labby", "--from-preset", "lab-advanced")
    code, out, _ = run(capsys, "export", "labby")
    assert code == 0
    parsed = parse_bot_file(out)
    assert parsed.spec.name == "labby" and parsed.spec.preset == "lab-advanced"
    assert json.loads(run(capsys, "export", "labby", "--json")[1])["toml"] == out


def test_import_a_hand_written_file_with_overrides(
        arena: Server, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('name = "mine"\nfrom_preset = "madoka"\n\n[builtin.depth]\nend = 7\n')
    bot = run_json(capsys, "import", str(path))
    assert bot["spec"]["builtin"]["config"]["depth"]["end"] == 7  # type: ignore[index]
    path.write_text("name = [")
    assert f"bot file {path}: not a valid bot file" in fails(capsys, "import", str(path))
    # An empty file went to the registry as a bot of no name, game or engine.
    path.write_text("\n")
    assert fails(capsys, "import", str(path)) == (
        f"arena: error: bot file {path} is empty (`arena bot export NAME` writes one)\n")
    assert "no such bot file" in fails(capsys, "import", str(tmp_path / "missing.toml"))


def test_presets_listed(arena: Server, capsys: pytest.CaptureFixture[str]) -> None:
    presets = run_json(capsys, "presets", "--game", "othello")["presets"]
    names = {p["name"] for p in presets}  # type: ignore[attr-defined]
    assert names == set(othello.PRESETS)
    code, out, _ = run(capsys, "presets")
    assert code == 0 and "sharpmoku-hard" in out and "lucy" in out


def test_sharpmoku_tie_rule_is_listed_and_settable(
        arena: Server, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    presets = run_json(capsys, "presets", "--game", "gomoku")["presets"]
    described = {p["name"]: p["description"] for p in presets}  # type: ignore[attr-defined]
    assert set(described) == set(gomoku.PRESETS)
    for name in ("sharpmoku-normal", "sharpmoku-hard"):
        assert "board order" in described[name] and "draw" in described[name]
        assert "centre_ties = true" in described[f"{name}-centre"]
    centred = run_json(capsys, "register", "--name", "moku-c", "--from-preset",
                       "sharpmoku-hard", "--centre-ties")
    assert centred["spec"]["builtin"]["config"] == {  # type: ignore[index]
        "evaluator": "sharpmoku", "depth": 4, "centre_ties": True}
    faithful = run_json(capsys, "update", "moku-c", "--no-centre-ties")
    assert faithful["spec"]["builtin"]["config"]["centre_ties"] is False  # type: ignore[index]
    path = tmp_path / "moku.toml"
    path.write_text('name = "moku-f"\nfrom_preset = "sharpmoku-normal-centre"\n')
    imported = run_json(capsys, "import", str(path))
    assert imported["spec"]["builtin"]["config"]["centre_ties"] is True  # type: ignore[index]
    path.write_text('name = "moku-y"\nfrom_preset = "sharpmoku-normal"\n\n[builtin]\n'
                    'centre_ties = "yes"\n')
    assert "centre_ties" in fails(capsys, "import", str(path))
    assert "centre_ties" in fails(capsys, "register", "--name", "ag", "--from-preset",
                                  "arena-gomoku", "--centre-ties")


def test_auth_errors_are_one_line(arena: Server, capsys: pytest.CaptureFixture[str]) -> None:
    run_json(capsys, "register", "--name", "alices", "--from-preset", "lucy")
    err = fails(capsys, "retire", "alices", "--token", "bob-token")
    assert "bob may not change" in err
    err = fails(capsys, "list", "--token", "nobody")
    assert "unknown token" in err


def test_usage_says_what_your_bots_take_of_your_bot_bytes(
        arena: Server, capsys: pytest.CaptureFixture[str], redis_server: EmbeddedRedis) -> None:
    """`arena bot usage`: what your bot versions take of the bot_bytes quota the arena's
    quotas give you, as `arena match usage` says it of your matches; another user's for
    admins only. Before, a user learned it only when a registration was refused."""
    quotas = json.dumps({"user": {"bot_bytes": 1_000_000}})
    capped = serve("registry", Config(redis_url=redis_server.url, quotas=quotas))
    at = ("--registry", capped.target)
    try:
        code, out, err = run(capsys, "usage", *at)
        assert code == 0, err
        assert out.splitlines() == ["alice's bots",
                                    "  stored bytes   0 of 1,000,000 (bot_bytes)"]
        run_json(capsys, "register", "--name", "weighed", "--from-preset", "terra", *at)
        with client("alice-token", registry=capped.target) as sdk:
            size = len(sdk.get_bot("weighed").SerializeToString())
        code, out, err = run(capsys, "usage", *at)
        assert code == 0, err
        assert out.splitlines() == ["alice's bots",
                                    f"  stored bytes   {size:,} of 1,000,000 (bot_bytes)"]
        assert run_json(capsys, "usage", *at) == {  # int64s are strings in JSON
            "user": "alice", "bot_bytes": str(size), "bot_bytes_limit": "1000000"}

        err = fails(capsys, "usage", "--user", "alice", "--token", "bob-token", *at)
        assert err.startswith("arena: error: ") and "bob may not read the usage of 'alice'" \
            in err, err
        code, out, err = run(capsys, "usage", "--user", "alice", "--token", ADMIN_TOKEN, *at)
        assert code == 0 and out.splitlines()[1] == \
            f"  stored bytes   {size:,} of 1,000,000 (bot_bytes)", err
        err = fails(capsys, "usage", "--user", "al\x1b[2Jice" + "e" * 100_000,
                    "--token", ADMIN_TOKEN, *at)
        assert "user: a user's name: at most 200 printable characters" in err, err
        assert len(err) < 1_500 and "\x1b" not in err
    finally:
        capped.stop()


def test_unreachable_registry_is_one_line(arena: Server,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    err = fails(capsys, "list", "--registry", "127.0.0.1:1")
    assert "unreachable" in err


def test_addresses_and_token_come_from_stack_json(
        arena: Server, capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "stack-home"
    home.mkdir()
    (home / "admin.token").write_text("admin-token\n")
    (home / "stack.json").write_text(json.dumps({
        "roles": {"registry": arena.target}, "token_file": str(home / "admin.token")}))
    monkeypatch.setenv("ARENA_HOME", str(home))
    monkeypatch.delenv("ARENA_REGISTRY")
    monkeypatch.delenv("ARENA_TOKEN")
    bot = run_json(capsys, "register", "--name", "by-admin", "--from-preset", "lucy")
    assert bot["owner"] == "root"


CAPPED_CATALOG = """
[engines.capped-brain]
games = ["gomoku"]
protocol = "gomocup"
command = ["pbrain-arena", "--preset", "arena-gomoku"]
options = { thread_num = 1, hash_size = 65536 }

[engines.capped-nboard]
games = ["othello"]
protocol = "nboard"
command = ["arena-nboard", "--preset", "arena-fast"]
options = { depth = 6 }
"""


@pytest.fixture
def capped_worker(arena: Server, redis_server: EmbeddedRedis, cache_server: EmbeddedRedis,
                  tmp_path: Path) -> Iterator[Server]:
    """A real match worker whose operator's catalog caps its engines' threads, hash and
    depth, advertised to the registry as its heartbeat does."""
    catalog = tmp_path / "engines.toml"
    catalog.write_text(CAPPED_CATALOG)
    worker = serve("worker", Config(redis_url=redis_server.url, cache_url=cache_server.url,
                                    registry=arena.target, service_token=ADMIN_TOKEN,
                                    engines_catalog=str(catalog)))
    try:
        with client(registry=arena.target) as sdk:
            while {e.name for e in sdk.list_engines()} != {"capped-brain", "capped-nboard"}:
                time.sleep(0.1)  # its first heartbeat is on its way
        yield worker
    finally:
        worker.stop()


def test_a_bot_cannot_change_the_options_the_operator_s_catalog_sets(
        capped_worker: Server, capsys: pytest.CaptureFixture[str]) -> None:
    """A user's bot of an engine of the catalog could set any option over the operator's:
    '--option thread_num=64 --option hash_size=16000000' was registered and played so,
    past the threads and memory the operator gave the engine (and '--option depth=60'
    past its depth). An option the catalog sets is refused at registration unless it is
    the catalog's value; what the catalog leaves out is the bot's to set."""
    said = fails(capsys, "register", "--name", "greedy", "--engine", "capped-brain",
                 "--option", "thread_num=64", "--option", "hash_size=16000000")
    assert said == (
        "arena: error: --option hash_size: the operator's catalog sets hash_size = 65536 for "
        "engine 'capped-brain', which a bot cannot change (leave it out); --option "
        "thread_num: the operator's catalog sets thread_num = 1 for engine 'capped-brain', "
        "which a bot cannot change (leave it out)\n"), said
    assert "sets depth = 6 for engine 'capped-nboard'" in fails(
        capsys, "register", "--name", "deep", "--engine", "capped-nboard", "--option",
        "depth=60")
    assert fails(capsys, "show", "greedy").startswith("arena: error: no bot")
    modest = run_json(capsys, "register", "--name", "modest", "--engine", "capped-brain",
                      "--option", "thread_num=1", "--option", "caution_factor=2")
    assert modest["spec"]["protocol"]["options"] == {  # type: ignore[index]
        "thread_num": 1, "caution_factor": 2}
