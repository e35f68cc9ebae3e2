"""`arena play` in its four modes, fed through stdin, and its replay in the navigator."""

from __future__ import annotations

import json
import os
import random
import re
import time
from pathlib import Path

import redis
from arena.clients.sdk import ArenaClient

from arena.bots import apply_preset
from arena.bots.botfile import spec_to_toml
from arena.formats import parse_replay
from arena.games import PASS, Color, OthelloBoard, Outcome, Termination, new_position
from arena.v1 import bots_pb2, common_pb2, engine_pb2
from tests.clients.conftest import RunArena, assert_one_line_error
from tests.support.bots import advertise
from tests.support.servers import ADMIN_TOKEN, Server


def _random_game_with_a_pass() -> tuple[list[int], OthelloBoard]:
    """A complete random Othello game in which some side has to pass."""
    for seed in range(1000):
        rng = random.Random(seed)
        board = OthelloBoard()
        while not board.is_game_over():
            board.push(rng.choice(board.legal_moves()))
        moves = board.move_stack
        if PASS in moves:
            return moves, board
    raise AssertionError("no random game with a pass in 1000 seeds")


def test_human_vs_human_full_game_with_a_pass(run_arena: RunArena, tmp_path: Path) -> None:
    moves, final = _random_game_with_a_pass()
    names = [final.move_to_str(m) for m in moves if m != PASS]  # passes are automatic
    result = run_arena("play", "--mode", "human-human", "--save", "game.json",
                       stdin="\n".join(names) + "\n")
    assert result.returncode == 0, result.stderr
    assert "has no legal move and passes" in result.stdout
    outcome = final.outcome()
    assert outcome is not None
    assert "game over:" in result.stdout
    assert f"{outcome.black_score}-{outcome.white_score}" in result.stdout
    replay = parse_replay((tmp_path / "game.json").read_text())
    assert [m.move for m in replay.moves] == moves
    assert replay.outcome == outcome

    shown = run_arena("match", "replay", "game.json", "--ply", str(len(moves)))
    assert shown.returncode == 0, shown.stderr
    assert f"ply {len(moves)}/{len(moves)}" in shown.stdout
    board_rows = final.to_text().split()[0]
    for row in range(8):  # the rendered final board has the final position's rows
        cells = board_rows[row * 8:(row + 1) * 8].replace("-", ".")
        rendered = [line for line in shown.stdout.splitlines() if line.startswith(f"{row + 1}")]
        assert rendered and rendered[0][2:-2].replace("(", " ").replace(")", " ")[::2] == cells

    as_json = json.loads(run_arena("match", "replay", "game.json", "--json").stdout)
    assert as_json["plies"][-1]["position"] == final.to_text()
    assert as_json["result"] == outcome.result
    everything = run_arena("match", "replay", "game.json", "--all")
    assert everything.stdout.count("ply ") == len(moves) + 1


def test_navigator_keys(run_arena: RunArena, tmp_path: Path) -> None:
    result = run_arena("play", "--mode", "human-human", "--save", "g.json",
                       stdin="f5\nf6\ne6\nf4\nquit\n")
    assert result.returncode == 0, result.stderr
    assert "game stopped after 4 moves" in result.stdout
    steps = run_arena("match", "replay", "g.json",
                      stdin="n\nn\np\nl\nf\n3\n99\nzz\n-1\nq\n")
    assert steps.returncode == 0, steps.stderr
    seen = [line.split(":")[0] for line in steps.stdout.splitlines()
            if re.match(r"ply \d+/", line)]
    assert seen == ["ply 0/4", "ply 1/4", "ply 2/4", "ply 1/4", "ply 4/4", "ply 0/4",
                    "ply 3/4"]
    # A ply past the end is refused as `--ply` refuses it (it went to the end).
    assert "ply 99 is outside this game (0..4)" in steps.stdout
    # A key it does not know says what to type, and stays where it is.
    for key in ("'zz'", "'-1'"):
        assert (f"{key} is not a key here: keys: n next, p previous, f first, l last, "
                "<number> go to ply, q quit (plies 0 to 4)") in steps.stdout
    assert "white f6" in steps.stdout and "black f5" in steps.stdout
    # end of input also leaves cleanly
    assert run_arena("match", "replay", "g.json").returncode == 0
    assert_one_line_error(run_arena("match", "replay", "g.json", "--ply", "9"), "outside")


