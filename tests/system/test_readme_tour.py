"""The README's tour, command by command, as a new user types it: read from README.md (so
that this test breaks when the README drifts from what the commands do) and run through the
real `arena` command, in a shell, against a stack started by the tour's own `arena up`.

Every command of the tour is run, each must exit 0, and where the README says what one
prints or writes (a comment after it), that is checked. The few that cannot run here are
listed in ``NOT_RUN`` with the reason, and the few made cheaper in ``CHEAPER``: a command
added to the tour is run unless it is listed, and a listed one the tour no longer has fails
the test, so that every command of the tour is classified.

The stack is the tour's own `arena up`, not a shared fixture: tests/conftest.py has none
(its session fixtures are Redis servers), tests/web's session stack plays a ladder before
it yields and is not seen from here, and starting it is the tour's second command. The
whole test takes some 40-60 s on 2 cores.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.processes import wait_for_file

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent  # the project's .venv/bin, where `make setup` put `arena`

SETUP = "make setup && . .venv/bin/activate"
UP = "arena up &"  # the tour's stack: run by the fixture, stopped at the end
# Commands of the tour this test does not run, and why.
NOT_RUN = {
    SETUP:
        "the environment this test runs in: `make setup` made it, and PATH starts with its "
        ".venv/bin",
    "arena up --engines engines.toml":
        "needs a catalog of NBoard/Gomocup programs installed on the machine (engines.toml, "
        "docs/engines.md); tests/protocol_engines start workers with a test catalog",
    "arena bot register --name my-edax --game othello --engine edax --option depth=12":
        "needs Edax, offered by workers started with an engine catalog (above)",
    "arena engine train gomoku --teacher rapfi --catalog engines.toml --teacher-scale 200 "
    "--output taught.json":
        "needs Rapfi and a catalog naming it; tests/protocol_engines/test_teacher.py trains "
        "with a fake engine",
    "arena engine openings gomoku --judge rapfi --catalog engines.toml --window 50 --count "
    "100 --output openings.txt":
        "needs Rapfi and a catalog naming it; tests/protocol_engines/test_openings.py judges "
        "with a fake engine",
}
# Commands run with options added to keep the test within a minute or so: the option and
# why. (An option given twice: argparse takes the last.)
CHEAPER = {
    "arena match create --black my-terra --white lab3 --trees --watch":
        (["--move-time-ms", "100"], "a game at the default 1 s a move takes a minute"),
    "arena ladder create my-terra lab3 fast --games-per-pairing 4 --watch":
        (["--move-time-ms", "30"], "12 games at 1 s a move take minutes"),
    "arena test my-terra@2 my-terra@1 --elo1 10":
        (["--no-watch"], "it plays until the SPRT decides, hundreds of games; the test "
                         "cancels it once made"),
    "arena engine train othello --games 200 --seed 1 --output my-weights.npz":
        (["--games", "40"], "200 self-play games take 10 s or more on a busy machine"),
}
# What a human types into the interactive ones.
TYPED = {
    "arena match replay MATCH_ID": "n\nn\nq\n",
    "arena match replay m.ggf": "l\nq\n",
    "arena play --mode human-bot --bot my-terra": "f5\nquit\n",
    "arena play --game gomoku --size 15 --mode human-bot --bot sharpmoku-hard": "h8\nquit\n",
}


@dataclass
class TourCommand:
    line: str  # as the README writes it, continuation lines joined
    said: str  # the README's comment on it ('' if none)


def tour_commands(readme: str) -> list[TourCommand]:
    """The commands of the first ``sh`` block under '## A tour', each with its comment
    (a comment alone on a line continues the one above)."""
    section = readme.split("\n## A tour", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    commands: list[TourCommand] = []
    pending = ""
    for raw in block.splitlines():
        code, comment = _split_comment(raw)
        if pending:
            code, pending = pending + " " + code.strip(), ""
        if code.rstrip().endswith("\\"):
            pending = code.rstrip()[:-1].strip()
            if comment:
                commands.append(TourCommand("", comment))  # kept with the command below
            continue
        if not code.strip():
            if comment and commands:
                commands[-1].said += " " + comment
            continue
        earlier = ""
        while commands and not commands[-1].line:
            earlier = commands.pop().said + " "
        commands.append(TourCommand(" ".join(code.split()), (earlier + comment).strip()))
    return commands


def _split_comment(line: str) -> tuple[str, str]:
    """``line`` cut at a ``#`` that starts a shell comment (outside quotes, after a space
    or at the start)."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index], line[index + 1:].strip()
    return line, ""


