"""The SDK's argument checks: each public method of a class given to ``checked_arguments``
refuses, before it sends anything, an argument its annotation does not allow.

Protobuf took most wrong values, and said so from deep inside (``bad argument type for
built-in operation``, ``Parameter to initialize message field must be dict or instance of
same class``); an enum number outside the enum (``status=99``) it took and sent. Here the
annotations say what each argument accepts, and a refusal is one ``InvalidArgumentError``
naming the method, the argument and what it accepts:

    list_matches: status must be a MatchStatus (MATCH_STATUS_UNSPECIFIED=0, ...), got int 99

An enum argument (annotated ``SomeEnum.ValueType``, as mypy-protobuf types them) takes one
of the enum's numbers or names; a name is passed on as its number. Ranges (an int32 field
given 2**40) are still protobuf's to check, and ``sdk._request`` names the field.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import UnionType
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper
from google.protobuf.message import Message

from arena.errors import InvalidArgumentError
from arena.text import shown

Checked = TypeVar("Checked", bound=type)


class Refused(Exception):
    """A value a ``Check`` does not accept (the caller says which argument)."""


@dataclass(frozen=True)
class Check:
    """What one annotation accepts: ``accepts`` says it in words, ``take`` returns the
    value to pass on (an enum's name as its number) or raises ``Refused``."""

    accepts: str
    take: Callable[[Any], Any]


def checked_arguments(cls: Checked) -> Checked:
    """``cls`` with every public method (and ``__init__``) checking its arguments against
    its annotations before it runs (see the module docstring). A generator method is
    checked when called, not when first iterated."""
    for name, method in list(vars(cls).items()):
        if inspect.isfunction(method) and (name == "__init__" or not name.startswith("_")):
            setattr(cls, name, _checking(method, cls.__name__ if name == "__init__" else name))
    return cls


def _checking(method: Callable[..., Any], where: str) -> Callable[..., Any]:
    """``method`` checking its arguments; ``where`` names it in a refusal."""
    signature = inspect.signature(method)
    hints = get_type_hints(method)
    checks = {name: _check(parameter.annotation, hints[name], method.__globals__)
              for name, parameter in signature.parameters.items()
              if name != "self" and parameter.kind not in (parameter.VAR_POSITIONAL,
                                                           parameter.VAR_KEYWORD)}
    takes = ", ".join(name for name in signature.parameters if name != "self")

    @functools.wraps(method)
    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:  # a missing, unknown or doubled argument
            raise InvalidArgumentError(f"{where}: {exc} (it takes {takes})") from None
        for name, value in bound.arguments.items():
            check = checks.get(name)
            if check is None:
                continue
            try:
                bound.arguments[name] = check.take(value)
            except Refused:
                raise InvalidArgumentError(
                    f"{where}: {name} must be {check.accepts}, got {_described(value)}"
                ) from None
        return method(*bound.args, **bound.kwargs)

    return checked


def _check(written: object, hint: Any, namespace: Mapping[str, Any]) -> Check:
    """The check for one parameter: its annotation as written (the text ``from __future__
    import annotations`` leaves) and as ``get_type_hints`` resolves it. ``SomeEnum.ValueType``
    resolves to plain ``int``, so an enum is read from the text."""
    if isinstance(written, str) and written.endswith(".ValueType"):
        first, *rest = written.removesuffix(".ValueType").split(".")
        enum = functools.reduce(getattr, rest, namespace[first])
        if isinstance(enum, EnumTypeWrapper):
            return _enum_check(enum)
    return _type_check(hint)


def _type_check(kind: Any) -> Check:
    """The check for a type: a class (a protobuf message's, ``str``; ``int`` and ``float``
    refuse a bool, a ``Path`` takes any path), ``X | Y``, ``list[X]``, ``Mapping[K, V]``
    (any mapping), ``Any``."""
    origin, members = get_origin(kind), get_args(kind)
    if kind is Any:
        return Check("anything", lambda value: value)
    if kind is None or kind is type(None):
        return _exactly(type(None), "None")
    if origin in (Union, UnionType):
        return _either([_type_check(member) for member in members])
    if origin is list:
        return _list_check(_type_check(members[0]))
    if isinstance(origin, type):
        return _exactly(origin, _a(origin.__name__))  # Mapping[str, Any]: any mapping
    if kind is bool:
        return _exactly(bool, "a bool")
    if kind is int:
        return _exactly(int, "an int", refused=bool)
    if kind is float:
        return _exactly((int, float), "a number", refused=bool)
    if kind is str:
        return _exactly(str, "a str")
    if isinstance(kind, type) and issubclass(kind, os.PathLike):
        return _exactly((str, os.PathLike), "a path")
    if isinstance(kind, type) and issubclass(kind, Message):
        return _exactly(kind, _a(f"{kind.DESCRIPTOR.full_name} message"))
    if isinstance(kind, type):
        return _exactly(kind, _a(kind.__name__))
    raise TypeError(f"no argument check for the annotation {kind!r}")


def _exactly(kind: type | tuple[type, ...], accepts: str,
             refused: type | None = None) -> Check:
    def take(value: Any) -> Any:
        if not isinstance(value, kind) or (refused is not None and isinstance(value, refused)):
            raise Refused
        return value

    return Check(accepts, take)


def _enum_check(enum: EnumTypeWrapper) -> Check:
    values = dict(enum.items())
    numbers = set(values.values())
    listed = ", ".join(f"{name}={number}" for name, number in values.items())

    def take(value: Any) -> Any:
        if isinstance(value, str) and value in values:
            return values[value]
        if isinstance(value, int) and not isinstance(value, bool) and value in numbers:
            return value
        raise Refused

    return Check(f"{_a(enum.DESCRIPTOR.name)} ({listed})", take)


def _list_check(item: Check) -> Check:
    def take(value: Any) -> Any:
        if not isinstance(value, (list, tuple)):
            raise Refused
        return [item.take(each) for each in value]

    return Check(f"a list of {item.accepts.split(' ', 1)[-1]}s", take)  # of ints


def _either(checks: list[Check]) -> Check:
    if len(checks) == 1:
        return checks[0]

    def take(value: Any) -> Any:
        for check in checks:
            try:
                return check.take(value)
            except Refused:
                continue
        raise Refused

    return Check(" or ".join(check.accepts for check in checks), take)


def _a(name: str) -> str:
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _described(value: object) -> str:
    """The refused value with its type, on one line and within bounds (``str '12'``,
    ``int 123``; a message by its type alone: its text form spans lines)."""
    if isinstance(value, Message):
        return _a(f"{value.DESCRIPTOR.full_name} message")
    text = shown(value)
    if "\n" in text:  # a list of messages
        text = " ".join(text.split())
    return f"{type(value).__name__} {text}"