def test_navigator_keys_no_one_means(run_arena: RunArena) -> None:
    """'²' passed isdigit and failed int() ('arena: error: invalid literal ...'), a number
    of 5,000 digits failed int() too, and a line without end was read without end."""
    assert run_arena("play", "--mode", "human-human", "--save", "g.json",
                     stdin="f5\nf6\nquit\n").returncode == 0
    steps = run_arena("match", "replay", "g.json", stdin="\u00b2\n" + "9" * 999 + "\nq\n")
    assert steps.returncode == 0 and steps.stderr == "", steps.stderr
    seen = [line.split(":")[0] for line in steps.stdout.splitlines()
            if re.match(r"ply \d+/", line)]
    assert seen == ["ply 0/2"]
    assert "'²' is not a key here: keys: n next" in steps.stdout
    assert "is outside this game (0..2)" in steps.stdout
    pasted = run_arena("match", "replay", "g.json", stdin="n\n" + "9" * 100_000 + "\nn\nq\n")
    assert pasted.returncode == 0 and pasted.stderr == "", pasted.stderr
    assert "a line of 100,000 characters ignored (at most 1,000 here)" in pasted.stdout
    seen = [line.split(":")[0] for line in pasted.stdout.splitlines() if line.startswith("ply ")]
    assert seen == ["ply 0/2", "ply 1/2", "ply 2/2"]  # the line skipped, not taken as a step
    endless = run_arena("match", "replay", "g.json", stdin="n\n" + "9" * 1_100_000)
    assert endless.returncode == 0 and endless.stderr == "", endless.stderr
    assert endless.stdout.rstrip().endswith(
        "a line of more than 1,048,576 characters: stopping")


def test_illegal_input_is_refused_and_end_of_input_stops(run_arena: RunArena,
                                                         tmp_path: Path) -> None:
    result = run_arena("play", "--mode", "human-human", "--save", "g.json",
                       stdin="a1\nxyz\nhelp\nd3\n")
    assert result.returncode == 0, result.stderr
    assert "'a1' is not a legal move here: legal moves: d3 c4 f5 e6" in result.stdout
    assert "legal moves: d3 c4 f5 e6" in result.stdout
    assert "game stopped after 1 move" in result.stdout
    assert [m.move for m in parse_replay((tmp_path / "g.json").read_text()).moves] == [19]


def test_a_line_no_one_types_is_skipped_and_one_without_end_stops_the_game(
        run_arena: RunArena, tmp_path: Path) -> None:
    """A line of a megabyte used to be read whole and echoed back (and /dev/zero, a line
    without end, read forever); then it stopped the game. Now a pasted line is skipped
    with a word, and a line still without an end after a megabyte stops the game."""
    result = run_arena("play", "--mode", "human-human", "--save", "g.json",
                       stdin="d3\n" + "q" * 1_000_000 + "\nc5\n")
    assert result.returncode == 0, result.stderr
    assert "a line of 1,000,000 characters ignored (at most 1,000 here)" in result.stdout
    assert "game stopped after 2 moves" in result.stdout
    assert len(result.stdout) < 20_000, len(result.stdout)
    assert [m.move for m in parse_replay((tmp_path / "g.json").read_text()).moves] == [19, 34]
    endless = run_arena("play", "--mode", "human-human", "--save", "e.json",
                        stdin="d3\n" + "q" * 1_100_000)
    assert endless.returncode == 0, endless.stderr
    assert "a line of more than 1,048,576 characters: stopping" in endless.stdout
    assert "game stopped after 1 move" in endless.stdout


