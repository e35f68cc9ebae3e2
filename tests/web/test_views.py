"""The gateway's pure parts, without a stack: protobufs to page JSON (positions from the
rules library, passes, the winning line, tree slices) and action bodies to protobufs."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest
from arena.services.web import forms
from arena.services.web.live import MatchEvents
from arena.services.web.views import (
    GameTrack,
    TreeIndex,
    ladder_json,
    match_json,
    ply_view,
    progress_json,
    standings_json,
    winning_line,
    with_defaults,
)

from arena.errors import InvalidArgumentError
from arena.games import PASS, Color, new_position
from arena.v1 import common_pb2, ladder_pb2, match_pb2

OTHELLO = common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO, variant="standard",
                              board_size=8)


def played(position: Any, moves: list[int]) -> list[match_pb2.MoveRecord]:
    records = []
    for ply, move in enumerate(moves):
        position.push(move)
        records.append(match_pb2.MoveRecord(ply=ply, move=common_pb2.Move(square=move),
                                            position_after=position.to_text()))
    return records


def game_with_a_pass(seed: int = 1) -> list[int]:
    """Moves of a random Othello game up to and including its first pass."""
    chooser = random.Random(seed)
    while True:
        board, moves = new_position("othello"), []
        while not board.is_game_over():
            legal = board.legal_moves()
            move = chooser.choice(legal)
            board.push(move)
            moves.append(move)
            if move == PASS:
                return moves
        seed += 1


def test_a_match_view_has_the_rules_position_at_every_ply_with_passes() -> None:
    moves = game_with_a_pass()
    match = match_pb2.Match(id="m", config=match_pb2.MatchConfig(game=OTHELLO),
                            status=match_pb2.MATCH_STATUS_RUNNING)
    match.moves.extend(played(new_position("othello"), moves))
    data = match_json(match)
    board = new_position("othello")
    assert data["plies"][0]["position"] == board.to_text()
    for view, move in zip(data["plies"][1:], moves, strict=True):
        before = board.copy()
        board.push(move)
        assert view["position"] == board.to_text()
        assert view["legal"] == [m for m in board.legal_moves() if m != PASS]
        assert (view["black"], view["white"]) == (board.count(Color.BLACK),
                                                  board.count(Color.WHITE))
        assert view["move"] == before.move_to_str(move)
    passed = data["plies"][-1]
    assert passed["move"] == "pass" and passed["last"] is None
    assert data["plies"][-2]["legal"] == []  # the side to move had nothing but a pass
    assert json.loads(json.dumps(data)) == data  # plain JSON all the way


def test_a_game_from_another_start_offers_no_transcript() -> None:
    standard = match_pb2.Match(id="m", config=match_pb2.MatchConfig(game=OTHELLO))
    assert match_json(standard)["formats"] == ["native", "ggf", "transcript"]
    standard.config.start_position = new_position("othello").to_text()  # the same start
    assert match_json(standard)["formats"] == ["native", "ggf", "transcript"]
    other = new_position("othello")
    other.push(other.parse_move("f5"))
    custom = match_pb2.Match(id="c", config=match_pb2.MatchConfig(
        game=OTHELLO, start_position=other.to_text()))
    assert match_json(custom)["formats"] == ["native", "ggf"]
    gomoku = match_pb2.Match(id="g", config=match_pb2.MatchConfig(
        game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_GOMOKU, variant="freestyle",
                                 board_size=15)))
    assert match_json(gomoku)["formats"] == ["native", "psq"]


def test_each_ply_shows_the_clocks_with_the_increments_a_pass_earns_none() -> None:
    moves = game_with_a_pass()
    tc = common_pb2.TimeControl(move_time_ms=1000, game_time_ms=5000, increment_ms=100)
    match = match_pb2.Match(id="m", config=match_pb2.MatchConfig(game=OTHELLO, time_control=tc))
    board = new_position("othello")
    for record in played(board.copy(), moves):
        record.color = common_pb2.COLOR_BLACK if board.turn is Color.BLACK else \
            common_pb2.COLOR_WHITE
        record.time_ms = 0 if record.move.square == PASS else 30
        record.charged_ms = 0 if record.move.square == PASS else 20  # charged, not wall time
        board.push(record.move.square)
        match.moves.append(record)
    plies = match_json(match)["plies"]
    assert plies[0]["clock"] == {"black": 5000, "white": 5000}
    made = {"black": 0, "white": 0}
    for view, record in zip(plies[1:], match.moves, strict=True):
        made[view["color"]] += record.move.square != PASS
        assert view["clock"] == {side: 5000 + (100 - 20) * n for side, n in made.items()}
    assert plies[-1]["move"] == "pass"
    assert plies[-1]["clock"] == plies[-2]["clock"]  # the pass earned nothing
    untimed = match_json(match_pb2.Match(id="u", config=match_pb2.MatchConfig(game=OTHELLO)))
    assert "clock" not in untimed["plies"][0]


def test_the_opening_moves_come_first_and_count_as_plies() -> None:
    board = new_position("othello")
    opening = board.legal_moves()[:1]
    match = match_pb2.Match(config=match_pb2.MatchConfig(game=OTHELLO, opening=opening))
    track = GameTrack.of(match)
    assert track.opening_plies == 1 and track.plies[1]["opening"] is True
    after = board.copy()
    after.push(opening[0])
    reply = after.legal_moves()[0]
    view = track.add_record(match_pb2.MoveRecord(ply=0, move=common_pb2.Move(square=reply)))
    assert view is not None and view["ply"] == 2 and view["record_ply"] == 0
    # The same record again (a reconnecting watcher) adds nothing.
    assert track.add_record(match_pb2.MoveRecord(ply=0, move=common_pb2.Move(square=reply))) \
        is None


def test_live_events_become_page_events_once_each() -> None:
    events = MatchEvents()
    header = match_pb2.Match(id="m", config=match_pb2.MatchConfig(game=OTHELLO),
                             status=match_pb2.MATCH_STATUS_RUNNING)
    first = events(match_pb2.MatchEvent(started=match_pb2.MatchStarted(match=header)))
    assert [name for name, _ in first] == ["match"]
    board = new_position("othello")
    move = board.legal_moves()[0]
    record = match_pb2.MoveRecord(ply=0, move=common_pb2.Move(square=move))
    assert [name for name, _ in events(match_pb2.MatchEvent(move=record))] == ["ply"]
    assert events(match_pb2.MatchEvent(move=record)) == []
    assert events(match_pb2.MatchEvent(started=match_pb2.MatchStarted(match=header))) == []
    ended = events(match_pb2.MatchEvent(ended=match_pb2.MatchEnded(
        result=match_pb2.MatchResult(winner=common_pb2.COLOR_WHITE))))
    assert ended[0][1]["result"]["winner"] == "white"
    assert ended[0][1]["status"] == "finished"
    stopped = MatchEvents()
    stopped(match_pb2.MatchEvent(started=match_pb2.MatchStarted(match=header)))
    cancelled = stopped(match_pb2.MatchEvent(ended=match_pb2.MatchEnded(
        result=match_pb2.MatchResult(termination=match_pb2.TERMINATION_CANCELLED, void=True))))
    assert cancelled[0][1]["status"] == "cancelled"  # not "finished": it has no result


@pytest.mark.parametrize("size", [9, 15, 19])
def test_the_winning_five_is_marked_and_an_overline_only_in_freestyle(size: int) -> None:
    for rule, wins_with_six in (("freestyle", True), ("exact-five", False)):
        board = new_position("gomoku", rule, size)
        black = [size * 4 + x for x in (0, 1, 2, 3, 5, 6)]  # row 5: a gap at x=4
        white = [size * 8 + x for x in (0, 2, 4, 6, 8)] + [size * 7 + 1]  # no line at all
        for b, w in zip(black, white, strict=True):
            board.push(b)
            board.push(w)
        before = board.copy()
        board.push(size * 4 + 4)  # black fills the gap: seven in a row, x = 0..6
        line = winning_line(board, size * 4 + 4)
        assert line == (list(range(size * 4, size * 4 + 7)) if wins_with_six else [])
        view = ply_view(board, board.ply, before, size * 4 + 4)
        assert view["five"] == line and view["last"] == size * 4 + 4


def test_no_line_is_marked_without_a_win() -> None:
    board = new_position("gomoku", "freestyle", 15)
    board.push(0)
    assert winning_line(board, 0) == []


def tree() -> common_pb2.SearchTree:
    root = new_position("othello")
    a, b = root.legal_moves()[:2]
    nodes = [common_pb2.SearchTreeNode(id=0, parent=-1, move=-1, kind=common_pb2.NODE_KIND_MAX,
                                       pv=True, score=3, alpha=-(10**18), beta=10**18)]
    nodes += [common_pb2.SearchTreeNode(id=1, parent=0, move=a, pv=True, score=3,
                                        kind=common_pb2.NODE_KIND_MIN),
              common_pb2.SearchTreeNode(id=2, parent=0, move=b, score=1, cutoff=True,
                                        kind=common_pb2.NODE_KIND_MIN)]
    after = root.copy()
    after.push(a)
    nodes += [common_pb2.SearchTreeNode(id=3 + i, parent=1, move=m, score=i,
                                        kind=common_pb2.NODE_KIND_LEAF, pv=i == 0)
              for i, m in enumerate(after.legal_moves())]
    return common_pb2.SearchTree(root=common_pb2.Position(game=OTHELLO, text=root.to_text()),
                                 nodes=nodes)


def test_tree_slices_are_lazy_and_bounded() -> None:
    index = TreeIndex(tree())
    assert index.pv_path() == [0, 1, 3]
    top = index.subtree(0, levels=1, budget=100)
    assert [kid["id"] for kid in top["kids"]] == [1, 2]
    assert "kids" not in top["kids"][0] and top["kids"][0]["children"] == 3
    assert top["alpha"] == str(-(10**18))  # beyond a JavaScript number: a string
    deeper = index.subtree(0, levels=2, budget=3)  # the second level would exceed the budget
    assert "kids" not in deeper["kids"][0]
    board = index.board_json(1)
    assert board is not None and board["ply"] == 0
    assert sorted(int(s) for s in board["scores"]) == [n.move for n in tree().nodes
                                                        if n.parent == 1]


def test_defaults_fill_missing_keys_and_merge_tables() -> None:
    merged, defaulted = with_defaults({"depth": {"end": 7}, "evaluator": "kreversi"},
                                      {"depth": {"begin": 2, "end": 2}, "stable": 10,
                                       "evaluator": "kreversi"})
    assert merged == {"depth": {"begin": 2, "end": 7}, "stable": 10, "evaluator": "kreversi"}
    assert defaulted == ["stable"]


def test_action_bodies_report_every_bad_field() -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        forms.ladder_config({"bots": "a,b", "seed": -1, "capture_trees": "yes",
                             "move_time_ms": 1.5})
    assert {v.field for v in caught.value.violations} == {
        "bots", "seed", "capture_trees", "move_time_ms"}
    with pytest.raises(InvalidArgumentError) as caught:
        forms.match_config({"black": "", "opening": "z9 zz"})
    assert {v.field for v in caught.value.violations} == {"black", "white", "opening"}
    with pytest.raises(InvalidArgumentError):
        forms.match_config(["not", "an", "object"])


def test_bot_references_are_a_name_and_perhaps_a_version() -> None:
    """A bot's name holds no '@' (the registry refuses one): after an '@' comes a version,
    or the reference is a bad field, as on the command line."""
    for bad in ("a@b", "a@b@3", "@3", "a@", "a@\u00b2", "a@" + "9" * 10, "a@0", "a@000"):
        with pytest.raises(InvalidArgumentError) as caught:
            forms.match_config({"black": bad, "white": "w"})
        assert [v.field for v in caught.value.violations] == ["black"], bad
        assert "expected NAME or NAME@VERSION, versions counting from 1" in \
            caught.value.violations[0].description
    with pytest.raises(InvalidArgumentError) as caught:
        forms.ladder_config({"bots": ["a", "b@x"]})
    assert [v.field for v in caught.value.violations] == ["bots"]
    config = forms.match_config({"black": "x@2", "white": "<script>", "opening": "f5 d6",
                                 "game": "othello"})
    assert config.black.version == 2 and config.white.name == "<script>"
    assert len(config.opening) == 2
    gomoku = forms.ladder_config({"bots": ["a", "b"], "game": "gomoku", "size": 19})
    # The suite and variant left out are the ladder service's to fill in (one place decides).
    assert gomoku.game.board_size == 19 and gomoku.opening_suite == "" == gomoku.game.variant


def test_standings_without_games_are_still_json() -> None:
    """A ladder's first minutes: every rating is infinite, and JSON has no infinity."""
    standings = ladder_pb2.Standings(
        ladder=ladder_pb2.LadderInfo(id="L1"),
        rows=[ladder_pb2.StandingRow(bot=common_pb2.BotRef(name="a", version=1),
                                     elo=math.nan, elo_low=-math.inf, elo_high=math.inf)],
        head_to_head=[ladder_pb2.HeadToHead(bot="a@v1", opponent="b@v1", los=math.nan,
                                            bot_ref=common_pb2.BotRef(name="a", version=1),
                                            opponent_ref=common_pb2.BotRef(name="b",
                                                                           version=1))])
    data = standings_json(standings)
    text = json.dumps(data, allow_nan=False)  # what the API's responses require
    assert data["rows"][0]["elo_low"] is None and data["head_to_head"][0]["bot"] == "a@1"
    assert "null" in text


