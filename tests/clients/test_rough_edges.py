"""The smaller rough edges a new user hit (issue 15, item 10), through the `arena` command
against real services."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pytest
from arena.clients.demo import check_demo

from arena.errors import InvalidArgumentError
from arena.games import new_position
from arena.v1 import bot_service_pb2
from tests.clients.conftest import InProcessStack, RunArena, ok, one_line_error
from tests.support.bots import bot_server, external_bot, first_legal


def _register(stack: InProcessStack, *names: str, preset: str = "lab-beginner") -> None:
    for name in names:
        ok(stack.run("bot", "register", "--name", name, "--from-preset", preset))


def _finished_match(stack: InProcessStack, *options: str) -> str:
    created = json.loads(ok(stack.run("match", "create", "--black", "ann", "--white", "ben",
                                      "--move-time-ms", "500", "--json", *options)))
    ok(stack.run("match", "watch", created["id"], "--no-board"))
    return str(created["id"])


def test_watch_shows_nodes_and_the_pv_by_name(cli_stack: InProcessStack) -> None:
    _register(cli_stack, "ann", "ben", preset="lab-intermediate")
    match_id = _finished_match(cli_stack)
    lines = ok(cli_stack.run("match", "watch", match_id, "--no-board")).splitlines()
    moves = [line for line in lines if " black " in line or " white " in line]
    searched = [line for line in moves if "depth" in line]
    assert searched and all(", nodes " in line and ", pv " in line for line in searched)
    first = next(line for line in moves if line.lstrip().startswith("1."))
    played = first.split()[2]
    assert f"pv {played}" in first  # the PV starts with the move, named as moves are


def test_the_pv_after_a_pass_is_named_too(cli_stack: InProcessStack) -> None:
    """After white's forced pass black's third move showed 'pv 1' (square numbers): the
    watch read the PV in the position before the pass, where it is not legal."""
    _register(cli_stack, "ann", "ben")
    # black's one move, h1, leaves white none; black then has several
    start = "X-OOOOO-X-OOOOOOXXXOOOXOXXOXOOOOXXXOXOOOOXOXOXOOXXXXXXXOXXXXXXXX X"
    match_id = _finished_match(cli_stack, "--start", start)
    lines = ok(cli_stack.run("match", "watch", match_id, "--no-board")).splitlines()
    assert lines[2] == "  2. white has no move and passes", lines
    third = lines[3].split()  # '3. black b1 (4 ms, ..., pv b1)'
    assert third[:2] == ["3.", "black"] and f", pv {third[2]}" in lines[3], lines[3]


def test_tree_errors_count_moves_from_one(cli_stack: InProcessStack) -> None:
    _register(cli_stack, "ann", "ben")
    with_trees = _finished_match(cli_stack, "--trees")
    moves = len(json.loads(ok(cli_stack.run("match", "show", with_trees, "--json")))["moves"])
    one_line_error(cli_stack.run("match", "tree", with_trees, "--ply", str(moves + 1)),
                   f"has {moves} moves: --ply takes 1..{moves}")
    assert "move 1" in ok(cli_stack.run("match", "tree", with_trees, "--ply", "1"))
    without = _finished_match(cli_stack)
    one_line_error(cli_stack.run("match", "tree", without, "--ply", "1"),
                   "stored no search trees", "--trees")
    one_line_error(cli_stack.run("match", "tree", "no-such-match", "--ply", "1"), "no match")
    # International Othello's centre squares are placed without a search: no tree
    centre = _finished_match(cli_stack, "--trees", "--variant", "international")
    one_line_error(cli_stack.run("match", "tree", centre, "--ply", "1"),
                   "has no search tree for move 1", "a move played without a search")
    assert "move 5" in ok(cli_stack.run("match", "tree", centre, "--ply", "5"))


def test_tree_counts_the_opening_moves_as_replay_does(cli_stack: InProcessStack) -> None:
    """After a 3-move opening, `match tree --ply 4` showed the tree of replay's move 7 (the
    bots' fourth): the API counts the bots' moves, --ply counts as `match replay` does."""
    _register(cli_stack, "ann", "ben")
    played = _finished_match(cli_stack, "--trees", "--opening", "f5 d6 c3")
    after = new_position("othello")
    for move in ("f5", "d6", "c3"):
        after.push(after.parse_move(move))
    tree = json.loads(ok(cli_stack.run("match", "tree", played, "--ply", "4", "--json")))
    assert tree["root"]["text"] == after.to_text()
    total = 3 + len(json.loads(ok(cli_stack.run("match", "show", played, "--json")))["moves"])
    one_line_error(cli_stack.run("match", "tree", played, "--ply", "2"),
                   "move 2 of match", "is its opening's", f"the bots' moves are 4..{total}")
    one_line_error(cli_stack.run("match", "tree", played, "--ply", str(total + 1)),
                   f"has {total} moves: --ply takes 1..{total}")


def test_standings_of_bots_without_games(cli_stack: InProcessStack) -> None:
    def slow(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
        time.sleep(2.0)
        return first_legal(request)

    with bot_server(slow) as address, cli_stack.client() as sdk:
        for name in ("slow-a", "slow-b", "slow-c"):
            external_bot(sdk, name, address)
        created = json.loads(ok(cli_stack.run("ladder", "create", "slow-a", "slow-b", "slow-c",
                                              "--move-time-ms", "5000", "--json")))
        ok(cli_stack.run("ladder", "cancel", created["id"]))
    table = ok(cli_stack.run("ladder", "standings", created["id"]))
    rows = [line for line in table.splitlines() if "slow-" in line]
    assert len(rows) == 3 and all("no games yet" in row for row in rows), table
    assert all(row.split()[-1] == "-" for row in rows), table  # no score: it read 0.0%
    assert "inf" not in table


def test_an_update_that_changes_nothing_keeps_the_version(cli_stack: InProcessStack) -> None:
    _register(cli_stack, "steady")
    same = ok(cli_stack.run("bot", "update", "steady", "--look-ahead", "1"))
    assert "version         2" in same
    again = ok(cli_stack.run("bot", "update", "steady", "--look-ahead", "1"))
    assert again.strip() == "nothing changed: steady stays at version 2"
    assert "version         2" in ok(cli_stack.run("bot", "show", "steady"))


def test_an_update_to_a_preset_of_the_other_game_names_the_preset(
        cli_stack: InProcessStack) -> None:
    """`arena bot update b --from-preset sharpmoku-normal` of an Othello bot said
    '--game: preset ... is for gomoku': an option the user had not typed."""
    _register(cli_stack, "steady")
    said = one_line_error(cli_stack.run("bot", "update", "steady", "--from-preset",
                                        "sharpmoku-normal"),
                          "--from-preset: preset 'sharpmoku-normal' is for gomoku, not othello",
                          "a bot keeps its game")
    assert "--game" not in said, said
    one_line_error(cli_stack.run("bot", "update", "steady", "--from-preset", "nonesuch"),
                   "--from-preset: unknown preset 'nonesuch'")
    assert "version         2" in ok(cli_stack.run("bot", "update", "steady",
                                                   "--from-preset", "terra"))


def test_an_unknown_evaluator_is_named(run_arena: RunArena) -> None:
    for command in (("bot", "register", "--name", "x", "--evaluator", "nope"),
                    ("bot", "update", "x", "--evaluator", "nope")):
        result = run_arena(*command)
        assert result.returncode != 0 and "--game is required" not in result.stderr
        assert "unknown evaluator 'nope'; known:" in result.stderr
        assert "kreversi" in result.stderr and "sharpmoku" in result.stderr


def test_gomoku_boards_mark_no_legal_points(run_arena: RunArena, tmp_path: Path) -> None:
    result = run_arena("play", "--game", "gomoku", "--mode", "human-human", "--save", "g.json",
                       stdin="h8\ni9\n")
    assert result.returncode == 0 and "*" not in result.stdout, result.stdout
    replayed = run_arena("match", "replay", "g.json", "--all")
    assert replayed.returncode == 0 and "*" not in replayed.stdout
    othello = run_arena("play", "--mode", "human-human", "--save", "o.json", stdin="f5\n")
    assert othello.stdout.count("*") >= 4  # Othello still marks its few legal moves


def test_a_bot_name_must_be_one_a_reference_can_name(cli_stack: InProcessStack) -> None:
    """``x@1`` was registered, then every reference to it (``--black x@1``, the web's
    ``{"black": "x@1"}``) read as version 1 of a bot ``x``: it could never play. Names that
    differ only by a trailing space could pass for each other."""
    one_line_error(cli_stack.run("bot", "register", "--name", "x@1", "--from-preset",
                                 "lab-beginner"),
                   "--name: must not contain '@' (NAME@VERSION names a bot's version)")
    for spaced in ("ann ", " ann"):
        one_line_error(cli_stack.run("bot", "register", "--name", spaced, "--from-preset",
                                     "lab-beginner"),
                       "--name: must not start or end with a space")
    one_line_error(cli_stack.run("bot", "show", "x@y"), "bad bot reference 'x@y'")
    _register(cli_stack, "a b/c?d")  # any other printable character is kept
    assert json.loads(ok(cli_stack.run("bot", "show", "a b/c?d", "--json")))["version"] == 1


def test_openings_names_a_suite_everywhere_and_a_number_says_what_it_meant(
        run_arena: RunArena) -> None:
    """`arena demo --openings 1` took a count (and `--opening-suite` the suite) while
    `ladder create` and `test` take the suite as `--openings`; `ladder create --openings 2`
    then said only that no suite is named '2'. Now every command names the suite
    `--openings` and the count `--games-per-pairing`, and a number points to it."""
    refused = ("argument --openings: names an opening suite (othello-balanced[-1..6], "
               "international, gomoku-balanced15, gomoku-wide15 or none), got '2'")
    for command in (("demo",), ("ladder", "create", "a", "b"), ("test", "a@2", "a@1")):
        result = run_arena(*command, "--openings", "2")
        assert result.returncode == 2 and "Traceback" not in result.stderr
        counted = "; 2 openings per pair of bots, each with both colours, is " \
                  "--games-per-pairing 4"
        # `arena test` plays until the test decides: it has no count to point to.
        assert result.stderr.splitlines()[-1].endswith(
            refused + ("" if command[0] == "test" else counted)), result.stderr
    assert "--games-per-pairing" in run_arena("demo", "--help").stdout


def test_the_demo_refuses_what_its_ladder_cannot_play_before_starting_a_stack(
        run_arena: RunArena, tmp_path: Path) -> None:
    """`arena demo --workers 0` started the stack and ended in a traceback (no worker to
    ask); a misspelt preset, one bot or a Gomoku suite started the whole stack and
    registered the presets before the services refused the ladder. Each is refused at
    once, every problem in one line, and no stack is started (its home stays unmade)."""
    home = tmp_path / "demo-home"
    for args, needles in (
            (("--workers", "0"), ("--workers: the demo plays its ladder on workers",)),
            (("--bots", "nosuch"), ("--bots: a ladder needs 2..32 bots, got 1",
                                    "--bots: unknown preset 'nosuch'")),
            (("--bots", "terra,sharpmoku-hard,terra"),
             ("--bots: named twice: terra", "'sharpmoku-hard' is for gomoku, not othello")),
            (("--openings", "gomoku-wide15"), ("--openings: opening suite 'gomoku-wide15' is "
                                               "for gomoku, not othello",))):
        result = run_arena("demo", "--demo-home", str(home), *args, timeout=30)
        assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and all(n in lines[0] for n in needles), (args, result.stderr)
        assert "Starting" not in result.stdout and not home.exists(), (args, result.stdout)


def test_the_demo_refuses_a_ladder_as_the_ladder_service_does(
        cli_stack: InProcessStack) -> None:
    """The demo checks its bots with the ladder service's own functions
    (services/common/ladder_limits.py), which the web gateway uses too: its count and its
    repeats were code of its own, and the service said 'need 2..32 bots' where the demo
    and the web said 'a ladder needs 2..32 bots'."""
    _register(cli_stack, "ann")
    demo = argparse.Namespace(workers=2, openings="othello-balanced")
    for bots in (["ann"], ["ann"] * 33):
        said = f"a ladder needs 2..32 bots, got {len(bots)}"
        one_line_error(cli_stack.run("ladder", "create", *bots), f"the bots: {said}")
        with pytest.raises(InvalidArgumentError, match=f"--bots: {said}"):
            check_demo(demo, [name.replace("ann", "lucy") for name in bots])
    one_line_error(cli_stack.run("ladder", "create", "ann", "ann@1", "ann"),
                   "bot 2: ann@1 is already bot 1; bot 3: ann@1 is already bot 1")


def test_a_bot_that_is_not_there_is_named_before_its_game_is_guessed(
        cli_stack: InProcessStack) -> None:
    """`arena analyze --bot` reads the moves in the bot's game; for a bot nobody registered
    it guessed Othello and said `illegal move 'h8' for black` about a Gomoku move list."""
    for argv in (("analyze", "--bot", "no-such-bot", "--moves", "h8 h9"),
                 ("match", "create", "--black", "no-such-bot", "--white", "lucy",
                  "--start", "h8")):
        line = one_line_error(cli_stack.run(*argv), "no-such-bot")
        assert "illegal" not in line, line


def test_match_list_of_a_bot_no_one_registered_says_so(cli_stack: InProcessStack) -> None:
    """A mistyped name was answered 'no matches', as if the bot had played none."""
    _register(cli_stack, "ann")
    assert ok(cli_stack.run("match", "list", "--bot", "ann")) == "no matches\n"
    one_line_error(cli_stack.run("match", "list", "--bot", "anne"), "no bot named 'anne'")
    one_line_error(cli_stack.run("match", "list", "--bot", "ann@2", "--json"),
                   "bot 'ann' has no version 2 (latest is 1)")


def test_match_list_of_a_ladder_there_is_not_says_so(cli_stack: InProcessStack) -> None:
    """A mistyped ladder id was answered 'no matches'; and, with the services' addresses
    not on the command line (the environment, or stack.json), the filter's --ladder ID was
    also read as the global --ladder HOST:PORT, the ladder service's address."""
    _register(cli_stack, "ann", "bob")
    made = ok(cli_stack.run("ladder", "create", "ann", "bob", "--games-per-pairing", "1",
                            "--move-time-ms", "50"))
    ladder_id = made.split()[1].rstrip(":")
    listed = ok(cli_stack.run("match", "list", "--ladder", ladder_id, "--limit", "0",
                              addresses_from_env=True))
    assert listed.startswith("id ") and listed.count("\n") == 3  # the head, both games
    one_line_error(cli_stack.run("match", "list", "--ladder", "L-typo", addresses_from_env=True),
                   "no ladder 'L-typo'")


