"""The pagination every List RPC shares (services/common/paging.py)."""

from __future__ import annotations

import base64

import pytest
from arena.services.common import paging
from hypothesis import given
from hypothesis import strategies as st

from arena.bots.validation import NAME_MAX_CHARS
from arena.errors import InvalidArgumentError


# A cursor is what a page ended on: an offset, a match id or a bot name (at most
# NAME_MAX_CHARS characters). Longer text is never a cursor: its token would pass
# MAX_TOKEN_CHARS, which the server refuses to decode.
@given(st.text(max_size=NAME_MAX_CHARS))
def test_tokens_round_trip_any_cursor(cursor: str) -> None:
    assert paging.decode_page_token(paging.encode_page_token(cursor)) == cursor


def test_the_longest_bot_name_fits_in_a_token() -> None:
    widest = "\U0001F600" * NAME_MAX_CHARS  # four bytes each in UTF-8
    assert len(paging.encode_page_token(widest)) <= paging.MAX_TOKEN_CHARS
    assert paging.decode_page_token(paging.encode_page_token(widest)) == widest


def test_the_empty_token_is_the_first_page() -> None:
    assert paging.decode_page_token("") == ""


@pytest.mark.parametrize(
    "token", ["not-a-token!", base64.urlsafe_b64encode(b"other:x").decode(), "50", "%%%"]
)
def test_tokens_this_server_did_not_issue_are_refused(token: str) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        paging.decode_page_token(token)
    assert [v.field for v in caught.value.violations] == ["page.page_token"]


def test_page_sizes_default_cap_and_refuse_negatives() -> None:
    assert paging.page_size(0) == paging.DEFAULT_PAGE_SIZE
    assert paging.page_size(7) == 7
    assert paging.page_size(10_000) == paging.MAX_PAGE_SIZE
    with pytest.raises(InvalidArgumentError) as caught:
        paging.page_size(-1)
    assert [v.field for v in caught.value.violations] == ["page.page_size"]
