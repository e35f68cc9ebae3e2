"""What one user stores is shown in every other user's terminal (`arena bot list`, `arena
match list`, `arena ladder list`), and a terminal obeys escape sequences: a clear screen, a
new window title, in some terminals a write to the clipboard. So text a user types with a
control character in it is refused with the field named, and text from elsewhere (a game
record, an engine's stderr) is stored with those characters replaced by U+FFFD."""

from __future__ import annotations

import json
from pathlib import Path

from arena.formats import Replay, ReplayMove, write_replay
from arena.games import OthelloBoard
from tests.clients.conftest import InProcessStack, RunArena, ok, one_line_error

ESCAPES = "\x1b[2J\x1b]0;owned\x07"  # clear the screen, set the window title
CONTROL = ("\x1b", "\x07", "\x9b")  # ESC, BEL, and the one-byte CSI of C1


def _register(stack: InProcessStack, name: str, *more: str) -> str:
    # arena-strong thinks about a second a move: its match is still running when cancelled.
    return ok(stack.run("bot", "register", "--name", name, "--from-preset", "arena-strong",
                        *more))


def test_typed_text_with_control_characters_is_refused(cli_stack: InProcessStack) -> None:
    one_line_error(cli_stack.run("bot", "register", "--name", "plain", "--from-preset",
                                 "lab-beginner", "--description", f"hi{ESCAPES}"),
                   "--description: must contain printable characters only, found U+001B")
    _register(cli_stack, "plain", "--description", "two\nlines\tand a tab")
    _register(cli_stack, "plain-b")
    one_line_error(cli_stack.run("ladder", "create", "plain", "plain-b", "--name",
                                 f"ladder{ESCAPES}"),
                   "--name: must contain printable characters only, found U+001B")
    # A ladder's name is listed to everyone: it is bounded like a bot's (it was not at all).
    one_line_error(cli_stack.run("ladder", "create", "plain", "plain-b", "--name", "N" * 65),
                   "--name: must be at most 64 characters, got 65")
    match = json.loads(ok(cli_stack.run("match", "create", "--black", "plain", "--white",
                                        "plain-b", "--json")))
    one_line_error(cli_stack.run("match", "cancel", match["id"], "--reason", f"bye{ESCAPES}"),
                   "--reason: must contain printable characters only, found U+001B")
    ok(cli_stack.run("match", "cancel", match["id"], "--reason", "bye"))
    assert "bye" in ok(cli_stack.run("match", "show", match["id"]))
    for listing in (ok(cli_stack.run("bot", "list")), ok(cli_stack.run("ladder", "list"))):
        assert not any(char in listing for char in CONTROL)


def test_a_records_text_is_stored_printable(cli_stack: InProcessStack, tmp_path: Path) -> None:
    board = OthelloBoard()
    replay = Replay.new(board.copy(), f"black{ESCAPES}", "white\x9b31m")
    for _ in range(4):
        move = board.legal_moves()[0]
        board.push(move)
        replay.moves.append(ReplayMove(move=move, time_ms=1, worker=f"w{ESCAPES}" * 6,
                                       notes=[f"note {n}{ESCAPES}" for n in range(12)]))
    replay.forfeit = f"gone{ESCAPES}"
    record = tmp_path / "game.json"
    record.write_text(write_replay(replay))
    said = ok(cli_stack.run("match", "import", "-", stdin=write_replay(replay)))
    match_id = said.split()[2]
    match = json.loads(ok(cli_stack.run("match", "show", match_id, "--json")))
    assert match["black"]["name"] == "black\ufffd[2J\ufffd]0;owned\ufffd"
    assert match["white"]["name"] == "white\ufffd31m"
    worker = match["moves"][0]["worker_id"]
    assert worker == "w\ufffd[2J\ufffd]0;owned\ufffd" * 6  # kept whole (over 100: refused)
    # An engine's notes: the last 4 of a move's, control characters replaced.
    notes = match["moves"][0]["search"]["notes"]
    assert notes == [f"note {n}\ufffd[2J\ufffd]0;owned\ufffd" for n in range(8, 12)]
    shown = [said, ok(cli_stack.run("match", "show", match_id)),
             ok(cli_stack.run("match", "list")),
             ok(cli_stack.run("match", "export", match_id, "--format", "ggf")),
             ok(cli_stack.run("match", "replay", match_id, "--all")),
             ok(cli_stack.run("match", "replay", str(record), "--all"))]  # as written
    for text in shown:
        assert not any(char in text for char in CONTROL), text


def test_an_error_quoting_what_was_given_prints_no_control_character(
        run_arena: RunArena) -> None:
    """Error messages quote addresses, engines' stderr and other given text; the command
    line prints them made harmless, whatever the service put in (here an address from a
    misconfigured environment, quoted three times by the gRPC error)."""
    result = run_arena("--timeout", "2", "bot", "list",
                       env={"ARENA_REGISTRY": f"127.0.0.1{ESCAPES}:1"})
    assert result.returncode == 1 and "registry unreachable" in result.stderr, result.stderr
    assert not any(char in result.stderr for char in CONTROL), repr(result.stderr)
    assert "Traceback" not in result.stderr


def test_piped_input_is_echoed_without_its_control_characters(run_arena: RunArena) -> None:
    """`arena play` and `arena match replay` echo piped input (so that the transcript reads
    well). Before, a line with an escape sequence in it went to the terminal as it was:
    the screen cleared."""
    result = run_arena("play", "--mode", "human-human", "--save", "g.json",
                       stdin=f"{ESCAPES}d3\nd3\nc5\n{ESCAPES}\nquit\n")
    assert result.returncode == 0, result.stderr
    assert not any(char in result.stdout for char in CONTROL), repr(result.stdout)
    assert "black> \ufffd[2J\ufffd]0;owned\ufffdd3\n" in result.stdout  # echoed, then refused
    assert "game stopped after 2 moves" in result.stdout
    result = run_arena("match", "replay", "g.json", stdin=f"n\n{ESCAPES}\nq\n")
    assert result.returncode == 0, result.stderr
    assert not any(char in result.stdout for char in CONTROL), repr(result.stdout)
    assert "> \ufffd[2J\ufffd]0;owned\ufffd\n" in result.stdout
