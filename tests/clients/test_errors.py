"""Bad input and unreachable servers: one line on stderr, a non-zero exit, no traceback."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena.services.common.config import Config
from arena.services.common.server import build_server
from arena.services.common.tls import LocalPKI, ensure_local_pki, server_credentials

from arena.text import SHOWN_CHARS, shown
from tests.clients.conftest import InProcessStack, RunArena, assert_one_line_error, one_line_error
from tests.support.servers import ADMIN_TOKEN, Server, serve


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


SERVICE_COMMANDS = [
    ("match", "list"),
    ("match", "show", "m-1"),
    ("match", "watch", "m-1"),
    ("match", "replay", "m-1"),
    ("match", "tree", "m-1", "--ply", "1"),
    ("match", "export", "m-1"),
    ("match", "delete", "m-1"),
    ("match", "create", "--black", "lucy", "--white", "ryo"),
    ("ladder", "list"),
    ("ladder", "standings", "l-1"),
    ("ladder", "watch", "l-1"),
    ("ladder", "cancel", "l-1"),
    ("ladder", "create", "lucy", "ryo"),
    ("analyze", "--bot", "lucy"),
]


@pytest.mark.parametrize("command", SERVICE_COMMANDS, ids=" ".join)
def test_unreachable_server(run_arena: RunArena, command: tuple[str, ...]) -> None:
    port = _closed_port()
    env = {f"ARENA_{role}": f"127.0.0.1:{port}"
           for role in ("REGISTRY", "REFEREE", "LADDER", "ENGINE")}
    result = run_arena(*command, env=env)
    assert_one_line_error(result, "unreachable", f"127.0.0.1:{port}")


def test_no_stack_running_says_how_to_start_one(run_arena: RunArena) -> None:
    assert_one_line_error(run_arena("match", "list"), "no referee address", "arena up")
    assert_one_line_error(run_arena("ladder", "list"), "no ladder address")
    status = run_arena("status")  # said on stdout, as the status of a stack is
    assert status.returncode == 1 and status.stdout.startswith(
        "no Arena services known here: no referee address: start the stack with `arena up`")
    assert len(status.stdout.splitlines()) == 1 and "services: \n" not in status.stdout


def test_global_option_overrides_the_environment(run_arena: RunArena) -> None:
    port = _closed_port()
    result = run_arena("--ladder", f"127.0.0.1:{port}", "ladder", "list",
                       env={"ARENA_LADDER": "127.0.0.1:1"})
    assert_one_line_error(result, f"127.0.0.1:{port}")


@pytest.mark.parametrize("command", SERVICE_COMMANDS, ids=" ".join)
def test_global_options_may_follow_the_command(run_arena: RunArena,
                                               command: tuple[str, ...]) -> None:
    """`arena match list --token T` was "unrecognized arguments" (only `arena bot ...`
    took them there); where a command has an option of the same name, it keeps it
    (`arena match list --ladder ID` filters by ladder)."""
    port = _closed_port()
    roles = ("registry", "referee", "analysis", *(("ladder",) if command != ("match", "list")
                                                  else ()))
    where = [part for role in roles for part in (f"--{role}", f"127.0.0.1:{port}")]
    env = {f"ARENA_{role}": "127.0.0.1:1" for role in ("REGISTRY", "REFEREE", "LADDER",
                                                        "ENGINE")}
    result = run_arena(*command, *where, "--token", "t", "--timeout", "5", env=env)
    assert_one_line_error(result, "unreachable", f"127.0.0.1:{port}")


def test_corrupt_stack_file(run_arena: RunArena, tmp_path: Path) -> None:
    (tmp_path / ".arena").mkdir()
    (tmp_path / ".arena" / "stack.json").write_text("{not json")
    assert_one_line_error(run_arena("match", "list"), "stack file")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("match", "replay", "missing.json"), "no such game record file"),
        # A name no match id could be was looked up as one: "no match 'nonexist.file'".
        (("match", "replay", "nonexist.file"), "no such game record file: nonexist.file"),
        (("match", "replay", "games/missing"), "no such game record file: games/missing"),
        # a folder was looked up as a match id: 'no match '/tmp'' (or, with no stack, 'no
        # referee address')
        (("match", "replay", "/"), "cannot read game record file /: [Errno 21] Is a directory"),
        # an empty file was replayed as an Othello game of no moves (exit 0)
        (("match", "replay", "/dev/null"), "the record is empty"),
        (("match", "create", "--black", "@x", "--white", "ryo"), "bad bot reference"),
        (("match", "create", "--black", "x@\u00b2", "--white", "ryo"), "bad bot reference"),
        (("match", "create", "--black", "x@99999999999", "--white", "ryo"),
         "bad bot reference"),
        (("bot", "show", "x@0"), "bad bot reference 'x@0': expected NAME or NAME@VERSION, "
                                 "versions counting from 1"),
        # a name no bot could have was sent, and refused in the request's words:
        # "invalid request: bot.name: must be at most 64 characters" (bot_name in a list)
        (("match", "create", "--black", "b" * 65, "--white", "ryo"),
         f"bad bot reference '{'b' * 65}': the name must be at most 64 characters, got 65"),
        (("analyze", "--bot", " ryo"), "bad bot reference ' ryo': the name must not start or "
                                       "end with a space"),
        (("match", "list", "--bot", "r\u202eyo"), "bad bot reference 'r\\u202eyo': the name "
                                                 "must contain printable characters only"),
        (("match", "create", "--black", "a", "--white", "b", "--opening", "zz"),
         "invalid Othello move"),
        (("match", "create", "--black", "a", "--white", "b", "--opening", "a1"), "illegal"),
        (("match", "create", "--black", "a", "--white", "b", "--start", "XO"), "Othello"),
        # It said 'missing.json is not JSON: no such engine configuration file: ...'.
        (("analyze", "--config", "missing.json"),
         "arena: error: no such engine configuration file: missing.json"),
        (("play", "--board", "missing.brd"), "no such board file"),
        (("play", "--start", "nonsense X"), "Othello"),
        # The match was made and stored no trees, without a word.
        (("match", "create", "--black", "a", "--white", "b", "--tree-budget", "500"),
         "--tree-budget goes with --trees (the trees to store)"),
        # The analysis ran and printed no tree, without a word.
        (("analyze", "--preset", "lucy", "--tree-depth", "2"),
         "--tree-depth goes with --tree NODES (the tree to capture)"),
        # A position of the other game was refused in the first game's words alone.
        (("play", "--start", "9 freestyle " + "/".join(["-" * 9] * 9) + " X"),
         "; that is a Gomoku position, and the game here is Othello (--game, or the game of "
         "the bot or preset named)"),
        (("analyze", "--preset", "sharpmoku-hard", "--game", "gomoku", "--position",
          "-" * 27 + "OX------XO" + "-" * 27 + " X"), "; that is an Othello position, and the "
         "game here is Gomoku"),
        # It said "not a othello preset".
        (("play", "--mode", "bot-bot", "--bot", "nosuchbot"),
         "unknown bot 'nosuchbot': not one of the Othello presets (arena-fast, "),
        (("play", "--game", "gomoku", "--size", "4"), "size"),
        (("play", "--variant", "chess"), "unknown Othello variant"),
        (("play", "--mode", "human-human", "--black", "lucy"), "human on that side"),
        # It said only '/dev/null: File exists' (and '/etc/passwd/x: Not a directory').
        (("--home", "/dev/null", "up"), "the arena home /dev/null cannot be made: /dev/null "
                                        "is a file, not a folder"),
        (("--home", "/etc/passwd/x", "up"), "/etc/passwd is a file, not a folder"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else v,
)
def test_bad_input(run_arena: RunArena, args: tuple[str, ...], needle: str) -> None:
    assert_one_line_error(run_arena(*args), needle)


def test_bad_replay_file(run_arena: RunArena, tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text('{"format": "arena-replay",\n "version": 1,')
    assert_one_line_error(run_arena("match", "replay", "broken.json"), "line")
    (tmp_path / "wrong.json").write_text('{"format": "something-else"}')
    assert_one_line_error(run_arena("match", "replay", "wrong.json"))
    # '-' reads the record on standard input, as `arena match import -` does (it was
    # looked up as a match called '-').
    shown = run_arena("match", "replay", "-", "--ply", "2", stdin="f5d6c3d3c4\n")
    assert shown.returncode == 0, shown.stderr
    assert "ply 2/5: white d6" in shown.stdout, shown.stdout


def test_replay_json_prints_the_ply_asked_for_and_ply_with_all_is_refused(
        run_arena: RunArena) -> None:
    """--ply with --json printed every ply, as --all --json does, and --ply with --all
    printed every ply without a word."""
    game = "f5d6c3d3c4\n"
    one = run_arena("match", "replay", "-", "--ply", "2", "--json", stdin=game)
    assert one.returncode == 0, one.stderr
    plies = json.loads(one.stdout)["plies"]
    assert [(ply["ply"], ply["move_text"]) for ply in plies] == [(2, "d6")]
    assert_one_line_error(run_arena("match", "replay", "-", "--ply", "9", "--json",
                                    stdin=game), "ply 9 is outside this game (0..5)")
    both = run_arena("match", "replay", "-", "--ply", "3", "--all", stdin=game)
    assert both.returncode == 2 and "Traceback" not in both.stderr, both.stderr
    assert both.stderr.splitlines()[-1] == (
        "arena match replay: error: argument --all: not allowed with argument --ply")


def test_a_file_that_is_missing_empty_or_not_obf_is_named(run_arena: RunArena,
                                                         tmp_path: Path) -> None:
    """A file's error names the file and the reason (it once said ``[Errno 2] ...``), and a
    file with no position is not an endgame test that all matched."""
    missing = tmp_path / "missing.obf"
    assert_one_line_error(run_arena("engine", "solve", str(missing)),
                          f"{missing}: No such file or directory")
    (tmp_path / "empty.obf").write_text("% only a comment\n\n")
    assert_one_line_error(run_arena("engine", "solve", str(tmp_path / "empty.obf")),
                          "empty.obf: no positions")
    (tmp_path / "bad.obf").write_text("garbage\n")
    assert_one_line_error(run_arena("engine", "solve", str(tmp_path / "bad.obf")),
                          "bad.obf: line 1, column 1: expected 64 squares")


def test_bad_engine_config_file(run_arena: RunArena, tmp_path: Path) -> None:
    (tmp_path / "bot.json").write_text("[1, 2]")
    assert_one_line_error(run_arena("play", "--mode", "bot-bot", "--bot", "bot.json"),
                          "JSON object")


HUGE = str(10**14)  # beyond an int32 field, the width of most numbers in the API


@pytest.mark.parametrize(
    ("args", "option", "bound"),
    [
        (("match", "create", "--black", "a", "--white", "b", "--move-time-ms", HUGE),
         "--move-time-ms", 2**31 - 1),
        (("match", "create", "--black", "a", "--white", "b", "--seed", str(10**20)),
         "--seed", 2**63 - 1),
        (("match", "tree", "m-1", "--ply", HUGE), "--ply", 2**31 - 1),
        (("match", "tree", "m-1", "--ply", "1", "--depth", "-1"), "--depth", 0),
        (("match", "list", "--limit", "-3"), "--limit", 0),
        (("bot", "list", "--page-size", HUGE), "--page-size", 2**31 - 1),
        (("analyze", "--bot", "lucy", "--time-ms", HUGE), "--time-ms", 2**31 - 1),
        (("analyze", "--bot", "lucy", "--nodes", str(10**20)), "--nodes", 2**63 - 1),
        (("analyze", "--bot", "lucy", "--tree-depth", "-1"), "--tree-depth", 0),
        (("ladder", "create", "lucy", "ryo", "--games-per-pairing", HUGE),
         "--games-per-pairing", 2**31 - 1),
        (("ladder", "create", "lucy", "ryo", "--game-time-ms", str(10**20)),
         "--game-time-ms", 2**63 - 1),
        (("status", "--forfeits", HUGE), "--forfeits", 500),  # those it searches
        # 0 listed the default 10 ('0: 10' in the request): no number lists none
        (("status", "--forfeits", "0"), "--forfeits", 1),
        # 0 was the game's usual size (8 for Othello), where 10 was refused
        (("match", "create", "--black", "a", "--white", "b", "--size", "0"), "--size", 1),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else str(v),
)
def test_numbers_outside_their_field_name_the_option(
    run_arena: RunArena, args: tuple[str, ...], option: str, bound: int
) -> None:
    """An absurd number is a usage error naming its option and the range, before any
    request is built (it used to fail in the request's encoder: 'Value out of range')."""
    result = run_arena(*args)
    assert result.returncode == 2, result.stdout
    assert "Traceback" not in result.stderr, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    expected = ("must be 0 or more, got -" if bound == 0 else "must be at least 1, got 0"
                if bound == 1 else f"must be at most {bound}, got ")
    assert f"error: argument {option}: {expected}" in last, last


@pytest.mark.parametrize(("command", "option", "value"), [
    (("bot", "list"), "--timeout", "nan"), (("bot", "list"), "--timeout", "-1"),
    (("bot", "list"), "--timeout", "0"), (("bot", "list"), "--timeout", "inf"),
    (("workers", "scale", "2"), "--wait", "nan"),
], ids=str)
def test_a_duration_is_a_positive_number_of_seconds(
        run_arena: RunArena, command: tuple[str, ...], option: str, value: str) -> None:
    """float() takes these; as deadlines they were already past, and a registry that was
    fine "did not answer in time"."""
    args = (option, value, *command) if option == "--timeout" else (*command, option, value)
    result = run_arena(*args)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert (f"error: argument {option}: must be more than 0 and at most 86400 seconds, "
            f"got {value}") in last, last


@pytest.mark.parametrize(
    ("args", "stdin_file", "needle"),
    [
        (("bot", "register", "--name", "z", "--game", "othello", "--config", "/dev/zero"), "",
         "config file /dev/zero is over the limit of 1,048,576 bytes"),
        (("bot", "register", "--name", "z", "--from-preset", "arena-fast", "--avatar",
          "/dev/zero"), "", "avatar /dev/zero is over the limit of 262,144 bytes"),
        (("bot", "import", "/dev/zero"), "", "bot file /dev/zero is over the limit"),
        (("match", "create", "--black", "a", "--white", "b", "--start-file", "/dev/zero"), "",
         "start position file /dev/zero is over the limit"),
        (("match", "replay", "big.txt"), "", "game record file big.txt is over the limit"),
        (("match", "import", "-"), "big.txt",
         "the game record on standard input is over the limit"),
        (("play", "--board", "/dev/zero"), "", "board file /dev/zero is over the limit"),
        (("analyze", "--config", "/dev/zero"), "",
         "error: engine configuration file /dev/zero is over the limit"),
        # It read for ever, its memory growing, and printed nothing.
        (("up", "--engines", "/dev/zero"), "", "engine catalog /dev/zero is over the limit"),
        (("engine", "solve", "/dev/zero"), "", "OBF file /dev/zero is over the limit"),
        (("engine", "analyze", "--position", "start", "--config", "@/dev/zero"), "",
         "engine configuration file /dev/zero is over the limit"),
        (("engine", "nboard", "--config", "@/dev/zero"), "",
         "engine configuration file /dev/zero is over the limit"),
        (("--tls-ca", "/dev/zero", "--referee", "127.0.0.1:1", "match", "list"), "",
         "TLS CA file /dev/zero is larger"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else v,
)
def test_files_are_read_up_to_a_limit(
    run_arena: RunArena, tmp_path: Path, args: tuple[str, ...], stdin_file: str, needle: str
) -> None:
    """A file the CLI reads is read up to a limit: /dev/zero (or a huge file by mistake)
    used to hang the command while its memory grew without end."""
    (tmp_path / "big.txt").write_bytes(b"a" * (2 << 20))
    stdin = (tmp_path / stdin_file).read_text() if stdin_file else ""
    assert_one_line_error(run_arena(*args, stdin=stdin, timeout=60), needle)


@pytest.mark.parametrize("option", ["--start", "--opening"])
def test_a_huge_bad_value_is_quoted_in_part(run_arena: RunArena, option: str) -> None:
    """The error quotes the start of a bad value, not all of it: a 100 KB position used to
    come back whole on one line."""
    result = run_arena("match", "create", "--black", "a", "--white", "b", option, "z" * 100_000)
    assert_one_line_error(result, "zzz…")
    assert len(result.stderr) < 1_000, len(result.stderr)


def test_a_huge_id_is_quoted_in_part(cli_stack: InProcessStack) -> None:
    """`arena match show ID` of 100,000 characters quoted 989 of them, where an error
    quotes at most 500 of a bad value (text.shown); `match replay ID`, which takes it for a
    file name, lost the reason past them."""
    huge = "x" * 100_000
    for command, what in ((("match", "show"), "match"), (("match", "export"), "match"),
                          (("match", "tree", "--ply", "1"), "match"),
                          (("ladder", "standings"), "ladder"), (("ladder", "watch"), "ladder")):
        said = one_line_error(cli_stack.run(*command, huge))
        assert said == f"arena: error: no {what} {shown(huge)}", said[:100]
    said = one_line_error(cli_stack.run("match", "replay", huge))
    assert said == f"arena: error: {huge[:SHOWN_CHARS - 1]}…: File name too long", said[-100:]


@pytest.mark.parametrize(("command", "usage", "extra"), [
    (("analyze", "start", "--preset", "arena-strong"), "arena analyze", "start"),
    (("bot", "list", "extra"), "arena bot list", "extra"),
    (("--home", "match", "match", "list", "zz"), "arena match list", "zz"),
])
def test_an_argument_a_command_does_not_take_is_shown_with_that_commands_usage(
        run_arena: RunArena, command: tuple[str, ...], usage: str, extra: str) -> None:
    """It came with the usage of `arena` itself, which says nothing of the command's
    options (a position given without --position, here)."""
    result = run_arena(*command)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"usage: {usage} ")
    assert result.stderr.splitlines()[-1] == f"{usage}: error: unrecognized arguments: {extra}"


@pytest.mark.parametrize(("command", "option"), [
    (("analyze", "--preset", "arena-strong", "--position"), "--position"),
    (("analyze", "--preset", "arena-strong", "--match"), "--match"),
    (("match", "create", "--black", "a", "--white", "b", "--start"), "--start"),
    (("play", "--mode", "bot-bot", "--start"), "--start"),
    (("match", "list", "--bot"), "--bot"),
    (("match", "list", "--ladder"), "--ladder"),
    (("match", "usage", "--user"), "--user"),
    (("bot", "usage", "--user"), "--user"),
    (("ladder", "usage", "--user"), "--user"),
], ids=lambda v: " ".join(v[:2]) if isinstance(v, tuple) else v)
@pytest.mark.parametrize("value", ["", " \n"], ids=["empty", "blank"])
def test_an_empty_value_is_refused_not_read_as_the_option_left_out(
        run_arena: RunArena, command: tuple[str, ...], option: str, value: str) -> None:
    """`arena analyze --position "$(cat position.txt)"` with the file missing analysed
    the usual start (and `--match ""` too); `match list --bot ""` listed every match, and
    `match usage --user ""` showed your own."""
    result = run_arena(*command, value)
    usage = "arena " + " ".join(command[:1 if command[0] in ("analyze", "play") else 2])
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"{usage}: error: argument {option}: is empty; give a value, or leave the option out")


@pytest.mark.parametrize("command", [
    ("match", "create", "--black", "a", "--white", "b", "--start-file"),
    ("play", "--mode", "human-human", "--board"),
], ids=lambda v: v[0])
@pytest.mark.parametrize(("content", "needle"), [
    ("4ck+8G5/HwHXoHdwg9L0" * 200 + "\n" + "xyz " * 2_000, "holds no position: 10,000 "
     "characters where a position's text form has at most"),  # a wrong file by mistake
    ("\n \n", "is empty"),  # was played from the usual start without a word
    ("XO X", "Othello board needs 64 squares, got 2 in 'XO X'"),
], ids=["long", "blank", "short"])
def test_a_bad_position_file_is_named_not_quoted_back(
        run_arena: RunArena, tmp_path: Path, command: tuple[str, ...], content: str,
        needle: str) -> None:
    """A file that holds no position: one short line naming the file. Before, its first
    500 characters came back (a screenful in a terminal) without saying which file."""
    (tmp_path / "pos.txt").write_text(content)
    result = run_arena(*command, "pos.txt")
    assert_one_line_error(result, "file pos.txt", needle)
    assert len(result.stderr) < 250, result.stderr


def test_a_service_without_its_redis_says_so_not_that_it_is_unreachable(
        run_arena: RunArena) -> None:
    """A service that answers UNAVAILABLE itself (its Redis is down or stalled) is not
    unreachable: the CLI used to say "referee unreachable at ... (storage unavailable ...);
    is the stack running (`arena up`)?" of a stack that was running."""
    url = f"redis://127.0.0.1:{_closed_port()}/0"
    config = Config(redis_url=url, cache_url=url, registry="127.0.0.1:1",
                    referee="127.0.0.1:1", service_token=ADMIN_TOKEN, warm_games="")
    servers = {"referee": serve("referee", config), "ladder": serve("ladder", config)}
    try:
        for role, command in (("referee", ("match", "list")), ("ladder", ("ladder", "list"))):
            target = servers[role].target
            result = run_arena(*command, env={f"ARENA_{role.upper()}": target,
                                              "ARENA_TOKEN": ADMIN_TOKEN})
            assert_one_line_error(result, f"{role} at {target} cannot answer now: no "
                                          "connection to Redis (ConnectionError); retry in a few")
            assert "unreachable" not in result.stderr, result.stderr
    finally:
        for server in servers.values():
            server.stop()


@pytest.fixture(scope="module")
def pkis(tmp_path_factory: pytest.TempPathFactory) -> dict[str, LocalPKI]:
    """The stack's CA and certificates, and another stack's."""
    base = tmp_path_factory.mktemp("pki")
    return {"ours": ensure_local_pki(base / "ours"), "theirs": ensure_local_pki(base / "theirs")}


@pytest.fixture(scope="module")
def tls_referees(pkis: dict[str, LocalPKI]) -> Iterator[dict[str, Server]]:
    """A referee serving plaintext, one serving TLS and one serving mutual TLS, with our
    certificates. Their Redis is down: a call that gets through is answered "cannot answer
    now", and the stack needs nothing else."""
    ours = pkis["ours"]
    url = f"redis://127.0.0.1:{_closed_port()}/0"
    config = Config(redis_url=url, cache_url=url, registry="127.0.0.1:1",
                    referee="127.0.0.1:1", service_token=ADMIN_TOKEN, warm_games="")
    tls = config.replace(tls_cert_file=str(ours.service_cert),
                         tls_key_file=str(ours.service_key))
    servers = {"plaintext": serve("referee", config), "tls": serve("referee", tls),
               "mutual-tls": serve("referee", tls.replace(tls_client_ca_file=str(ours.ca_file)))}
    yield servers
    for server in servers.values():
        server.stop()


def _tls_options(pkis: dict[str, LocalPKI], ca: str = "", cert: str = "") -> list[str]:
    """The CLI's TLS options for the CA of ``ca`` and the client certificate of ``cert``
    ("ours", "theirs" or "" for none)."""
    options = ["--tls-ca", str(pkis[ca].ca_file)] if ca else []
    if cert:
        options += ["--tls-cert", str(pkis[cert].client_cert),
                    "--tls-key", str(pkis[cert].client_key)]
    return options


TLS_MISTAKES = [
    # (the server, the caller's CA and client certificate, what the error says)
    ("tls", "", "", ("arena: error: referee at {target} hung up without answering: it likely "
                     "serves TLS; give its CA (--tls-ca or ARENA_TLS_CA_FILE; `arena up --tls` "
                     "writes ca.pem to tls/ in its home (--home, ARENA_HOME, else .arena)), "
                     "or it is stopping",)),
    ("mutual-tls", "", "", ("referee at {target} hung up without answering: it likely serves "
                            "TLS; give its CA",)),
    ("plaintext", "ours", "", ("arena: error: referee at {target} does not speak TLS (the TLS "
                               "handshake got a plaintext answer): leave out the CA {ours_ca} "
                               "(--tls-ca, ARENA_TLS_CA_FILE or the stack file's tls section), "
                               "or start the stack with `arena up --tls`",)),
    ("tls", "theirs", "", ("arena: error: TLS handshake with the referee at {target} failed (",
                           "): is {theirs_ca} the CA of that stack (--tls-ca or "
                           "ARENA_TLS_CA_FILE; `arena up --tls` writes ca.pem to tls/ in its "
                           "home (--home, ARENA_HOME, else .arena))?")),
    ("mutual-tls", "ours", "", ("arena: error: referee at {target} hung up in the TLS "
                                "handshake: it likely requires a client certificate (mutual "
                                "TLS); give one (--tls-cert and --tls-key, or "
                                "ARENA_TLS_CERT_FILE and ARENA_TLS_KEY_FILE; `arena up "
                                "--mutual-tls` writes client.pem and client.key to tls/ in its "
                                "home (--home, ARENA_HOME, else .arena)), or it is stopping",)),
    ("mutual-tls", "ours", "theirs", ("arena: error: referee at {target} hung up in the TLS "
                                      "handshake: it likely refused the client certificate "
                                      "{theirs_cert} (is it of that stack's CA?",)),
]


@pytest.mark.parametrize(("server", "ca", "cert", "needles"), TLS_MISTAKES, ids=[
    "plaintext-caller-of-tls", "plaintext-caller-of-mutual-tls", "tls-caller-of-plaintext",
    "another-stacks-ca", "no-client-certificate", "another-stacks-client-certificate"])
def test_a_tls_mistake_says_what_is_likely_wrong_not_that_the_stack_is_down(
        run_arena: RunArena, tls_referees: dict[str, Server], pkis: dict[str, LocalPKI],
        server: str, ca: str, cert: str, needles: tuple[str, ...]) -> None:
    """Every one of these said "referee unreachable at HOST:PORT (... Socket closed); is
    the stack running (`arena up`)?" of a stack that was running: the caller had left out
    the CA of a TLS stack, given one to a plaintext stack, given another stack's CA, or
    no client certificate (or another stack's) where mutual TLS wants one."""
    target = tls_referees[server].target
    result = run_arena(*_tls_options(pkis, ca, cert), "match", "list",
                       env={"ARENA_REFEREE": target, "ARENA_TOKEN": ADMIN_TOKEN})
    named = {"target": target, "ours_ca": pkis["ours"].ca_file,
             "theirs_ca": pkis["theirs"].ca_file, "theirs_cert": pkis["theirs"].client_cert}
    assert_one_line_error(result, *(needle.format(**named) for needle in needles))
    assert "is the stack running" not in result.stderr and "unreachable" not in result.stderr


def test_arena_status_says_a_tls_mistake_too(
        run_arena: RunArena, tls_referees: dict[str, Server], pkis: dict[str, LocalPKI]) -> None:
    """`arena status` asked each service's health and said only "the referee does not
    answer its health check" of a TLS stack called without its CA; now the reason, as
    every other command gives it, in the text and in --json."""
    target = tls_referees["tls"].target
    env = {"ARENA_REFEREE": target, "ARENA_TOKEN": ADMIN_TOKEN}
    result = run_arena("status", env=env)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "services: referee DOWN" in result.stdout, result.stdout
    assert (f"the referee does not answer its health check: referee at {target} hung up "
            "without answering: it likely serves TLS") in result.stdout, result.stdout
    result = run_arena("status", "--json", env=env)
    reply = json.loads(result.stdout)
    assert reply["services"] == {"referee": False}
    assert "it likely serves TLS" in reply["services_down"]["referee"], reply
    result = run_arena(*_tls_options(pkis, "ours"), "status", env=env)  # the right CA
    assert "services: referee up" in result.stdout, result.stdout


def test_tls_files_from_the_environment_are_named_and_the_right_ones_get_through(
        run_arena: RunArena, tls_referees: dict[str, Server], pkis: dict[str, LocalPKI]) -> None:
    """The variables instead of the options; and with the right files the call gets
    through (to the Redis that is down), so the servers above serve TLS as they should."""
    ours, theirs = pkis["ours"], pkis["theirs"]
    target = tls_referees["tls"].target
    env = {"ARENA_REFEREE": target, "ARENA_TOKEN": ADMIN_TOKEN,
           "ARENA_TLS_CA_FILE": str(theirs.ca_file)}
    assert_one_line_error(run_arena("match", "list", env=env),
                          f"is {theirs.ca_file} the CA of that stack")
    env["ARENA_TLS_CA_FILE"] = str(ours.ca_file)
    assert_one_line_error(run_arena("match", "list", env=env),
                          f"referee at {target} cannot answer now: no connection to Redis")
    target = tls_referees["mutual-tls"].target
    env |= {"ARENA_REFEREE": target, "ARENA_TLS_CERT_FILE": str(ours.client_cert),
            "ARENA_TLS_KEY_FILE": str(ours.client_key)}
    assert_one_line_error(run_arena("match", "list", env=env),
                          f"referee at {target} cannot answer now: no connection to Redis")


def test_a_certificate_that_does_not_name_the_host_called_says_so(
        run_arena: RunArena, pkis: dict[str, LocalPKI]) -> None:
    """Our certificates name localhost, 127.0.0.1 and ::1; a server at 127.0.0.2 (another
    host, as far as TLS knows) was "unreachable ...; is the stack running"."""
    ours = pkis["ours"]
    handle = build_server([], [], "127.0.0.2:0", credentials=server_credentials(Config(
        tls_cert_file=str(ours.service_cert), tls_key_file=str(ours.service_key)))).start()
    try:
        target = f"127.0.0.2:{handle.port}"
        result = run_arena(*_tls_options(pkis, "ours"), "match", "list",
                           env={"ARENA_REFEREE": target, "ARENA_TOKEN": ADMIN_TOKEN})
    finally:
        handle.stop(0)
    assert_one_line_error(result, f"arena: error: TLS handshake with the referee at {target} "
                                  "failed: its certificate does not name 127.0.0.2; call it by "
                                  "a name it holds (`arena up --tls`: localhost, 127.0.0.1, ::1)")
    assert "is the stack running" not in result.stderr


@pytest.mark.parametrize("token", ["s3cr3t\r", "s3cr3té", "s3cr3t\x7f"],
                         ids=["CR", "non-ASCII", "DEL"])
def test_a_token_no_header_can_carry_is_named_not_an_internal_error(
        run_arena: RunArena, token: str) -> None:
    """A token pasted with a stray character (a CR from a Windows file, an accented
    letter): gRPC refuses the header on the client, and the CLI used to print C-core's
    log lines and 'referee failed (INTERNAL): Invalid metadata'. The token itself is a
    secret: the message names the character, not the token."""
    result = run_arena("match", "list", env={"ARENA_REFEREE": f"127.0.0.1:{_closed_port()}",
                                             "ARENA_TOKEN": token})
    bad = next(char for char in token if not " " <= char <= "~")
    assert_one_line_error(result, "token", f"U+{ord(bad):04X}", "ARENA_TOKEN")
    assert "INTERNAL" not in result.stderr and "s3cr3t" not in result.stderr


def test_a_catalog_or_obf_file_that_is_not_text_is_named(run_arena: RunArena,
                                                         tmp_path: Path) -> None:
    """Before: "arena: error: 'utf-8' codec can't decode byte 0xff in position 0: invalid
    start byte", naming no file."""
    (tmp_path / "engines.toml").write_bytes(b"\xff\xfe[engines]\n")
    result = run_arena("up", "--engines", "engines.toml", timeout=60)
    assert_one_line_error(result, "engine catalog engines.toml is not UTF-8 text")
    result = run_arena("engine", "solve", "engines.toml", timeout=60)
    assert_one_line_error(result, "OBF file engines.toml is not UTF-8 text")
    result = run_arena("engine", "analyze", "--position", "start", "--config", "@engines.toml",
                       timeout=60)
    assert_one_line_error(result, "engine configuration file engines.toml is not UTF-8 text")


def test_a_record_or_bot_file_that_is_not_text_says_so(run_arena: RunArena,
                                                        tmp_path: Path) -> None:
    """Before: "cannot read game record file -: 'utf-8' codec can't decode byte 0xff in
    position 0: invalid start byte", standard input called a file named '-'."""
    (tmp_path / "record.bin").write_bytes(b"\xff\xfe")
    with open(tmp_path / "record.bin", "rb") as stdin:  # as the shell's `<`
        result = run_arena("match", "import", "-", stdin=stdin)
    assert_one_line_error(result, "arena: error: the game record on standard input is not "
                                  "UTF-8 text: byte 1 is 0xff")
    (tmp_path / "bot.toml").write_bytes(b'name = "caf\xe9"\n')
    assert_one_line_error(run_arena("bot", "import", "bot.toml"),
                          "arena: error: bot file bot.toml is not UTF-8 text: byte 12 is 0xe9")


@pytest.mark.parametrize(("args", "flag", "given"), [
    (("ladder", "create", "--games-per-pairing", "٣"), "--games-per-pairing", "٣"),
    (("match", "create", "--move-time-ms", "３００"), "--move-time-ms", "３００"),
    (("match", "replay", "-", "--ply", "٣"), "--ply", "٣"),
    (("engine", "perft", "--depth", "٣"), "--depth", "٣"),
    (("engine", "solve", "p.obf", "--time-ms", "1_000"), "--time-ms", "1_000"),
    (("engine", "train", "othello", "--output", "w.npz", "--games", " 3"), "--games", " 3"),
    (("engine", "nboard", "--depth", "²"), "--depth", "²"),
    (("bot", "register", "--name", "b", "--depth-end", "٣"), "--depth-end", "٣"),
    (("workers", "scale", "٣"), "count", "٣"),
], ids=lambda v: " ".join(v) if isinstance(v, tuple) else None)
def test_an_integer_option_takes_the_digits_0_to_9_as_files_do(
        run_arena: RunArena, args: tuple[str, ...], flag: str, given: str) -> None:
    """argparse's ``type=int`` took any script's digits, '1_000' and spaces; every
    integer option now says what a file says of them."""
    result = run_arena(*args, stdin="f5d6c3\n")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    said = f"argument {flag}: not an integer: {given!r}"
    other = next((char for char in given if char.isdigit() and not char.isascii()), None)
    if other is not None:
        said += f" (it has {other!r}, U+{ord(other):04X}: write numbers with the digits 0-9)"
    assert result.stderr.splitlines()[-1].endswith(said), result.stderr


@pytest.mark.parametrize(("args", "refused"), [
    (("match", "create", "--black", "a", "--white", "b", "--start", "start", "--start-file",
      "st.txt"), "argument --start-file: not allowed with argument --start"),
    (("bot", "update", "n", "--no-avatar", "--avatar", "a.png"),
     "argument --avatar: not allowed with argument --no-avatar"),
    (("play", "--mode", "human-human", "--save", "p1.json", "--no-save"),
     "argument --no-save: not allowed with argument --save"),
    (("bot", "register", "--name", "y1", "--from-preset", "terra", "--evaluator", "arena"),
     "argument --evaluator: not allowed with argument --from-preset/--preset"),
    (("bot", "update", "y1", "--evaluator", "arena", "--preset", "terra"),
     "argument --from-preset/--preset: not allowed with argument --evaluator"),
    (("match", "watch", "m-1", "--json", "--no-board"),
     "argument --no-board: not allowed with argument --json"),
    (("match", "tree", "m-1", "--ply", "1", "--color", "--json"),
     "argument --json: not allowed with argument --color"),
    # No group can say these: --force goes with --save, and --set with a preset, but not
    # --force with --no-save, nor --set evaluator=... with a preset or with --evaluator.
    (("play", "--mode", "human-human", "--no-save", "--force"),
     "argument --force: not allowed with argument --no-save"),
    (("bot", "register", "--name", "y2", "--from-preset", "terra", "--set", "evaluator=arena"),
     "argument --set evaluator: not allowed with argument --from-preset/--preset"),
    (("bot", "update", "y2", "--set", " evaluator = arena", "--preset", "terra"),
     "argument --set evaluator: not allowed with argument --from-preset/--preset"),
    (("bot", "register", "--name", "y3", "--evaluator", "arena", "--set", "evaluator=lab"),
     "argument --set evaluator: not allowed with argument --evaluator"),
    (("ladder", "create", "a", "b", "--openings-file", "o.txt", "--openings",
      "othello-balanced"), "argument --openings: not allowed with argument --openings-file"),
    (("test", "--openings", "othello-balanced", "--openings-file", "o.txt", "a@2", "a@1"),
     "argument --openings-file: not allowed with argument --openings"),
], ids=lambda v: " ".join(v) if isinstance(v, tuple) else None)
def test_options_that_contradict_each_other_are_refused_naming_both(
        run_arena: RunArena, args: tuple[str, ...], refused: str) -> None:
    """One of each pair won silently (the file over --start, --no-save over --save, the
    text options under --json, --no-save over --force, the preset's evaluator or
    --evaluator over --set's), or gave another error (--no-avatar with --avatar: 'nothing
    changed'; a preset with another evaluator: every key of the preset it lacks; a suite
    with --openings-file: a one-line error of exit status 1, in words of its own)."""
    result = run_arena(*args, stdin="quit\n")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    command = " ".join(word for word in args[:2] if not word.startswith("-"))
    assert result.stderr.splitlines()[-1] == f"arena {command}: error: {refused}"
