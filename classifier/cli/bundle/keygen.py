"""`classifier bundle keygen`: a new Ed25519 key pair for signing bundles."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from classifier.cli.bundle.common import Failure, fail
from classifier.cli.options import Exit, add_command

EXITS = {
    Exit.ok: "the key pair is written",
    Exit.invalid: "a key file already exists, or cannot be written",
}


def add_parser(sub: Any) -> None:
    p = add_command(
        sub,
        "keygen",
        help="write a new Ed25519 key pair (PREFIX.key, PREFIX.pub)",
        description="Write a new Ed25519 key pair: PREFIX.key, the private key (PKCS#8 "
        "PEM, readable by its owner only), which `bundle sign --key` takes, and PREFIX.pub, "
        "the public key (SubjectPublicKeyInfo PEM) that verifiers trust. Never overwrites.",
        exits=EXITS,
    )
    p.add_argument("-o", "--out", required=True, metavar="PREFIX", help="where to write")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from classifier.bundle.signing import generate_key, key_id, private_pem, public_pem

    private, public = Path(f"{args.out}.key"), Path(f"{args.out}.pub")
    for path in (private, public):
        if path.exists():
            fail("keygen", str(path), Failure.file_exists, "it exists; keygen never overwrites")
            return Exit.invalid
    key = generate_key()
    try:
        fd = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(private_pem(key))
        public.write_bytes(public_pem(key.public_key()))
    except OSError as exc:
        fail("keygen", exc.filename or str(args.out), Failure.unreadable_file, str(exc.strerror))
        return Exit.invalid
    print(f"{private}, {public}: key {key_id(key.public_key())}")
    return Exit.ok
