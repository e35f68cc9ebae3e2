"""`arena test NEW OLD`: a fishtest-style version test, as an SPRT ladder.

The ladder service plays colour-swapped game pairs of the two bots over balanced
openings until a sequential probability ratio test accepts H0 ("NEW is at most elo0
stronger") or H1 ("at least elo1 stronger"), or the maximum number of games is reached;
this command shows the test's LLR as it moves, then the verdict and the standings.
"""

from __future__ import annotations

import argparse

from arena.clients.common import (
    add_json_flag,
    client_from_args,
    game_request,
    int32,
    name_fields,
    parse_bot_ref,
    print_json,
    settle_game,
    time_control,
)
from arena.clients.ladder_commands import (
    LADDER_FIELDS,
    add_ladder_game_options,
    followed_ladder,
    own_openings,
    print_standings,
    watch_ladder,
)

from arena.errors import InvalidArgumentError
from arena.v1 import ladder_pb2

EXIT_NO_VERDICT = 3  # scripts tell "no verdict" (max games, cancelled) from a verdict


def add_test_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    test = sub.add_parser(
        "test", help="is NEW stronger than OLD? a fishtest-style SPRT version test",
        description="Play colour-swapped game pairs of two registered bots over balanced "
                    "openings until a sequential probability ratio test decides between H0 "
                    "(NEW is at most --elo0 stronger) and H1 (at least --elo1 stronger) with "
                    "error rates --alpha and --beta, or --max-games are played. Shows the "
                    "log-likelihood ratio live, then the verdict; exits 0 on a verdict and "
                    f"{EXIT_NO_VERDICT} without one.")
    test.add_argument("new", help="the bot under test: NAME[@VERSION]")
    test.add_argument("old", help="the bot it is compared with: NAME[@VERSION]")
    test.add_argument("--elo0", type=float, default=0.0, help="H0's Elo difference (default 0)")
    test.add_argument("--elo1", type=float, default=5.0, help="H1's Elo difference (default 5)")
    test.add_argument("--alpha", type=float, default=0.05,
                      help="chance of accepting H1 when H0 holds (default 0.05)")
    test.add_argument("--beta", type=float, default=0.05,
                      help="chance of accepting H0 when H1 holds (default 0.05)")
    test.add_argument("--max-games", type=int32, default=1000,
                      help="stop without a verdict after this many games (default 1000)")
    add_ladder_game_options(test, counted=False)  # it plays until the test decides
    test.add_argument("--name", default="", help="a label for the test")
    test.add_argument("--no-watch", action="store_true",
                      help="print the test's ladder id and return (follow it with "
                           "`arena ladder watch`)")
    add_json_flag(test)
    test.set_defaults(func=cmd_test)
    name_fields(test, {**LADDER_FIELDS, "config.sprt": "", **{
        f"config.sprt.{name}": f"--{name.replace('_', '-')}"
        for name in ("elo0", "elo1", "alpha", "beta", "max_games")}})


def test_config(args: argparse.Namespace) -> ladder_pb2.LadderConfig:
    if args.max_games < 2:
        raise InvalidArgumentError(f"--max-games must be 2 or more (one game pair), got "
                                   f"{args.max_games}")
    for option in ("alpha", "beta"):  # the API reads 0 as the default: refuse it here
        rate = getattr(args, option)
        if not 0 < rate < 0.5:
            raise InvalidArgumentError(f"--{option} must be strictly between 0 and 0.5, "
                                       f"got {rate:g}")
    if args.elo1 <= args.elo0:  # both 0 would be the API's default, H1 +5: not asked for
        raise InvalidArgumentError(f"--elo1 must be greater than --elo0 ({args.elo0:g}), "
                                   f"got {args.elo1:g}")
    return ladder_pb2.LadderConfig(
        name=args.name, game=game_request(args),
        bots=[parse_bot_ref(args.new), parse_bot_ref(args.old)],
        format=ladder_pb2.LADDER_FORMAT_SPRT, opening_suite=args.openings,
        openings=own_openings(args), time_control=time_control(args), seed=args.seed,
        adjudicate_empties=args.adjudicate_empties,
        sprt=ladder_pb2.SprtConfig(elo0=args.elo0, elo1=args.elo1, alpha=args.alpha,
                                   beta=args.beta, max_games=args.max_games))


def cmd_test(args: argparse.Namespace) -> int:
    with client_from_args(args) as client:
        settle_game(client, args, [args.new, args.old])
        ladder = client.create_ladder(test_config(args))
        if args.no_watch:
            if args.json:
                print_json(ladder)
            else:
                print(f"test {ladder.id} started: follow it with `arena ladder watch "
                      f"{ladder.id}`")
            return 0
        if not args.json:
            test = ladder.config.sprt
            print(f"SPRT {ladder.id}: {args.new} vs {args.old}, H0 {test.elo0:+g} Elo, "
                  f"H1 {test.elo1:+g} Elo, alpha {test.alpha:g}, beta {test.beta:g}, at most "
                  f"{test.max_games} games, {ladder.config.opening_suite} openings",
                  flush=True)
            watch_ladder(client, ladder.id)
        else:
            for _progress in followed_ladder(client, ladder.id):
                pass
        standings = client.get_standings(ladder.id)
    if args.json:
        print_json(standings)
    else:
        print_standings(standings)  # with the verdict
    decided = standings.ladder.sprt.verdict in (ladder_pb2.SPRT_VERDICT_ACCEPT_H0,
                                                ladder_pb2.SPRT_VERDICT_ACCEPT_H1)
    return 0 if decided else EXIT_NO_VERDICT