def test_human_vs_bot_and_bot_vs_human(run_arena: RunArena, tmp_path: Path) -> None:
    human_first = run_arena("play", "--mode", "human-bot", "--bot", "lab-beginner",
                            "--save", "hb.json", stdin="f5\nquit\n")
    assert human_first.returncode == 0, human_first.stderr
    assert "white (lab-beginner) plays" in human_first.stdout
    moves = parse_replay((tmp_path / "hb.json").read_text()).moves
    assert moves[0].move == 37 and len(moves) == 2 and moves[1].depth is not None

    bot_first = run_arena("play", "--mode", "bot-human", "--bot", "lab-beginner",
                          "--save", "bh.json", stdin="")
    assert bot_first.returncode == 0, bot_first.stderr
    assert "black (lab-beginner) plays" in bot_first.stdout
    replay = parse_replay((tmp_path / "bh.json").read_text())
    assert replay.black == "lab-beginner" and replay.white == "human"
    assert len(replay.moves) == 1


def test_undo_takes_back_to_the_last_human_move(run_arena: RunArena, tmp_path: Path) -> None:
    """As SharpMoku's undo: one move between two humans (the opponent's), two against a
    bot (its answer and yours); nothing before anyone has moved."""
    between_humans = run_arena(
        "play", "--mode", "human-human", "--save", "hh.json",
        stdin="undo\nf5\nf6\nundo\nundo\nundo\ne6\nf4\nquit\n")
    assert between_humans.returncode == 0, between_humans.stderr
    out = between_humans.stdout
    assert out.count("nothing to take back") == 2
    assert "took back f6" in out and "took back f5" in out
    assert "game stopped after 2 moves" in out
    board = OthelloBoard()
    for name in ("e6", "f4"):
        board.push(board.parse_move(name))
    assert [m.move for m in parse_replay((tmp_path / "hh.json").read_text()).moves] == (
        board.move_stack)

    against_a_bot = run_arena(
        "play", "--mode", "human-bot", "--bot", "lab-beginner", "--save", "hb.json",
        stdin="f5\nundo\nd3\nquit\n")
    assert against_a_bot.returncode == 0, against_a_bot.stderr
    answer = against_a_bot.stdout.split("white (lab-beginner) plays ")[1].split()[0]
    assert f"took back f5 {answer}" in against_a_bot.stdout
    moves = parse_replay((tmp_path / "hb.json").read_text()).moves
    assert moves[0].move == OthelloBoard().parse_move("d3") and len(moves) == 2


def test_hint_names_a_legal_move_from_a_bot(run_arena: RunArena) -> None:
    result = run_arena("play", "--mode", "human-human", "--no-save", stdin="hint\nquit\n")
    assert result.returncode == 0, result.stderr
    hint = result.stdout.split("hint for black (lab-advanced): ")[1].split()[0]
    assert hint in ("d3", "c4", "f5", "e6")
    gomoku = run_arena("play", "--game", "gomoku", "--mode", "human-bot", "--bot",
                       "sharpmoku-normal", "--no-save", stdin="h8\nhint\nquit\n")
    assert "hint for black (sharpmoku-normal): " in gomoku.stdout, gomoku.stdout


def test_the_first_bot_move_gets_its_whole_time(run_arena: RunArena) -> None:
    """Found as an outsider: the first move of a bot at 300 ms searched to depth 0 (or 1):
    loading the compiled kernels took the move's time. They are loaded before the game."""
    result = run_arena("play", "--mode", "human-bot", "--bot", "arena-fast",
                       "--bot-time-ms", "300", "--no-save", stdin="f5\nquit\n")
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stdout.splitlines() if "white (arena-fast) plays" in x)
    depth = int(line.split("depth ")[1].split(",")[0])
    assert depth >= 3, line


