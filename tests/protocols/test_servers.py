"""Arena's bots behind the protocols: the Gomocup brain and the NBoard engine answer every
command as the protocols ask, play what the in-process engine plays, and the command line
starts them (``arena engine gomocup|nboard``, ``pbrain-arena``, ``arena-nboard``)."""

from __future__ import annotations

import io
import random
import subprocess
import sys
from pathlib import Path

import pytest

from arena.engine.api import DEFAULT_TIME_MS, MAX_TIME_MS, Limits
from arena.games import PASS, OthelloBoard
from arena.protocols import gomocup, gomocup_brain, gtp, gtp_engine, nboard, nboard_engine
from arena.protocols.bot import LineWriter, ServedBot
from arena.protocols.errors import ProtocolError
from tests.support.engines import choose, presets

BIN = Path(sys.executable).parent
OTHELLO_START = "---------------------------OX------XO--------------------------- X"


def brain_session(lines: list[str], preset: str = "sharpmoku-normal", **limits: int) -> list[str]:
    out = io.StringIO()
    bot = ServedBot.from_preset("gomoku", preset, **limits)
    gomocup_brain.serve(bot, [line + "\n" for line in lines], out)
    return out.getvalue().splitlines()


def moves_of(output: list[str]) -> list[str]:
    return [line for line in output if isinstance(gomocup.parse_reply(line), gomocup.MoveReply)]


def test_start_accepts_arenas_sizes_only() -> None:
    assert brain_session(["START 15", "START 9", "START 19", "RECTSTART 15,15"]) == ["OK"] * 4
    for refused in ("START 20", "RECTSTART 20,15", "START 1000000"):  # not UNKNOWN
        [answer] = brain_session([refused])
        assert answer.startswith("ERROR unsupported board")


def test_a_game_from_begin_and_turn_plays_the_in_process_moves() -> None:
    output = brain_session(["START 15", "INFO timeout_turn 60000", "BEGIN", "TURN 0,0",
                            "TURN 0,14"])
    played = [gomocup.parse_reply(m) for m in moves_of(output)]
    assert len(played) == 3
    moves: list[int] = []
    config = presets("gomoku")["sharpmoku-normal"]
    limits = Limits(time_ms=gomocup_brain.turn_budget_ms(60_000))
    for reply, theirs in zip(played, [None, 0, 14 * 15], strict=True):
        if theirs is not None:
            moves.append(theirs)
        board_text = board_after(moves)
        expected = choose("gomoku", board_text, moves, config, limits)
        assert isinstance(reply, gomocup.MoveReply)
        assert reply.y * 15 + reply.x == expected.move
        moves.append(expected.move)


def board_after(moves: list[int], rule: str = "freestyle") -> str:
    from arena.games import GomokuBoard

    board = GomokuBoard(15, rule)
    for move in moves:
        board.push(move)
    return board.to_text()


def test_each_move_is_preceded_by_its_search_message() -> None:
    output = brain_session(["START 15", "BOARD", "7,7,1", "7,8,2", "8,7,1", "8,8,2", "9,7,1",
                            "9,8,2", "DONE"], preset="arena-gomoku")
    message, move = output[-2:]
    reply = gomocup.parse_reply(message)
    assert isinstance(reply, gomocup.Message)
    report = gomocup.parse_search_message(reply.text, 15)
    assert report is not None and report.depth is not None
    played = gomocup.parse_reply(move)
    assert isinstance(played, gomocup.MoveReply)
    assert report.pv[0] == played.y * 15 + played.x
    assert (played.x, played.y) in {(6, 7), (10, 7)}  # the open four


def test_absurd_manager_clocks_still_give_a_move() -> None:
    """Found as an outsider: ``INFO timeout_turn`` of 10**20 ms crashed the brain with a
    traceback (the deadline overflowed the engine's clock); it now caps the search at
    thirty days, and a negative timeout at the shortest search."""
    brain = gomocup_brain.GomocupBrain(ServedBot.from_preset("gomoku", "sharpmoku-normal"),
                                       LineWriter(io.StringIO()))
    brain.handle(gomocup.Info("timeout_turn", "9" * 20))
    assert brain._limits().time_ms == MAX_TIME_MS
    brain.handle(gomocup.Info("time_left", "9" * 20))
    assert brain._limits().time_ms == MAX_TIME_MS
    brain.handle(gomocup.Info("timeout_turn", "-5"))
    assert brain._limits().time_ms == 1
    output = brain_session(["START 15", f"INFO timeout_turn {'9' * 20}", "TURN 7,7"],
                           preset="arena-gomoku", depth=2)
    assert len(moves_of(output)) == 1 and not any(line.startswith("ERROR") for line in output)


