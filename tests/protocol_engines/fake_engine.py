"""A small protocol engine that misbehaves on purpose: ``fake_engine.py PROTOCOL MODE [ARG]``.

PROTOCOL is ``gomocup``, ``nboard`` or ``gtp``. It answers its handshake properly (a
Gomocup one refuses ``BEGIN`` once it has played, until a new ``START``, as Rapfi 0.43
does), then on each move request does what MODE says:

- ``play``: the first legal point/square (a well-behaved engine);
- ``crash``: writes a note in colour (ANSI escapes) and one plain on stderr, and exits
  with code 3;
- ``hang``: never answers;
- ``garbage``: prints a line that is no protocol reply;
- ``chatter``: prints a line that is no protocol reply, then plays (NBoard);
- ``illegal``: an occupied point (Gomocup) or an illegal square (NBoard, GTP);
- ``resign``: resigns (GTP);
- ``log``: plays, and appends every line it reads to the file ARG (GTP);
- ``refuseplay``: refuses the first ``play`` command it gets, then plays, slowly (GTP);
- ``offboard``: a point off the board (Gomocup);
- ``memory``: allocates 16 MiB blocks (and touches them) until stopped;
- ``network``: connects to 127.0.0.1:ARG; plays only if that works, else says why on
  stderr and exits with code 4;
- ``flood``: prints ARG KiB of MESSAGE/status lines before its move;
- ``longpv``: reports a search whose PV has 3,001 plies, then plays (NBoard);
- ``refuse``: answers ERROR (Gomocup START) / never pongs the handshake (NBoard) /
  refuses ``boardsize 8`` (GTP);
- ``mute``: never answers ABOUT (Gomocup);
- ``deaf``: reads everything and never answers anything: not its handshake (NBoard's
  ``ping``, GTP's ``name``), not a Gomocup ``START``;
- ``spin``: computes forever (uses up its CPU seconds);
- ``bigfile``: writes a file of ARG KiB in its working folder, then plays;
- ``escape``: starts a child in its own session that sleeps, prints its pid on stderr,
  then plays;
- ``ponder``: a thread counts 10 ms ticks all the time; each answer reports the count;
- ``hiddenponder``: the same, counted by a child process that left the engine's process
  group (``setsid``), as an engine thinking on its opponent's time would hide it;
- ``closeout``: closes its stdout and keeps running;
- ``sleepy``: before its first move sleeps ARG ms (using no CPU), then plays at once;
- ``burn``: before each move computes for ARG ms of its CPU time, then plays;
- ``farm``: before each move has a child process compute for ARG ms of the child's CPU
  time, waiting for it without computing itself, then plays;
- ``slowstart``: computes for ARG ms of its CPU time on ``START`` (as a brain sizing its
  hash does), then plays at once (Gomocup);
- ``latestart``: answers its handshake (NBoard's first ``ping``) or its set-up (a
  Gomocup ``ABOUT`` after ``START``) at once, then computes for ARG ms of CPU time in a
  thread; a move waits for that work to end, then is played at once (Gomocup, NBoard);
- ``strictinfo``: answers an ``INFO`` key it does not know with a MESSAGE and an
  ``ERROR``, and computes
  for ARG ms of CPU time on ``INFO max_memory`` (sizing its hash), as Rapfi 0.43 does;
  plays at once (Gomocup);
- ``wallclock``: computes until ARG % of the time it was told (``timeout_turn``) has
  passed on the wall clock, as engines time themselves, then plays (Gomocup);
- ``boast``: reports a search no engine has (a depth of 5,000 digits, a score of 1e999, a
  node count past int64), then a sane one (Gomocup), then plays.
- ``lagging``: after each move drops the first word of the next line it reads and
  answers the rest as an unknown command, as Rapfi 0.43 does with a command that comes
  before it has cleared its thinking flag (Gomocup);
- ``talk``: before each move says ten MESSAGE lines: six notes, one holding a terminal
  escape (it would set the window's title), one of 500 characters, two notes more; then
  plays (Gomocup).
"""

