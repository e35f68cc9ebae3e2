"""Protobufs to the JSON the pages draw: plain dicts of plain values, no I/O.

Boards travel as what a page needs to draw them without knowing the rules: a string of
``X``/``O``/``-``, one character per square in square order (row 1 first), the legal
moves, the last move and, in Gomoku, the winning line. Every position comes from the
rules library (``arena.games``), so a page shows exactly what the referee decided.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from arena.clients.common import sprt_verdict
from google.protobuf import json_format, timestamp_pb2

from arena.clock import change_ms
from arena.games import PASS, Color, GameError, Position, position_from_text
from arena.games import game as rules
from arena.records import configured_start, export_formats
from arena.textboard import move_names
from arena.v1 import bots_pb2, common_pb2, engine_pb2, ladder_pb2, match_pb2

Json = dict[str, Any]

GAME_NAMES = {common_pb2.GAME_KIND_OTHELLO: "othello", common_pb2.GAME_KIND_GOMOKU: "gomoku"}
COLORS = {common_pb2.COLOR_BLACK: "black", common_pb2.COLOR_WHITE: "white"}
NODE_KINDS = {common_pb2.NODE_KIND_MAX: "max", common_pb2.NODE_KIND_MIN: "min",
              common_pb2.NODE_KIND_LEAF: "leaf"}
# Scores beyond what a JavaScript number holds exactly travel as strings.
_SAFE_INTEGER = 2**53 - 1


def word(value: int, prefix: str, enum: Any) -> str:
    """``MATCH_STATUS_RUNNING`` -> ``running``; ``TERMINATION_TIME_FORFEIT`` -> ``time-forfeit``."""
    name: str = enum.Name(value)
    return name.removeprefix(prefix).lower().replace("_", "-")


def ref_text(ref: common_pb2.BotRef) -> str:
    return f"{ref.name}@{ref.version}" if ref.version else ref.name


def when(stamp: timestamp_pb2.Timestamp) -> str | None:
    """An ISO 8601 instant, or None for an unset timestamp."""
    if not stamp.seconds and not stamp.nanos:
        return None
    return str(stamp.ToJsonString())


def finite(value: float) -> float | None:
    """A rating with no games behind it is infinite; JSON has no infinity: null."""
    return value if math.isfinite(value) else None


def number(value: int) -> int | str:
    return value if abs(value) <= _SAFE_INTEGER else str(value)


def game_json(spec: common_pb2.GameSpec) -> Json:
    return {"kind": GAME_NAMES.get(spec.kind, "unknown"), "variant": spec.variant,
            "size": spec.board_size}


def clock_json(tc: common_pb2.TimeControl) -> Json:
    """A game's clock: the limit per move, and the budget per side with its increment
    (0: none)."""
    return {"move_time_ms": tc.move_time_ms, "game_time_ms": tc.game_time_ms,
            "increment_ms": tc.increment_ms}


# -- ladders -------------------------------------------------------------------------------


def ladder_json(info: ladder_pb2.LadderInfo, openings: bool = True) -> Json:
    """A ladder; ``openings``: with its own openings by name (a list of ladders and the
    progress events carry their count only: up to 256 openings of 40 moves each)."""
    config = info.config
    return {
        "id": info.id,
        "name": config.name,
        "status": word(info.status, "LADDER_STATUS_", ladder_pb2.LadderStatus),
        "game": game_json(config.game),
        "format": word(config.format, "LADDER_FORMAT_", ladder_pb2.LadderFormat),
        "bots": [ref_text(bot) for bot in config.bots],
        "games_per_pairing": config.games_per_pairing,
        "opening_suite": config.opening_suite,
        # A ladder's own openings ("custom"): how many, and each as its moves' names.
        "openings_count": len(config.openings),
        **({"openings": own_openings_json(config)} if openings else {}),
        **clock_json(config.time_control),
        "capture_trees": config.capture_trees,
        "adjudicate_empties": config.adjudicate_empties,
        "games_total": info.games_total,
        "games_done": info.games_done,
        "games_void": info.games_void,
        "created_at": when(info.created_at),
        "owner": info.owner,
        "sprt": sprt_json(info) if config.format == ladder_pb2.LADDER_FORMAT_SPRT else None,
        # Why its next game could not be created at the last try (null: nothing waits).
        "waiting": info.waiting or None,
        # Why the arena cancelled it itself (a bot of it retired; null: it did not).
        "ended_because": info.ended_because or None,
    }


def own_openings_json(config: ladder_pb2.LadderConfig) -> list[str]:
    if not config.openings:
        return []
    start = rules(config.game.kind).new_position(config.game.variant or None,
                                                 config.game.board_size or None)
    return [" ".join(move_names(start, opening.moves)) for opening in config.openings]


def sprt_json(info: ladder_pb2.LadderInfo) -> Json:
    """An SPRT ladder's test (``arena test``): its hypotheses, where it stands, and the
    verdict in the words ``arena ladder standings`` prints."""
    test, state = info.config.sprt, info.sprt
    return {
        "elo0": test.elo0, "elo1": test.elo1, "alpha": test.alpha, "beta": test.beta,
        "max_games": test.max_games, "pairs": state.pairs, "llr": finite(state.llr),
        "lower_bound": finite(state.lower_bound), "upper_bound": finite(state.upper_bound),
        "pentanomial": list(state.pentanomial), "wins": state.wins, "draws": state.draws,
        "losses": state.losses,
        "verdict": word(state.verdict or ladder_pb2.SPRT_VERDICT_CONTINUE, "SPRT_VERDICT_",
                        ladder_pb2.SprtVerdict),
        "text": sprt_verdict(info),
    }


def standing_json(row: ladder_pb2.StandingRow) -> Json:
    return {
        "rank": row.rank, "bot": ref_text(row.bot), "name": row.bot.name,
        "version": row.bot.version, "games": row.games, "wins": row.wins, "draws": row.draws,
        "losses": row.losses, "score_pct": finite(row.score_pct), "elo": finite(row.elo),
        "elo_low": finite(row.elo_low), "elo_high": finite(row.elo_high),
    }


def ratings_json(ratings: ladder_pb2.Ratings) -> Json:
    rows = [{**standing_json(row.standing), "pool": row.pool, "ladders": row.ladders,
             "opponents": row.opponents} for row in ratings.rows]
    clocks = [{**clock_json(c.clock), "games": c.games, "ladders": c.ladders}
              for c in ratings.clocks]
    return {"game": game_json(ratings.game), "games": ratings.games,
            "ladders": ratings.ladders, "pools": ratings.pools, "rows": rows,
            "clock": clock_json(ratings.clock) if ratings.HasField("clock") else None,
            "clocks": clocks}


def standings_json(standings: ladder_pb2.Standings) -> Json:
    rows = [standing_json(row) for row in standings.rows]
    # Labelled like the rows ("name@3"), so a page can match pairs to rows.
    pairs = [{
        "bot": ref_text(pair.bot_ref) if pair.bot_ref.name else pair.bot,
        "opponent": ref_text(pair.opponent_ref) if pair.opponent_ref.name else pair.opponent,
        "wins": pair.wins, "draws": pair.draws,
        "losses": pair.losses, "los": finite(pair.los),
    } for pair in standings.head_to_head]
    return {"ladder": ladder_json(standings.ladder), "rows": rows, "head_to_head": pairs}


def progress_json(progress: ladder_pb2.LadderProgress) -> Json:
    return {"ladder": ladder_json(progress.ladder, openings=False),
            "finished_match_id": progress.finished_match_id or None}


# -- bots ----------------------------------------------------------------------------------


def bot_config(spec: bots_pb2.BotSpec) -> Json:
    """The built-in engine's config with integral numbers as ints (Struct holds doubles)."""
    if spec.WhichOneof("engine") != "builtin":
        return {}
    return engine_config(spec.builtin)