def test_bot_vs_bot_plays_to_the_end(run_arena: RunArena, tmp_path: Path) -> None:
    result = run_arena("play", "--mode", "bot-bot", "--black", "lab-beginner",
                       "--white", "lab-intermediate", "--save", "bb.json")
    assert result.returncode == 0, result.stderr
    replay = parse_replay((tmp_path / "bb.json").read_text())
    assert replay.outcome is not None
    assert replay.final_position().is_game_over()
    assert "game over:" in result.stdout


def test_international_variant(run_arena: RunArena, tmp_path: Path) -> None:
    result = run_arena("play", "--variant", "international", "--mode", "human-bot",
                       "--bot", "lab-beginner", "--save", "intl.json",
                       stdin="d4\nd5\ne4\ne5\nquit\n")  # words the bot took are refused
    assert result.returncode == 0, result.stderr
    replay = parse_replay((tmp_path / "intl.json").read_text())
    assert replay.variant == "international"
    played = [m.move for m in replay.moves]
    assert played[0] == 27 and len(played) == 4
    assert set(played) == {27, 28, 35, 36}  # the four centre squares first

    both_bots = run_arena("play", "--variant", "international", "--mode", "bot-bot",
                          "--bot", "lab-beginner", "--save", "intl-bots.json")
    assert both_bots.returncode == 0, both_bots.stderr
    replay = parse_replay((tmp_path / "intl-bots.json").read_text())
    assert {m.move for m in replay.moves[:4]} == {27, 28, 35, 36}
    assert replay.outcome is not None and replay.final_position().is_game_over()


def test_custom_start_position(run_arena: RunArena, tmp_path: Path) -> None:
    board = new_position("othello")
    for move in ("f5", "d6", "c3"):
        board.push(board.parse_move(move))
    (tmp_path / "start.txt").write_text(board.to_text() + "\n")
    result = run_arena("play", "--board", "start.txt", "--mode", "human-human",
                       "--save", "c.json", stdin="d3\n")
    assert result.returncode == 0, result.stderr
    replay = parse_replay((tmp_path / "c.json").read_text())
    assert replay.start == board.to_text()
    assert "white to move" in result.stdout


def test_gomoku_five_in_a_row(run_arena: RunArena, tmp_path: Path) -> None:
    script = ["a1", "a2", "b1", "b2", "c1", "c2", "d1", "d2", "e1"]
    result = run_arena("play", "--game", "gomoku", "--size", "9", "--mode", "human-human",
                       "--save", "go.json", stdin="\n".join(script) + "\n")
    assert result.returncode == 0, result.stderr
    # Gomoku's scores are game points: it said 'black wins 1-0 (1-0)'.
    assert "black X 5  white O 4  -  black wins (1-0)\n" in result.stdout
    assert "game over: black wins (1-0)\n" in result.stdout
    replay = parse_replay((tmp_path / "go.json").read_text())
    assert replay.game == "gomoku" and len(replay.moves) == 9
    shown = run_arena("match", "replay", "go.json", "--ply", "9").stdout
    assert shown.endswith("black X 5  white O 4  -  black wins (1-0)\n"), shown


def test_a_gomoku_draw_is_said_in_words(run_arena: RunArena) -> None:
    """A full board was 'draw (0-0)', as if neither side had a stone."""
    result = run_arena("play", "--game", "gomoku", "--size", "9", "--mode", "bot-bot",
                       "--bot", "sharpmoku-normal", "--save", "d.json")
    assert result.returncode == 0, result.stderr
    assert "game over: draw, the board is full (1/2-1/2)\n" in result.stdout, result.stdout


