"""Request bodies of the pages' actions (JSON) to the services' protobufs.

Only the shape is checked here (types, required fields, move syntax), with every bad
field reported at once; what a good request means (bots exist, sizes fit the game,
suites are known) is the services' to decide, and their answers pass through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from arena.services.common.ladder_limits import MAX_GAMES, bot_count_problem

from arena.bots.validation import BOT_REF_FORM, split_bot_ref
from arena.errors import FieldViolation, InvalidArgumentError
from arena.games import GAME_NAMES, Game, GameError, Position, game_of_text
from arena.games import game as rules
from arena.openings import MAX_CUSTOM_OPENINGS, OpeningMoveError, play_opening
from arena.text import bounded
from arena.v1 import common_pb2, ladder_pb2, match_pb2

T = TypeVar("T")

FORMATS = {"round-robin": ladder_pb2.LADDER_FORMAT_ROUND_ROBIN,
           "gauntlet": ladder_pb2.LADDER_FORMAT_GAUNTLET}
MAX_UNKNOWN_REPORTED = 10
SHARED_FIELDS = ("request_id",)  # read by ``request_id``, beside every action's own


class Body:
    """A JSON object read field by field, collecting violations instead of stopping."""

    def __init__(self, data: object) -> None:
        self.violations: list[FieldViolation] = []
        self.read: set[str] = set(SHARED_FIELDS)
        if not isinstance(data, dict):
            self.data: dict[str, Any] = {}
            self.bad("body", "expected a JSON object")
        else:
            self.data = data

    def bad(self, name: str, description: str) -> None:
        self.violations.append(FieldViolation(name, description))

    def get(self, name: str, kind: type[T], default: T, check: Callable[[T], str] | None = None,
            ) -> T:
        self.read.add(name)
        value = self.data.get(name, default)
        if value is None:
            return default
        # bool is an int in Python; a JSON true is no number of games.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            self.bad(name, f"expected {_KIND_NAMES.get(kind, kind.__name__)}, got "
                           f"{type(value).__name__}")
            return default
        problem = check(value) if check else ""
        if problem:
            self.bad(name, problem)
            return default
        return value

    def done(self, whole: bool = True) -> None:
        """Raise every violation at once; with ``whole`` (the body was read in full), a
        field nothing read is one too: a misspelt name would otherwise be dropped and its
        default used."""
        if whole:
            known = ", ".join(sorted(self.read))
            for name in sorted(set(self.data) - self.read)[:MAX_UNKNOWN_REPORTED]:
                self.bad(bounded(name, 64), f"unknown field; known: {known}")
        if self.violations:
            raise InvalidArgumentError("invalid request", self.violations)


_KIND_NAMES = {str: "a string", int: "an integer", bool: "true or false", list: "a list"}


JSON_SAFE_INT = 2**53 - 1  # the largest integer a page's JSON numbers hold exactly


def _between(low: int, high: int) -> Callable[[int], str]:
    return lambda value: "" if low <= value <= high else f"must be {low}..{high}"


def bot_ref(body: Body, field: str, text: str) -> common_pb2.BotRef:
    """``name`` (latest version) or ``name@3`` (a bot's name holds no ``@``); anything else
    after an ``@`` is a bad ``field``."""
    ref = split_bot_ref(text)
    if ref is None:
        if text.strip():  # a blank one is told to name the bot
            body.bad(field, f"bad bot reference {bounded(repr(text), 200)}: {BOT_REF_FORM}")
        return common_pb2.BotRef(name=text)
    return common_pb2.BotRef(name=ref[0], version=ref[1])


def game_spec(body: Body) -> common_pb2.GameSpec:
    """The game as the body gives it; a variant or size left out is left to the service,
    which fills in what the rest implies (an opening suite's variant, the game's defaults)
    as it does for the CLI and the SDK."""
    name = body.get("game", str, GAME_NAMES[0])
    if name not in GAME_NAMES:
        body.bad("game", f"unknown game {name!r}; known: {', '.join(GAME_NAMES)}")
        name = GAME_NAMES[0]
    return common_pb2.GameSpec(kind=rules(name).kind, variant=body.get("variant", str, ""),
                               board_size=body.get("size", int, 0, _between(0, 64)))


def time_control(body: Body) -> common_pb2.TimeControl:
    return common_pb2.TimeControl(
        move_time_ms=body.get("move_time_ms", int, 1000, _between(1, 600_000)),
        game_time_ms=body.get("game_time_ms", int, 0, _between(0, JSON_SAFE_INT)),
        increment_ms=body.get("increment_ms", int, 0, _between(0, 600_000)))


def adjudicate_empties(body: Body) -> int:
    """The empty squares at which the referee adjudicates (0: never). Any number the field
    holds goes on: which games allow it, and up to where, the services say (one rule, one
    message)."""
    return body.get("adjudicate_empties", int, 0, _between(-(2**31), 2**31 - 1))


def opening_moves(body: Body, game: common_pb2.GameSpec,
                  start: Position | None = None) -> list[int]:
    """Opening moves by name ('f5 d6 c3'), checked against the rules from the start (the
    match's own, or the game's)."""
    text = body.get("opening", str, "")
    try:
        return _moves(text, game, start)
    except GameError as exc:
        body.bad("opening", _opening_problem(exc))
        return []


def _opening_problem(exc: GameError) -> str:
    """What is wrong with an opening, naming the move (counted from 1) that is."""
    return f"move {exc.number}: {exc}" if isinstance(exc, OpeningMoveError) else str(exc)


def own_openings(body: Body, game: common_pb2.GameSpec) -> list[ladder_pb2.LadderOpening]:
    """A ladder's own openings: a list of openings by name (``["f5 d6 c3", "c4 c3"]``);
    the ladder service checks their count, length and end."""
    texts = body.get("openings", list, [])
    if len(texts) > MAX_CUSTOM_OPENINGS:
        body.bad("openings", f"give 1..{MAX_CUSTOM_OPENINGS} openings, got {len(texts)}")
        return []
    openings = []
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            body.bad(f"openings[{index}]", "expected a string of moves such as 'f5 d6 c3'")
            continue
        try:
            openings.append(ladder_pb2.LadderOpening(moves=_moves(text, game)))
        except GameError as exc:
            body.bad(f"openings[{index}]", _opening_problem(exc))
    return openings


def _moves(text: str, game: common_pb2.GameSpec, start: Position | None = None) -> list[int]:
    """The squares of moves by name, each played from the start (GameError if one cannot be)."""
    if not text.strip():
        return []  # nothing to play: the game's own checks are the services'
    position = start.copy() if start else rules(game.kind).new_position(
        game.variant or None, game.board_size or None)
    return play_opening(position, text)


def request_id(data: object) -> str:
    """The page's idempotency key for a create (a resubmitted form creates nothing new)."""
    body = Body(data)
    key = body.get("request_id", str, "", lambda v: "" if len(v) <= 128 else "at most 128 "
                                                                               "characters")
    body.done(whole=False)
    return key


SIDES = {"black": "X", "white": "O"}


def edited_position(data: object) -> Position:
    """A position as the board editor sends it: the game (``variant``, ``size``), a stone
    per square (``board``: ``X``, ``O`` or ``-`` each, row 1 first, as the pages' ply views
    give it) and the side to move (``turn``: black or white); or a position's text form
    pasted (``position``, which says its own variant and size, and its game by its shape
when the body names none); or neither, for the
    game's start (the variant's, on the board of that size). What the rules refuse
    (stone counts no game reaches, say) is a bad ``board`` or ``position``, in their words."""
    body = Body(data)
    spec = game_spec(body)
    text = body.get("position", str, "")
    # A text pasted alone says its game by its shape (the editor's page sends no game).
    played = game_of_text(text) if text and "game" not in body.data else rules(spec.kind)
    cells = body.get("board", str, "")
    turn = body.get("turn", str, "black",
                    lambda side: "" if side in SIDES else "must be black or white")
    if text and any(name in body.data for name in ("board", "turn", "variant", "size")):
        body.bad("position", "give a position, or a board and its turn, not both")
    body.done()
    field = "position"
    if not text and "board" not in body.data:  # neither: the game's start
        return played.new_position(*_variant_and_size(played, spec))
    if not text:
        field, text = "board", _text_form(played, spec, cells, turn)
    try:
        return played.position_from_text(text)
    except GameError as exc:
        raise InvalidArgumentError.for_fields([FieldViolation(field, str(exc))]) from None


def _variant_and_size(played: Game, spec: common_pb2.GameSpec) -> tuple[str, int]:
    """The variant and size the body gives, the game's own where it gives none; one the
    game does not have is a bad field."""
    variant = spec.variant or played.default_variant
    size = spec.board_size or played.default_size
    bad = []
    if variant not in played.variants:
        bad.append(FieldViolation("variant", f"unknown {played.title} variant "
                                             f"{bounded(repr(variant), 80)}; known: "
                                             f"{', '.join(played.variants)}"))
    if size not in played.sizes:
        bad.append(FieldViolation("size", f"{played.title} is played on {played.sizes_text}"))
    if bad:
        raise InvalidArgumentError.for_fields(bad)
    return variant, size


def _text_form(played: Game, spec: common_pb2.GameSpec, cells: str, turn: str) -> str:
    """The rules library's text form (arena/games) of a board the editor drew."""
    variant, size = _variant_and_size(played, spec)
    if len(cells) != size * size or set(cells) - set("XO-"):
        raise InvalidArgumentError.for_fields([FieldViolation(
            "board", f"expected {size * size} squares, each X, O or -")])
    if played.name == "othello":
        return f"{cells} {SIDES[turn]}" + ("" if variant == played.default_variant
                                           else f" {variant}")
    rows = "/".join(cells[row:row + size] for row in range(0, len(cells), size))
    return f"{size} {variant} {rows} {SIDES[turn]}"


def start_of(body: Body, game: common_pb2.GameSpec) -> tuple[common_pb2.GameSpec, Position | None]:
    """A match's own start (``start``: a position's text form, as the board editor and
    ``arena match create --start`` give it) and the game it says: its variant and size
    are the position's, and a ``variant`` or ``size`` that says otherwise is refused, as
    the command refuses them."""
    text = body.get("start", str, "")
    if not text.strip():
        return game, None
    played = rules(game.kind)
    try:
        position = played.position_from_text(text)
    except GameError as exc:
        body.bad("start", str(exc))
        return game, None
    for name, given, actual in (("variant", game.variant, position.variant),
                                ("size", game.board_size, position.size)):
        if given and given != actual:
            body.bad(name, f"{given} contradicts the start position ({actual}); leave "
                           f"{name} out or start from a {given} position")
    return played.spec(position.variant, position.size), position


def match_config(data: object) -> match_pb2.MatchConfig:
    body = Body(data)
    game, start = start_of(body, game_spec(body))
    refs = {}
    for side in ("black", "white"):
        name = body.get(side, str, "")
        if not name.strip():
            body.bad(side, "name the bot (NAME or NAME@VERSION)")
        refs[side] = bot_ref(body, side, name)
    config = match_pb2.MatchConfig(
        game=game, black=refs["black"], white=refs["white"],
        start_position=start.to_text() if start else "",
        opening=opening_moves(body, game, start), time_control=time_control(body),
        capture_trees=body.get("capture_trees", bool, False),
        seed=body.get("seed", int, 0, _between(0, 2**62)),
        adjudicate_empties=adjudicate_empties(body),
    )
    body.done()
    return config


def ladder_config(data: object) -> ladder_pb2.LadderConfig:
    body = Body(data)
    game = game_spec(body)
    names = body.get("bots", list, [])
    if problem := bot_count_problem(len(names)):
        body.bad("bots", problem)
    if not all(isinstance(name, str) and name.strip() for name in names):
        body.bad("bots", "every bot is a name (NAME or NAME@VERSION)")
        names = []
    ladder_format = body.get("format", str, "round-robin")
    if ladder_format not in FORMATS:
        body.bad("format", f"unknown format {ladder_format!r}; known: {', '.join(FORMATS)}")
        ladder_format = "round-robin"
    config = ladder_pb2.LadderConfig(
        name=body.get("name", str, ""), game=game, bots=[bot_ref(body, "bots", n) for n in names],
        format=FORMATS[ladder_format],
        # 0: every opening (the suite's or its own) twice, colours swapped
        games_per_pairing=body.get("games_per_pairing", int, 2, _between(0, MAX_GAMES)),
        # Left out: the ladder service fills in the game's own, as for the CLI and the SDK.
        opening_suite=body.get("opening_suite", str, ""), openings=own_openings(body, game),
        time_control=time_control(body), seed=body.get("seed", int, 0, _between(0, 2**62)),
        capture_trees=body.get("capture_trees", bool, False),
        adjudicate_empties=adjudicate_empties(body),
    )
    body.done()
    return config


MAX_ANALYSIS_MS = 60_000  # the analysis pool's own cap (its quota may be lower)


def analysis(data: object) -> tuple[int, common_pb2.BotRef, int]:
    """What the match page asks a bot about one of its positions: the ply (moves played
    before it), the bot, and its time."""
    body = Body(data)
    ply = body.get("ply", int, -1, _between(0, 2**31 - 1))
    if "ply" not in body.data:
        body.bad("ply", "say which position: the number of moves played before it")
    ref, time_ms = _asked(body)
    body.done()
    return ply, ref, time_ms


def position_analysis(data: object) -> tuple[Position, common_pb2.BotRef, int]:
    """What the board editor asks a bot: its move in a position (``position``: the text
    form, of the ``game``; none, as for ``/api/positions``, is the game's start, the
    variant's on the board of that size), with the bot and its time."""
    body = Body(data)
    spec = game_spec(body)
    played = rules(spec.kind)
    text = body.get("position", str, "")
    position: Position | None = None
    try:
        position = (played.position_from_text(text) if text
                    else played.new_position(*_variant_and_size(played, spec)))
        if position.is_game_over():
            body.bad("position", "the game is over here: there is no move to ask for")
    except GameError as exc:
        body.bad("position", str(exc))
    ref, time_ms = _asked(body)
    body.done()
    assert position is not None  # else a violation was raised above
    return position, ref, time_ms


def _asked(body: Body) -> tuple[common_pb2.BotRef, int]:
    """The bot asked and its time."""
    name = body.get("bot", str, "")
    if not name.strip():
        body.bad("bot", "name the bot (NAME or NAME@VERSION)")
    return bot_ref(body, "bot", name), body.get("time_ms", int, 1000,
                                                _between(1, MAX_ANALYSIS_MS))