def engine_config(engine: bots_pb2.BuiltinEngine) -> Json:
    raw = json_format.MessageToDict(engine.config)
    return {key: _ints(value) for key, value in raw.items()}


def with_defaults(config: Json, defaults: Json) -> tuple[Json, list[str]]:
    """``config`` over ``defaults`` (tables merge key by key, lists are replaced), and
    the top-level keys that came from the defaults alone."""
    merged = dict(defaults)
    for key, value in config.items():
        base = merged.get(key)
        merged[key] = ({**base, **value} if isinstance(base, dict) and isinstance(value, dict)
                       else value)
    return merged, sorted(set(defaults) - set(config))


def _ints(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_ints(item) for item in value]
    if isinstance(value, dict):
        return {key: _ints(item) for key, item in value.items()}
    return value


def bot_json(bot: bots_pb2.BotVersion) -> Json:
    """A bot version. ``has_avatar`` reads the registry's ``avatar_omitted`` too: a list
    (ListBots) leaves the picture out, and read from the picture alone every bot of the
    list had none."""
    spec = bot.spec
    engine = spec.WhichOneof("engine") or "none"
    config = bot_config(spec)
    data: Json = {
        "name": spec.name, "version": bot.version, "game": GAME_NAMES.get(spec.game, "unknown"),
        "owner": bot.owner, "description": spec.description, "preset": spec.preset,
        "engine": engine, "evaluator": str(config.get("evaluator", "")),
        "retired": bot.retired, "created_at": when(bot.created_at),
        "content_hash": bot.content_hash, "evaluator_hash": bot.evaluator_hash,
        "has_avatar": bool(spec.avatar_png) or bot.avatar_omitted, "config": config,
    }
    if engine == "external":
        data["external"] = {"address": spec.external.address,
                            "move_deadline_ms": spec.external.move_deadline_ms}
    elif engine == "protocol":
        options = json_format.MessageToDict(spec.protocol.options)
        data["protocol"] = {"engine": spec.protocol.engine, "checksum": spec.protocol.checksum,
                            "options": {key: _ints(value) for key, value in options.items()}}
    return data


