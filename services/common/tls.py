"""Transport security: the servers' TLS credentials and a local certificate authority.

Every gRPC server serves TLS when its configuration names a certificate and a key
(``tls_cert_file``, ``tls_key_file``); it then refuses plaintext callers. With
``tls_client_ca_file`` it also requires every caller to present a certificate signed by
that CA (mutual TLS). Services present their own certificate when they call each other,
so one certificate per service (or one for all) with both the server and client uses is
enough; clients (the SDK, the CLI) verify the server with a CA file.

:func:`ensure_local_pki` makes what `arena up --tls` needs: a CA, one certificate the
services share (for 127.0.0.1, ::1 and localhost) and one for the local CLI, all under
``<home>/tls`` with 0600 keys, reused while they are valid. For a deployment,
``python -m arena.services.common.tls FOLDER --host registry --host ...`` writes the same
files for the names the services are reached by (``docs/deploy.md``).
"""

from __future__ import annotations

import argparse
import datetime
import ipaddress
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
from arena.services.common.config import Config
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
CA_DAYS = 3650
LEAF_DAYS = 825
# Certificates this close to their end are made again rather than reused.
RENEW_BEFORE = datetime.timedelta(days=30)


class TLSError(ValueError):
    """A certificate or key file is missing, unreadable or not PEM (named in the message)."""


def read_pem(path: str | Path, what: str) -> bytes:
    """The bytes of a PEM file, or a :class:`TLSError` naming the setting's file."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TLSError(f"cannot read the {what} {path}: {exc.strerror or exc}") from None
    if b"-----BEGIN " not in data:
        raise TLSError(f"the {what} {path} is not a PEM file")
    return data


def server_credentials(config: Config) -> grpc.ServerCredentials | None:
    """The server's TLS credentials, or None for plaintext (no certificate configured)."""
    if not config.tls_cert_file and not config.tls_key_file:
        if config.tls_client_ca_file:
            raise TLSError("ARENA_TLS_CLIENT_CA_FILE needs ARENA_TLS_CERT_FILE and "
                           "ARENA_TLS_KEY_FILE: mutual TLS is TLS first")
        return None
    if not (config.tls_cert_file and config.tls_key_file):
        raise TLSError("TLS needs both ARENA_TLS_CERT_FILE and ARENA_TLS_KEY_FILE")
    chain = read_pem(config.tls_cert_file, "certificate (ARENA_TLS_CERT_FILE)")
    key = read_pem(config.tls_key_file, "private key (ARENA_TLS_KEY_FILE)")
    client_ca = (read_pem(config.tls_client_ca_file, "client CA (ARENA_TLS_CLIENT_CA_FILE)")
                 if config.tls_client_ca_file else None)
    return grpc.ssl_server_credentials([(key, chain)], root_certificates=client_ca,
                                       require_client_auth=client_ca is not None)


# -- a local certificate authority ----------------------------------------------------------


@dataclass(frozen=True)
class LocalPKI:
    """The files of a local CA and the certificates it issued (PEM)."""

    folder: Path

    @property
    def ca_file(self) -> Path:
        return self.folder / "ca.pem"

    @property
    def ca_key(self) -> Path:
        return self.folder / "ca.key"

    @property
    def service_cert(self) -> Path:
        """What every service serves with and presents to the others."""
        return self.folder / "service.pem"

    @property
    def service_key(self) -> Path:
        return self.folder / "service.key"

    @property
    def client_cert(self) -> Path:
        """What the local CLI and SDK present (when the servers require a certificate)."""
        return self.folder / "client.pem"

    @property
    def client_key(self) -> Path:
        return self.folder / "client.key"


def ensure_local_pki(folder: Path, hosts: Sequence[str] = LOCAL_HOSTS) -> LocalPKI:
    """The CA and certificates under ``folder``: reused if they are valid for ``hosts``
    for a while yet, otherwise all made anew."""
    pki = LocalPKI(folder)
    if not _usable(pki, hosts):
        write_pki(pki, hosts)
    return pki


