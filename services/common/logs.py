"""Structured logs: one line per event, carrying the ids that let one move be followed
across the referee's and the workers' logs with a single grep (its job id).

Every line has the time, level, ``service`` (the role), ``instance`` (the process's name
in the consumer groups), the logger and the message, plus whichever of :data:`FIELDS`
apply: set for a whole thread or block with :func:`log_context` / :func:`bind` (a match
thread binds its match id), or given with one call (``log.info("answered", extra=
move_fields(job))``).

Two forms (``ARENA_LOG_FORMAT``): ``json``, one object per line (containers, log
shippers); ``text``, ``time role LEVEL logger: message key=value ...`` for people (a
terminal, ``arena up``'s files under ``.arena/logs/``). ``auto`` picks text on a terminal
and JSON otherwise. Levels come from ``ARENA_LOG_LEVEL``.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import json
import logging
import sys
import time
import traceback
from collections.abc import Iterator
from typing import Any, TextIO

from arena.v1 import bots_pb2, common_pb2, engine_pb2

# The ids a line may carry, in the order the text form prints them.
FIELDS = ("match_id", "ply", "job_id", "ladder_id", "bot", "worker", "entry")
FORMATS = ("auto", "json", "text")
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")

_context: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar(
    "arena_log_context", default={})  # noqa: B039  (never mutated: replaced whole)


@contextlib.contextmanager
def log_context(**fields: Any) -> Iterator[None]:
    """Add ``fields`` to every line logged in this block (this thread or task)."""
    token = _context.set({**_context.get(), **fields})
    try:
        yield
    finally:
        _context.reset(token)


def bind(**fields: Any) -> None:
    """Add ``fields`` to every later line of this thread (a thread that lives for one
    match binds its match id once)."""
    _context.set({**_context.get(), **fields})


def bot_name(bot: bots_pb2.BotVersion | common_pb2.BotRef) -> str:
    """``name@version`` of a ``BotVersion`` or an exact ``BotRef``."""
    name = bot.spec.name if isinstance(bot, bots_pb2.BotVersion) else bot.name
    return f"{name}@{bot.version}"


def move_fields(job: engine_pb2.MoveJob, **more: Any) -> dict[str, Any]:
    """The ids of a move job, for ``extra=``: its ladder's too when it has one (a worker
    has no match thread that binds it)."""
    fields = {"match_id": job.match_id, "ply": job.ply, "job_id": job.job_id,
              "bot": bot_name(job.bot)}
    if job.ladder_id:
        fields["ladder_id"] = job.ladder_id
    fields.update(more)
    return fields


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    found = dict(_context.get())
    for name in FIELDS:
        value = record.__dict__.get(name)
        if value is not None:
            found[name] = value
    return found


class JsonFormatter(logging.Formatter):
    """One JSON object per line."""

    def __init__(self, service: str, instance: str) -> None:
        super().__init__()
        self.service, self.instance = service, instance

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        line: dict[str, Any] = {
            "ts": f"{stamp}.{int(record.msecs):03d}Z", "level": record.levelname,
            "service": self.service, "instance": self.instance, "logger": record.name,
            "msg": record.getMessage(),
        }
        line.update(_fields(record))
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return _printable_json(json.dumps(line, default=str, ensure_ascii=False))


def _printable_json(text: str) -> str:
    """JSON text with every character a terminal would act on that ``json.dumps`` leaves
    raw (DEL, the C1 controls such as CSI, bidi overrides; it escapes only those below
    U+0020) written as a ``\\u`` escape: same JSON, nothing for a terminal tailing it."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else _u_escape(ord(char)) for char in text)


def _u_escape(code: int) -> str:
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # beyond the BMP: a surrogate pair, as JSON writes one
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _escaped(text: str) -> str:
    """``text`` with every character a terminal would act on (ESC, CR, a newline...)
    written as its Python escape: ``\\x1b``."""
    return "".join(char if char.isprintable() or char == "\t"
                   else char.encode("unicode_escape").decode("ascii") for char in text)


def _one_event(message: str) -> str:
    """A message as the text form prints it: its continuation lines indented, so that
    none reads as an event of its own (an external bot's error or an engine's stderr,
    text from elsewhere, may hold a line that looks like one), and no control characters."""
    if message.isprintable():
        return message
    first, *more = (_escaped(line) for line in message.split("\n"))
    return "\n".join([first, *(f"  {line}" if line and not line[0].isspace() else line
                                for line in more)])


class TextFormatter(logging.Formatter):
    """``time role LEVEL logger: message key=value ...`` (the ids after the message): one
    event starts each line at its first column; a message's further lines are indented."""

    def __init__(self, service: str) -> None:
        super().__init__(f"%(asctime)s {service} %(levelname)s %(name)s: %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        message = _one_event(record.message)
        if message is record.message:  # the usual case: one printable line, no copy
            return super().formatMessage(record)
        shown = copy.copy(record)
        shown.message = message
        return super().formatMessage(shown)

    def formatException(self, ei: Any) -> str:
        """The traceback, each of its parts as a message (an exception's own text may be
        someone else's words)."""
        return "".join(map(_one_event, traceback.format_exception(*ei))).rstrip("\n")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        fields = _fields(record)
        if not fields:
            return text
        head, newline, rest = text.partition("\n")  # keep a traceback below the ids
        ids = " ".join(f"{key}={_escaped(str(value))}" for key, value in fields.items())
        return f"{head} {ids}{newline}{rest}"


def setup_logging(service: str, instance: str, level: str = "INFO", form: str = "auto",
                  stream: TextIO | None = None) -> None:
    """Configure the root logger of a service process (``ValueError`` for a bad level or
    format, naming the setting)."""
    if level.upper() not in LEVELS:
        raise ValueError(f"ARENA_LOG_LEVEL={level!r}: expected one of {', '.join(LEVELS)}")
    if form not in FORMATS:
        raise ValueError(f"ARENA_LOG_FORMAT={form!r}: expected one of {', '.join(FORMATS)}")
    stream = stream or sys.stderr
    if form == "auto":
        form = "text" if stream.isatty() else "json"
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter(service, instance) if form == "json"
                         else TextFormatter(service))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