from __future__ import annotations

import mmap
import os
import socket
import subprocess
import sys
import threading
import time

from arena.games import PASS, GameError, GomokuBoard, OthelloBoard
from arena.protocols import gomocup, gtp, nboard
from arena.protocols.errors import ProtocolError

TICKS = [0]
SHARED_TICKS = mmap.mmap(-1, 8)  # hiddenponder: counted by a child, read by the engine
MOVES = [0]
TOLD_MS = [0]  # the last timeout_turn (Gomocup)
LATE: list[threading.Thread] = []  # latestart: the work it goes on with after answering
KNOWN_INFO = ("timeout_turn", "timeout_match", "time_left", "max_memory", "game_type",
              "rule", "thread_num")  # strictinfo: the INFO keys it takes


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def misbehave(mode: str, arg: str) -> None:
    """The modes that do not depend on the protocol; returns if the engine should play."""
    for late in LATE:
        late.join()
    if mode == "crash":  # in colour first, as many engines log: escapes nobody may be sent
        print("\x1b[31mfake engine: about to crash\x1b[0m", file=sys.stderr, flush=True)
        print("fake engine: crashing on purpose", file=sys.stderr, flush=True)
        sys.exit(3)
    if mode == "hang":
        time.sleep(3600)
    if mode == "memory":
        blocks = []
        while True:
            blocks.append(bytearray(16 << 20))
            for offset in range(0, 16 << 20, 4096):
                blocks[-1][offset] = 1
    if mode == "network":
        try:
            socket.create_connection(("127.0.0.1", int(arg)), timeout=2).close()
        except OSError as exc:
            print(f"fake engine: no network: {exc}", file=sys.stderr, flush=True)
            sys.exit(4)
    if mode == "escape":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"],
                                 start_new_session=True)
        print(f"escaped child {child.pid}", file=sys.stderr, flush=True)
    if mode == "spin":
        while True:
            pass
    if mode == "bigfile":
        with open("scratch.bin", "wb") as scratch:
            scratch.write(b"\0" * (int(arg) << 10))
    if mode == "sleepy" and MOVES[0] == 0:
        time.sleep(int(arg) / 1000)
    if mode == "burn":
        until = time.process_time() + int(arg) / 1000
        while time.process_time() < until:
            pass
    if mode == "farm":
        subprocess.run([sys.executable, "-c", "import time\n"
                        f"until = time.process_time() + {int(arg) / 1000}\n"
                        "while time.process_time() < until: pass"], check=True)
    MOVES[0] += 1
    if mode == "closeout":
        sys.stdout.close()
        os.close(1)
        time.sleep(3600)


