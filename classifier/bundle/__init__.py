"""Ruleset bundles: the compiled ruleset as signed, language-neutral JSON.

    format     the document's models (the JSON Schema is generated from them)
    build      Ruleset -> bundle: the converter from the engine's shapes
    signing    Ed25519 detached signatures, several trusted keys

After `engine/` and `lint/` in the pipeline: a bundle is built from a
compiled ruleset and read by evaluators in every client language
(clients/python/errorclass_client/bundle is the reference; docs/bundles.md).
"""

from classifier.bundle.build import build_bundle, bundle_bytes, dump
from classifier.bundle.format import FORMAT, FORMAT_VERSION, PRECEDENCE, BundleDoc, SignaturesDoc
from classifier.bundle.signing import BundleRefusedError, Refusal, Verified, key_id, sign, verify

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "PRECEDENCE",
    "BundleDoc",
    "BundleRefusedError",
    "Refusal",
    "SignaturesDoc",
    "Verified",
    "build_bundle",
    "bundle_bytes",
    "dump",
    "key_id",
    "sign",
    "verify",
]
