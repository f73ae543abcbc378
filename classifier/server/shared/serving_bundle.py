"""The serving ruleset's bundle: built and signed once each time a ruleset starts serving
(at start and at every reload that swaps rules in), kept beside it by the RulesetHolder,
and handed out by GetBundle byte for byte (docs/bundles.md, "Serving bundles").

How it is signed is the operator's choice, one of:

    --bundle-key PEM            the server signs each bundle it builds (repeat the flag:
                                every key signs, for a rotation)
    --bundle-signatures FILE    a CI step signed the bundle of these rules
      --bundle-public-key PEM   (`classifier bundle build` + `sign`); the server checks every
                                signature in FILE against its own bytes with these keys, and
                                a file made for another bundle never serves: start and
                                reload refuse it
    --unsigned-bundle           served, marked unsigned

With none of them the bundle is still built, so GetRuleset names its digest (a runtime
started from a bundle file can tell whether it is the one serving), but GetBundle refuses:
a runtime must never take an unsigned bundle the operator did not choose to serve.

Ed25519 signatures are deterministic, so every replica (and every `--workers` process)
holding the same keys and rules serves byte-identical bundles and signatures.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from classifier import limits, version
from classifier.bundle import BundleRefusedError, SignaturesDoc, bundle_bytes, verify
from classifier.bundle.signing import (
    KeyFileError,
    add_signature,
    dump_signatures,
    load_private_key,
    load_public_key,
    parse_signatures,
    sign,
)
from classifier.engine.ruleset import Ruleset
from classifier.server.shared.log import log

_K = TypeVar("_K")


class Signing(StrEnum):
    """How the serving bundle is signed (`errorclass_bundle_info{signing}`)."""

    keys = "keys"
    """`--bundle-key`: the server signs each bundle it builds."""
    signatures_file = "signatures_file"
    """`--bundle-signatures`: a CI step signed it; the server checked every signature."""
    unsigned = "unsigned"
    """`--unsigned-bundle`: served, marked unsigned."""
    off = "off"
    """None of the flags: built and described, but GetBundle refuses."""


NOT_SERVED = (
    "this server does not serve its bundle: start it with --bundle-key PEM (it signs each "
    "bundle), --bundle-signatures FILE with --bundle-public-key PEM (a CI step signed it), "
    "or --unsigned-bundle (served, marked unsigned)"
)
"""GetBundle's FAILED_PRECONDITION when the operator chose none of the three."""


@dataclass(frozen=True, slots=True)
class BundleConfig:
    """The bundle flags of `classifier serve`."""

    keys: tuple[Path, ...] = ()
    signatures: Path | None = None
    public_keys: tuple[Path, ...] = ()
    unsigned: bool = False

    @property
    def signing(self) -> Signing:
        if self.keys:
            return Signing.keys
        if self.signatures is not None:
            return Signing.signatures_file
        return Signing.unsigned if self.unsigned else Signing.off

    def problem(self) -> str | None:
        """Why these flags do not go together (a usage error), or None."""
        chosen = [
            flag
            for flag, given in (
                ("--bundle-key", bool(self.keys)),
                ("--bundle-signatures", self.signatures is not None),
                ("--unsigned-bundle", self.unsigned),
            )
            if given
        ]
        if len(chosen) > 1:
            return f"{' and '.join(chosen)} exclude each other: the bundle is signed one way"
        if self.signatures is not None and not self.public_keys:
            return (
                "--bundle-signatures needs --bundle-public-key: the server serves only "
                "signatures it has checked over the bundle it builds"
            )
        if self.public_keys and self.signatures is None:
            return "--bundle-public-key goes with --bundle-signatures"
        return None


@dataclass(frozen=True, slots=True)
class ServingBundle:
    """The bundle of the serving ruleset, its signatures, and how they were made."""

    data: bytes
    """The bundle document, as `classifier bundle build` writes it for the same rules."""
    digest: str
    """sha256:<hex> of `data`."""
    ruleset_digest: str
    signatures: bytes
    """The signatures document (docs/bundles.md), empty when unsigned."""
    key_ids: tuple[str, ...]
    """The keys that signed it."""
    signing: Signing

    @property
    def signed(self) -> bool:
        return bool(self.key_ids)

    @property
    def served(self) -> bool:
        """Whether GetBundle hands it out (the operator chose how it is signed)."""
        return self.signing is not Signing.off


