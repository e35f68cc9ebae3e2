"""`arena ladder ratings`: the arena's rating list through the `arena` command, against
real services playing a real ladder."""

from __future__ import annotations

import json

import pytest

from tests.clients.conftest import InProcessStack, ok, one_line_error


def test_the_rating_list_of_a_played_ladder(cli_stack: InProcessStack) -> None:
    for name, preset in (("ann", "lab-beginner"), ("ben", "lab-beginner"),
                         ("cat", "lab-intermediate")):
        ok(cli_stack.run("bot", "register", "--name", name, "--from-preset", preset))
    assert "rated           not yet (its ladders' games rate it)" in \
        ok(cli_stack.run("bot", "show", "ann")).splitlines()
    empty = ok(cli_stack.run("ladder", "ratings"))
    assert empty.splitlines()[0] == "Othello standard 8x8: 0 games from 0 ladders"
    assert "no rated games yet" in empty
    created = json.loads(ok(cli_stack.run("ladder", "create", "ann", "ben", "cat",
                                          "--move-time-ms", "500", "--json")))
    ok(cli_stack.run("ladder", "watch", created["id"]))

    table = ok(cli_stack.run("ladder", "ratings", "--game", "othello"))
    assert table.splitlines()[0] == "Othello standard 8x8: 6 games from 1 ladder"
    rows = [line.split() for line in table.splitlines() if "@1 " in line]
    assert sorted(row[1] for row in rows) == ["ann@1", "ben@1", "cat@1"]
    assert [row[0] for row in rows] == ["1", "2", "3"]
    # each row's ladders and distinct opponents, as docs/using.md says (--json alone had them)
    assert table.splitlines()[2].split()[-2:] == ["ladders", "opponents"], table
    assert all(row[-2:] == ["1", "2"] for row in rows), table
    assert "pool" not in table  # one pool: nothing to tell apart
    assert "played at: 500 ms a move (6 games, 1 ladder)" in table.splitlines()
    at_clock = ok(cli_stack.run("ladder", "ratings", "--move-time-ms", "500"))
    assert at_clock.splitlines()[0] == \
        "Othello standard 8x8 at 500 ms a move: 6 games from 1 ladder"
    assert [line for line in at_clock.splitlines() if "@1 " in line] == \
        [line for line in table.splitlines() if "@1 " in line]
    other_clock = ok(cli_stack.run("ladder", "ratings", "--game-time-ms", "60000",
                                   "--increment-ms", "100"))
    assert other_clock.splitlines()[0] == ("Othello standard 8x8 at 1,000 ms a move, 60,000 ms "
                                           "a game + 100 ms a move: 0 games from 0 ladders")
    assert "no rated games yet" in other_clock and "played at: 500 ms a move" in other_clock
    one_line_error(cli_stack.run("ladder", "ratings", "--increment-ms", "5"),
                   "--increment-ms is added to the game budget: give --game-time-ms too")

    listed = json.loads(ok(cli_stack.run("ladder", "ratings", "--json")))
    standings = json.loads(ok(cli_stack.run("ladder", "standings", created["id"], "--json")))
    by_bot = {row["bot"]["name"]: row for row in standings["rows"]}
    for row in listed["rows"]:  # one ladder: its standings are the list
        line = row["standing"]
        ladders = by_bot[line["bot"]["name"]]
        assert line.keys() == ladders.keys()
        for key, value in ladders.items():  # the list solves its fit another way
            assert line[key] == (pytest.approx(value) if isinstance(value, float) else value)
        assert line["games"] == 4 and row["ladders"] == 1 and row["opponents"] == 2

    ann = next(row for row in listed["rows"] if row["standing"]["bot"]["name"] == "ann")
    line = ann["standing"]
    shown = [text for text in ok(cli_stack.run("bot", "show", "ann")).splitlines()
             if text.startswith("rated")]
    assert shown == [f"rated           standard 8x8: ann@1 #{line['rank']} of 3, Elo "
                     f"{line.get('elo', 0.0):+.0f} [{line['elo_low']:+.0f}, "
                     f"{line['elo_high']:+.0f}], 4 games"]
    # A second clock: ann's places at every clock, then at each clock.
    faster = json.loads(ok(cli_stack.run("ladder", "create", "ann", "cat", "--move-time-ms",
                                         "300", "--games-per-pairing", "2", "--json")))
    ok(cli_stack.run("ladder", "watch", faster["id"]))
    expected = []
    for clock in ([], ["--move-time-ms", "500"], ["--move-time-ms", "300"]):
        listed = json.loads(ok(cli_stack.run("ladder", "ratings", *clock, "--json")))
        line = next(row["standing"] for row in listed["rows"]
                    if row["standing"]["bot"]["name"] == "ann")
        at = f" at {clock[1]} ms a move" if clock else ""
        expected.append(f"rated           standard 8x8{at}: ann@1 #{line['rank']} of "
                        f"{len(listed['rows'])}, Elo {line.get('elo', 0.0):+.0f} "
                        f"[{line['elo_low']:+.0f}, {line['elo_high']:+.0f}], "
                        f"{line['games']} games")
    shown = [text for text in ok(cli_stack.run("bot", "show", "ann")).splitlines()
             if text.startswith("rated")]
    assert shown == expected
    assert "no rated games yet" in ok(cli_stack.run("ladder", "ratings", "--game", "gomoku"))
    one_line_error(cli_stack.run("ladder", "ratings", "--size", "10"), "not size 10")
    one_line_error(cli_stack.run("ladder", "ratings", "--variant", "x" * 5000), "variant")
