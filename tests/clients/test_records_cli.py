"""`arena match replay FILE` opens every export format, and `arena match import FILE` stores
a record as a finished match that shows, replays and exports like a played one."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from arena.formats import Replay, ReplayMove, psq_from_moves, write_psq, write_replay
from arena.games import GomokuBoard, OthelloBoard
from tests.clients.conftest import (
    InProcessStack,
    RunArena,
    assert_one_line_error,
    ok,
    one_line_error,
)

SUFFIXES = {"native": "json", "ggf": "ggf", "transcript": "txt"}


def _board(frame: str) -> list[str]:
    """The board rows of a replay frame (the move line above them differs by format)."""
    return [line for line in frame.splitlines() if line[:1].isdigit()]


def _played_match(stack: InProcessStack) -> str:
    run = stack.run
    ok(run("bot", "register", "--name", "lab-a", "--from-preset", "lab-beginner"))
    ok(run("bot", "register", "--name", "lab-b", "--from-preset", "lab-intermediate"))
    created = json.loads(ok(run("match", "create", "--black", "lab-a", "--white", "lab-b",
                                "--opening", "f5 d6", "--move-time-ms", "500", "--json")))
    ok(run("match", "watch", created["id"], "--no-board"))
    return str(created["id"])


def test_every_export_replays_and_imports_back(cli_stack: InProcessStack,
                                               tmp_path: Path) -> None:
    run = cli_stack.run
    match_id = _played_match(cli_stack)
    shown = json.loads(ok(run("match", "show", match_id, "--json")))
    plies = 2 + len(shown["moves"])  # the opening's two moves come first in a replay
    # `match show` lists the opening before the bots' moves (it once left it out: the moves
    # line alone did not replay, and an import said 2 moves fewer than its result line).
    assert "\nopening  f5 d6\nmoves    " in ok(run("match", "show", match_id))
    played = _board(ok(run("match", "replay", match_id, "--ply", str(plies))))
    transcript = ok(run("match", "export", match_id, "--format", "transcript"))
    for fmt, suffix in SUFFIXES.items():
        path = f"m.{suffix}"
        ok(run("match", "export", match_id, "--format", fmt, "-o", path))
        assert _board(ok(run("match", "replay", path, "--ply", str(plies)))) == played, fmt
        imported = ok(run("match", "import", path))
        assert imported.startswith("imported match ") and f"({fmt}, othello" in imported
        assert f"8x8, {plies} moves): " in imported, imported
        new_id = imported.split()[2]
        assert _board(ok(run("match", "replay", new_id, "--ply", str(plies)))) == played
        assert ok(run("match", "export", new_id, "--format", "transcript")) == transcript
        assert f"imported from a {fmt} record" in ok(run("match", "show", new_id))
        if fmt == "native":  # its times are the played match's (they were the import's)
            again = json.loads(ok(run("match", "show", new_id, "--json")))
            assert (again["created_at"], again["finished_at"]) == (shown["created_at"],
                                                                   shown["finished_at"])
        assert new_id in ok(run("match", "list", "--limit", "0"))
    ok(run("match", "delete", new_id))
    # A record may name its players anything, and anyone may import one: one that names
    # lab-a is no game of that bot, on the command line or its web page.
    # A file that is there was overwritten without a word (arena bot export refuses).
    Path("m.json").write_text("mine")
    one_line_error(run("match", "export", match_id, "-o", "m.json"),
                   "m.json exists (use --force to overwrite)")
    assert Path("m.json").read_text() == "mine"
    ok(run("match", "export", match_id, "--format", "native", "-o", "m.json", "--force"))
    forged = Path("m.json").read_text().replace('"lab-a v1"', '"lab-a"')
    Path("forged.json").write_text(forged)
    forged_id = ok(run("match", "import", "forged.json")).split()[2]
    assert "black    lab-a\n" in ok(run("match", "show", forged_id))
    # no clock either ('1,000 ms a move', the default, was shown)
    assert "clock    none (a game record)\n" in ok(run("match", "show", forged_id))
    assert forged_id not in ok(run("match", "list", "--bot", "lab-a", "--limit", "0"))
    assert match_id in ok(run("match", "list", "--bot", "lab-a", "--limit", "0"))


def test_a_record_saved_with_a_byte_order_mark_and_windows_newlines_reads_as_it_is(
        cli_stack: InProcessStack, tmp_path: Path) -> None:
    """Windows Notepad saves UTF-8 with a byte order mark first and CRLF line ends. Before:
    every format was refused ("not a native replay, GGF or PSQ record, nor an Othello
    transcript (... got '\\ufeff(')"), on the command line and through the API."""
    run = cli_stack.run
    match_id = _played_match(cli_stack)
    plies = 2 + len(json.loads(ok(run("match", "show", match_id, "--json")))["moves"])
    played = _board(ok(run("match", "replay", match_id, "--ply", str(plies))))
    transcript = ok(run("match", "export", match_id, "--format", "transcript"))
    client = cli_stack.client()
    for fmt, suffix in SUFFIXES.items():
        text = ok(run("match", "export", match_id, "--format", fmt))
        saved = tmp_path / f"notepad.{suffix}"
        saved.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
        assert _board(ok(run("match", "replay", saved.name, "--ply", str(plies)))) == played
        imported = ok(run("match", "import", saved.name))
        assert f"({fmt}, othello" in imported, imported
        new_id = imported.split()[2]
        assert ok(run("match", "export", new_id, "--format", "transcript")) == transcript
        # The API reads the mark as the command line does (the web and SDK send text).
        stored = client.import_match("\ufeff" + text)
        assert ok(run("match", "export", stored.id, "--format", "transcript")) == transcript
    # The mark is left out, not the check of what follows it: a bad byte is named where it is.
    (tmp_path / "bad.txt").write_bytes(b"\xef\xbb\xbff5\xff")
    one_line_error(run("match", "import", "bad.txt"),
                   "game record file bad.txt is not UTF-8 text: byte 6 is 0xff")
    # A bot file too (tomllib refused the mark: "Invalid statement (at line 1, column 1)").
    ok(run("bot", "export", "lab-a", "-o", "lab-a.toml"))
    bot = Path("lab-a.toml").read_text().replace('name = "lab-a"', 'name = "lab-c"')
    Path("lab-c.toml").write_bytes(b"\xef\xbb\xbf" + bot.replace("\n", "\r\n").encode())
    assert "lab-c" in ok(run("bot", "import", "lab-c.toml"))


def test_show_says_where_and_when_an_imported_record_was_played(
        cli_stack: InProcessStack) -> None:
    """A GGF's DT and PC are kept (Match.origin) and exported again, but `arena match show`
    said nothing of them."""
    run = cli_stack.run
    records = {"(;GM[Othello]PC[NIOS]DT[2003.01.02_03:04:05.UTC]B[F5];)":
               "on 2003.01.02_03:04:05.UTC at NIOS",
               "(;GM[Othello]PC[NIOS]B[F5];)": "at NIOS"}
    for record, said in records.items():
        Path("nios.ggf").write_text(record)
        match_id = ok(run("match", "import", "nios.ggf")).split()[2]
        assert f"(its players name no bot)\nplayed   {said}\n" in ok(run("match", "show",
                                                                        match_id))
    shown = json.loads(ok(run("match", "show", match_id, "--json")))
    assert shown["origin"] == {"place": "NIOS"}
    # and when it was recorded here: only --json said (the import's time, for a GGF)
    created = datetime.fromisoformat(shown["created_at"]).astimezone(UTC)
    finished = datetime.fromisoformat(shown["finished_at"]).astimezone(UTC)
    assert (f"\ncreated  {created.isoformat(timespec='seconds')}\nfinished "
            f"{finished.isoformat(timespec='seconds')}\n") in ok(run("match", "show", match_id))
    Path("plain.ggf").write_text("(;GM[Othello]B[F5];)")  # nothing said: no line
    match_id = ok(run("match", "import", "plain.ggf")).split()[2]
    assert "played " not in ok(run("match", "show", match_id))
    assert "origin" not in json.loads(ok(run("match", "show", match_id, "--json")))


def test_a_game_from_another_start_is_no_transcript(cli_stack: InProcessStack) -> None:
    """A transcript is moves alone, read from the standard start: a game from a custom
    start was exported as one all the same, and imported back it failed ('illegal move
    c2 in ...' the standard start), or became another game. It is refused, naming the
    formats that hold the game; those still export and import back."""
    run = cli_stack.run
    ok(run("bot", "register", "--name", "lab-a", "--from-preset", "lab-beginner"))
    ok(run("bot", "register", "--name", "lab-b", "--from-preset", "lab-intermediate"))
    start = "------------------XO-------OX------OXX-----O-------------------- X"  # f5 d6 c3 d3
    created = json.loads(ok(run("match", "create", "--black", "lab-a", "--white", "lab-b",
                                "--start", start, "--move-time-ms", "500", "--json")))
    ok(run("match", "watch", created["id"], "--no-board"))
    one_line_error(run("match", "export", created["id"], "--format", "transcript"),
                   "a transcript holds moves from the standard start only",
                   "exports as native, ggf")
    for fmt, suffix in (("native", "json"), ("ggf", "ggf")):
        ok(run("match", "export", created["id"], "--format", fmt, "-o", f"m.{suffix}"))
        assert f"({fmt}, othello" in ok(run("match", "import", f"m.{suffix}"))


def test_import_refuses_a_bad_record_in_one_line(cli_stack: InProcessStack,
                                                 tmp_path: Path) -> None:
    (tmp_path / "bad.txt").write_text("f5d6c3\nf5\n")
    one_line_error(cli_stack.run("match", "import", "bad.txt"), "line 2", "illegal move 'f5'")
    one_line_error(cli_stack.run("match", "import", "missing.ggf"), "no such game record file")


def test_an_international_transcript_without_its_variant_says_to_give_it(
        cli_stack: InProcessStack, tmp_path: Path) -> None:
    """A transcript cannot say its variant: an international game (four centre moves
    first) was refused as 'illegal move 'd4' in ...' the standard start, with no word of
    --variant."""
    (tmp_path / "intl.txt").write_text("d4e4d5e5f3c3d3e3\n")
    hint = "reads as a game of the international variant", "--variant international"
    one_line_error(cli_stack.run("match", "import", "intl.txt"), "illegal move 'd4'", *hint)
    one_line_error(cli_stack.run("match", "replay", "intl.txt"), "illegal move 'd4'", *hint)
    assert "(transcript, othello international 8x8, 8 moves)" in ok(
        cli_stack.run("match", "import", "intl.txt", "--variant", "international"))
    # A record no variant reads says nothing of one.
    (tmp_path / "bad.txt").write_text("f5d6c3\nf5\n")
    assert "variant" not in one_line_error(cli_stack.run("match", "import", "bad.txt"))


def test_a_variant_the_record_s_game_has_not_is_the_variant_s_fault(
        cli_stack: InProcessStack, tmp_path: Path) -> None:
    """A PSQ record imported with --variant international was refused as 'content: line 1,
    column 11: unknown Gomoku rule ...', blaming the file for the option."""
    (tmp_path / "g.psq").write_text("Piskvorky 15x15, 0:0, 0\n8,8,0\n")
    (tmp_path / "t.txt").write_text("f5d6\n")
    for path, variant, said in (
            ("g.psq", "international", "a psq record holds Gomoku games, which have no variant "
                                       "'international'; known: freestyle, exact-five"),
            ("t.txt", "exact-five", "a transcript record holds Othello games, which have no "
                                    "variant 'exact-five'; known: standard, international")):
        imported = one_line_error(cli_stack.run("match", "import", path, "--variant", variant))
        assert imported == f"arena: error: --variant: {said}", imported
        replayed = one_line_error(cli_stack.run("match", "replay", path, "--variant", variant))
        assert replayed == f"arena: error: {said}", replayed


def test_a_record_of_a_board_arena_does_not_play_says_its_size_and_where(
        cli_stack: InProcessStack, tmp_path: Path) -> None:
    """A Gomocup record of the 20x20 board was refused as 'Gomoku is played on 9x9 or
    15x15 or 19x19, not size 20': neither the record nor the place in it that said 20
    was named. The replay of it, which reads any board, still shows it."""
    (tmp_path / "g20.psq").write_text("Piskvorky 20x20, 0:0, 0\n10,10,0\n11,10,0\n")
    said = one_line_error(cli_stack.run("match", "import", "g20.psq"))
    assert said == ("arena: error: the record: line 1, column 11: a 20x20 board: Arena plays "
                    "Gomoku on 9x9, 15x15 or 19x19 only"), said
    assert "gomoku (freestyle, 20x20)" in ok(cli_stack.run("match", "replay", "g20.psq",
                                                           "--ply", "2"))
    assert ok(cli_stack.run("match", "list")).strip() == "no matches"  # nothing stored


def test_every_command_that_writes_a_file_refuses_a_folder_in_the_same_words(
        cli_stack: InProcessStack, tmp_path: Path) -> None:
    """'arena match export ID -o /tmp' said "cannot write /tmp: [Errno 21] Is a directory:
    '/tmp'" and 'arena bot export NAME -o /tmp' said '/tmp: Is a directory', each once it
    had fetched what it would write; 'arena play --save' a third thing. One check says it
    for all three, before anything is asked or played."""
    (tmp_path / "t.txt").write_text("f5d6\n")
    match_id = ok(cli_stack.run("match", "import", "t.txt")).split()[2]
    ok(cli_stack.run("bot", "register", "--name", "lab-w", "--from-preset", "lab-beginner"))
    folder = tmp_path / "out"
    folder.mkdir()
    for command, option in ((("match", "export", match_id, "-o"), "-o/--output"),
                            (("bot", "export", "lab-w", "--output"), "-o/--output"),
                            (("play", "--mode", "human-human", "--save"), "--save")):
        said = one_line_error(cli_stack.run(*command, str(folder), stdin="f5\n"))
        assert said == f"arena: error: {folder} is a folder: {option} takes the file to write"
    assert list(folder.iterdir()) == []
    # What else stops a write is said one way too, naming the file.
    missing = tmp_path / "no-such-folder" / "m.json"
    for command in (("match", "export", match_id, "-o"), ("bot", "export", "lab-w", "-o")):
        said = one_line_error(cli_stack.run(*command, str(missing)))
        assert said == f"arena: error: cannot write {missing}: No such file or directory"


def test_a_gomoku_result_counts_moves_not_stones(cli_stack: InProcessStack,
                                                 tmp_path: Path) -> None:
    """Stones are no Gomoku score: 'arena match show' said '1-0 (normal, 5-4)', as if
    Black had won by five stones to four (and a forfeit's 1-0 game points read the same)."""
    board = GomokuBoard(15)
    for text in ["h8", "a1", "i8", "a2", "j8", "a3", "k8", "a4", "l8"]:
        board.push_str(text)
    (tmp_path / "won.psq").write_text(write_psq(psq_from_moves(15, board.move_stack)))
    imported = ok(cli_stack.run("match", "import", "won.psq"))
    assert imported.endswith("(white), 1-0 (normal, 9 moves)\n"), imported
    match_id = imported.split()[2]
    assert "status   1-0 (normal, 9 moves)\n" in ok(cli_stack.run("match", "show", match_id))
    # A list carries no moves: the result alone.
    assert f"{match_id}  black  white  1-0 (normal)\n" in ok(cli_stack.run("match", "list"))
    (tmp_path / "t.txt").write_text("d3c3b3d2e1d6d7e3f4\n")  # Othello's discs are its score
    assert ok(cli_stack.run("match", "import", "t.txt")).endswith(", 1-0 (normal, 13-0)\n")


def test_match_list_columns_line_up_under_their_heads(cli_stack: InProcessStack,
                                                      tmp_path: Path) -> None:
    """Columns were as wide as their widest name, not their head: with players 'x' and
    'y' the white column began under 'black'."""
    moves = [112, 113, 97, 98, 82]
    (tmp_path / "g.psq").write_text(write_psq(psq_from_moves(15, moves, names=("x", "y"))))
    match_id = ok(cli_stack.run("match", "import", "g.psq")).split()[2]
    head, row = ok(cli_stack.run("match", "list")).splitlines()
    assert head == f"{'id':<{len(match_id)}}  black  white  result"
    assert row.startswith(f"{match_id}  x      y      void (unfinished"), row


def test_an_imported_match_has_no_trees_whatever_its_options(cli_stack: InProcessStack,
                                                             tmp_path: Path) -> None:
    """arena match tree of an imported record advised creating it with --trees."""
    (tmp_path / "t.txt").write_text("f5d6c3\n")
    match_id = ok(cli_stack.run("match", "import", "t.txt")).split()[2]
    said = one_line_error(cli_stack.run("match", "tree", match_id, "--ply", "1"))
    assert said == (f"arena: error: match {match_id} was imported from a transcript record, "
                    "which holds no search trees (a match played here stores them when "
                    "created with --trees)"), said


def test_replay_opens_psq_and_transcripts_without_services(run_arena: RunArena,
                                                          tmp_path: Path) -> None:
    moves = [112, 113, 97, 98, 82]  # h8 i8 h7 i7 h6
    (tmp_path / "g.psq").write_text(write_psq(psq_from_moves(15, moves, names=("x", "y"))))
    shown = run_arena("match", "replay", "g.psq", "--ply", "5")
    assert shown.returncode == 0, shown.stderr
    assert "black x vs white y" in shown.stdout and "ply 5/5" in shown.stdout
    exact = run_arena("match", "replay", "g.psq", "--variant", "exact-five", "--json")
    assert json.loads(exact.stdout)["variant"] == "exact-five"
    (tmp_path / "t.txt").write_text("f5d6c3d3c4\n")
    assert "ply 5/5" in run_arena("match", "replay", "t.txt", "--ply", "5").stdout
    (tmp_path / "bad.ggf").write_text("(;GM[Othello]B[Z9];)")
    assert_one_line_error(run_arena("match", "replay", "bad.ggf"), "line 1", "Z9")


def test_a_record_that_names_no_player_replays_with_them_called_by_colour(
        run_arena: RunArena, tmp_path: Path) -> None:
    """A GGF without PB and PW (or a native replay with empty names) replayed as 'black  vs
    white ', the names left empty; a transcript's players, and an imported record's unnamed
    ones, are called by their colour."""
    (tmp_path / "g.ggf").write_text("(;GM[Othello]TY[8]B[f5]W[d6];)\n")
    native = Replay.new(OthelloBoard(), "", " ")
    native.moves = [ReplayMove(move=37, time_ms=1)]
    (tmp_path / "n.json").write_text(write_replay(native))
    (tmp_path / "t.txt").write_text("f5d6\n")
    for name, plies in (("g.ggf", 2), ("n.json", 1), ("t.txt", 2)):
        shown = run_arena("match", "replay", name, "--ply", "0")
        assert shown.returncode == 0, shown.stderr
        assert (f"othello (standard, 8x8): black black vs white white, {plies} moves"
                in shown.stdout), shown.stdout


def test_a_psq_move_line_written_wrong_is_refused_not_read_as_player_names(
        cli_stack: InProcessStack, tmp_path: Path) -> None:
    """'9,9,x' after the first move was read as the start of the trailer: the record
    replayed and imported with 1 move, black named '9,9,x' and white '10,10,0'."""
    for bad in ("9,9,x", "9,9,1.5", "9,9,nan", "9 9 0"):
        (tmp_path / "q.psq").write_text(f"Piskvorky 15x15, 0:0, 0\n8,8,0\n{bad}\n10,10,0\n"
                                        "7,7,0\n")
        said = f"line 3, column 1: move {bad!r} is not 'x,y,time'"
        one_line_error(cli_stack.run("match", "replay", "q.psq"), said)
        one_line_error(cli_stack.run("match", "import", "q.psq"), said)
    assert ok(cli_stack.run("match", "list")).strip() == "no matches"
    # What Piskvork writes after the moves is still the trailer: names, a code, a result.
    (tmp_path / "g.psq").write_text("Piskvorky 15x15, 0:0, 0\n8,8,0\n9,9,5\nAlphaZero 1\n"
                                    "AlphaZero 2\n-1\n1,Freestyle\n")
    imported = ok(cli_stack.run("match", "import", "g.psq"))
    assert "(psq, gomoku" in imported and "2 moves" in imported, imported
    assert "black AlphaZero 1 vs white AlphaZero 2" in ok(cli_stack.run("match", "replay",
                                                                        "g.psq"))


def test_prune_forgets_what_was_recorded_before_a_time(cli_stack: InProcessStack,
                                                      tmp_path: Path) -> None:
    """`arena match prune`: the arena's retention (admins: everyone's matches; users: their
    own), with a dry run first."""
    run = cli_stack.run
    (tmp_path / "game.txt").write_text("f5 d6 c3 d3 c4\n")
    ids = [ok(run("match", "import", "game.txt")).split()[2] for _ in range(2)]
    said = ok(run("match", "prune", "--older-than", "0m", "--dry-run"))
    assert said.startswith("would forget 2 of the 2 matches recorded before "), said
    assert ids[0] in ok(run("match", "list"))
    # Recorded a day ago at most: none of them is older than that.
    summary = json.loads(ok(run("match", "prune", "--older-than", "1d", "--json")))
    assert summary["pruned"] == summary["examined"] == 0
    future = "2100-01-01T00:00:00+01:00"
    # A user prunes only their own matches: not these two.
    counts = [json.loads(ok(run("match", "prune", "--before", future, "--dry-run", "--json",
                                *token)))["examined"] for token in ([], ["--token", "alice-token"])]
    assert counts[1] <= counts[0] - 2
    assert ok(run("match", "prune", "--before", future)).startswith(
        "forgot 2 of the 2 matches recorded before 2099-12-31 23:00:00 UTC")
    assert ok(run("match", "list", "--json")).strip() == "[]"
    one_line_error(run("match", "show", ids[1]), "no match")


def test_prune_refuses_absurd_ages_and_times_naming_the_option(run_arena: RunArena) -> None:
    for bad, needle in ((["--older-than", "5x"], "--older-than: not an age like 30d"),
                        (["--older-than=-3d"], "--older-than: not an age like 30d"),
                        (["--older-than", "99999999d"], "more than a hundred years"),
                        (["--older-than", "1" + "0" * 30 + "d"], "more than a hundred years"),
                        (["--older-than", "３d"], "--older-than: not an age like 30d"),
                        (["--before", "9999-12-31T23:59:59-01:00"], "before 9999"),
                        (["--before", "0001-01-01T00:00:00+01:00"], "after 1970"),
                        (["--before", "2026-13-45"], "--before: not a date or time"),
                        (["--before", "1969-07-20"], "--before: must be after 1970"),
                        (["--before", "yesterday"], "--before: not a date or time"),
                        (["--before", "2026-01-01", "--older-than", "3d"], "not allowed with"),
                        ([], "one of the arguments --older-than --before is required")):
        result = run_arena("match", "prune", *bad)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert needle in result.stderr, result.stderr
