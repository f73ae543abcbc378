"""TLS for the gRPC port: a server certificate, and optionally client certificates (mTLS)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import grpc

from classifier._pem import read_pem


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """PEM files: the server's certificate chain and key, and the CA that signs client
    certificates. With a client CA, a client without a certificate it signed is refused."""

    cert: Path
    key: Path
    client_ca: Path | None = None


def server_credentials(files: TlsFiles) -> grpc.ServerCredentials:
    cert = read_pem(files.cert, "certificate")
    key = read_pem(files.key, "private key")
    client_ca = read_pem(files.client_ca, "CA certificate") if files.client_ca else None
    return grpc.ssl_server_credentials(
        [(key, cert)],
        root_certificates=client_ca,
        require_client_auth=client_ca is not None,
    )
