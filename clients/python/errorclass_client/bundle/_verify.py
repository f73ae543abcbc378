"""Signature checks: a bundle is used only when a trusted key's Ed25519 signature verifies.

The same rules as the service's `classifier bundle verify` (docs/bundles.md),
with the `cryptography` package, imported only when trusted keys are given.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from errorclass_client.bundle._evaluate import BundleError

EXTRA = "errorclass-client[bundle]"


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives import serialization
    except ImportError:
        raise BundleError(
            "missing_dependency",
            "verifying a bundle's signatures needs the cryptography package: "
            f"pip install '{EXTRA}'",
        ) from None
    return serialization


def public_key(pem: bytes) -> Any:
    """An Ed25519 public key from SubjectPublicKeyInfo PEM (ValueError otherwise)."""
    serialization = _crypto()
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    key = serialization.load_pem_public_key(pem)
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError(f"a {type(key).__name__}, not an Ed25519 public key")
    return key


def key_id(key: Any) -> str:
    """The first 16 hex digits of SHA-256 over the key's DER SubjectPublicKeyInfo."""
    serialization = _crypto()
    der = key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return hashlib.sha256(der).hexdigest()[:16]


def verify(bundle: bytes, signatures: bytes | None, trusted: Sequence[Any]) -> tuple[str, ...]:
    """The ids of the trusted keys whose signatures verify; BundleError with the reason
    (unsigned, unknown_key, bad_signature, malformed_signatures) when there is none."""
    from cryptography.exceptions import InvalidSignature

    entries = _entries(signatures)
    if not entries:
        raise BundleError("unsigned", "the bundle has no signature")
    by_id: dict[str, list[Any]] = {}
    for key in trusted:
        by_id.setdefault(key_id(key), []).append(key)
    good: list[str] = []
    tried: list[str] = []
    for entry in entries:
        keys = by_id.get(entry["key_id"], [])
        if entry["algorithm"] != "ed25519" or not keys:
            continue
        tried.append(entry["key_id"])
        try:
            raw = base64.b64decode(entry["signature"], validate=True)
        except (binascii.Error, ValueError):
            continue
        for key in keys:
            try:
                key.verify(raw, bundle)
            except InvalidSignature:
                continue
            good.append(entry["key_id"])
            break
    if good:
        return tuple(good)
    if tried:
        raise BundleError(
            "bad_signature",
            f"the signature by trusted key {', '.join(tried)} does not verify: the bundle "
            "changed after it was signed (or the signature did)",
        )
    signed = ", ".join(dict.fromkeys(e["key_id"] for e in entries))
    raise BundleError("unknown_key", f"signed by {signed}, none of them trusted")


def _entries(signatures: bytes | None) -> list[dict[str, str]]:
    if signatures is None:
        return []
    try:
        doc = json.loads(signatures)
        if doc["format"] != "errorclass-bundle-signatures" or doc["format_version"] != 1:
            raise ValueError("not a signatures document of format 1")
        entries = doc["signatures"]
        for e in entries:
            if not all(isinstance(e[k], str) for k in ("key_id", "algorithm", "signature")):
                raise ValueError("an entry's key_id, algorithm and signature are text")
    except (ValueError, KeyError, TypeError) as exc:
        raise BundleError("malformed_signatures", f"not a signatures document ({exc})") from None
    return list(entries)
