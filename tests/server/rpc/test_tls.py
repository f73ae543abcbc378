"""TLS and mutual TLS with real certificates made in the test; plaintext and strangers are refused."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from classifier.cli import main
from classifier.server import GrpcServer, TlsFiles
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from tests.certs import Authority, Pem
from tests.conftest import Running, StartApp

PROBE = pb.ClassifyRequest(
    descriptor=pb.ExceptionDescriptor(type="x.Y", http_status=503, origin=pb.ORIGIN_PROVIDER)
)


def _call(running: Running, ca: Pem | None, client: Pem | None = None) -> pb.ClassifyResponse:
    address = f"localhost:{running.app.server.port}"
    if ca is None:
        channel = grpc.insecure_channel(address)
    else:
        channel = grpc.secure_channel(
            address,
            grpc.ssl_channel_credentials(
                root_certificates=ca.cert.read_bytes(),
                private_key=client.key.read_bytes() if client else None,
                certificate_chain=client.cert.read_bytes() if client else None,
            ),
        )
    with channel:
        answer: pb.ClassifyResponse = pb_grpc.ErrorClassifierStub(channel).Classify(
            PROBE, timeout=5
        )
        return answer


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Pem]:
    folder = tmp_path_factory.mktemp("pki")
    ca = Authority(folder, "ca")
    rogue = Authority(folder, "rogue-ca")
    return {
        "ca": ca.pem,
        "server": ca.issue("server", server=True),
        "client": ca.issue("client", server=False),
        "rogue-client": rogue.issue("rogue-client", server=False),
    }


def test_tls_serves_clients_that_trust_the_server(
    serving_rules: Path, start_app: StartApp, pki: dict[str, Pem]
) -> None:
    """--tls-cert/--tls-key: a TLS client gets answers; a plaintext client does not."""
    tls = TlsFiles(pki["server"].cert, pki["server"].key)
    running = start_app(serving_rules, address="127.0.0.1:0", watch=False, tls=tls)
    assert _call(running, pki["ca"]).class_name == "ProviderError"
    with pytest.raises(grpc.RpcError) as info:
        _call(running, None)
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE


def test_mutual_tls_refuses_clients_without_a_certificate_from_its_ca(
    serving_rules: Path, start_app: StartApp, pki: dict[str, Pem]
) -> None:
    """--tls-client-ca: only clients whose certificate the CA signed get through."""
    tls = TlsFiles(pki["server"].cert, pki["server"].key, pki["ca"].cert)
    running = start_app(serving_rules, watch=False, tls=tls)
    assert _call(running, pki["ca"], pki["client"]).class_name == "ProviderError"
    for client in (None, pki["rogue-client"]):
        with pytest.raises(grpc.RpcError) as info:
            _call(running, pki["ca"], client)
        assert info.value.code() == grpc.StatusCode.UNAVAILABLE
    with pytest.raises(grpc.RpcError):
        _call(running, None)
    assert running.metric("errorclass_rpcs_total", rpc="Classify", code="OK") == 1


def test_the_health_command_speaks_mutual_tls(
    serving_rules: Path,
    start_app: StartApp,
    pki: dict[str, Pem],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`classifier health` with the CA and a client certificate reports SERVING (exit 0)."""
    tls = TlsFiles(pki["server"].cert, pki["server"].key, pki["ca"].cert)
    running = start_app(serving_rules, watch=False, tls=tls)
    address = f"localhost:{running.app.server.port}"
    args = ["health", "--addr", address, "--tls-ca", str(pki["ca"].cert)]
    client = ["--tls-cert", str(pki["client"].cert), "--tls-key", str(pki["client"].key)]
    assert main([*args, *client]) == 0
    assert capsys.readouterr().out == f"{address}: SERVING\n"
    assert main(args) == 1


def test_the_health_command_uses_tls_whenever_a_tls_flag_is_given(
    server: GrpcServer, pki: dict[str, Pem], capsys: pytest.CaptureFixture[str]
) -> None:
    """A client certificate without --tls-ca still means TLS (trusting the system's CAs), so a
    plaintext server fails the check rather than passing it over plaintext."""
    address = f"127.0.0.1:{server.port}"
    client = ["--tls-cert", str(pki["client"].cert), "--tls-key", str(pki["client"].key)]
    assert main(["health", "--addr", address, "--timeout", "2", *client]) == 1
    assert "UNAVAILABLE" in capsys.readouterr().err
    assert main(["health", "--addr", address]) == 0


def test_the_health_command_refuses_an_incomplete_or_non_pem_tls_set(
    server: GrpcServer, tmp_path: Path, pki: dict[str, Pem], capsys: pytest.CaptureFixture[str]
) -> None:
    """A certificate without its key, or a file that is not PEM, is exit 2 naming the problem."""
    address = f"127.0.0.1:{server.port}"
    ca = ["--tls-ca", str(pki["ca"].cert)]
    assert main(["health", "--addr", address, *ca, "--tls-cert", str(pki["client"].cert)]) == 2
    assert "a client certificate needs its private key" in capsys.readouterr().err
    bogus = tmp_path / "ca.pem"
    bogus.write_text("not a certificate\n")
    assert main(["health", "--addr", address, "--tls-ca", str(bogus)]) == 2
    assert f"{bogus}: not a PEM CA certificate" in capsys.readouterr().err


def test_a_file_that_is_not_pem_is_named(
    serving_rules: Path, tmp_path: Path, pki: dict[str, Pem]
) -> None:
    """A wrong --tls-key is refused at start with the file named, not at the first call."""
    from classifier.server import App, ServeConfig

    bogus = tmp_path / "key.pem"
    bogus.write_text("not a key\n")
    config = ServeConfig(
        rules=serving_rules, address="127.0.0.1:0", tls=TlsFiles(pki["server"].cert, bogus)
    )
    with pytest.raises(ValueError, match=rf"{bogus}: not a PEM private key"):
        App(config)


def test_classify_explain_and_ruleset_reach_a_server_over_mutual_tls(
    serving_rules: Path,
    start_app: StartApp,
    pki: dict[str, Pem],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The TLS flags are health's: with the CA and a client certificate each command gets
    its answer; without the certificate the server refuses (exit 2, UNAVAILABLE)."""
    tls = TlsFiles(pki["server"].cert, pki["server"].key, pki["ca"].cert)
    running = start_app(serving_rules, watch=False, tls=tls)
    address = f"localhost:{running.app.server.port}"
    descriptor = tmp_path / "d.yaml"
    descriptor.write_text("type: x.Y\norigin: provider\nhttp_status: 503\n")
    trust = ["--tls-ca", str(pki["ca"].cert)]
    client = ["--tls-cert", str(pki["client"].cert), "--tls-key", str(pki["client"].key)]
    capsys.readouterr()
    for command in (["classify"], ["explain"], ["ruleset"]):
        file = [] if command == ["ruleset"] else [str(descriptor)]
        assert main([*command, "--addr", address, *trust, *client, *file]) == 0
        out = capsys.readouterr().out
        assert ("ProviderError" in out) if file else ("name:        serving" in out)
        assert main([*command, "--addr", address, "--timeout", "2", *trust, *file]) == 2
        assert "UNAVAILABLE" in capsys.readouterr().err
