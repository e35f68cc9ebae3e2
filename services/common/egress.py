"""Where external bots may live: the arena must not become anyone's port scanner.

An external bot's address is resolved and every address it resolves to is checked, at
registration (the registry; a host name the operator allowed is taken as it is there) and
again at every connection (the worker, which then connects to the checked address itself,
so a name that resolves elsewhere a moment later changes nothing). By default only public
addresses are allowed: loopback, link-local, private, shared, multicast, reserved and
unspecified addresses are refused, which covers the metadata services of clouds and the
arena's own services, and so is an IPv6 address that carries such an IPv4 address (NAT64,
6to4, Teredo, mapped or IPv4-compatible forms). Operators allow more with
``external_allow``: CIDRs (``10.1.0.0/16``, ``127.0.0.1/32``) and host patterns
(``bots.example.org``, ``*.lab.internal``), comma-separated.

What a bot's owner learns when a move fails is only "unreachable" or "protocol error";
the precise reason goes to the operator's log.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Sequence[str]]


class EgressRefused(ValueError):
    """The address may not be dialled. The message, for whoever gave the address, says the
    same whether the name does not resolve or resolves somewhere refused, and never what
    it resolves to: told "vm resolves to 127.0.0.1" or "redis resolves to 10.0.3.7", any
    user learned the arena's own network. ``detail`` is for the operator's log."""

    def __init__(self, host: str, detail: str) -> None:
        super().__init__(
            f"{host} is not an address the arena may call: it must resolve, and to public "
            "addresses only (an operator allows private, loopback or reserved ones with "
            "ARENA_EXTERNAL_ALLOW)")
        self.detail = detail


def system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({str(info[4][0]) for info in infos})


# IPv6 prefixes whose last 32 bits are an IPv4 address a gateway may translate to (NAT64,
# RFC 6052 and RFC 8215), and the deprecated IPv4-compatible form (::a.b.c.d).
_V4_IN_LAST_32 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"),
                  ipaddress.ip_network("::/96"))


def _public(address: IPAddress) -> bool:
    """Global unicast, and so is every IPv4 address an IPv6 one carries (mapped, 6to4,
    Teredo, NAT64, IPv4-compatible): ``is_global`` says only what the IPv6 prefix is, and
    ``[64:ff9b::7f00:1]`` or ``[2002:7f00:1::]`` reach 127.0.0.1 where such a route
    exists."""
    if not (address.is_global and not address.is_multicast):
        return False
    return all(_public(inner) for inner in _carried_v4(address))


def _carried_v4(address: IPAddress) -> list[ipaddress.IPv4Address]:
    if isinstance(address, ipaddress.IPv4Address):
        return []
    carried = [inner for inner in (address.ipv4_mapped, address.sixtofour) if inner]
    if address.teredo:
        carried += list(address.teredo)
    if any(address in net for net in _V4_IN_LAST_32):
        carried.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return carried


@dataclass(frozen=True)
class EgressPolicy:
    """Which external addresses the arena dials (see the module docstring)."""

    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    hosts: tuple[str, ...] = ()
    resolver: Resolver = system_resolver

    @classmethod
    def parse(cls, allow: str, resolver: Resolver = system_resolver) -> EgressPolicy:
        networks, hosts = [], []
        for item in (part.strip() for part in allow.split(",")):
            if not item:
                continue
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                hosts.append(item.lower())
        return cls(tuple(networks), tuple(hosts), resolver)

    def allowed_ip(self, address: IPAddress) -> bool:
        return _public(address) or any(address in net for net in self.networks)

    def check(self, host: str, port: int) -> None:
        """At registration: a name the operator allowed is accepted as it is (it is
        resolved when dialled); anything else must resolve to allowed addresses only."""
        bare = host[1:-1] if host.startswith("[") else host
        if not any(fnmatch.fnmatchcase(bare.lower(), pattern) for pattern in self.hosts):
            self.resolve(host, port)

    def resolve(self, host: str, port: int) -> list[str]:
        """The addresses to dial for ``host:port``; ``EgressRefused`` if any is refused
        (a name that also points somewhere private is refused as a whole)."""
        bare = host[1:-1] if host.startswith("[") else host
        allowed_name = any(fnmatch.fnmatchcase(bare.lower(), pattern) for pattern in self.hosts)
        try:
            found = [bare] if _is_ip(bare) else list(self.resolver(bare, port))
        except OSError as exc:
            raise EgressRefused(host, f"{host} does not resolve: {exc}") from None
        if not found:
            raise EgressRefused(host, f"{host} resolves to nothing")
        refused = [ip for ip in found
                   if not allowed_name and not self.allowed_ip(ipaddress.ip_address(ip))]
        if refused:
            raise EgressRefused(host, f"{host} resolves to {', '.join(refused)}, a private, "
                                "loopback or reserved address not in ARENA_EXTERNAL_ALLOW")
        return found


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def split_address(address: str) -> tuple[str, int]:
    """``host:port`` (a bracketed IPv6 host too) into its parts; ValueError if not one."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"not host:port: {address!r}")
    return host, int(port)


def dial_target(ip: str, port: int) -> str:
    """The gRPC target that dials exactly ``ip:port``."""
    return f"ipv6:[{ip}]:{port}" if ":" in ip else f"ipv4:{ip}:{port}"
