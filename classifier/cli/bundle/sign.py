"""`classifier bundle sign`: add an Ed25519 signature over a bundle's bytes to its signatures.

Signing again with another key adds a signature (a bundle signed by the old
and the new key verifies with either: how keys rotate); signing again with
the same key replaces that key's signature.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from classifier.cli.bundle.common import Failure, fail
from classifier.cli.options import Exit, add_command
from classifier.defaults import SIGNATURES_SUFFIX

EXITS = {
    Exit.ok: "the signature is written",
    Exit.invalid: "the key, the bundle or the signatures file cannot be read or written",
}


def add_parser(sub: Any) -> None:
    p = add_command(
        sub,
        "sign",
        help="sign a bundle with an Ed25519 private key (detached, several keys)",
        description="Sign the bundle file's exact bytes with an Ed25519 private key (PKCS#8 "
        f"PEM, as `bundle keygen` writes) and add the signature to BUNDLE{SIGNATURES_SUFFIX} "
        "(or -o): one entry per key, so signing with a second key is how keys rotate.",
        exits=EXITS,
    )
    p.add_argument("--key", type=Path, required=True, metavar="FILE", help="the private key")
    p.add_argument(
        "-o",
        "--out",
        type=Path,
        metavar="SIGFILE",
        help=f"the signatures file (default: BUNDLE{SIGNATURES_SUFFIX}); kept signatures of "
        "other keys stay",
    )
    p.add_argument("bundle", type=Path, metavar="BUNDLE")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from classifier.bundle import BundleRefusedError
    from classifier.bundle.signing import (
        KeyFileError,
        add_signature,
        dump_signatures,
        load_private_key,
        parse_signatures,
        sign,
    )

    out: Path = args.out or Path(f"{args.bundle}{SIGNATURES_SUFFIX}")
    try:
        key = load_private_key(args.key)
    except KeyFileError as exc:
        fail("sign", str(args.key), Failure.invalid_key, str(exc).split(": ", 1)[-1])
        return Exit.invalid
    except OSError as exc:
        fail("sign", str(args.key), Failure.unreadable_file, exc.strerror or str(exc))
        return Exit.invalid
    try:
        data = args.bundle.read_bytes()
        existing = parse_signatures(out.read_bytes()) if out.exists() else None
    except OSError as exc:
        fail("sign", exc.filename or str(args.bundle), Failure.unreadable_file, str(exc.strerror))
        return Exit.invalid
    except BundleRefusedError as exc:
        fail("sign", str(out), exc.reason, exc.message)
        return Exit.invalid
    signature = sign(data, key)
    try:
        out.write_bytes(dump_signatures(add_signature(existing, signature)))
    except OSError as exc:
        fail("sign", str(out), Failure.unreadable_file, exc.strerror or str(exc))
        return Exit.invalid
    print(f"{out}: signed {args.bundle} with key {signature.key_id}")
    return Exit.ok