def test_rules_info_and_bookkeeping_commands() -> None:
    out = io.StringIO()
    brain = gomocup_brain.GomocupBrain(ServedBot.from_preset("gomoku", "sharpmoku-normal"),
                                       LineWriter(out))
    for command in (gomocup.Start(15), gomocup.Info("rule", "1"),
                    gomocup.Info("timeout_turn", "0"), gomocup.Turn(7, 7),
                    gomocup.Takeback(7, 7), gomocup.Info("rule", "4"), gomocup.Restart(),
                    gomocup.About()):
        assert brain.handle(command)
    assert brain.rule == "exact-five"
    assert brain._limits().time_ms == gomocup_brain.QUICK_MOVE_MS
    answers = out.getvalue().splitlines()
    assert answers[0] == "OK" and answers[1].startswith("MESSAGE ")
    assert isinstance(gomocup.parse_reply(answers[2]), gomocup.MoveReply)
    assert answers[3] == "OK"  # the take-back
    assert answers[4].startswith("ERROR INFO rule 4")
    assert answers[5] == "OK" and brain.moves == []  # the restart
    about = gomocup.parse_reply(answers[6])
    assert isinstance(about, gomocup.AboutReply) and about.get("name") == "sharpmoku-normal"
    assert not brain.handle(gomocup.End())


@pytest.mark.parametrize(("lines", "answer"), [
    (["BEGIN"], "ERROR no START yet"),
    (["START 15", "TURN 7,7", "TURN 7,7"], "ERROR"),  # the brain's own point, or taken
    (["START 15", "TURN 15,0"], "ERROR 15,0 is off the 15x15 board"),
    (["START 15", "PLAY 3,3"], "UNKNOWN not a Gomocup command: 'PLAY 3,3'"),
    # A known command with arguments it does not take is an error, not an unknown command.
    (["START 15", "TURN -1,-1"], "ERROR TURN takes x,y (numbers of 0 to 999): 'TURN -1,-1'"),
    (["START 15", "TAKEBACK 3"], "ERROR TAKEBACK takes x,y (numbers of 0 to 999)"),
    (["START fifteen"], "ERROR START takes a size: 'START fifteen'"),
    (["RECTSTART 15x15"], "ERROR RECTSTART takes width,height"),
    (["INFO"], "ERROR INFO takes a key and a value"),
    (["START 15", "BEGIN now"], "ERROR BEGIN takes nothing after it: 'BEGIN now'"),
    (["START 15", "BOARD", "7,7,9"], "ERROR bad BOARD line '7,7,9'"),
    (["START 15", "BOARD", "7,7,1", "8,8,1", "DONE"], "ERROR BOARD has 2 own and 0 opponent"),
    (["START 15", "TAKEBACK 3,3"], "ERROR TAKEBACK of an empty point 48"),
])
def test_bad_requests_get_error_or_unknown(lines: list[str], answer: str) -> None:
    assert brain_session(lines)[-1].startswith(answer)


def test_end_stops_the_brain() -> None:
    assert brain_session(["START 15", "END", "START 15"]) == ["OK"]


def engine_session(lines: list[str], preset: str = "arena-fast", **limits: int) -> list[str]:
    out = io.StringIO()
    bot = ServedBot.from_preset("othello", preset, **limits)
    nboard_engine.serve(bot, [line + "\n" for line in lines], out)
    return out.getvalue().splitlines()


def test_an_nboard_session_plays_the_in_process_move_at_the_set_depth() -> None:
    game = nboard.game_for(OTHELLO_START)
    output = engine_session(["nboard 2", "set depth 3", f"set game {game}", "ping 1",
                             "move F5", "go"])
    assert output[:2] == ["set myname arena-fast", "pong 1"]
    replies = [nboard.parse_reply(line) for line in output[2:]]
    best = replies[-1]
    assert isinstance(best, nboard.BestMove)
    after_f5 = OthelloBoard()
    after_f5.push_str("f5")
    config = presets("othello")["arena-fast"]
    expected = choose("othello", after_f5.to_text(), [], config, Limits(depth=3))
    assert best.move == expected.move
    assert nboard.search_report(replies).pv[0] == expected.move


