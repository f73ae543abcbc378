"""PEM files for TLS, read by the server and the client alike."""

from __future__ import annotations

from os import PathLike
from pathlib import Path


def read_pem(path: str | PathLike[str], what: str) -> bytes:
    """The file's bytes; ValueError naming the file when it holds no PEM block, so a
    wrong file is named when it is read, not at a TLS handshake."""
    data = Path(path).read_bytes()
    if b"-----BEGIN " not in data:
        raise ValueError(f"{path}: not a PEM {what}")
    return data