class BundleError(ValueError):
    """The server cannot serve a bundle as told: a key file that holds no Ed25519 key, or a
    signatures file that does not verify over the bundle it built. At start it is a start-up
    error; at a reload the reload fails and the old ruleset and bundle keep serving. The
    message names the flag and the file, with the signature's stable code where one failed
    (`classifier.bundle.Refusal`)."""


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Bundler:
    """Builds and signs the bundle of each ruleset that starts serving, as the flags say.

    Key files are read once, here: a bad one is a start-up error naming its flag.
    """

    def __init__(self, config: BundleConfig) -> None:
        self.config = config
        self.signing = config.signing
        self._keys: list[Ed25519PrivateKey] = [
            _key(load_private_key, path, "--bundle-key") for path in config.keys
        ]
        self._trusted: list[Ed25519PublicKey] = [
            _key(load_public_key, path, "--bundle-public-key") for path in config.public_keys
        ]

    def make(self, ruleset: Ruleset) -> ServingBundle:
        """The ruleset's bundle, signed as configured; BundleError when it cannot be."""
        data = bundle_bytes(ruleset)
        digest = digest_of(data)
        if len(data) > limits.MAX_REQUEST_BYTES:
            log(
                "bundle_large",
                level="warning",
                bytes=len(data),
                digest=digest,
                error=f"the bundle is over {limits.MAX_REQUEST_BYTES:,} bytes, gRPC's default "
                "receive limit: clients must raise theirs to fetch it with GetBundle",
            )
        signatures: bytes = b""
        key_ids: tuple[str, ...] = ()
        if self.signing is Signing.keys:
            doc: SignaturesDoc | None = None
            for key in self._keys:
                doc = add_signature(doc, sign(data, key))
            assert doc is not None
            signatures = dump_signatures(doc)
            key_ids = tuple(s.key_id for s in doc.signatures)
        elif self.signing is Signing.signatures_file:
            signatures, key_ids = self._checked_file(data, digest, ruleset)
        return ServingBundle(data, digest, ruleset.digest, signatures, key_ids, self.signing)

    def refreshed(self, serving: ServingBundle, ruleset: Ruleset) -> ServingBundle | None:
        """For a reload that found the rules unchanged: the serving bundle with the
        signatures file's new signatures when the file changed (a key added for a rotation),
        None when there is nothing new; BundleError when the file no longer verifies over
        the serving bundle (it was signed for rules not yet here: the reload fails until
        they come, and the bundle keeps its checked signatures)."""
        if self.signing is not Signing.signatures_file:
            return None
        path = self.config.signatures
        assert path is not None
        if _read(path) == serving.signatures:
            return None
        signatures, key_ids = self._checked_file(serving.data, serving.digest, ruleset)
        return ServingBundle(
            serving.data, serving.digest, serving.ruleset_digest, signatures, key_ids, self.signing
        )

    def _checked_file(
        self, data: bytes, digest: str, ruleset: Ruleset
    ) -> tuple[bytes, tuple[str, ...]]:
        """The signatures file's bytes and key ids, once every signature in it verifies over
        `data` by a --bundle-public-key: the server serves no signature it has not checked."""
        path = self.config.signatures
        assert path is not None
        where = f"--bundle-signatures {path}"
        raw = _read(path)
        try:
            doc = parse_signatures(raw)
        except BundleRefusedError as exc:
            raise BundleError(f"{where}: {exc.reason}: {exc.message}") from None
        if not doc.signatures:
            raise BundleError(f"{where}: unsigned: the signatures document lists no signature")
        built = (  # all that goes into the bytes: a CI step must match it
            f"the bundle of {ruleset.name} {ruleset.version} ({ruleset.digest}) "
            f"by classifier {version()} is {digest}"
        )
        for entry in doc.signatures:
            one = SignaturesDoc(
                format=doc.format, format_version=doc.format_version, signatures=[entry]
            )
            try:
                verify(data, one, self._trusted)
            except BundleRefusedError as exc:
                why = _why(exc, entry.key_id, built)
                raise BundleError(f"{where}: {exc.reason}: {why}") from None
        return raw, tuple(s.key_id for s in doc.signatures)


def _why(exc: BundleRefusedError, key_id: str, built: str) -> str:
    if exc.reason == "bad_signature":
        return (
            f"the signature by key {key_id} does not verify over the bundle this server built "
            f"({built}): it was made for another bundle (other rules, the rules built from "
            "another path, or another classifier version); sign what `classifier bundle "
            "build` makes of these rules at this path with this version"
        )
    if exc.reason == "unknown_key":
        return (
            f"signed by key {key_id}, which no --bundle-public-key gives: the server serves "
            "only signatures it has checked"
        )
    return exc.message


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise BundleError(
            f"--bundle-signatures {path}: unreadable_file: {exc.strerror or exc}"
        ) from None


def _key(load: Callable[[Path], _K], path: Path, flag: str) -> _K:
    try:
        return load(path)
    except KeyFileError as exc:
        raise BundleError(f"{flag} {exc}") from None
    except OSError as exc:
        raise BundleError(f"{flag} {path}: {exc.strerror or exc}") from None


@dataclass(frozen=True, slots=True)
class LocalDecision:
    """What a reported decision adds to an answer: it was made in a client's process."""

    bundle_digest: str
    """The bundle that decided."""
    serving: bool
    """Whether that bundle is the one serving when the report came (else an older one, or
    one built elsewhere: its answer names the ruleset that decided)."""
    decided_at: float | None
    """When the client decided (Unix seconds), None when it did not say."""