def test_hint_learn_and_ignored_lines(capsys: pytest.CaptureFixture[str]) -> None:
    output = engine_session(["nboard 2", "set depth 2", "hint 2", "learn", "analyze",
                             "move A1", "set game (;GM[Chess];)", "set contempt 2"])
    assert isinstance(nboard.parse_reply(output[1]), nboard.SearchLine)
    assert output[-2:] == ["status", "learned"]
    notes = capsys.readouterr().err
    assert "ignored 'analyze'" in notes and "ignored 'move A1'" in notes
    assert "bad GGF" in notes


def forced_pass() -> OthelloBoard:
    """A position of a random game where the side to move must pass."""
    for seed in range(1000):
        rng = random.Random(seed)
        board = OthelloBoard()
        while not board.is_game_over():
            if board.legal_moves() == [PASS]:
                return board
            board.push(rng.choice(board.legal_moves()))
    raise AssertionError("no forced pass in 1000 random games")


def test_a_forced_pass_is_answered_pa() -> None:
    board = forced_pass()
    game = nboard.game_for(board.to_text())
    output = engine_session(["nboard 2", f"set game {game}", "go"])
    assert output[-1].startswith("=== PA")


def test_served_bots_refuse_bad_settings() -> None:
    with pytest.raises(ValueError, match="unknown gomoku preset 'nope'"):
        ServedBot.from_preset("gomoku", "nope")
    with pytest.raises(ValueError, match=r"depth must be in 1\.\.127, got 0"):
        ServedBot.from_preset("othello", "arena-fast", depth=0)
    with pytest.raises(ValueError, match=r"time_ms must be in 1\.\.2592000000, got 100000"):
        ServedBot.from_preset("gomoku", "arena-gomoku", time_ms=10**20)
    with pytest.raises(ValueError):
        ServedBot.from_config("othello", "x", {"evaluator": "nonsense"})
    with pytest.raises(ProtocolError):
        nboard.parse_command("set depth deep")


def gtp_session(lines: list[str], preset: str = "arena-fast", **limits: int) -> list[str]:
    out = io.StringIO()
    bot = ServedBot.from_preset("othello", preset, **limits)
    gtp_engine.serve(bot, [line + "\n" for line in lines], out)
    text = out.getvalue()
    assert text.endswith("\n\n") or not text  # every response is closed
    return [block.strip() for block in text.split("\n\n")[:-1]]


def test_a_gtp_session_plays_the_in_process_move_at_its_depth() -> None:
    output = gtp_session(["protocol_version", "name", "boardsize 8", "clear_board",
                          "play b f5", "3 genmove w", "play b c4"], depth=3)
    assert output[:5] == ["= 2", "= Arena arena-fast", "=", "=", "="]
    after_f5 = OthelloBoard()
    after_f5.push_str("f5")
    expected = choose("othello", after_f5.to_text(), [], presets("othello")["arena-fast"],
                      Limits(depth=3))
    assert output[5] == f"=3 {gtp.vertex_text(expected.move)}"
    after_f5.push(expected.move)
    assert output[6] == ("=" if after_f5.is_legal(26) else "? " + output[6][2:])


def test_gtp_passes_are_played_or_implied() -> None:
    board = forced_pass()
    replay = [gtp.format_command(c) for c in gtp.continue_game(OthelloBoard(),
                                                                board.move_stack)]
    mover = gtp.color_text(board.turn)
    other = gtp.color_text(board.turn.other)
    explicit = gtp_session(["clear_board", *replay, f"genmove {mover}"], depth=1)
    assert explicit[-1] == "= pass"
    implied = gtp_session(["clear_board", *replay, f"genmove {other}", "undo", "undo"],
                          depth=1)  # the pass is played for the side that must pass
    assert implied[-3].startswith("= ") and implied[-3] != "= pass"
    assert implied[-2:] == ["=", "="]


