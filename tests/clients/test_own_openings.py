"""A ladder's own openings (`--openings-file`, LadderConfig.openings), through the `arena`
command and the gRPC API against real services: each opening is played twice, colours
swapped, and a bad opening is refused before anything is scheduled, naming where it is."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

import arena.openings
from arena.errors import InvalidArgumentError
from arena.games import game
from arena.games.othello import OthelloBoard
from arena.openings import MAX_CUSTOM_MOVES, MAX_CUSTOM_OPENINGS, load_suite
from arena.v1 import common_pb2, ladder_pb2
from tests.clients.conftest import InProcessStack, ok, one_line_error


def _squares(text: str) -> tuple[int, ...]:
    board = OthelloBoard()
    moves = []
    for name in text.split():
        moves.append(board.parse_move(name))
        board.push(moves[-1])
    return tuple(moves)


def _register(stack: InProcessStack, preset: str, *names: str) -> None:
    for name in names:
        ok(stack.run("bot", "register", "--name", name, "--from-preset", preset))


def test_a_ladder_plays_its_own_openings_each_with_both_colours(cli_stack: InProcessStack,
                                                                tmp_path: Path) -> None:
    _register(cli_stack, "lab-beginner", "ann", "ben")
    path = tmp_path / "openings.txt"
    path.write_text("# three openings, written three ways\n"
                    "f5 d6 c3   # spaces\n\n"
                    "F5D6C5\n"
                    "c4,c3\n")
    created = json.loads(ok(cli_stack.run(
        "ladder", "create", "ann", "ben", "--openings-file", str(path), "--all-openings",
        "--move-time-ms", "500", "--json")))
    config = created["config"]
    assert config["opening_suite"] == "custom"
    expected = [_squares("f5 d6 c3"), _squares("f5 d6 c5"), _squares("c4 c3")]
    assert [tuple(o["moves"]) for o in config["openings"]] == expected
    assert created["games_total"] == 6  # each opening twice for the one pair
    watched = ok(cli_stack.run("ladder", "watch", created["id"]))
    # the standings say what they were played under
    assert "played: othello standard 8x8, its own 3 openings, 500 ms a move" in watched
    played: dict[tuple[int, ...], list[str]] = {}
    for summary in json.loads(ok(cli_stack.run("match", "list", "--ladder", created["id"],
                                               "--json"))):
        match = json.loads(ok(cli_stack.run("match", "show", summary["id"], "--json")))
        assert match["status"] == "MATCH_STATUS_FINISHED"
        played.setdefault(tuple(match["config"]["opening"]), []).append(
            match["config"]["black"]["name"])
    assert {opening: sorted(blacks) for opening, blacks in played.items()} == {
        opening: ["ann", "ben"] for opening in expected}
    # A version test takes them too: its two games both start from the one opening.
    one = tmp_path / "one.txt"
    one.write_text("d3 c5 f6\n")
    run = cli_stack.run("test", "ann", "ben", "--max-games", "2", "--openings-file",
                        str(one), "--json")
    tested = json.loads(run.out)["ladder"]
    assert tested["config"]["opening_suite"] == "custom"
    games = json.loads(ok(cli_stack.run("match", "list", "--ladder", tested["id"], "--json")))
    assert Counter(tuple(json.loads(ok(cli_stack.run("match", "show", g["id"], "--json")))
                         ["config"]["opening"]) for g in games) == {_squares("d3 c5 f6"): 2}


def test_a_file_of_arena_engine_openings_is_a_ladders_openings(cli_stack: InProcessStack,
                                                                tmp_path: Path) -> None:
    """What `arena engine openings gomoku` writes (comments, then 'h8i9g7 | score' lines)
    is an openings file as it is: here the shipped gomoku-wide15 suite, made that way."""
    _register(cli_stack, "sharpmoku-normal", "kai", "lux")
    path = Path(arena.openings.__file__).parent / "gomoku-wide15.txt"
    made = json.loads(ok(cli_stack.run("ladder", "create", "kai", "lux", "--openings-file",
                                       str(path), "--games-per-pairing", "2", "--json")))
    try:
        suite = load_suite("gomoku-wide15")
        assert made["config"]["opening_suite"] == "custom"
        assert made["config"]["game"]["board_size"] == 15
        assert [tuple(o["moves"]) for o in made["config"]["openings"]] == [
            o.moves for o in suite.openings]
    finally:
        ok(cli_stack.run("ladder", "cancel", made["id"]))


def _random_othello_game(moves: int, seed: int) -> str:
    board, names, draw = OthelloBoard(), [], random.Random(seed)
    while len(names) < moves:
        move = draw.choice(board.legal_moves())
        names.append(board.move_to_str(move))
        board.push(move)
    return " ".join(names)


@pytest.mark.parametrize(("text", "said"), [
    ("f5 d6\nf5 f5\n", "line 2, move 2: illegal move"),
    ("f5 zz99\n", "line 1, move 2: invalid Othello move"),
    ("f5 d6 c3;\n", "line 1, move 3"),
    ("# only a comment\n\n   \n", "no opening in it"),
    ("f5\n" * (MAX_CUSTOM_OPENINGS + 1), f"more than {MAX_CUSTOM_OPENINGS} openings"),
])
def test_a_bad_openings_file_is_refused_in_one_line_naming_its_line(
        cli_stack: InProcessStack, tmp_path: Path, text: str, said: str) -> None:
    _register(cli_stack, "lab-beginner", "cy", "di")
    path = tmp_path / "openings.txt"
    path.write_text(text)
    one_line_error(cli_stack.run("ladder", "create", "cy", "di", "--openings-file", str(path)),
                   str(path), said)
    assert json.loads(ok(cli_stack.run("ladder", "list", "--json"))) == []  # nothing made


def test_openings_are_refused_where_they_cannot_be_played(cli_stack: InProcessStack,
                                                          tmp_path: Path) -> None:
    _register(cli_stack, "lab-beginner", "ed", "flo")
    _register(cli_stack, "sharpmoku-normal", "gil", "hal")
    long = tmp_path / "long.txt"
    long.write_text(_random_othello_game(MAX_CUSTOM_MOVES + 1, seed=3) + "\n")
    one_line_error(cli_stack.run("ladder", "create", "ed", "flo", "--openings-file", str(long)),
                   "line 1: more than 40 moves")
    # --openings-file with --openings: argparse's group refuses them (tests/clients/
    # test_errors.py, test_options_that_contradict_each_other_are_refused_naming_both)
    five = tmp_path / "five.txt"  # Black makes five in a row: no game is left to play
    five.write_text("h8 a1 i8 a2 j8 a3 k8 a4 l8\n")
    one_line_error(cli_stack.run("ladder", "create", "gil", "hal", "--openings-file", str(five)),
                   "line 1: the opening leaves no game to play")
    one_line_error(cli_stack.run("ladder", "create", "gil", "hal", "--openings-file",
                                 str(tmp_path / "absent.txt")), "absent.txt")
    one_line_error(cli_stack.run("ladder", "create", "ed", "flo", "--openings", "custom"),
                   "--openings-file")
    one_line_error(cli_stack.run("ladder", "create", "ed", "flo", "--openings-file", "-",
                                 stdin="f5 d6\nc4 c4\n"),
                   "the openings on standard input line 2, move 2")
    assert json.loads(ok(cli_stack.run("ladder", "list", "--json"))) == []


def test_the_api_checks_every_opening_and_names_it(cli_stack: InProcessStack) -> None:
    """What the CLI checks before sending, the ladder service checks again for any caller."""
    _register(cli_stack, "lab-beginner", "ida", "jo")
    client = cli_stack.client()
    othello = common_pb2.GameSpec(kind=game("othello").kind)
    bots = [common_pb2.BotRef(name="ida"), common_pb2.BotRef(name="jo")]

    def refused(**fields: object) -> dict[str, str]:
        config = ladder_pb2.LadderConfig(game=othello, bots=bots, games_per_pairing=2,
                                         **fields)  # type: ignore[arg-type]
        with pytest.raises(InvalidArgumentError) as caught:
            client.create_ladder(config)
        return {v.field: v.description for v in caught.value.violations}

    opening = ladder_pb2.LadderOpening
    f5 = _squares("f5")
    said = refused(openings=[opening(moves=f5), opening(moves=[*f5, -1]),
                             opening(moves=[2**31 - 1]), opening(moves=[*f5, *f5])])
    assert set(said) == {"config.openings[1]", "config.openings[2]", "config.openings[3]"}
    assert said["config.openings[1]"].startswith("move 2: ")
    assert "illegal" in said["config.openings[3]"]
    said = refused(openings=[opening(moves=f5)] * (MAX_CUSTOM_OPENINGS + 1))
    assert said == {"config.openings": f"give 1..{MAX_CUSTOM_OPENINGS} openings, got 257"}
    said = refused(openings=[opening(moves=list(range(MAX_CUSTOM_MOVES + 1)))])
    assert said == {"config.openings[0]": f"{MAX_CUSTOM_MOVES + 1} moves; at most 40"}
    assert "not both" in refused(openings=[opening(moves=f5)],
                                 opening_suite="othello-balanced")["config.opening_suite"]
    assert "give them" in refused(opening_suite="custom")["config.opening_suite"]
    # An opening of the wrong board: a Gomoku point past Othello's 64 squares.
    assert "config.openings[0]" in refused(openings=[opening(moves=[112])])
    made = client.create_ladder(ladder_pb2.LadderConfig(
        game=othello, bots=bots, games_per_pairing=2, openings=[opening(moves=f5)],
        opening_suite="custom"))
    assert made.config.opening_suite == "custom" and made.games_total == 2
    client.cancel_ladder(made.id)