def test_undo_after_the_end_takes_the_winning_move_back(
        run_arena: RunArena, tmp_path: Path) -> None:
    """SharpMoku's undo works after the game has ended; so does this one: the winning
    five is taken back and the game goes on (then White wins with its own five)."""
    script = ["a1", "a2", "b1", "b2", "c1", "c2", "d1", "d2", "e1", "undo", "i9",
              "e2", "no"]
    result = run_arena("play", "--game", "gomoku", "--size", "9", "--mode", "human-human",
                       "--save", "go.json", stdin="\n".join(script) + "\n")
    assert result.returncode == 0, result.stderr
    assert "the game is over (black wins" in result.stdout and "took back e1" in result.stdout
    assert "game over: white wins" in result.stdout
    replay = parse_replay((tmp_path / "go.json").read_text())
    assert len(replay.moves) == 10 and replay.outcome is not None
    assert replay.outcome.result == "0-1"


def test_default_save_location(run_arena: RunArena, tmp_path: Path) -> None:
    result = run_arena("play", "--mode", "human-human", stdin="f5\n")
    assert result.returncode == 0, result.stderr
    saved = list((tmp_path / ".arena" / "games").glob("play-*.json"))
    assert len(saved) == 1
    assert f"arena match replay {saved[0]}" in result.stdout


def test_a_game_is_never_saved_over_a_file(run_arena: RunArena, tmp_path: Path) -> None:
    """--save FILE wrote the game over a file that was there; two games started in the
    same second took the same default name, the second over the first."""
    (tmp_path / "mine.json").write_text("mine")
    refused = run_arena("play", "--mode", "human-human", "--save", "mine.json", stdin="f5\n")
    assert refused.returncode == 1 and refused.stderr == (
        "arena: error: mine.json exists (use --force to overwrite, or --save another "
        "file)\n"), refused.stderr
    assert (tmp_path / "mine.json").read_text() == "mine"
    forced = run_arena("play", "--mode", "human-human", "--save", "mine.json", "--force",
                       stdin="f5\n")
    assert forced.returncode == 0 and len(parse_replay((tmp_path / "mine.json").read_text())
                                          .moves) == 1
    # Every default name of the next two minutes taken (as by games started then).
    games = tmp_path / ".arena" / "games"
    games.mkdir(parents=True)
    now = time.time()
    taken = {games / time.strftime("play-%Y%m%d-%H%M%S.json", time.localtime(now + second))
             for second in range(-1, 120)}
    for path in taken:
        path.write_text("another game")
    result = run_arena("play", "--mode", "human-human", stdin="f5\n")
    assert result.returncode == 0, result.stderr
    assert all(path.read_text() == "another game" for path in taken)
    saved = list(games.glob("play-*-2.json"))
    assert len(saved) == 1 and f"saved {saved[0]};" in result.stdout, result.stdout


def test_a_game_is_not_saved_beside_a_folder_named_to_save_it(
        run_arena: RunArena, tmp_path: Path) -> None:
    """--save DIR was taken for a name in use: the game went to a file 'DIR-2' beside the
    folder ('arena play --save /tmp' wrote /tmp-2). A folder is refused before the game."""
    (tmp_path / "games").mkdir()
    refused = run_arena("play", "--mode", "human-human", "--save", "games", stdin="f5\n")
    assert refused.returncode == 1 and refused.stderr == (
        "arena: error: games is a folder: --save takes the file to write\n"), refused.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ".arena") == ["games"]
    assert list((tmp_path / "games").iterdir()) == []


def test_a_game_saved_to_a_device_or_fifo_is_written_to_it(run_arena: RunArena,
                                                            tmp_path: Path) -> None:
    """'arena play --save /dev/stdout' said 'saved /dev/stdout-2' and made a file there, as
    for /dev/full and a FIFO: the check for a file in use took them for one. They are
    written to, as by 'arena match export -o'. (Links here to /dev's devices: the game
    that went beside them made no file in /dev.)"""
    os.mkfifo(tmp_path / "ff")
    reader = os.open(tmp_path / "ff", os.O_RDONLY | os.O_NONBLOCK)  # the writer need not wait
    try:
        to_fifo = run_arena("play", "--mode", "human-human", "--save", "ff", stdin="f5\n")
        assert to_fifo.returncode == 0, to_fifo.stderr
        assert to_fifo.stdout.endswith("\nsaved ff\n"), to_fifo.stdout  # nothing to replay
        assert len(parse_replay(os.read(reader, 1 << 16).decode()).moves) == 1
    finally:
        os.close(reader)
    (tmp_path / "out").symlink_to("/dev/stdout")
    to_stdout = run_arena("play", "--mode", "human-human", "--save", "out", stdin="f5\n")
    assert to_stdout.returncode == 0, to_stdout.stderr
    assert '"moves": [' in to_stdout.stdout and to_stdout.stdout.endswith("\nsaved out\n")
    (tmp_path / "full").symlink_to("/dev/full")
    assert_one_line_error(run_arena("play", "--mode", "human-human", "--save", "full",
                                    stdin="f5\n"),
                          "cannot write full: No space left on device")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ff", "full", "out"]  # no NAME-2


