"""The client over TLS and mutual TLS, against a real secure server with certificates made here."""

from __future__ import annotations

import datetime as dt
import ipaddress
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from classifier import Ruleset
from classifier._proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from classifier.client import TLS, Client, ErrorClass, ServiceError
from classifier.server.service import ClassifierService, RulesetHolder


@dataclass(frozen=True)
class Pem:
    cert: bytes
    key: bytes


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _issue(
    subject: str,
    issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None,
    *,
    ca: bool = False,
    sans: list[x509.GeneralName] | None = None,
    usage: x509.ObjectIdentifier | None = None,
) -> tuple[Pem, x509.Name, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    issuer_name, issuer_key = issuer if issuer else (_name(subject), key)
    now = dt.datetime.now(dt.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    if usage:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    cert = builder.sign(issuer_key, hashes.SHA256())
    pem = Pem(
        cert.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )
    return pem, _name(subject), key


@dataclass(frozen=True)
class Pki:
    ca: Pem
    other_ca: Pem
    server: Pem
    internal_only: Pem
    client: Pem


@pytest.fixture(scope="module")
def pki() -> Pki:
    ca, ca_name, ca_key = _issue("errorclass test CA", None, ca=True)
    other_ca, _, _ = _issue("someone else's CA", None, ca=True)
    server, _, _ = _issue(
        "localhost",
        (ca_name, ca_key),
        sans=[x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))],
        usage=ExtendedKeyUsageOID.SERVER_AUTH,
    )
    internal, _, _ = _issue(
        "classifier.internal",
        (ca_name, ca_key),
        sans=[x509.DNSName("classifier.internal")],
        usage=ExtendedKeyUsageOID.SERVER_AUTH,
    )
    client, _, _ = _issue("runtime-7", (ca_name, ca_key), usage=ExtendedKeyUsageOID.CLIENT_AUTH)
    return Pki(ca, other_ca, server, internal, client)


@contextmanager
def secure_server(bundled: Ruleset, cert: Pem, *, client_ca: bytes | None = None) -> Iterator[int]:
    """A real secure server; with `client_ca` it requires client certificates signed by it."""
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    pb_grpc.add_ErrorClassifierServicer_to_server(ClassifierService(RulesetHolder(bundled)), srv)
    credentials = grpc.ssl_server_credentials(
        [(cert.key, cert.cert)],
        root_certificates=client_ca,
        require_client_auth=client_ca is not None,
    )
    port = srv.add_secure_port("127.0.0.1:0", credentials)
    srv.start()
    try:
        yield port
    finally:
        srv.stop(0)


def test_tls_with_the_servers_ca(pki: Pki, bundled: Ruleset) -> None:
    """Trusting the CA that signed the server's certificate, the client classifies over TLS."""
    with (
        secure_server(bundled, pki.server) as port,
        Client(f"localhost:{port}", tls=TLS(pki.ca.cert)) as c,
    ):
        assert (
            c.classify(type="x", http_status=429, origin="provider").error_class
            is ErrorClass.RateLimited
        )


def test_tls_refuses_an_untrusted_server(pki: Pki, bundled: Ruleset) -> None:
    """A server whose certificate the client's CA did not sign is never talked to."""
    with (
        secure_server(bundled, pki.server) as port,
        Client(f"localhost:{port}", tls=TLS(pki.other_ca.cert), timeout=5, attempts=1) as c,
        pytest.raises(ServiceError) as err,
    ):
        c.classify(type="x")
    assert err.value.code is grpc.StatusCode.UNAVAILABLE


def test_server_name_override(pki: Pki, bundled: Ruleset) -> None:
    """A certificate for classifier.internal, reached at 127.0.0.1, verifies with server_name set."""
    with secure_server(bundled, pki.internal_only) as port:
        tls = TLS(pki.ca.cert, server_name="classifier.internal")
        with Client(f"127.0.0.1:{port}", tls=tls) as c:
            assert c.get_ruleset().digest == bundled.digest
        with (
            Client(f"127.0.0.1:{port}", tls=TLS(pki.ca.cert), timeout=5, attempts=1) as c,
            pytest.raises(ServiceError),
        ):
            c.get_ruleset()


def test_mutual_tls(pki: Pki, bundled: Ruleset, tmp_path: Path) -> None:
    """A server that requires client certificates answers a client with one (read from PEM files)
    and refuses a client without."""
    for name, data in [
        ("ca.pem", pki.ca.cert),
        ("client.pem", pki.client.cert),
        ("client.key", pki.client.key),
    ]:
        (tmp_path / name).write_bytes(data)
    tls = TLS.from_files(
        ca=tmp_path / "ca.pem", cert=tmp_path / "client.pem", key=tmp_path / "client.key"
    )
    assert (tls.root_certificates, tls.certificate_chain, tls.private_key) == (
        pki.ca.cert,
        pki.client.cert,
        pki.client.key,
    )
    with secure_server(bundled, pki.server, client_ca=pki.ca.cert) as port:
        with Client(f"localhost:{port}", tls=tls) as c:
            assert c.classify(type="x").error_class is ErrorClass.Unknown
        with (
            Client(f"localhost:{port}", tls=TLS(pki.ca.cert), timeout=5, attempts=1) as c,
            pytest.raises(ServiceError) as err,
        ):
            c.classify(type="x")
        assert err.value.code is grpc.StatusCode.UNAVAILABLE


def test_a_certificate_needs_its_key(pki: Pki) -> None:
    """A client certificate without its key (or the reverse) is refused when the TLS options are made."""
    with pytest.raises(ValueError, match="private key"):
        TLS(pki.ca.cert, certificate_chain=pki.client.cert)
    with pytest.raises(ValueError, match="private key"):
        TLS(pki.ca.cert, private_key=pki.client.key)