# -- matches -------------------------------------------------------------------------------


def result_json(match: match_pb2.Match) -> Json | None:
    """The result of a finished or cancelled match (a cancelled one is void: no result,
    not counted, no score); None while it is pending or running."""
    if match.status not in (match_pb2.MATCH_STATUS_FINISHED, match_pb2.MATCH_STATUS_CANCELLED):
        return None
    result = match.result
    winner = COLORS.get(result.winner)
    score = None if result.void else {"black": "1-0", "white": "0-1"}.get(winner or "",
                                                                          "1/2-1/2")
    termination = word(result.termination, "TERMINATION_", match_pb2.Termination)
    return {
        "winner": winner, "score": score, "termination": termination, "detail": result.detail,
        "black_count": result.black_count, "white_count": result.white_count,
        "forfeited": COLORS.get(result.forfeited), "void": result.void,
    }


def match_summary_json(match: match_pb2.Match) -> Json:
    return {
        "id": match.id, "game": game_json(match.config.game),
        "black": ref_text(match.black), "white": ref_text(match.white),
        "status": word(match.status, "MATCH_STATUS_", match_pb2.MatchStatus),
        "result": result_json(match), "ladder_id": match.config.ladder_id or None,
        "capture_trees": match.config.capture_trees,
        "adjudicate_empties": match.config.adjudicate_empties,
        **clock_json(match.config.time_control),
        "created_at": when(match.created_at), "finished_at": when(match.finished_at),
        "owner": match.owner,
        # An imported record's players are names only, no bots (anyone may import one).
        "imported_from": match.imported_from or None,
        # Where and when such a record says its game was played, as it wrote them.
        "origin": {"date": match.origin.date or None, "place": match.origin.place or None}
        if match.HasField("origin") else None,
    }


def match_json(match: match_pb2.Match) -> Json:
    """A match with every position from the start, for the replay and the live view."""
    track = GameTrack.of(match)
    for record in match.moves:
        track.add_record(record)
    data = match_summary_json(match)
    data |= {"plies": track.plies, "opening_plies": track.opening_plies,
             "formats": export_formats(match)}
    return data


