"""Which client a request comes from, behind trusted proxies or none (``addresses.py``);
the gateway's own use of it is in ``test_api.py``."""

from __future__ import annotations

import subprocess
import sys

import pytest
from arena.services.web.addresses import (
    FORWARDED,
    ClientAddresses,
    forwarded_for,
    parse_proxies,
)

PROXIES = ClientAddresses(parse_proxies("10.0.0.0/8, 127.0.0.1, fd00::/8"))


@pytest.mark.parametrize(("peer", "forwarded", "client"), [
    # No proxy in between: the peer, whatever the header says.
    ("198.51.100.4", ["203.0.113.7"], "198.51.100.4"),
    # Through a trusted proxy: the last address it did not itself add.
    ("10.1.1.1", ["203.0.113.7"], "203.0.113.7"),
    ("10.1.1.1", ["1.2.3.4, 203.0.113.7"], "203.0.113.7"),
    ("10.1.1.1", ["1.2.3.4", "203.0.113.7, 10.2.2.2"], "203.0.113.7"),  # two header lines
    ("127.0.0.1", ["203.0.113.7:5123"], "203.0.113.7"),
    ("10.1.1.1", ["[2001:db8::1]:443"], "2001:db8::/64"),
    # A proxy that adds nothing, or an entry that is no address: the last honest hop.
    ("10.1.1.1", [], "10.1.1.1"),
    ("10.1.1.1", ["made-up, 10.2.2.2"], "10.2.2.2"),
    ("10.1.1.1", ["203.0.113.7, unknown"], "10.1.1.1"),
    # An IPv6 client is its /64; an IPv4 address written as IPv6 is the IPv4 one.
    ("2001:db8:1:2:aaaa::1", [], "2001:db8:1:2::/64"),
    ("2001:db8:1:2:bbbb::9", [], "2001:db8:1:2::/64"),
    ("::ffff:198.51.100.4", [], "198.51.100.4"),
    ("fd00::1", ["203.0.113.7"], "203.0.113.7"),
    (None, ["203.0.113.7"], "unknown"),
])
def test_the_client_is_the_first_address_no_trusted_proxy_added(
        peer: str | None, forwarded: list[str], client: str) -> None:
    assert PROXIES.client(peer, forwarded) == client


STANDARD = ClientAddresses(parse_proxies("10.0.0.0/8, 127.0.0.1"), FORWARDED)


@pytest.mark.parametrize(("peer", "forwarded", "client"), [
    ("10.1.1.1", ["for=203.0.113.7"], "203.0.113.7"),
    ("10.1.1.1", ['for=1.2.3.4;proto=http, for="203.0.113.7:4711";by=10.1.1.1'],
     "203.0.113.7"),
    ("10.1.1.1", ["for=1.2.3.4", 'For="[2001:db8::1]:443", for=10.2.2.2'], "2001:db8::/64"),
    ("10.1.1.1", ["for=203.0.113.7, for=unknown"], "10.1.1.1"),  # no address: stop
    ("10.1.1.1", ["for=203.0.113.7, proto=https"], "10.1.1.1"),  # an element without for=
    ("10.1.1.1", ["for=_hidden, for=10.2.2.2"], "10.2.2.2"),
    ("198.51.100.4", ["for=203.0.113.7"], "198.51.100.4"),  # no proxy: not read
])
def test_rfc_7239_forwarded_names_the_client_the_same_way(
        peer: str, forwarded: list[str], client: str) -> None:
    assert STANDARD.client(peer, forwarded) == client


def test_forwarded_for_reads_each_elements_node() -> None:
    assert forwarded_for(['for=a;proto=https, by=b', ' for="[::1]:80" ']) == ["a", "", "[::1]:80"]


def test_without_trusted_proxies_the_header_is_never_read() -> None:
    assert ClientAddresses().client("127.0.0.1", ["203.0.113.7"]) == "127.0.0.1"


def test_an_unknown_forwarded_header_stops_the_gateway_with_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "arena.services.web", "--listen", "127.0.0.1:0"],
        env={"ARENA_WEB_FORWARDED_HEADER": "x-real-ip"}, capture_output=True, text=True,
        timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "arena-web: configuration error: ARENA_WEB_FORWARDED_HEADER='x-real-ip': expected "
        "one of x-forwarded-for, forwarded")


def test_a_negative_limit_stops_the_gateway_with_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "arena.services.web", "--listen", "127.0.0.1:0"],
        env={"ARENA_WEB_ANALYSES": "-1"}, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "arena-web: configuration error: ARENA_WEB_ANALYSES='-1': expected 1 or more")


def test_a_bad_proxy_stops_the_gateway_with_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "arena.services.web", "--listen", "127.0.0.1:0"],
        env={"ARENA_WEB_TRUSTED_PROXIES": "10.0.0.0/8, the-proxy"},
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "arena-web: configuration error: ARENA_WEB_TRUSTED_PROXIES: 'the-proxy' is not an "
        "address or a network (e.g. 10.0.0.0/8, 127.0.0.1)")
