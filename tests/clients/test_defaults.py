"""Command-line defaults follow the game (issue 15, item 5): what a user leaves out comes
from the game's description (the ladder service fills it in), what they give that
contradicts it is refused with a message that says what to type."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from google.protobuf import json_format

from arena.clock import game_time_left_ms
from arena.games import new_position
from arena.v1 import common_pb2, ladder_pb2, match_pb2
from tests.clients.conftest import InProcessStack, ok, one_line_error

INTERNATIONAL_AFTER_CENTRE = new_position("othello", "international")
for _square in ("d4", "e4", "e5", "d5"):
    INTERNATIONAL_AFTER_CENTRE.push(INTERNATIONAL_AFTER_CENTRE.parse_move(_square))


def _register(stack: InProcessStack, preset: str, *names: str) -> None:
    for name in names:
        ok(stack.run("bot", "register", "--name", name, "--from-preset", preset))


def _ladder(stack: InProcessStack, *args: str) -> dict[str, Any]:
    """Create a ladder and cancel it at once (unless it has ended already): its
    configuration is what is checked."""
    created: dict[str, Any] = json.loads(ok(stack.run("ladder", "create", *args, "--json")))
    cancelled = stack.run("ladder", "cancel", created["id"])
    assert cancelled.code == 0 or "is not running" in cancelled.err, cancelled.err
    return created


def test_a_gomoku_ladder_needs_no_suite(cli_stack: InProcessStack) -> None:
    _register(cli_stack, "sharpmoku-normal", "moku-a", "moku-b")
    config = _ladder(cli_stack, "moku-a", "moku-b", "--game", "gomoku")["config"]
    assert config["opening_suite"] == "gomoku-balanced15"
    assert config["game"] == {"kind": "GAME_KIND_GOMOKU", "variant": "freestyle",
                              "board_size": 15}
    wide = _ladder(cli_stack, "moku-a", "moku-b", "--openings", "gomoku-wide15",
                   "--all-openings")
    assert wide["games_total"] == 2 * 200 and wide["config"]["game"]["board_size"] == 15
    small = _ladder(cli_stack, "moku-a", "moku-b", "--game", "gomoku", "--size", "9")["config"]
    assert small["opening_suite"] == "none" and small["game"]["board_size"] == 9
    one_line_error(cli_stack.run("ladder", "create", "moku-a", "moku-b", "--game", "gomoku",
                                 "--openings", "othello-balanced"),
                   "is for othello, not gomoku", "leave the suite out")


def test_an_international_suite_implies_its_variant(cli_stack: InProcessStack) -> None:
    _register(cli_stack, "lab-beginner", "lab-a", "lab-b")
    config = _ladder(cli_stack, "lab-a", "lab-b", "--openings", "international")["config"]
    assert config["game"]["variant"] == "international"
    assert _ladder(cli_stack, "lab-a", "lab-b", "--variant", "international"
                   )["config"]["opening_suite"] == "international"
    assert _ladder(cli_stack, "lab-a", "lab-b")["config"]["opening_suite"] == "othello-balanced"
    one_line_error(cli_stack.run("ladder", "create", "lab-a", "lab-b", "--openings",
                                 "international", "--variant", "standard"),
                   "plays the 'international' variant", "leave the variant out")


def test_games_per_pairing_zero_is_refused_and_all_openings_says_it(
    cli_stack: InProcessStack
) -> None:
    _register(cli_stack, "lab-beginner", "lab-a", "lab-b")
    one_line_error(cli_stack.run("ladder", "create", "lab-a", "lab-b", "--games-per-pairing",
                                 "0"), "must be 1 or more", "--all-openings")
    one_line_error(cli_stack.run("ladder", "create", "lab-a", "lab-b", "--games-per-pairing",
                                 "-4"), "--all-openings")
    every = _ladder(cli_stack, "lab-a", "lab-b", "--all-openings", "--openings",
                    "othello-balanced-3")
    assert every["games_total"] == 2 * 14  # the suite's 14 openings, each twice
    one_line_error(cli_stack.run("ladder", "create", "lab-a", "lab-b", "--all-openings",
                                 "--games-per-pairing", "4"), "leave out --games-per-pairing")
    assert _ladder(cli_stack, "lab-a", "lab-b")["games_total"] == 2
    assert ladder_pb2.LadderConfig.DESCRIPTOR.fields_by_name["games_per_pairing"]


def test_ladder_create_says_why_it_plays_other_than_the_count_asked(
    cli_stack: InProcessStack
) -> None:
    _register(cli_stack, "lab-beginner", "lab-c", "lab-d")
    said = ok(cli_stack.run("ladder", "create", "lab-c", "lab-d", "--games-per-pairing", "3"))
    assert ": 2 bots, 4 games (3 per pairing rounded up to 4: each opening is played " \
           "twice, colours swapped)" in said
    said = ok(cli_stack.run("ladder", "create", "lab-c", "lab-d", "--all-openings",
                            "--openings", "othello-balanced-3"))
    assert ": 2 bots, 28 games (28 per pairing: each opening of the suite twice" in said
    said = ok(cli_stack.run("ladder", "create", "lab-c", "lab-d", "--games-per-pairing", "6"))
    assert said.rstrip().endswith(": 2 bots, 6 games")
    ladder_id = said.split()[1].rstrip(":")
    ok(cli_stack.run("ladder", "create", "lab-c", "lab-d", "--name", "spring cup"))
    listed = ok(cli_stack.run("ladder", "list")).splitlines()
    unnamed = next(line for line in listed if line.startswith(ladder_id))
    assert unnamed.split("/6", 1)[1].strip() == "lab-c@1, lab-d@1"  # no name: the bots alone
    assert any(line.endswith(" spring cup: lab-c@1, lab-d@1") for line in listed)


def test_a_cancelled_ladder_says_how_many_games_are_void(cli_stack: InProcessStack) -> None:
    """Cancelling voids the scheduled games not over (over, without a result) and starts
    no other; the command says so rather than calling them played."""
    _register(cli_stack, "arena-strong", "slow-a", "slow-b")
    created = json.loads(ok(cli_stack.run("ladder", "create", "slow-a", "slow-b",
                                          "--games-per-pairing", "40", "--move-time-ms",
                                          "2000", "--json")))
    assert ok(cli_stack.run("ladder", "usage")).splitlines()[1].split() == [
        "running", "1", "(no", "limit)"]  # an admin's: no running_ladders limit
    said = ok(cli_stack.run("ladder", "cancel", created["id"])).strip()
    assert json.loads(ok(cli_stack.run("ladder", "usage", "--json")))["running_ladders"] == 0
    info = json.loads(ok(cli_stack.run("ladder", "standings", created["id"], "--json"))
                      )["ladder"]
    done, void = info["games_done"], info.get("games_void", 0)
    assert void >= 1 and done - void <= 1  # at 2 s a move, no game (or one) ended first
    expected = f"40 games over ({void} void: no result)"
    expected = f"{done}/{expected}" + (f"; {40 - done} never started" if done < 40 else "")
    assert said == f"ladder {created['id']}: cancelled, {expected}"
    standings = ok(cli_stack.run("ladder", "standings", created["id"]))
    assert f"cancelled, {expected}" in standings
    assert "played: othello standard 8x8, openings othello-balanced, 2,000 ms a move" in standings


def test_analyze_takes_the_variant_from_the_position(cli_stack: InProcessStack) -> None:
    text = INTERNATIONAL_AFTER_CENTRE.to_text()
    out = ok(cli_stack.run("analyze", "--preset", "lab-beginner", "--position", text))
    assert "best move" in out
    one_line_error(cli_stack.run("analyze", "--preset", "lab-beginner", "--position", text,
                                 "--variant", "standard"),
                   "contradicts the start position", "leave --variant out")
    one_line_error(cli_stack.run("analyze", "--preset", "lab-beginner", "--ply", "3"),
                   "--ply goes with --match")


def test_analyze_a_position_of_an_imported_match(cli_stack: InProcessStack) -> None:
    match_id = ok(cli_stack.run("match", "import", "-", stdin="f5d6c3d3c4\n")).split()[2]
    out = ok(cli_stack.run("analyze", "--preset", "lab-beginner", "--match", match_id,
                           "--ply", "2", "--json"))
    after_two = new_position("othello")
    for square in ("f5", "d6"):
        after_two.push(after_two.parse_move(square))
    assert json.loads(out)["move"]["square"] in after_two.legal_moves()
    ok(cli_stack.run("analyze", "--preset", "lab-beginner", "--match", match_id))
    one_line_error(cli_stack.run("analyze", "--preset", "lab-beginner", "--match", match_id,
                                 "--ply", "9"), "has 5 moves: --ply takes 0..5")


def test_the_game_follows_the_bots_when_left_out(cli_stack: InProcessStack) -> None:
    """Two Gomoku bots play Gomoku without ``--game``: match, ladder, SPRT test and
    analysis take the game of the bots (or preset) they name. A bot of the other game is
    refused with a message naming both games."""
    _register(cli_stack, "sharpmoku-normal", "five-a", "five-b")
    _register(cli_stack, "lab-beginner", "disc-a")
    match = json.loads(ok(cli_stack.run("match", "create", "--black", "five-a", "--white",
                                        "five-b", "--opening", "h8", "--json")))
    assert match["config"]["game"] == {"kind": "GAME_KIND_GOMOKU", "variant": "freestyle",
                                       "board_size": 15}
    cancelled = cli_stack.run("match", "cancel", match["id"])
    assert cancelled.code == 0 or "already finished" in cancelled.err, cancelled.err
    assert _ladder(cli_stack, "five-a", "five-b")["config"]["game"]["kind"] == "GAME_KIND_GOMOKU"
    test = json.loads(ok(cli_stack.run("test", "five-a", "five-b", "--no-watch", "--json")))
    assert test["config"]["game"]["kind"] == "GAME_KIND_GOMOKU"
    cancelled = cli_stack.run("ladder", "cancel", test["id"])
    assert cancelled.code == 0 or "is not running" in cancelled.err, cancelled.err
    config = Path("gomoku-config.json")
    config.write_text(json.dumps({"evaluator": "arena-gomoku", "max_depth": 2}))
    for who in (["--bot", "five-a"], ["--preset", "sharpmoku-normal"],
                ["--config", str(config)]):
        reply = json.loads(ok(cli_stack.run("analyze", *who, "--moves", "h8", "--json")))
        assert 0 <= reply["move"]["square"] < 15 * 15

    one_line_error(cli_stack.run("match", "create", "--black", "five-a", "--white", "disc-a"),
                   "--white: bot 'disc-a' plays othello, not gomoku")
    one_line_error(cli_stack.run("match", "create", "--black", "five-a", "--white", "five-b",
                                 "--game", "othello"),
                   "--black: bot 'five-a' plays gomoku, not othello",
                   "--white: bot 'five-b' plays gomoku, not othello")
    one_line_error(cli_stack.run("ladder", "create", "disc-a", "five-a"),
                   "bot 2: bot 'five-a' plays gomoku, not othello")
    one_line_error(cli_stack.run("analyze", "--bot", "five-a", "--game", "othello"),
                   "bot 'five-a' plays gomoku, not othello")
    one_line_error(cli_stack.run("analyze", "--preset", "arena-gomoku", "--game", "othello"),
                   "preset 'arena-gomoku' plays gomoku, not othello; the othello presets: ")


def test_a_clock_with_an_increment_reaches_matches_ladders_and_tests(
        cli_stack: InProcessStack) -> None:
    """``--game-time-ms`` and ``--increment-ms`` (Fischer) on every command that makes
    games; an increment to no game budget is refused in one line."""
    _register(cli_stack, "lab-beginner", "inc-a", "inc-b")
    clock = ["--move-time-ms", "800", "--game-time-ms", "20000", "--increment-ms", "250"]
    expected = {"move_time_ms": 800, "game_time_ms": "20000", "increment_ms": 250}
    match = json.loads(ok(cli_stack.run("match", "create", "--black", "inc-a", "--white",
                                        "inc-b", *clock, "--json")))
    assert match["config"]["time_control"] == expected
    ok(cli_stack.run("match", "watch", match["id"], "--no-board"))
    played = json_format.Parse(ok(cli_stack.run("match", "show", match["id"], "--json")),
                               match_pb2.Match())
    left = [game_time_left_ms(played.config.time_control, played.moves, color)
            for color in (common_pb2.COLOR_BLACK, common_pb2.COLOR_WHITE)]
    assert min(left) > 0 and max(left) < 20_000 + 250 * len(played.moves)
    shown = ok(cli_stack.run("match", "show", match["id"]))
    assert (f"clock    800 ms a move, 20,000 ms a game + 250 ms a move; left: black "
            f"{left[0]:,} ms, white {left[1]:,} ms") in shown.splitlines()
    assert _ladder(cli_stack, "inc-a", "inc-b", *clock)["config"]["time_control"] == expected
    test = json.loads(ok(cli_stack.run("test", "inc-a", "inc-b", *clock, "--no-watch",
                                       "--json")))
    assert test["config"]["time_control"] == expected
    cancelled = cli_stack.run("ladder", "cancel", test["id"])
    assert cancelled.code == 0 or "is not running" in cancelled.err, cancelled.err
    for command in (["match", "create", "--black", "inc-a", "--white", "inc-b"],
                    ["ladder", "create", "inc-a", "inc-b"], ["test", "inc-a", "inc-b"]):
        one_line_error(cli_stack.run(*command, "--increment-ms", "250"),
                       "--increment-ms: is added to the game budget: give --game-time-ms too")
