"""`arena test NEW OLD`: a real SPRT version test of two built-in bots of clearly different
strength, played by a real referee and worker, ends in a verdict within a bounded number
of games (issue 15, item 8)."""

from __future__ import annotations

import json

from tests.clients.conftest import InProcessStack, ok, one_line_error

MAX_GAMES = 40


def test_a_version_test_accepts_the_stronger_bot_and_rejects_the_weaker(
    cli_stack: InProcessStack
) -> None:
    run = cli_stack.run
    ok(run("bot", "register", "--name", "weak", "--from-preset", "lab-beginner"))
    ok(run("bot", "register", "--name", "strong", "--from-preset", "arena-fast", "--depth", "3",
           "--endgame-empties", "8"))
    bounds = ("--elo0", "0", "--elo1", "150", "--max-games", str(MAX_GAMES),
              "--move-time-ms", "1000")
    result = run("test", "strong", "weak", *bounds)
    assert result.code == 0, result.err + result.out
    lines = result.out.splitlines()
    assert lines[0].startswith("SPRT ") and "H1 +150 Elo" in lines[0]
    live = [line for line in lines if line.startswith("pairs ")]
    assert len(live) >= 3 and all(" LLR " in line and "pentanomial" in line for line in live)
    verdict = next(line for line in lines if line.startswith("verdict: "))
    assert "H1 accepted: strong@1 is at least 150 Elo stronger than weak@1" in verdict
    ladder_id = lines[0].split()[1].rstrip(":")
    standings = json.loads(ok(run("ladder", "standings", ladder_id, "--json")))
    played = standings["ladder"]["games_done"] - standings["ladder"].get("games_void", 0)
    assert played <= MAX_GAMES and standings["ladder"]["sprt"]["verdict"] == \
        "SPRT_VERDICT_ACCEPT_H1"
    assert "verdict: H1 accepted" in ok(run("ladder", "standings", ladder_id))
    assert "(SPRT: accept h1)" in ok(run("ladder", "list"))

    reverse = run("test", "weak", "strong", *bounds, "--json")
    assert reverse.code == 0, reverse.err
    final = json.loads(reverse.out)["ladder"]
    assert final["sprt"]["verdict"] == "SPRT_VERDICT_ACCEPT_H0"
    assert final["games_done"] <= MAX_GAMES


def test_a_test_that_cannot_run_says_why(cli_stack: InProcessStack) -> None:
    ok(cli_stack.run("bot", "register", "--name", "weak", "--from-preset", "lab-beginner"))
    one_line_error(cli_stack.run("test", "weak", "weak", "--max-games", "1"), "--max-games")
    ok(cli_stack.run("bot", "register", "--name", "weaker", "--from-preset", "lab-beginner"))
    for option in ("--alpha", "--beta"):  # 0 would be the API's default, 0.05: not asked for
        for rate in ("0", "0.5", "-1", "nan"):
            one_line_error(cli_stack.run("test", "weak", "weaker", option, rate),
                           option, "strictly between 0 and 0.5")
    # --elo1 0 with --elo0 at its 0 was the API's unset pair: the test ran, H1 +5 Elo.
    for elo0, elo1 in (("0", "0"), ("0", "-3"), ("5", "5")):
        one_line_error(cli_stack.run("test", "weak", "weaker", "--elo0", elo0, "--elo1", elo1),
                       f"--elo1 must be greater than --elo0 ({elo0}), got {elo1}")
    assert json.loads(ok(cli_stack.run("ladder", "list", "--json"))) == []
    one_line_error(cli_stack.run("test", "weak", "weak"), "bot 2: weak@1 is already bot 1")
    one_line_error(cli_stack.run("test", "weak", "nobody"), "nobody")
    one_line_error(cli_stack.run("test", "weak", "weak@1", "--elo0", "5", "--elo1", "0"),
                   "elo1")


def test_a_test_that_ends_undecided_is_listed_without_a_verdict(
        cli_stack: InProcessStack) -> None:
    """A cancelled test was listed as '(SPRT: continue)', as if it still ran."""
    ok(cli_stack.run("bot", "register", "--name", "weak", "--from-preset", "lab-beginner"))
    ok(cli_stack.run("bot", "register", "--name", "weaker", "--from-preset", "lab-beginner"))
    started = json.loads(ok(cli_stack.run("test", "weak", "weaker", "--no-watch", "--json")))
    assert "(SPRT: continue)" in ok(cli_stack.run("ladder", "list"))
    ok(cli_stack.run("ladder", "cancel", started["id"]))
    listed = ok(cli_stack.run("ladder", "list"))
    assert listed.startswith(f"{started['id']}  cancelled ") and listed.endswith(
        " weak@1, weaker@1 (SPRT: no verdict)\n"), listed