def _shell_env() -> dict[str, str]:
    """The user's environment after `. .venv/bin/activate`, with no Arena settings: the
    commands find the stack through ./.arena/stack.json, as the README says."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(BIN.parent)
    return env


@pytest.fixture
def tour(tmp_path: Path) -> Iterator[tuple[Path, list[TourCommand], subprocess.Popen[bytes]]]:
    """The tour's commands, in a fresh folder where its `arena up` runs (stopped with
    SIGTERM, as Ctrl-C stops it, at the end)."""
    commands = tour_commands((REPO / "README.md").read_text())
    assert [c.line for c in commands][:2] == [SETUP, UP], \
        f"the tour no longer starts the stack with {UP!r} after {SETUP!r}"
    assert (BIN / "arena").exists(), f"no arena command in {BIN}"
    with open(tmp_path / "up.log", "wb") as out:
        up = subprocess.Popen(UP.rstrip("& ").split(), cwd=tmp_path,
                              env=_shell_env(), stdout=out, stderr=subprocess.STDOUT)
    try:
        yield tmp_path, commands, up
    finally:
        up.send_signal(signal.SIGINT)  # Ctrl-C stops it
        try:
            up.wait(timeout=90)
        except subprocess.TimeoutExpired:
            up.kill()
            up.wait()


Check = Callable[[str, Path], None]


def _says(*needles: str) -> Check:
    def check(out: str, _here: Path) -> None:
        for needle in needles:
            assert re.search(needle, out), f"{needle!r} not in:\n{out}"
    return check


def _wrote(name: str) -> Check:
    def check(_out: str, here: Path) -> None:
        assert (here / name).is_file(), f"no {name}"
    return check


def _bot_file(_out: str, here: Path) -> None:
    spec = tomllib.loads((here / "my-terra.toml").read_text())
    assert spec["name"] == "my-terra" and spec["builtin"]["depth"]["end"] == 8, spec


# What is checked of each command's output (or of what it wrote), and the words of the
# README's comment that say so, which must still be there ('' where it says nothing).
SAID: dict[str, tuple[str, Check]] = {
    "arena bot presets": ("the shipped bot configurations",
                          _says(r"\bterra\b", r"\blab-advanced\b", r"\barena-fast\b")),
    "arena bot register --name my-terra --from-preset terra --depth-end 8":
        ("", _says(r"name\s+my-terra", r"version\s+1\b")),
    "arena bot export my-terra > my-terra.toml": ("a readable bot file", _bot_file),
    "arena match create --black my-terra --white lab3 --trees --watch":
        ("", _says(r"my-terra@1 \(black\) vs lab3@1 \(white\)", "result")),
    "arena match list": ("the match history", _says("MATCH_ID")),
    "arena match replay MATCH_ID": ("step through it", _says("my-terra", "a b c d e f g h")),
    "arena match tree MATCH_ID --ply 12":
        ("the search behind move 12", _says("search tree of match MATCH_ID, move 12",
                                            r"\[root\]")),
    "arena match export MATCH_ID --format ggf -o m.ggf": ("", _says(r"wrote m\.ggf \(ggf\)")),
    "arena match replay m.ggf": ("every export format opens again",
                                 _says("my-terra", "a b c d e f g h")),
    "arena match import m.ggf": ("a game record as a finished match",
                                 _says("imported match .* \\(ggf, othello")),
    "arena ladder create my-terra lab3 fast --games-per-pairing 4 --watch":
        ("", _says("LADDER_ID: 3 bots, 12 games", "my-terra@1", "lab3@1", "fast@1")),
    "arena ladder standings LADDER_ID": ("", _says("my-terra@1", "lab3@1", "fast@1")),
    "arena bot update my-terra --depth-end 10": ("version 2", _says(r"version\s+2\b")),
    "arena test my-terra@2 my-terra@1 --elo1 10": ("an SPRT version test",
                                                   _says(r"test \S+ started")),
    "arena analyze --preset arena-strong --match MATCH_ID --ply 20":
        ("a hint from a worker", _says("best move")),
    "arena play --mode human-bot --bot my-terra":
        ("saved as a replay", _says("my-terra@2", "saved .*json")),
    "arena play --game gomoku --size 15 --mode human-bot --bot sharpmoku-hard":
        ("", _says("sharpmoku-hard", "saved .*json")),
    "arena engine solve ffo1.obf": ("FFO #1: g8, +18", _says(r"\+18\s+g8")),
    "arena engine train othello --games 200 --seed 1 --output my-weights.npz":
        ("pattern weights", _wrote("my-weights.npz")),
}
# The ids later commands name, from what the commands that made them printed.
MADE = {"MATCH_ID": re.compile(r"^match (\S+):", re.M),
        "LADDER_ID": re.compile(r"^ladder (\S+):", re.M)}


def test_the_readme_tour_runs_as_written(
        tour: tuple[Path, list[TourCommand], subprocess.Popen[bytes]]) -> None:
    here, commands, up = tour
    lines = [command.line for command in commands]
    for listed in (*NOT_RUN, *CHEAPER, *TYPED, *SAID):
        assert listed in lines, f"the tour no longer has {listed!r}: update this test"
    # `arena up &`: "it prints the web pages' address too"
    assert "web pages' address" in commands[1].said
    wait_for_file(here / ".arena" / "stack.json", up, 300, lambda: (here / "up.log").read_text())
    ready = ""
    while "Press Ctrl-C to stop." not in ready:  # said once it has described the stack
        assert up.poll() is None, ready
        time.sleep(0.05)
        ready = (here / "up.log").read_text()
    assert re.search(r"web\s+http://127\.0\.0\.1:\d+", ready), ready

    made: dict[str, str] = {}
    for command in commands[2:]:
        if command.line in NOT_RUN or command.line == UP:
            continue
        line = command.line
        for name, value in made.items():
            line = line.replace(name, value)
        assert not re.search(r"\b[A-Z]+_ID\b", line), f"no id yet for {line!r}"
        extra, _why = CHEAPER.get(command.line, ([], ""))
        result = subprocess.run(
            ["bash", "-c", line + "".join(f" {word}" for word in extra)], cwd=here,
            env=_shell_env(), input=TYPED.get(command.line, ""), capture_output=True,
            text=True, timeout=120)
        assert result.returncode == 0, f"{line}\n{result.stdout}\n{result.stderr}"
        assert "Traceback" not in result.stderr, result.stderr
        for name, pattern in MADE.items():
            found = pattern.search(result.stdout)
            if found and name not in made and command.line.split()[:3] in (
                    ["arena", "match", "create"], ["arena", "ladder", "create"]):
                made[name] = found.group(1)
        if command.line.startswith("arena test "):  # made, not watched: stop its games
            started = re.search(r"^test (\S+) started", result.stdout, re.M)
            assert started is not None, result.stdout
            cancel = subprocess.run([BIN / "arena", "ladder", "cancel", started.group(1)],
                                    cwd=here, env=_shell_env(), capture_output=True, text=True,
                                    timeout=60)
            assert cancel.returncode == 0, cancel.stderr
        words, check = SAID.get(command.line, ("", None))
        assert words in command.said, f"the README no longer says {words!r} of {line!r}"
        if check is not None:
            shown = result.stdout
            for name, value in made.items():  # the patterns name the ids as the tour does
                shown = shown.replace(value, name)
            check(shown, here)
    assert set(made) == set(MADE), made
