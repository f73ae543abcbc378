"""`classifier bundle verify`: accept a bundle only when a trusted key signed its bytes."""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path
from typing import Any

from classifier.cli.bundle.common import Failure, fail
from classifier.cli.options import Exit, add_command
from classifier.defaults import SIGNATURES_SUFFIX

EXITS = {
    Exit.ok: "a trusted key's signature verifies and the bundle is of a known format",
    Exit.failed: "refused: unsigned, signed by no trusted key, a signature that does not "
    "verify (a changed byte), or not a bundle",
    Exit.invalid: "a file or a key cannot be read",
}


def add_parser(sub: Any) -> None:
    p = add_command(
        sub,
        "verify",
        help="check a bundle's signatures against trusted public keys",
        description="Accept the bundle when at least one signature by a trusted key "
        "(SubjectPublicKeyInfo PEM; repeat --public-key to trust several during a "
        "rotation) verifies over its exact bytes, and it reads as a bundle. Refusals say "
        "why with a stable code: unsigned, unknown_key, bad_signature, "
        "malformed_signatures, invalid_bundle.",
        exits=EXITS,
    )
    p.add_argument(
        "--public-key",
        type=Path,
        action="append",
        required=True,
        metavar="FILE",
        help="a trusted public key (repeat for several)",
    )
    p.add_argument("bundle", type=Path, metavar="BUNDLE")
    p.add_argument(
        "signatures",
        type=Path,
        nargs="?",
        metavar="SIGFILE",
        help=f"the signatures (default: BUNDLE{SIGNATURES_SUFFIX})",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from classifier.bundle import BundleDoc, BundleRefusedError, verify
    from classifier.bundle.signing import (
        KeyFileError,
        load_public_key,
        parse_signatures,
    )

    sigfile: Path = args.signatures or Path(f"{args.bundle}{SIGNATURES_SUFFIX}")
    keys = []
    for path in args.public_key:
        try:
            keys.append(load_public_key(path))
        except KeyFileError as exc:
            fail("verify", str(path), Failure.invalid_key, str(exc).split(": ", 1)[-1])
            return Exit.invalid
        except OSError as exc:
            fail("verify", str(path), Failure.unreadable_file, exc.strerror or str(exc))
            return Exit.invalid
    try:
        data = args.bundle.read_bytes()
        signed = sigfile.read_bytes()
    except OSError as exc:
        fail("verify", exc.filename or str(args.bundle), Failure.unreadable_file, str(exc.strerror))
        return Exit.invalid
    try:
        verified = verify(data, parse_signatures(signed), keys)
    except BundleRefusedError as exc:
        fail("verify", str(args.bundle), exc.reason, exc.message)
        return Exit.failed
    try:
        bundle = BundleDoc.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the document"
        fail("verify", str(args.bundle), Failure.invalid_bundle, f"{where}: {first['msg']}")
        return Exit.failed
    r = bundle.ruleset
    print(
        f"{args.bundle}: accepted, signed by {', '.join(verified.key_ids)}: {r.name} "
        f"{r.version} ({r.digest}), {len(bundle.rules)} rules, "
        f"sha256:{hashlib.sha256(data).hexdigest()}"
    )
    return Exit.ok