def _lab_spec(name: str) -> bots_pb2.BotSpec:
    spec = apply_preset(bots_pb2.BotSpec(name=name), "lab-beginner")
    spec.description = "a bot file made for the test"
    return spec


def test_play_an_exported_bot_file(run_arena: RunArena, tmp_path: Path) -> None:
    (tmp_path / "my-lab.toml").write_text(spec_to_toml(_lab_spec("my-lab")))
    result = run_arena("play", "--mode", "bot-human", "--bot", "my-lab.toml",
                       "--save", "f.json", stdin="quit\n")
    assert result.returncode == 0, result.stderr
    assert "black (my-lab) plays" in result.stdout
    replay = parse_replay((tmp_path / "f.json").read_text())
    assert replay.black == "my-lab" and replay.moves[0].depth is not None
    # A bot file of the other game says which --game to add; a broken one says why.
    gomoku = apply_preset(bots_pb2.BotSpec(name="moku"), "sharpmoku-normal")
    (tmp_path / "moku.toml").write_text(spec_to_toml(gomoku))
    assert_one_line_error(run_arena("play", "--bot", "moku.toml", stdin="quit\n"),
                          "plays gomoku: add --game gomoku")
    (tmp_path / "bad.toml").write_text("name = [\n")
    assert_one_line_error(run_arena("play", "--bot", "bad.toml"), "bad.toml")


def test_play_a_registered_bot(run_arena: RunArena, tmp_path: Path, peers: ArenaClient,
                               registry_server: Server, redis_client: redis.Redis) -> None:
    peers.register_bot(_lab_spec("my-terra"))
    peers.register_bot(bots_pb2.BotSpec(name="far", game=1, external=bots_pb2.ExternalEngine(
        address="127.0.0.1:9")))
    advertise(redis_client, "w1", engine_pb2.EngineOffer(  # a live worker offers it
        name="rapfi", protocol="gomocup", games=[common_pb2.GAME_KIND_GOMOKU], checksum="c" * 64))
    peers.register_bot(bots_pb2.BotSpec(name="moku", game=common_pb2.GAME_KIND_GOMOKU,
                                        protocol=bots_pb2.ProtocolEngine(engine="rapfi")))
    env = {"ARENA_REGISTRY": registry_server.target, "ARENA_TOKEN": ADMIN_TOKEN}
    result = run_arena("play", "--mode", "human-bot", "--bot", "my-terra", "--save", "r.json",
                       stdin="f5\nquit\n", env=env)
    assert result.returncode == 0, result.stderr
    assert "white (my-terra@1) plays" in result.stdout
    replay = parse_replay((tmp_path / "r.json").read_text())
    assert replay.white == "my-terra@1" and len(replay.moves) == 2
    assert_one_line_error(run_arena("play", "--bot", "far", env=env), "is an external bot")
    assert_one_line_error(run_arena("play", "--game", "gomoku", "--bot", "moku", env=env),
                          "bot 'moku' plays protocol engine 'rapfi' on the workers")
    assert_one_line_error(run_arena("play", "--bot", "nobody", env=env),
                          "unknown bot 'nobody'", "lab-beginner", "registry")
    # No stack at all: the message still lists what would have worked.
    assert_one_line_error(run_arena("play", "--bot", "my-terra"), "no registry", "lab-beginner")


