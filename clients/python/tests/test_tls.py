"""The client over TLS and mutual TLS, against `classifier serve`'s own TLS server and
certificates made here."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from classifier import Ruleset
from classifier.server import create_server
from classifier.server.rpc.tls import TlsFiles
from errorclass_client import TLS, Client, ErrorClass, ServiceError
from tests.certs import Authority, Pem


@dataclass(frozen=True)
class Pki:
    ca: Pem
    other_ca: Pem
    server: Pem
    internal_only: Pem
    client: Pem


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder = tmp_path_factory.mktemp("pki")
    ca = Authority(folder, "errorclass-test-ca")
    other = Authority(folder, "someone-elses-ca")
    return Pki(
        ca=ca.pem,
        other_ca=other.pem,
        server=ca.issue("server", server=True),
        internal_only=ca.issue("internal", server=True, dns_names=("classifier.internal",)),
        client=ca.issue("runtime-7", server=False),
    )


@contextmanager
def secure_server(bundled: Ruleset, cert: Pem, *, client_ca: Path | None = None) -> Iterator[int]:
    """The real server with TLS; with `client_ca` it requires client certificates signed by it."""
    srv = create_server(bundled, "127.0.0.1:0", tls=TlsFiles(cert.cert, cert.key, client_ca))
    srv.start()
    try:
        yield srv.port
    finally:
        srv.stop(grace=0)


def test_tls_with_the_servers_ca(pki: Pki, bundled: Ruleset) -> None:
    """Trusting the CA that signed the server's certificate, the client classifies over TLS."""
    with (
        secure_server(bundled, pki.server) as port,
        Client(f"localhost:{port}", tls=TLS(pki.ca.cert.read_bytes())) as c,
    ):
        assert (
            c.classify(type="x", http_status=429, origin="provider").error_class
            is ErrorClass.RateLimited
        )


def test_tls_refuses_an_untrusted_server(pki: Pki, bundled: Ruleset) -> None:
    """A server whose certificate the client's CA did not sign is never talked to."""
    with (
        secure_server(bundled, pki.server) as port,
        Client(
            f"localhost:{port}", tls=TLS(pki.other_ca.cert.read_bytes()), timeout=5, attempts=1
        ) as c,
        pytest.raises(ServiceError) as err,
    ):
        c.classify(type="x")
    assert err.value.code is grpc.StatusCode.UNAVAILABLE


def test_server_name_override(pki: Pki, bundled: Ruleset) -> None:
    """A certificate for classifier.internal, reached at 127.0.0.1, verifies with server_name set."""
    ca = pki.ca.cert.read_bytes()
    with secure_server(bundled, pki.internal_only) as port:
        with Client(f"127.0.0.1:{port}", tls=TLS(ca, server_name="classifier.internal")) as c:
            assert c.get_ruleset().digest == bundled.digest
        with (
            Client(f"127.0.0.1:{port}", tls=TLS(ca), timeout=5, attempts=1) as c,
            pytest.raises(ServiceError),
        ):
            c.get_ruleset()


def test_mutual_tls(pki: Pki, bundled: Ruleset) -> None:
    """A server that requires client certificates answers a client with one (read from PEM files)
    and refuses a client without."""
    tls = TLS.from_files(ca=pki.ca.cert, cert=pki.client.cert, key=pki.client.key)
    assert (tls.root_certificates, tls.certificate_chain, tls.private_key) == (
        pki.ca.cert.read_bytes(),
        pki.client.cert.read_bytes(),
        pki.client.key.read_bytes(),
    )
    with secure_server(bundled, pki.server, client_ca=pki.ca.cert) as port:
        with Client(f"localhost:{port}", tls=tls) as c:
            assert c.classify(type="x").error_class is ErrorClass.Unknown
        with (
            Client(
                f"localhost:{port}", tls=TLS(pki.ca.cert.read_bytes()), timeout=5, attempts=1
            ) as c,
            pytest.raises(ServiceError) as err,
        ):
            c.classify(type="x")
        assert err.value.code is grpc.StatusCode.UNAVAILABLE


def test_a_certificate_needs_its_key(pki: Pki) -> None:
    """A client certificate without its key (or the reverse) is refused when the TLS options are made."""
    with pytest.raises(ValueError, match="private key"):
        TLS(pki.ca.cert.read_bytes(), certificate_chain=pki.client.cert.read_bytes())
    with pytest.raises(ValueError, match="private key"):
        TLS(pki.ca.cert.read_bytes(), private_key=pki.client.key.read_bytes())


def test_a_file_that_is_not_pem_is_named(pki: Pki, tmp_path: Path) -> None:
    """TLS.from_files refuses a file with no PEM block by name, before any handshake."""
    bogus = tmp_path / "key.pem"
    bogus.write_text("not a key\n")
    with pytest.raises(ValueError, match=rf"{bogus}: not a PEM private key"):
        TLS.from_files(ca=pki.ca.cert, cert=pki.client.cert, key=bogus)