def test_a_ladders_json_says_why_its_next_game_waits() -> None:
    held = ladder_pb2.LadderInfo(id="L1", waiting="quota queued_matches is 2; the request "
                                                  "asks for 3")
    assert standings_json(ladder_pb2.Standings(ladder=held))["ladder"]["waiting"] == \
        "quota queued_matches is 2; the request asks for 3"
    assert progress_json(ladder_pb2.LadderProgress(ladder=held))["ladder"]["waiting"] == \
        held.waiting
    assert ladder_json(ladder_pb2.LadderInfo(id="L2"))["waiting"] is None


def test_the_pages_know_how_long_an_answer_is_shared() -> None:
    """A page that sees an end waits out the shared answers from before it (api.js)."""
    import re

    from arena.services.web.app import STATIC
    from arena.services.web.shared import FRESH_S

    api = (STATIC / "js" / "api.js").read_text()
    found = re.search(r"export const SHARED_ANSWER_MS = (\d+);", api)
    assert found is not None and int(found.group(1)) == round(FRESH_S * 1000)


def test_ladder_names_are_labels_a_failing_ladder_service_leaves_off() -> None:
    """The match list names each match's ladder (one read per ladder, then kept); with no
    ladder service answering, the matches come back unnamed, not as an error."""
    import socket

    from arena.services.web.gateway import Gateway
    from arena.services.web.settings import WebSettings

    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{closed.getsockname()[1]}"
    gateway = Gateway(WebSettings(ladder=address))
    try:
        client = gateway.reader(None)
        matches: list[dict[str, Any]] = [{"id": "m1", "ladder_id": "L1"},
                                         {"id": "m2", "ladder_id": "L2"},
                                         {"id": "m3", "ladder_id": None}]
        named = gateway.name_ladders(client, matches)
        assert [m["ladder_name"] for m in named] == [None, None, None]
        assert [m["id"] for m in named] == ["m1", "m2", "m3"]
        assert list(gateway.ladder_names) == []  # a failure is not kept as a name
        gateway.ladder_names.put("L1", "evening cup")  # a name read before is used
        assert gateway.name_ladders(client, [{"ladder_id": "L1"}])[0]["ladder_name"] == (
            "evening cup")
    finally:
        gateway.close()