def gomocup_move(board: GomokuBoard, mode: str, arg: str) -> str:
    if mode == "garbage":
        return "I think, therefore I am"
    if mode == "illegal":
        occupied = [p for p in range(board.num_squares) if board.piece_at(p) is not None]
        if occupied:
            return gomocup.format_reply(gomocup.MoveReply(occupied[0] % board.size,
                                                          occupied[0] // board.size))
    if mode == "offboard":
        return f"{board.size},0"
    if mode == "flood":
        for _ in range(int(arg) * 1024 // 64):
            say("MESSAGE " + "x" * 56)
    if mode in ("ponder", "hiddenponder"):
        say(f"MESSAGE ticks {ticks()}")
    if mode == "boast":
        say(f"MESSAGE depth {'9' * 5000} ev 1e999 n {'9' * 40} tm 1e999")
        say("MESSAGE depth 7 ev 12")
    if mode == "talk":
        for note in range(1, 7):
            say(f"MESSAGE note {note}")
        say("MESSAGE \x1b]0;owned\x07 a title")
        say("MESSAGE " + "y" * 500)
        for note in range(7, 9):
            say(f"MESSAGE note {note}")
    move = board.legal_moves()[0]
    return gomocup.format_reply(gomocup.MoveReply(move % board.size, move // board.size))


def serve_gomocup(mode: str, arg: str) -> None:
    parser = gomocup.CommandParser()
    size, rule = 15, "freestyle"
    lagging = False  # mode lagging: it has just moved
    started_at = 0  # the moves it had played at its last START
    for line in sys.stdin:
        if lagging:
            lagging = False
            rest = line.split()[1:]
            if rest:
                say(f"ERROR Unknown command: {rest[0].upper()}")
            continue
        try:
            command = parser.feed(line)
        except ProtocolError:  # a stone line of a BOARD it dropped
            say(f"ERROR Unknown command: {line.strip()}")
            continue
        if isinstance(command, gomocup.Start):
            size, started_at = command.size, MOVES[0]
            if mode == "slowstart":
                until = time.process_time() + int(arg) / 1000
                while time.process_time() < until:
                    pass
            say("ERROR this fake engine refuses" if mode == "refuse" else "OK")
        elif isinstance(command, gomocup.Info) and command.key == "rule":
            rule = gomocup.rule_name(int(command.value))
        elif (isinstance(command, gomocup.Info) and mode == "strictinfo"
              and command.key not in KNOWN_INFO):
            say(f"MESSAGE Unknown Info Parameter: {command.key.upper()}")
            say(f"ERROR Unknown command: {command.value}")
        elif (isinstance(command, gomocup.Info) and mode == "strictinfo"
              and command.key == "max_memory"):
            until = time.process_time() + int(arg) / 1000
            while time.process_time() < until:
                pass
        elif isinstance(command, gomocup.Info) and command.key == "timeout_turn":
            TOLD_MS[0] = int(command.value)
        elif isinstance(command, gomocup.About) and mode != "mute":
            say('name="fake", version="1"')
            if mode == "latestart" and MOVES[0] == started_at:
                compute_later(int(arg))
        elif isinstance(command, gomocup.End):
            return
        elif isinstance(command, gomocup.Begin) and MOVES[0] > started_at:
            say("ERROR Board is not empty.")
        elif isinstance(command, gomocup.Board | gomocup.Begin):
            board = GomokuBoard(size, rule)
            if isinstance(command, gomocup.Board):
                for move in gomocup.moves_from_board(command, size):
                    board.push(move)
            if mode == "wallclock":
                until = time.monotonic() + TOLD_MS[0] * int(arg) / 100_000
                while time.monotonic() < until:
                    pass
            misbehave(mode, arg)
            say(gomocup_move(board, mode, arg))
            lagging = mode == "lagging"


def nboard_move(board: OthelloBoard, mode: str, arg: str) -> str:
    if mode == "garbage":
        return "=== nowhere"
    if mode == "illegal":
        illegal = next(s for s in range(64) if not board.is_legal(s))
        return nboard.format_reply(nboard.BestMove(illegal))
    if mode == "chatter":
        say("*** SEARCH STILL RUNNING ? (0) ***")
    if mode == "flood":
        for _ in range(int(arg) * 1024 // 64):
            say("status " + "x" * 57)
    if mode in ("ponder", "hiddenponder"):
        say(f"status ticks {ticks()}")
    if mode == "longpv":  # a well-formed search line with a PV of 3,001 plies
        move = nboard.move_text(board.legal_moves()[0])
        say(f"search {move}{'A1' * 3000} 1.0 0 5")
    if mode == "boast":
        move = nboard.move_text(board.legal_moves()[0])
        say(f"search {move} 1.0 0 {'9' * 5000}")
        say(f"nodestats {'9' * 400} 1.0")
        return f"=== {move}/{'9' * 400}/0.5"
    return nboard.format_reply(nboard.BestMove(board.legal_moves()[0], 0.0, 0.0))


def serve_nboard(mode: str, arg: str) -> None:
    board = OthelloBoard()
    for line in sys.stdin:
        command = nboard.parse_command(line)
        if isinstance(command, nboard.Ping) and not (mode == "refuse" and command.number == 0):
            say(nboard.format_reply(nboard.Pong(command.number)))
            if mode == "latestart" and command.number == 0:
                compute_later(int(arg))
        elif isinstance(command, nboard.SetGame):
            board = nboard.board_of_game(command.ggf)
        elif isinstance(command, nboard.Quit):
            return
        elif isinstance(command, nboard.Go):
            misbehave(mode, arg)
            say(nboard_move(board, mode, arg))


def gtp_move(board: OthelloBoard, mode: str, arg: str) -> str:
    if mode == "garbage":
        return "I think, therefore I am\n"
    if mode == "illegal":
        return f"= {gtp.vertex_text(next(s for s in range(64) if not board.is_legal(s)))}\n"
    if mode == "resign":
        return "= resign\n"
    if mode == "flood":  # one long multi-line response
        return "= " + "x" * 61 + "\n" + ("x" * 63 + "\n") * (int(arg) * 1024 // 64)
    move = board.legal_moves()[0]
    board.push(move)
    return f"= {gtp.vertex_text(move)}\n"


class FakeGtp:
    def __init__(self, mode: str, arg: str) -> None:
        self.mode, self.arg = mode, arg
        self.board = OthelloBoard()
        self.refused = False

    def answer(self, command: gtp.Command) -> str:
        """The response to one command, without its closing empty line."""
        match command:
            case gtp.BoardSize(size) if size != 8 or self.mode == "refuse":
                return "? unacceptable size\n"
            case gtp.ClearBoard():
                self.board = OthelloBoard()
            case gtp.Play() if self.mode == "refuseplay" and not self.refused:
                self.refused = True
                return "? I do not like that move\n"
            case gtp.Play(color, move):
                if color is not self.board.turn:
                    self.board.push(PASS)
                self.board.push(move)
            case gtp.GenMove():
                if self.mode == "refuseplay" and self.refused:
                    time.sleep(0.3)  # a slow answer: a manager that stopped reading finds it late
                misbehave(self.mode, self.arg)
                return gtp_move(self.board, self.mode, self.arg)
            case gtp.Name():
                return "= fake\n"
        return "=\n"


def serve_gtp(mode: str, arg: str) -> None:
    engine = FakeGtp(mode, arg)
    for line in sys.stdin:
        if mode == "log":
            with open(arg, "a") as log:
                log.write(line)
        try:
            _, command = gtp.parse_command(line)
        except ProtocolError:
            continue
        try:
            answer = engine.answer(command)
        except GameError:
            answer = "? illegal move\n"
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()
        if isinstance(command, gtp.Quit):
            return


def compute_later(ms: int) -> None:
    """Compute for ``ms`` of CPU time in a thread of its own, which the next move waits
    for (latestart)."""
    def work() -> None:
        until = time.thread_time() + ms / 1000
        while time.thread_time() < until:
            pass

    LATE.append(threading.Thread(target=work, daemon=True))
    LATE[-1].start()


def tick() -> None:
    while True:
        time.sleep(0.01)
        TICKS[0] += 1


def tick_in_hiding() -> None:
    if os.fork() == 0:
        os.setsid()
        while True:
            time.sleep(0.01)
            TICKS[0] += 1
            SHARED_TICKS[:8] = TICKS[0].to_bytes(8, "little")


def ticks() -> int:
    return max(TICKS[0], int.from_bytes(SHARED_TICKS[:8], "little"))


def main() -> None:
    protocol, mode = sys.argv[1], sys.argv[2]
    arg = sys.argv[3] if len(sys.argv) > 3 else ""
    if mode == "ponder":
        threading.Thread(target=tick, daemon=True).start()
    if mode == "hiddenponder":
        tick_in_hiding()
    if mode == "deaf":
        for _line in sys.stdin:
            pass
        return
    if protocol == "gomocup":
        serve_gomocup(mode, arg)
    elif protocol == "gtp":
        serve_gtp(mode, arg)
    else:
        serve_nboard(mode, arg)


if __name__ == "__main__":
    main()