REFUSED_AS_TYPED = [  # a value only the service refuses, and the option it came from
    (("analyze", "--preset", "lab-beginner", "--tree", "100000000"), "--tree: must be in 0.."),
    (("analyze", "--preset", "lab-beginner", "--depth", "1000"), "--depth: must be in 0..64"),
    (("match", "create", "--black", "ann", "--white", "ben", "--trees", "--tree-budget",
      "100000000"), "--tree-budget: must be in 0.."),
    (("match", "create", "--black", "ann", "--white", "ben", "--increment-ms", "250"),
     "--increment-ms: is added to the game budget: give --game-time-ms too"),
    (("match", "create", "--black", "ann", "--white", "nobody"), "--white: no bot named"),
    (("ladder", "create", "ann", "ann"), "bot 2: ann@1 is already bot 1"),
    (("ladder", "create", "ann", "ben", "--adjudicate-empties", "30"),
     "--adjudicate-empties: must be in 0..18, got 30"),
    (("test", "ann", "ben", "--max-games", "100000000"), "--max-games: must be in 2.."),
    (("ladder", "ratings", "--move-time-ms", "100000000"), "--move-time-ms must be in 1.."),
    (("bot", "register", "--name", "cy", "--from-preset", "lucy", "--set", "depth.begin=99"),
     "engine parameter depth.begin: must be in 1..10, got 99"),
    (("bot", "list", "--page-token", "zz"), "--page-token: is not a token this server issued"),
]


