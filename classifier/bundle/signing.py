"""Ed25519 detached signatures over a bundle file's exact bytes, several keys at once.

A signatures document (`SignaturesDoc`, JSON, beside the bundle) lists one
entry per signature: the signing key's id, the algorithm and the signature.
A verifier trusts a set of public keys and accepts a bundle that at least
one trusted key has validly signed, so keys rotate without a flag day: sign
with the old and the new key, move verifiers to trust the new one, then stop
signing with the old. Keys are PEM files (PKCS#8 private, SubjectPublicKeyInfo
public), which Go's crypto/x509, Java 17's EdDSA KeyFactory and Node's crypto
read as they are.

Refusals carry a stable `Refusal` code; the reference evaluator
(clients/python/errorclass_client/bundle) and every client's evaluator use
the same codes, and clients/spec/vectors/bundle_verify.json holds them to it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import ValidationError

from classifier import defaults
from classifier.bundle.format import SignatureDoc, SignaturesDoc

ALGORITHM: Literal["ed25519"] = "ed25519"
SIGNATURES_SUFFIX = defaults.SIGNATURES_SUFFIX


class Refusal(StrEnum):
    """Why a bundle is refused: stable codes, the same in every language."""

    unsigned = "unsigned"
    """The signatures document lists no signature."""
    unknown_key = "unknown_key"
    """Every signature is by a key the verifier does not trust (or of another algorithm)."""
    bad_signature = "bad_signature"
    """A trusted key signed, but no such signature verifies: the bundle's bytes (or the
    signature) changed after signing."""
    malformed_signatures = "malformed_signatures"
    """The signatures document is not what `bundle sign` writes."""


class BundleRefusedError(Exception):
    """A bundle a verifier will not use, with the stable code of why."""

    def __init__(self, reason: Refusal, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message


class KeyFileError(ValueError):
    """A key file that holds no Ed25519 key of the kind asked for."""


def key_id(public: Ed25519PublicKey) -> str:
    """The key's id: the first 16 hex digits of SHA-256 over its DER SubjectPublicKeyInfo.

    It only picks which trusted key checks a signature (trust is in the key, never
    the id), and every language derives it from its standard library's SPKI encoding.
    """
    der = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return hashlib.sha256(der).hexdigest()[:16]


def generate_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def private_pem(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def public_pem(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """An unencrypted PKCS#8 PEM Ed25519 private key (KeyFileError naming the file otherwise)."""
    data = path.read_bytes()
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise KeyFileError(f"{path}: not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"{path}: a {type(key).__name__}, not an Ed25519 private key")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """A SubjectPublicKeyInfo PEM Ed25519 public key (KeyFileError naming the file otherwise)."""
    return public_key_from_pem(path.read_bytes(), str(path))


def public_key_from_pem(data: bytes, where: str = "public key") -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as exc:
        raise KeyFileError(f"{where}: not a PEM public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError(f"{where}: a {type(key).__name__}, not an Ed25519 public key")
    return key


def sign(bundle: bytes, key: Ed25519PrivateKey) -> SignatureDoc:
    return SignatureDoc(
        key_id=key_id(key.public_key()),
        algorithm=ALGORITHM,
        signature=base64.b64encode(key.sign(bundle)).decode("ascii"),
    )


def add_signature(existing: SignaturesDoc | None, signature: SignatureDoc) -> SignaturesDoc:
    """The signatures with `signature` added, replacing an earlier one by the same key (so
    signing again after a rebuild does not pile up stale entries)."""
    kept = [s for s in (existing.signatures if existing else []) if s.key_id != signature.key_id]
    return SignaturesDoc(
        format="errorclass-bundle-signatures", format_version=1, signatures=[*kept, signature]
    )


def dump_signatures(doc: SignaturesDoc) -> bytes:
    return (json.dumps(doc.model_dump(mode="json"), indent=1) + "\n").encode("ascii")


def parse_signatures(data: bytes) -> SignaturesDoc:
    """A signatures document (BundleRefusedError malformed_signatures when it is not one)."""
    try:
        return SignaturesDoc.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the document"
        raise BundleRefusedError(
            Refusal.malformed_signatures, f"not a signatures document ({where}: {first['msg']})"
        ) from None


@dataclass(frozen=True, slots=True)
class Verified:
    """A bundle accepted: the trusted keys whose signatures verified."""

    key_ids: tuple[str, ...]


def verify(
    bundle: bytes, signatures: SignaturesDoc, trusted: Sequence[Ed25519PublicKey]
) -> Verified:
    """Accept the bundle when a trusted key's signature over its bytes verifies; raise
    BundleRefusedError with the reason otherwise (see `Refusal`)."""
    if not signatures.signatures:
        raise BundleRefusedError(Refusal.unsigned, "the signatures document lists no signature")
    by_id: dict[str, list[Ed25519PublicKey]] = {}
    for key in trusted:
        by_id.setdefault(key_id(key), []).append(key)
    good: list[str] = []
    tried: list[str] = []
    for entry in signatures.signatures:
        keys = by_id.get(entry.key_id, [])
        if entry.algorithm != ALGORITHM or not keys:
            continue
        tried.append(entry.key_id)
        raw = _signature_bytes(entry.signature)
        if raw is not None and any(_valid(k, raw, bundle) for k in keys):
            good.append(entry.key_id)
    if good:
        return Verified(tuple(good))
    if tried:
        raise BundleRefusedError(
            Refusal.bad_signature,
            f"the signature by trusted key {', '.join(tried)} does not verify: the bundle "
            "changed after it was signed (or the signature did)",
        )
    raise BundleRefusedError(
        Refusal.unknown_key,
        f"signed by {_listed(s.key_id for s in signatures.signatures)}, none of them trusted "
        f"(trusted: {_listed(by_id) or 'none'})",
    )


def _signature_bytes(text: str) -> bytes | None:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def _valid(key: Ed25519PublicKey, signature: bytes, data: bytes) -> bool:
    try:
        key.verify(signature, data)
    except InvalidSignature:
        return False
    return True


def _listed(ids: Iterable[str]) -> str:
    return ", ".join(dict.fromkeys(ids))
