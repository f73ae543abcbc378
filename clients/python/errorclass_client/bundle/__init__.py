"""Classify in process from a ruleset bundle: the reference evaluator (docs/bundles.md).

    from errorclass_client.bundle import Bundle

    bundle = Bundle.load("rules.bundle.json", trusted_keys=[open("ops.pub", "rb").read()])
    answer = bundle.classify({"type": "openai.RateLimitError", "http_status": 429})
    answer.class_name, answer.action.id, answer.rule_id, answer.ruleset_digest

A bundle (`classifier bundle build`) is the service's compiled ruleset as
JSON; `classify` answers exactly as the service does for the same
descriptor (clients/spec/vectors/bundle*.json prove it), from the bundle
alone: this package never imports the service. A descriptor is a mapping
spelt as the spec's vectors spell it (the proto's field names, `origin` by
name, statuses by number, `causes` a list of mappings).

With `trusted_keys`, the bundle is used only when one of them signed its
exact bytes (the signatures document, `BUNDLE.sig.json`, beside it): an
unsigned, tampered or unknown-key bundle raises `BundleError` with a stable
`code`. Message patterns need google-re2 and signatures the cryptography
package, both in the `bundle` extra (`pip install 'errorclass-client[bundle]'`),
imported only when a bundle is loaded.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

from errorclass_client.bundle._evaluate import Action, Answer, BundleError, Evaluator
from errorclass_client.bundle._verify import EXTRA, public_key
from errorclass_client.bundle._verify import verify as _verify
from errorclass_client.retry_after import RetryAfter

__all__ = ["Action", "Answer", "Bundle", "BundleError", "RetryAfter"]

FORMAT = "errorclass-bundle"
FORMAT_VERSION = 1
PRECEDENCE = [
    "decisive", "fallback", "type_depth", "condition_count", "priority", "layer", "order",
]  # fmt: skip
"""The precedence key this evaluator implements; a bundle naming another is refused."""


def _re2() -> Any:
    try:
        import re2
    except ImportError:
        raise BundleError(
            "missing_dependency",
            f"evaluating a bundle's message patterns needs google-re2: pip install '{EXTRA}'",
        ) from None
    return re2


class Bundle:
    """A loaded (and, when keys were given, verified) bundle, ready to classify."""

    def __init__(self, data: bytes, key_ids: tuple[str, ...] = ()) -> None:
        try:
            doc = json.loads(data)
        except ValueError as exc:
            raise BundleError("invalid_bundle", f"not JSON ({exc})") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise BundleError("invalid_bundle", "not a ruleset bundle")
        if doc.get("format_version") != FORMAT_VERSION or doc.get("precedence") != PRECEDENCE:
            raise BundleError(
                "unsupported_format",
                f"bundle format {doc.get('format_version')!r} with precedence "
                f"{doc.get('precedence')!r}: this evaluator reads format {FORMAT_VERSION}",
            )
        try:
            self._evaluator = Evaluator(doc, _re2())
        except (KeyError, TypeError, ValueError) as exc:
            raise BundleError("invalid_bundle", f"{type(exc).__name__}: {exc}") from None
        ruleset = doc["ruleset"]
        self.name: str = ruleset["name"]
        self.version: str = ruleset["version"]
        self.digest: str = ruleset["digest"]
        """The ruleset's digest, the one GetRuleset reports and every answer carries."""
        self.key_ids = key_ids
        """The trusted keys whose signatures verified (empty: loaded without keys)."""
        self.bundle_digest = f"sha256:{hashlib.sha256(data).hexdigest()}"
        """sha256 of the bundle's bytes: GetBundle's `bundle_digest`, what local answers name."""

    @classmethod
    def load(
        cls,
        path: str | PathLike[str],
        *,
        signatures: str | PathLike[str] | None = None,
        trusted_keys: Sequence[bytes] = (),
    ) -> Bundle:
        """Read a bundle file; with trusted_keys (PEM public keys), verify it first against
        its signatures (default: the file beside it, BUNDLE.sig.json)."""
        data = Path(path).read_bytes()
        signed: bytes | None = None
        if trusted_keys:
            sigfile = Path(signatures) if signatures else Path(f"{path}.sig.json")
            signed = sigfile.read_bytes() if sigfile.exists() else None
        return cls.from_bytes(data, signatures=signed, trusted_keys=trusted_keys)

    @classmethod
    def from_bytes(
        cls, data: bytes, *, signatures: bytes | None = None, trusted_keys: Sequence[bytes] = ()
    ) -> Bundle:
        """A bundle from its bytes (as fetched); verified when trusted_keys are given."""
        key_ids: tuple[str, ...] = ()
        if trusted_keys:
            keys = [public_key(pem) for pem in trusted_keys]
            key_ids = _verify(data, signatures, keys)
        return cls(data, key_ids)

    def classify(self, descriptor: Mapping[str, Any], now: dt.datetime | None = None) -> Answer:
        """The service's answer for descriptor; ValueError for one the service would refuse.

        `now` (aware) is the clock a retryable answer's wait is read against when the
        provider's date says when to retry and its `date` header is missing (default: the
        system's clock, as the service uses its own)."""
        return self._evaluator.classify(descriptor, now)