def test_a_refusal_names_the_option_typed_not_the_request_field(
        cli_stack: InProcessStack) -> None:
    """`arena analyze --tree 100000000` said 'invalid request: tree_node_budget: must be
    in 0..200000', a field of the API the user never typed; so did every command whose
    value only the service checks (config.tree_node_budget, config.bots[1], clock,
    spec.builtin.config.depth.begin, ...). The refusal names the option."""
    _register(cli_stack, "ann", "ben")
    for command, said in REFUSED_AS_TYPED:
        line = one_line_error(cli_stack.run(*command), said)
        assert "invalid request" not in line and "_" not in line.split(":", 2)[2], line
    # A value the user typed is quoted as typed, even one that reads as a field's name.
    one_line_error(cli_stack.run("match", "create", "--black", "ann", "--white", "game_time_ms"),
                   "--white: no bot named 'game_time_ms'")


def test_an_engine_key_is_not_taken_for_the_option_of_a_field_of_its_name(
        cli_stack: InProcessStack, tmp_path: Path) -> None:
    """`arena analyze --config c.json` with an unknown key listed the arena evaluator's keys
    as 'depth, endgame_empties, --time-ms, weights': the engine's key time_ms was taken for
    the request's field limits.time_ms (--time-ms), which the message does not name."""
    (tmp_path / "c.json").write_text('{"evaluator": "arena", "foo": 1}')
    said = one_line_error(cli_stack.run("analyze", "--config", "c.json"))
    assert said.endswith("foo: unknown key for the arena evaluator (known: depth, "
                         "endgame_empties, time_ms, weights)"), said
    # Where the option's own field is at fault, it is named as the option still.
    one_line_error(cli_stack.run("analyze", "--preset", "lab-beginner", "--time-ms",
                                 "100000000"), "--time-ms: must be in")


def test_the_demo_plays_the_variant_its_openings_imply() -> None:
    """`arena demo --openings international` asked for the standard game with the
    international suite, which the ladder service refuses: the suite says the variant."""
    for suite, variant in (("international", "international"),
                           ("othello-balanced", "standard"), ("none", "standard")):
        asked = argparse.Namespace(workers=2, openings=suite)
        assert check_demo(asked, ["lucy", "terra"]) == variant, suite