@pytest.mark.parametrize(("lines", "answer"), [
    (["boardsize 9"], "? unacceptable size"),
    (["play b a1"], "? illegal move"),
    (["play w f5"], "? wrong color: black is to move"),
    (["genmove w"], "? wrong color: black is to move"),
    (["showboard"], "? unknown command"),
    (["12 showboard"], "?12 unknown command"),
    (["undo"], "? cannot undo"),
    (["play b"], "? bad GTP command 'play b'"),
    (["known_command genmove"], "= true"),
    (["known_command showboard"], "= false"),
    (["time_settings 0 1 1", "time_left b 1 1", "komi 6.5"], "="),
])
def test_gtp_requests_and_their_answers(lines: list[str], answer: str) -> None:
    assert gtp_session(lines)[-1].startswith(answer)


def test_quit_stops_the_gtp_engine() -> None:
    assert gtp_session(["name", "", "# nothing", "quit", "name"]) == ["= Arena arena-fast", "="]


@pytest.mark.parametrize("seconds", [0, 1])
def test_a_gtp_engine_answers_within_its_clock(seconds: int) -> None:
    output = gtp_session(["time_settings 0 1 1", f"time_left b {seconds} 1", "genmove b"])
    assert output[-1] in {"= d3", "= c4", "= f5", "= e6"}


def run(command: list[str], text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, input=text, capture_output=True, text=True, timeout=300)


def test_arena_engine_gomocup_on_the_command_line() -> None:
    done = run([str(BIN / "arena"), "engine", "gomocup", "--preset", "sharpmoku-normal",
                "--seed", "3"], "START 15\nBEGIN\nABOUT\nEND\n")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "OK" and isinstance(gomocup.parse_reply(lines[2]), gomocup.MoveReply)


def test_a_brain_told_no_time_still_answers() -> None:
    """Found as an outsider: ``arena engine gomocup`` (Arena's own Gomoku bot) given no
    ``INFO timeout_turn`` searched on for hours and never answered ``TURN``. With no limit
    from the manager or the command line a move takes ``DEFAULT_TIME_MS``."""
    brain = gomocup_brain.GomocupBrain(ServedBot.from_preset("gomoku", "arena-gomoku"),
                                       LineWriter(io.StringIO()))
    assert brain._limits().time_ms == DEFAULT_TIME_MS
    brain.handle(gomocup.Info("timeout_turn", "700"))
    assert brain._limits().time_ms == gomocup_brain.turn_budget_ms(700)
    deep = ServedBot.from_preset("gomoku", "arena-gomoku", depth=3)
    depth_only = gomocup_brain.GomocupBrain(deep, LineWriter(io.StringIO()))
    assert depth_only._limits() == Limits(depth=3, time_ms=None)  # the depth bounds it
    done = run([str(BIN / "arena"), "engine", "gomocup"],
               "START 15\nBOARD\n7,7,1\n8,8,2\nDONE\nEND\n")
    assert done.returncode == 0, done.stderr
    assert isinstance(gomocup.parse_reply(done.stdout.splitlines()[-1]), gomocup.MoveReply)


def test_arena_engine_gtp_on_the_command_line() -> None:
    done = run([str(BIN / "arena"), "engine", "gtp", "--preset", "arena-fast", "--depth", "2"],
               "boardsize 8\nclear_board\ngenmove b\nquit\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n\n")[2] in {"= d3", "= c4", "= f5", "= e6"}


@pytest.mark.parametrize(("command", "code", "message"), [
    (["arena-gtp", "--depth", "0"], 2, "arena-gtp: error: depth must be in 1..127, got 0"),
    (["pbrain-arena", "--depth", "9" * 20], 2, "pbrain-arena: error: depth must be in 1..127"),
    (["pbrain-arena", "--preset", "nope"], 2, "pbrain-arena: error: unknown gomoku preset"),
    (["arena-nboard", "--config", "[1]"], 2, "arena-nboard: error: --config must be a JSON"),
    (["arena", "engine", "nboard", "--preset", "nope"], 1, "arena: error: unknown othello"),
])
def test_bad_command_lines_fail_cleanly(command: list[str], code: int, message: str) -> None:
    done = run([str(BIN / command[0]), *command[1:]], "")
    assert done.returncode == code
    assert done.stderr.startswith(message) and "Traceback" not in done.stderr