def write_pki(pki: LocalPKI, hosts: Sequence[str]) -> None:
    """A new CA, a service certificate for ``hosts`` and a client certificate."""
    pki.folder.mkdir(parents=True, exist_ok=True)
    pki.folder.chmod(0o700)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Arena local CA")])
    now = _now()
    ca = (_builder(ca_name, ca_name, ca_key.public_key(), now, CA_DAYS)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False,
                                       False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    _write_key(pki.ca_key, ca_key)
    _write(pki.ca_file, ca.public_bytes(serialization.Encoding.PEM))
    leaves = ((pki.service_cert, pki.service_key, "arena-service", hosts),
              (pki.client_cert, pki.client_key, "arena-client", ()))
    for cert_path, key_path, name, names in leaves:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _leaf(ca, ca_key, key, name, names)
        _write_key(key_path, key)
        _write(cert_path, cert.public_bytes(serialization.Encoding.PEM))


def _leaf(ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey,
          key: ec.EllipticCurvePrivateKey, name: str, hosts: Sequence[str]) -> x509.Certificate:
    """A certificate for servers at ``hosts`` (none: a client only); servers' certificates
    serve as client certificates too, for the calls between services."""
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    usages = [ExtendedKeyUsageOID.CLIENT_AUTH]
    builder = _builder(subject, ca.subject, key.public_key(), _now(), LEAF_DAYS)
    if hosts:
        usages.append(ExtendedKeyUsageOID.SERVER_AUTH)
        builder = builder.add_extension(
            x509.SubjectAlternativeName([_general_name(h) for h in hosts]), critical=False)
    return (builder
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
            .sign(ca_key, hashes.SHA256()))


def _builder(subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey,
             now: datetime.datetime, days: int) -> x509.CertificateBuilder:
    return (x509.CertificateBuilder()
            .subject_name(subject).issuer_name(issuer).public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=days)))


def _general_name(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def _usable(pki: LocalPKI, hosts: Sequence[str]) -> bool:
    """True if every file is there, the leaves are the CA's, valid beyond RENEW_BEFORE,
    and the service certificate names every host."""
    files = (pki.ca_file, pki.ca_key, pki.service_cert, pki.service_key, pki.client_cert,
             pki.client_key)
    if not all(path.is_file() for path in files):
        return False
    try:
        ca = x509.load_pem_x509_certificate(pki.ca_file.read_bytes())
        service = x509.load_pem_x509_certificate(pki.service_cert.read_bytes())
        client = x509.load_pem_x509_certificate(pki.client_cert.read_bytes())
        names = service.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (ValueError, x509.ExtensionNotFound):
        return False
    named = {str(n.value) for n in names}
    fresh = _now() + RENEW_BEFORE
    return (all(c.issuer == ca.subject and c.not_valid_after_utc > fresh
                for c in (ca, service, client))
            and all(str(_general_name(h).value) in named for h in hosts))


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _write(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Written whole (a reader never sees half a file) with ``mode`` from the start."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    tmp.replace(path)


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    _write(path, key.private_bytes(serialization.Encoding.PEM,
                                   serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption()), 0o600)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m arena.services.common.tls",
        description="Write a CA (ca.pem, ca.key), a certificate the services share "
                    "(service.pem, service.key) and a client certificate (client.pem, "
                    "client.key) into FOLDER. Keys are written 0600.")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--host", action="append", default=[],
                        help="a name or address the services are reached by (repeat); "
                             f"{', '.join(LOCAL_HOSTS)} are always included")
    parser.add_argument("--force", action="store_true",
                        help="make new files even if the present ones are still valid")
    args = parser.parse_args(argv)
    hosts = list(dict.fromkeys([*args.host, *LOCAL_HOSTS]))
    pki = LocalPKI(args.folder)
    if args.force or not _usable(pki, hosts):
        write_pki(pki, hosts)
        print(f"wrote a new CA and certificates for {', '.join(hosts)} to {args.folder}")
    else:
        print(f"{args.folder} already holds valid certificates for {', '.join(hosts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
