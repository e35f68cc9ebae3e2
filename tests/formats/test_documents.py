"""JSON and TOML as Arena reads what someone wrote (``arena.documents``): everything the
standard readers read, and a number past the digits Python converts refused in plain
words."""

from __future__ import annotations

import sys
import tomllib

import pytest

from arena.documents import NumberTooLong, read_json, read_toml

LIMIT = sys.get_int_max_str_digits()


def test_what_the_standard_readers_read_is_read_alike() -> None:
    text = '{"a": [1, -2, 3.5, true, null], "b": {"c": "d"}, "e": ' + "9" * LIMIT + "}"
    assert read_json(text) == {"a": [1, -2, 3.5, True, None], "b": {"c": "d"},
                               "e": 10**LIMIT - 1}
    assert read_json(b'{"x": 1}') == {"x": 1}
    toml = 'a = 1\nb = [2, 3]\n[c]\nd = "e"\nf = ' + "9" * LIMIT + "\n"
    assert read_toml(toml) == {"a": 1, "b": [2, 3], "c": {"d": "e", "f": 10**LIMIT - 1}}
    with pytest.raises(tomllib.TOMLDecodeError):
        read_toml("a = ")


@pytest.mark.parametrize("number", ["9" * (LIMIT + 1), "-" + "9" * 5000])
def test_a_json_number_past_the_limit_says_its_digits(number: str) -> None:
    digits = len(number.lstrip("-"))
    with pytest.raises(NumberTooLong, match=f"^a number of {digits:,} digits "
                       rf"\(at most {LIMIT:,} are read\)$"):
        read_json('{"depth": [1, ' + number + "]}")


def test_a_toml_number_past_the_limit_is_refused_in_plain_words() -> None:
    with pytest.raises(NumberTooLong, match=f"^a number of more than {LIMIT:,} digits$"):
        read_toml("[builtin]\nwidth = " + "9" * 5000 + "\n")
    assert isinstance(NumberTooLong("x"), ValueError)  # callers that catch ValueError