@dataclass
class GameTrack:
    """The positions of one game as moves arrive: ply 0 is the configured start, then
    the opening moves, then every move the bots played (passes included). With a game
    budget, each ply also says what is left of each side's after it (``clock``)."""

    position: Position
    time_control: common_pb2.TimeControl = field(default_factory=common_pb2.TimeControl)
    opening_plies: int = 0
    plies: list[Json] = field(default_factory=list)
    # Each side's game budget changed by its moves so far (``clock.change_ms``), kept as
    # they come: summing every record again at each ply made long games' pages quadratic.
    left: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.left = {color: self.time_control.game_time_ms
                     for color in (common_pb2.COLOR_BLACK, common_pb2.COLOR_WHITE)}

    @classmethod
    def of(cls, match: match_pb2.Match) -> GameTrack:
        track = cls(configured_start(match.config), match.config.time_control)
        track.plies.append(track.clocked(ply_view(track.position, 0)))
        for move in match.config.opening:
            track.push(move, opening=True)
        track.opening_plies = len(track.plies) - 1
        return track

    def push(self, move: int, record: match_pb2.MoveRecord | None = None,
             opening: bool = False) -> Json:
        before = self.position.copy()
        self.position.push(move)
        if record is not None and record.color in self.left:
            self.left[record.color] += change_ms(self.time_control, record)
        view = ply_view(self.position, len(self.plies), before, move, record, opening)
        self.plies.append(self.clocked(view))
        return view

    def clocked(self, view: Json) -> Json:
        if self.time_control.game_time_ms > 0:
            view["clock"] = {"black": max(0, self.left[common_pb2.COLOR_BLACK]),
                             "white": max(0, self.left[common_pb2.COLOR_WHITE])}
        return view

    def add_record(self, record: match_pb2.MoveRecord) -> Json | None:
        """The view of a recorded move; None for one this track already holds (a
        watcher that reconnects sees the history again)."""
        if self.opening_plies + record.ply < len(self.plies) - 1:
            return None
        return self.push(record.move.square, record)

    def add_pass(self, event: match_pb2.PassEvent) -> Json | None:
        record = match_pb2.MoveRecord(ply=event.ply, color=event.color,
                                      move=common_pb2.Move(square=PASS, text="pass"))
        return self.add_record(record)


def ply_view(position: Position, ply: int, before: Position | None = None, move: int = -1,
             record: match_pb2.MoveRecord | None = None, opening: bool = False) -> Json:
    """Everything a page shows for one ply: the board, who moved what, the search."""
    # Othello's legal moves are empty exactly when the game is over: one generation
    # answers both. Gomoku marks no legal moves (every empty point is one).
    othello = position.game == "othello"
    legal = position.legal_moves() if othello else []
    over = not legal if othello else position.is_game_over()
    black, white = (_count(position, color) for color in (Color.BLACK, Color.WHITE))
    text = position.to_text()
    view: Json = {
        "ply": ply, "board": cells_of_text(position.game, text), "position": text,
        "turn": position.turn.name.lower(), "black": black, "white": white,
        "over": over, "legal": [m for m in legal if m != PASS],
        "move": None, "last": None, "five": [], "opening": opening,
    }
    if before is None:
        return view
    view |= {"move": before.move_to_str(move), "color": before.turn.name.lower(),
             "last": None if is_pass(before, move) else move,
             "five": winning_line(position, move)}
    if record is not None:
        view |= {"record_ply": record.ply, "time_ms": record.time_ms,
                 "worker": record.worker_id, "has_tree": record.has_tree,
                 "search": search_json(record.search, before) if record.HasField("search")
                 else None}
    return view


def is_pass(position: Position, move: int) -> bool:
    """Only Othello passes; in Gomoku the same number is a square of larger boards."""
    return position.game == "othello" and move == PASS


def analysis_json(reply: engine_pb2.AnalyzeResponse, position: Position, ply: int) -> Json:
    """A bot's answer about the position after ``ply`` moves: its move and search."""
    return {"ply": ply, "square": reply.move.square,
            "move": position.move_to_str(reply.move.square),
            "search": search_json(reply.search, position)}


def search_json(search: common_pb2.SearchInfo, before: Position) -> Json:
    return {
        "score": number(search.score) if search.HasField("score") else None,
        "depth": search.depth if search.HasField("depth") else None,
        "nodes": number(search.nodes),
        "nps": number(search.nps), "time_ms": round(search.time_ms, 1), "exact": search.exact,
        "cache_hit": search.cache_hit, "pv": move_names(before, list(search.pv)),
        "tied": [before.move_to_str(m) for m in search.tied_moves if _on_board(before, m)],
        "notes": list(search.notes),
    }


def _on_board(position: Position, move: int) -> bool:
    return 0 <= move < position.size * position.size or (
        position.game == "othello" and move == PASS)


def cells_of_text(game: str, text: str) -> str:
    """``X``/``O``/``-`` per square, row 1 first, read off the position's text form
    (Othello: ``<64 squares> <side>``; Gomoku: ``<size> <rule> <rows, / between> <side>``),
    which already has one character per square."""
    if game == "othello":
        return text.split()[0]
    return text.split()[2].replace("/", "")


def _piece(position: Position, square: int) -> Color | None:
    piece: Color | None = getattr(position, "piece_at")(square)  # noqa: B009 - both games
    return piece


