"""How the client reaches a server over TLS (and, with a client certificate, mutual TLS)."""

from __future__ import annotations

from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import grpc


def read_pem(path: str | PathLike[str], what: str) -> bytes:
    """The file's bytes; ValueError naming the file when it holds no PEM block, so a wrong
    file is named when it is read, not at a TLS handshake."""
    data = Path(path).read_bytes()
    if b"-----BEGIN " not in data:
        raise ValueError(f"{path}: not a PEM {what}")
    return data


@dataclass(frozen=True, slots=True)
class TLS:
    """The certificates to trust and to present.

    `root_certificates` of None trusts the system's roots. `server_name` overrides the
    name checked against the server's certificate, for a server reached by an address its
    certificate does not name.
    """

    root_certificates: bytes | None = None
    certificate_chain: bytes | None = None
    private_key: bytes | None = None
    server_name: str = ""

    def __post_init__(self) -> None:
        if (self.certificate_chain is None) != (self.private_key is None):
            raise ValueError(
                "a client certificate needs its private key, and a key its certificate"
            )

    @classmethod
    def from_files(
        cls,
        *,
        ca: str | PathLike[str] | None = None,
        cert: str | PathLike[str] | None = None,
        key: str | PathLike[str] | None = None,
        server_name: str = "",
    ) -> TLS:
        """Read PEM files: the CA to trust, and the client certificate and key for mTLS.

        Raises ValueError naming a file that holds no PEM block.
        """

        def read(path: str | PathLike[str] | None, what: str) -> bytes | None:
            return None if path is None else read_pem(path, what)

        return cls(
            read(ca, "CA certificate"),
            read(cert, "certificate"),
            read(key, "private key"),
            server_name,
        )

    def credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(
            root_certificates=self.root_certificates,
            private_key=self.private_key,
            certificate_chain=self.certificate_chain,
        )