def test_gomoku_takes_gomocup_xy_and_resign_records_a_result(run_arena: RunArena,
                                                              tmp_path: Path) -> None:
    result = run_arena("play", "--game", "gomoku", "--mode", "human-human", "--save", "g.json",
                       stdin="7,7\nh9\nz99\n7,7\nhelp\nresign\n")
    assert result.returncode == 0, result.stderr
    assert "*" not in result.stdout  # no board marks every empty point as a legal move
    refused = [line for line in result.stdout.splitlines() if "is not a legal move" in line]
    assert len(refused) == 2 and all(len(line) < 120 for line in refused), refused
    assert "Gomocup x,y from 0,0 to 14,14" in refused[0]
    assert "black resigns" in result.stdout
    assert "game over: white wins by resignation (0-1)\n" in result.stdout
    replay = parse_replay((tmp_path / "g.json").read_text())
    assert [m.move for m in replay.moves] == [7 * 15 + 7, 8 * 15 + 7]  # h8 (x,y 7,7), h9
    assert replay.outcome is not None
    assert replay.outcome.termination is Termination.RESIGNATION
    assert replay.outcome.winner is Color.WHITE and replay.metadata["status"] == "finished"
    shown = run_arena("match", "replay", "g.json", "--ply", "2")
    assert shown.returncode == 0 and "resign" in shown.stdout, shown.stderr + shown.stdout


def test_othello_resign_keeps_the_discs_and_ends_the_game(run_arena: RunArena,
                                                          tmp_path: Path) -> None:
    # What is typed after the resignation is not played: the game is over.
    result = run_arena("play", "--mode", "human-human", "--save", "o.json",
                       stdin="f5\nresign\nf6\nquit\n")
    assert result.returncode == 0, result.stderr
    replay = parse_replay((tmp_path / "o.json").read_text())
    assert replay.outcome == Outcome(Color.BLACK, Termination.RESIGNATION, 4, 1, 59)
    assert len(replay.moves) == 1
    said = result.stdout.splitlines()
    assert said[-2:-1] == ["game over: black wins by resignation, 4-1 (1-0)"], said[-3:]
    assert "white> f6" not in said


def test_gomoku_bots_play_from_a_custom_start(run_arena: RunArena, tmp_path: Path) -> None:
    board = new_position("gomoku")
    for move in ("h8", "i8"):
        board.push(board.parse_move(move))
    result = run_arena("play", "--game", "gomoku", "--start", board.to_text(), "--mode",
                       "bot-human", "--bot", "sharpmoku-normal", "--bot-time-ms", "300",
                       "--save", "s.json", stdin="quit\n")
    assert result.returncode == 0, result.stderr
    replay = parse_replay((tmp_path / "s.json").read_text())
    assert replay.start == board.to_text() and len(replay.moves) == 1


def test_an_international_start_implies_its_variant(run_arena: RunArena, tmp_path: Path) -> None:
    start = new_position("othello", "international").to_text()
    result = run_arena("play", "--start", start, "--mode", "human-human", "--save", "i.json",
                       stdin="d4\nquit\n")
    assert result.returncode == 0, result.stderr
    assert parse_replay((tmp_path / "i.json").read_text()).variant == "international"
    assert_one_line_error(run_arena("play", "--start", start, "--variant", "standard"),
                          "leave --variant out")


def test_a_bot_time_of_zero_is_refused_before_the_game(run_arena: RunArena) -> None:
    """It was taken, and the game failed at the bot's first move ('time_ms must be in
    1..', after the board was drawn)."""
    result = run_arena("play", "--mode", "bot-bot", "--bot", "lab-beginner", "--bot-time-ms",
                       "0", "--no-save")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.rstrip().endswith(
        "arena play: error: argument --bot-time-ms: must be at least 1, got 0")