def _count(position: Position, color: Color) -> int:
    count: int = getattr(position, "count")(color)  # noqa: B009 - both games have it
    return count


def winning_line(position: Position, move: int) -> list[int]:
    """Gomoku: the squares of the line of five (or more, in freestyle) that ``move``
    completed; empty if it completed none."""
    if position.game != "gomoku" or move < 0:
        return []
    outcome = position.outcome()
    mover = _piece(position, move)
    if outcome is None or outcome.winner is None or mover is not outcome.winner:
        return []
    exact = position.variant == "exact-five"
    for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
        line = [move, *_run(position, move, dx, dy, mover),
                *_run(position, move, -dx, -dy, mover)]
        if len(line) == 5 or (len(line) > 5 and not exact):
            return sorted(line)
    return []


def _run(position: Position, move: int, dx: int, dy: int, color: Color) -> list[int]:
    size = position.size
    y, x = divmod(move, size)
    squares = []
    x, y = x + dx, y + dy
    while 0 <= x < size and 0 <= y < size and _piece(position, y * size + x) is color:
        squares.append(y * size + x)
        x, y = x + dx, y + dy
    return squares


# -- search trees --------------------------------------------------------------------------


class TreeIndex:
    """One stored search tree, indexed for the viewer's lazy loading: children by
    parent, each node's position on demand."""

    def __init__(self, tree: common_pb2.SearchTree) -> None:
        self.tree = tree
        self.root_position = position_from_text(GAME_NAMES.get(tree.root.game.kind, "othello"),
                                                tree.root.text)
        self.nodes = {node.id: node for node in tree.nodes}
        self.children: dict[int, list[int]] = {}
        self.roots: list[int] = []
        for node in tree.nodes:
            if node.parent < 0:
                self.roots.append(node.id)
            else:
                self.children.setdefault(node.parent, []).append(node.id)

    def summary(self) -> Json:
        return {"nodes": len(self.nodes), "truncated": self.tree.truncated,
                "root": self.roots[0] if self.roots else None, "pv": self.pv_path()}

    def pv_path(self) -> list[int]:
        """Node ids of the principal variation, from the root down."""
        path: list[int] = []
        current = self.roots[0] if self.roots else None
        while current is not None:
            path.append(current)
            current = next((kid for kid in self.children.get(current, [])
                            if self.nodes[kid].pv), None)
        return path

    def node_json(self, node_id: int) -> Json:
        node = self.nodes[node_id]
        move = "root" if node.move < 0 else self.root_position.move_to_str(node.move)
        return {
            "id": node.id, "parent": node.parent, "move": move, "square": node.move,
            "depth": node.depth, "alpha": number(node.alpha), "beta": number(node.beta),
            "score": number(node.score), "kind": NODE_KINDS.get(node.kind, "leaf"),
            "cutoff": node.cutoff, "pv": node.pv,
            "children": len(self.children.get(node_id, [])),
        }

    def subtree(self, node_id: int, levels: int, budget: int) -> Json:
        """``node_id`` with its descendants ``levels`` deep, at most ``budget`` nodes in
        all (breadth first, so a huge level is cut rather than a deep branch)."""
        top = self.node_json(node_id)
        frontier = [top]
        count = 1
        for _ in range(levels):
            following = []
            for parent in frontier:
                kids = self.children.get(parent["id"], [])
                if count + len(kids) > budget:
                    return top
                parent["kids"] = [self.node_json(kid) for kid in kids]
                count += len(kids)
                following += parent["kids"]
            frontier = following
        return top

    def position_at(self, node_id: int) -> Position | None:
        """The position at a node: the root with the path's moves played."""
        path = []
        current = self.nodes[node_id]
        while current.parent >= 0:
            path.append(current.move)
            current = self.nodes[current.parent]
        position = self.root_position.copy()
        try:
            for move in reversed(path):
                position.push(move)
        except GameError:
            return None  # a capture the rules cannot follow: show no board
        return position

    def board_json(self, node_id: int) -> Json | None:
        """The node's board with each child's score on the square it moves to
        (KReversi's viewer shows the same)."""
        position = self.position_at(node_id)
        if position is None:
            return None
        view = ply_view(position, 0)
        view["scores"] = {str(self.nodes[kid].move): number(self.nodes[kid].score)
                          for kid in self.children.get(node_id, [])}
        return view
