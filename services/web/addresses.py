"""Whose request is it: the client address a viewer is known by.

Anonymous viewers share out the gateway's streams and turns by address
(``turns.ViewerTurns``, ``live.StreamSlots``). Behind a reverse proxy or an ingress every
connection comes from the proxy, so all viewers would be one. Operators name their proxies
(``ARENA_WEB_TRUSTED_PROXIES``: addresses and networks); a request whose peer is one of them
is read as coming from the address the proxy put in ``X-Forwarded-For``. That header is a
list the client may have started itself, so it is read from the right: each proxy appends
the address it was called from, and the first address that is not a trusted proxy is the
client. An entry that is no address, or a list that runs out of entries, stops the walk at
the last hop known to be honest: a client cannot invent names to buy itself more shares.

Proxies that write the standard ``Forwarded`` header (RFC 7239: ``for=203.0.113.7;
proto=https, for="[2001:db8::1]:4711"``) instead are read through it
(``ARENA_WEB_FORWARDED_HEADER=forwarded``): the ``for=`` of each element, the same walk
from the right. Only the header the operator names is read: a client could write the other
one itself, and the proxy would pass it on untouched.

An IPv6 client is known by its /64: one host usually holds a whole /64 and could take a new
address for every request.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

X_FORWARDED_FOR, FORWARDED = "x-forwarded-for", "forwarded"
FORWARDED_HEADERS = (X_FORWARDED_FOR, FORWARDED)
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
IPV6_PREFIX = 64


def parse_proxies(spec: str) -> tuple[Network, ...]:
    """``10.0.0.0/8, 127.0.0.1`` -> the networks; ``ValueError`` names a bad entry."""
    networks = []
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ValueError(f"ARENA_WEB_TRUSTED_PROXIES: {item!r} is not an address or a "
                             "network (e.g. 10.0.0.0/8, 127.0.0.1)") from None
    return tuple(networks)


def _address(text: str) -> Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6] or [v6]:port
        text = text[1:text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def forwarded_for(lines: Iterable[str]) -> list[str]:
    """The ``for=`` node of each element of RFC 7239 ``Forwarded`` header lines, in order
    (``""`` for an element without one: no address, so the walk stops there)."""
    nodes = []
    for line in lines:
        for element in line.split(","):
            node = ""
            for pair in element.split(";"):
                name, equals, value = pair.partition("=")
                if equals and name.strip().lower() == "for":
                    node = value.strip().strip('"')
            nodes.append(node)
    return nodes


@dataclass(frozen=True)
class ClientAddresses:
    """The client address of a request (see the module docstring)."""

    trusted: tuple[Network, ...] = ()
    header: str = X_FORWARDED_FOR  # which header trusted proxies write (FORWARDED_HEADERS)

    def _trusted(self, address: Address) -> bool:
        return any(address in network for network in self.trusted)

    def client(self, peer: str | None, forwarded: Iterable[str]) -> str:
        """The client's address as a viewer's name, from the connection's ``peer`` and the
        request's lines of ``header`` (in order)."""
        hop = _address(peer or "")
        if hop is None:
            return peer or "unknown"
        if self.trusted and self._trusted(hop):
            entries = (forwarded_for(forwarded) if self.header == FORWARDED
                       else [entry for line in forwarded for entry in line.split(",")])
            for entry in reversed(entries):
                address = _address(entry)
                if address is None:
                    break
                hop = address
                if not self._trusted(address):
                    break
        if isinstance(hop, ipaddress.IPv6Address):
            return str(ipaddress.ip_network(f"{hop}/{IPV6_PREFIX}", strict=False))
        return str(hop)
