"""The engine catalog: the protocol engines an operator installed where a worker runs.

A TOML file, one table per engine under ``engines``:

    [engines.edax]
    description = "Edax 4.6, level 10, one thread"
    games = ["othello"]
    protocol = "nboard"                    # or "gtp" (Othello), "gomocup" (Gomoku)
    command = ["/opt/edax/lEdax", "-nboard", "-n", "1", "-eval-file", "/opt/edax/eval.dat"]
    files = ["/opt/edax/eval.dat"]         # files or folders it reads, hashed with the
                                           # executable into the checksum
    options = { depth = 10 }               # protocol settings (see OPTIONS)
    limits = { memory_mb = 512, startup_ms = 10000 }
    env = { EXAMPLE = "1" }                # added to the sandbox's small environment

A relative path (in ``command[0]`` or ``files``) is read from the catalog's folder; a bare
name is looked up on ``PATH`` and beside the worker's Python. Every problem is reported at
once, field by field (``engines.edax.limits.memory_mb: ...``). Each engine's checksum is a
SHA-256 of its executable and its ``files``: a changed binary is a different engine. A
folder in ``files`` (an engine's data folder: its book, its networks, its configuration) is
readable whole, and hashed file by file: each file's path inside it, then its bytes.

The files can change on disk while a worker runs (an operator installs a new build in
place). ``BuildCheck`` says what checksum they have now, cheaply: it compares what ``stat``
says of them with what it said when they were last hashed, and hashes them again only
when that differs.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import stat
import sys
import threading
import time
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from arena.services.worker.engines.sandbox import SandboxLimits

from arena.documents import NumberTooLong, read_text_document, read_toml
from arena.errors import FieldViolation, InvalidArgumentError, NotFoundError
from arena.protocols.options import (
    ENGINE_NAME_RE,
    GAMES_OF_PROTOCOL,
    OptionValue,
    option_items,
    validate_options,
)

_ENV_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ENGINE_KEYS = ("description", "games", "protocol", "command", "files", "options", "limits",
                "env")


class CatalogError(InvalidArgumentError):
    """A catalog (or a bot's engine options) that cannot be used, field by field."""


@dataclass(frozen=True)
class EngineLimits:
    """The sandbox's limits plus two deadlines: ``startup_ms`` for the process to start
    and finish its handshake, ``grace_ms`` added to each move's time limit."""

    memory_mb: int = 1024
    cpu_s: int = 3600
    open_files: int = 64
    processes: int = 32
    output_kb: int = 1024
    startup_ms: int = 30_000
    grace_ms: int = 500

    def sandbox(self) -> SandboxLimits:
        return SandboxLimits(self.memory_mb, self.cpu_s, self.open_files, self.processes,
                             self.output_kb)


_LIMIT_RANGES = {
    "memory_mb": (16, 1 << 20), "cpu_s": (1, 30 * 86400), "open_files": (8, 1 << 20),
    "processes": (1, 1 << 16), "output_kb": (1, 1 << 20), "startup_ms": (10, 3_600_000),
    "grace_ms": (0, 600_000),
}


# A file changed this recently (seconds) may change again without its stat showing it: a
# file system stamps times in coarse steps (a kernel tick, a second, two on FAT), so a
# write of the same size within the step leaves size, mtime and ctime as they were. Files
# that recent are hashed again at every look until they are older ("racy git").
RACY_S = 2.0
_MISSING = (-1, -1, -1, -1, -1)


@dataclass(frozen=True)
class FilesStamp:
    """What ``stat`` says of every file a checksum hashes, in its order: its path, device,
    inode, size, mtime and ctime (ns). A file replaced (a new inode), rewritten in place
    (size, mtime) or given back its old mtime (ctime, which no one can set) stamps
    differently. ``settled``: every file had last changed ``RACY_S`` or more before the
    stamp was taken, so an equal stamp later means equal bytes."""

    files: tuple[tuple[str, int, int, int, int, int], ...] = ()
    settled: bool = False

    @classmethod
    def of(cls, executable: str | Path, files: Iterable[str | Path] = ()) -> FilesStamp:
        taken_ns = time.time_ns()
        stamped: list[tuple[str, int, int, int, int, int]] = []
        for path in (str(executable), *map(str, files)):
            try:
                found = os.stat(path)
            except OSError:  # gone: hashing it will say why
                stamped.append((path, *_MISSING))
                continue
            if not stat.S_ISDIR(found.st_mode):
                stamped.append(_stamped(path, found))
                continue
            for inner in _folder_files(Path(path)):
                try:
                    stamped.append(_stamped(str(inner), inner.stat()))
                except OSError:
                    stamped.append((str(inner), *_MISSING))
        settled = all(taken_ns - max(mtime, ctime) >= RACY_S * 1e9
                      for _path, *_ids, mtime, ctime in stamped)
        return cls(tuple(stamped), settled)


def _stamped(path: str, found: os.stat_result) -> tuple[str, int, int, int, int, int]:
    return (path, found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns,
            found.st_ctime_ns)


@dataclass(frozen=True)
class EngineSpec:
    """One engine as a worker runs it: the catalog entry with its options. Equal specs
    share a warm process; a bot's own options make a different spec."""

    name: str
    protocol: str
    games: tuple[str, ...]
    command: tuple[str, ...]
    checksum: str
    options: tuple[tuple[str, OptionValue], ...] = ()
    limits: EngineLimits = field(default_factory=EngineLimits)
    env: tuple[tuple[str, str], ...] = ()
    description: str = ""
    files: tuple[str, ...] = ()  # besides its command's paths, what it may read
    # How the hashed files looked when ``checksum`` was taken (before it: a change while
    # they were read shows as a different stamp); empty if unknown.
    stamp: FilesStamp = field(default_factory=FilesStamp, compare=False, repr=False)

    def option(self, key: str) -> OptionValue | None:
        return dict(self.options).get(key)

    def with_options(self, bots: Mapping[str, object]) -> EngineSpec:
        """This engine with a bot's options (validated) beside its catalog options, which
        win: the operator's ``thread_num`` or ``depth`` bounds what the engine may take
        whatever a bot says (the registry refuses a bot that says otherwise; one
        registered before the catalog set it plays by the catalog)."""
        violations = validate_options(self.protocol, bots, "options")
        if violations:
            raise CatalogError(f"bad options for engine {self.name!r}", violations)
        return replace(self, options=option_items(dict(bots) | dict(self.options)))


@dataclass(frozen=True)
class Catalog:
    engines: Mapping[str, EngineSpec]
    source: str = ""

    def get(self, name: str) -> EngineSpec:
        if name not in self.engines:
            known = ", ".join(sorted(self.engines)) or "none"
            raise NotFoundError(f"no engine {name!r} in the catalog {self.source} (has: {known})")
        return self.engines[name]

    def for_game(self, game: str) -> list[EngineSpec]:
        return [spec for spec in self.engines.values() if game in spec.games]


SHIPPED_CATALOG = "arena"
def load_catalog(path: Path | str) -> Catalog:
    path = catalog_file(path)
    try:
        text = read_text_document(path, "the engine catalog")
    except OSError as exc:
        raise CatalogError(f"cannot read the engine catalog {path}: {exc.strerror} "
                           f"(the name {SHIPPED_CATALOG!r} is the catalog of Arena's own "
                           "engines)") from None
    except InvalidArgumentError as exc:  # over the limit (/dev/zero), or not text
        raise CatalogError(str(exc)) from None
    return parse_catalog(text, path.resolve().parent, str(path))


def parse_catalog(text: str, base_dir: Path, source: str = "<catalog>") -> Catalog:
    try:
        data = read_toml(text)
    except (tomllib.TOMLDecodeError, NumberTooLong) as exc:
        raise CatalogError(f"{source} is not TOML: {exc}") from None
    violations = [FieldViolation(key, "unknown top-level key (expected 'engines')")
                  for key in data if key != "engines"]
    table = data.get("engines", {})
    if not isinstance(table, dict):
        violations.append(FieldViolation("engines", "must be a table of engines"))
        table = {}
    engines = {}
    for name, entry in table.items():
        spec, problems = _parse_engine(name, entry, base_dir)
        violations += problems
        if spec is not None:
            engines[name] = spec
    if violations:
        raise CatalogError(f"bad engine catalog {source}", violations)
    return Catalog(engines, source)


def _parse_engine(name: str, entry: object, base_dir: Path
                  ) -> tuple[EngineSpec | None, list[FieldViolation]]:
    where = f"engines.{name}"
    if not ENGINE_NAME_RE.fullmatch(name):
        return None, [FieldViolation(where, "name must be 1-64 of a-z 0-9 . _ - (lower case)")]
    if not isinstance(entry, dict):
        return None, [FieldViolation(where, "must be a table")]
    problems = [FieldViolation(f"{where}.{key}", f"unknown key (known: {', '.join(_ENGINE_KEYS)})")
                for key in entry if key not in _ENGINE_KEYS]
    protocol = entry.get("protocol")
    if protocol not in GAMES_OF_PROTOCOL:
        problems.append(FieldViolation(f"{where}.protocol",
                                       f"must be one of {sorted(GAMES_OF_PROTOCOL)}"))
    games = _games(entry.get("games"), protocol, f"{where}.games", problems)
    command = _command(entry.get("command"), base_dir, f"{where}.command", problems)
    files = _files(entry.get("files", []), base_dir, f"{where}.files", problems)
    options = _table(entry.get("options", {}), f"{where}.options", problems)
    if isinstance(protocol, str) and protocol in GAMES_OF_PROTOCOL:
        problems += validate_options(protocol, options, f"{where}.options")
    limits = _limits(entry.get("limits", {}), f"{where}.limits", problems)
    env = _env(entry.get("env", {}), f"{where}.env", problems)
    description = entry.get("description", "")
    if not isinstance(description, str):
        problems.append(FieldViolation(f"{where}.description", "must be a string"))
    if problems or command is None:
        return None, problems
    stamp = FilesStamp.of(command[0], files)  # before the bytes are read
    return EngineSpec(name, str(protocol), games, command, checksum(command[0], files),
                      option_items(options), limits, tuple(sorted(env.items())),
                      str(description), tuple(str(path) for path in files), stamp), []


def _games(value: object, protocol: object, where: str, problems: list[FieldViolation]
           ) -> tuple[str, ...]:
    allowed = GAMES_OF_PROTOCOL.get(protocol, ()) if isinstance(protocol, str) else ()
    if not isinstance(value, list) or not value or not all(isinstance(g, str) for g in value):
        problems.append(FieldViolation(where, "must be a non-empty list of game names"))
        return ()
    for game in value:
        if allowed and game not in allowed:
            problems.append(FieldViolation(where, f"{protocol} engines play {list(allowed)}, "
                                                  f"not {game!r}"))
    return tuple(value)


def _command(value: object, base_dir: Path, where: str, problems: list[FieldViolation]
             ) -> tuple[str, ...] | None:
    words = shlex.split(value) if isinstance(value, str) else value
    if not isinstance(words, list) or not words or not all(isinstance(w, str) for w in words):
        problems.append(FieldViolation(where, "must be a non-empty list of strings"))
        return None
    executable = resolve_executable(words[0], base_dir)
    if executable is None:
        problems.append(FieldViolation(where, f"no executable {words[0]!r} (looked in "
                                              f"{base_dir}, PATH and {_beside_python()})"))
        return None
    return (str(executable), *words[1:])


def resolve_executable(word: str, base_dir: Path) -> Path | None:
    """``word`` as an executable file: a path (relative to ``base_dir``), or a name on
    ``PATH`` or beside the running Python (a virtualenv's console scripts). Symbolic links
    are kept: a virtualenv's ``python`` is a link whose place decides its packages (the
    checksum is of the file it points to)."""
    if "/" in word:
        path = Path(word) if Path(word).is_absolute() else base_dir / word
        return path.absolute() if path.is_file() and os.access(path, os.X_OK) else None
    search = os.pathsep.join([os.environ.get("PATH", os.defpath), str(_beside_python())])
    found = shutil.which(word, path=search)
    return Path(found).absolute() if found else None


def _beside_python() -> Path:
    return Path(sys.executable).parent


def _files(value: object, base_dir: Path, where: str, problems: list[FieldViolation]
           ) -> list[Path]:
    if not isinstance(value, list) or not all(isinstance(f, str) for f in value):
        problems.append(FieldViolation(where, "must be a list of file or folder paths"))
        return []
    paths = [Path(f) if Path(f).is_absolute() else base_dir / f for f in value]
    for path in paths:
        if not path.is_file() and not path.is_dir():
            problems.append(FieldViolation(where, f"no file or folder {str(path)!r}"))
    return paths


def _table(value: object, where: str, problems: list[FieldViolation]) -> dict[str, object]:
    if not isinstance(value, dict):
        problems.append(FieldViolation(where, "must be a table"))
        return {}
    return dict(value)


def _limits(value: object, where: str, problems: list[FieldViolation]) -> EngineLimits:
    table = _table(value, where, problems)
    known = {f.name for f in fields(EngineLimits)}
    given: dict[str, int] = {}
    for key, number in table.items():
        if key not in known:
            problems.append(FieldViolation(f"{where}.{key}", f"unknown limit (known: "
                                                             f"{', '.join(sorted(known))})"))
            continue
        low, high = _LIMIT_RANGES[key]
        if isinstance(number, bool) or not isinstance(number, int) or not low <= number <= high:
            problems.append(FieldViolation(f"{where}.{key}", f"must be an integer in "
                                                             f"{low}..{high}"))
            continue
        given[key] = number
    return EngineLimits(**given)


def _env(value: object, where: str, problems: list[FieldViolation]) -> dict[str, str]:
    table = _table(value, where, problems)
    for key, text in table.items():
        if not _ENV_KEY_RE.fullmatch(key) or not isinstance(text, str) or "\0" in text:
            problems.append(FieldViolation(f"{where}.{key}", "must be NAME = \"text\""))
    return {k: v for k, v in table.items() if isinstance(v, str)}


def checksum(executable: str | Path, files: list[Path] | tuple[Path, ...] = ()) -> str:
    """SHA-256 (hex) of the executable's bytes and then each file's, in order; a folder
    adds, for each file under it in sorted order, its path inside the folder (NUL-ended)
    and its bytes, so a renamed, added or removed file changes the sum too."""
    digest = hashlib.sha256()
    for path in (Path(executable), *files):
        for part in _hashed_parts(path):
            digest.update(part)
    return digest.hexdigest()


class BuildCheck:
    """The checksum an engine's files have now, for a worker that must not play a build
    other than the one a bot pinned. Each look stats the files (a few µs a file) and hashes
    them again only when their stamp differs from the one taken before their last hash, or
    when they had changed too recently for the stamp to be trusted (``RACY_S``). Safe to
    call from several threads (a worker's engine thread and its heartbeat): a hash is
    never made under the lock, and a sum is always stored with a stamp taken before its
    bytes were read, so a change made meanwhile shows as a new stamp at the next look."""

    def __init__(self, specs: Iterable[EngineSpec] = ()) -> None:
        self._lock = threading.Lock()
        # by engine name: the stamp taken before the files were last hashed, and the sum
        self._seen: dict[str, tuple[FilesStamp, str]] = {
            spec.name: (spec.stamp, spec.checksum) for spec in specs if spec.stamp.files}

    def checksum_now(self, spec: EngineSpec) -> str:
        """The checksum of ``spec``'s executable and files as they are on disk now
        (raises ``OSError`` if one cannot be read)."""
        stamp = FilesStamp.of(spec.command[0], spec.files)
        with self._lock:
            seen = self._seen.get(spec.name)
        if seen is not None and seen[0].settled and seen[0].files == stamp.files:
            return seen[1]
        now = checksum(spec.command[0], [Path(path) for path in spec.files])
        with self._lock:
            self._seen[spec.name] = (stamp, now)
        return now


def _hashed_parts(path: Path) -> Iterator[bytes]:
    if not path.is_dir():
        yield from _chunks(path)
        return
    for inner in _folder_files(path):
        yield inner.relative_to(path).as_posix().encode() + b"\0"
        yield from _chunks(inner)


def _chunks(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            yield chunk


def _folder_files(folder: Path) -> list[Path]:
    """The files under ``folder``, sorted, without following links to folders (a link
    to a file counts as that file, though in the engine's view only a target inside a
    readable folder can be read)."""
    found = []
    for parent, _folders, names in os.walk(folder):
        found += [Path(parent) / name for name in names if (Path(parent) / name).is_file()]
    return sorted(found)


def sample_catalog_path() -> Path:
    """The catalog shipped with Arena: its own bots as protocol engines."""
    return Path(__file__).with_name("arena-engines.toml")


def catalog_file(name: Path | str) -> Path:
    """The file a catalog name stands for: ``arena`` is the catalog shipped with Arena
    (wherever the package is installed), anything else a path (``./arena`` for a file so
    named)."""
    return sample_catalog_path() if str(name) == SHIPPED_CATALOG else Path(name)
