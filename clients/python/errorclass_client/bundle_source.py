"""The bundle a client classifies with in process, and how a new one replaces it.

A runtime keeps answering while the service is out of reach only if its bundle is one its
operators signed: a bundle is taken only when a trusted key's signature verifies over its
exact bytes (or, without keys, when the caller said unsigned is allowed), and a refused
one never replaces the bundle in use. The refusal is kept (`last_refusal`, `refusals`) so
an operator can see why a runtime still answers from an old bundle. The refresher fetches
from the service (GetBundle with `if_none_match`) in the background, one fetch at a time,
and after a failure waits before the next (doubling, bounded), so an outage or a bundle
that keeps being refused costs the service one small call every half minute at most.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from errorclass_client.bundle import Bundle, BundleError

log = logging.getLogger("errorclass_client.bundle")

RETRY_FIRST = 2.0
"""Seconds before a failed fetch is tried again; doubling after each failure."""
RETRY_MAX = 30.0
"""The longest wait between failed fetches (a service down for long is asked twice a
minute)."""

KeySource = bytes | str | os.PathLike[str]
"""A trusted public key: PEM bytes or text, or the path of a PEM file."""


def read_key(key: KeySource) -> bytes:
    """A key's PEM bytes: given as bytes, as PEM text, or as a file's path."""
    if isinstance(key, bytes):
        return key
    if isinstance(key, str) and key.lstrip().startswith("-----BEGIN"):
        return key.encode()
    try:
        return Path(key).read_bytes()
    except OSError as exc:
        raise BundleError("unreadable_file", f"{key}: {exc.strerror or exc}") from None


@dataclass(frozen=True, slots=True)
class Fetched:
    """What GetBundle answered: the bytes (None when `unchanged`), and the digests."""

    bundle: bytes | None
    signatures: bytes | None
    bundle_digest: str
    ruleset_digest: str


class BundleSource:
    """The bundle in use (`current`), swapped only for one that passes the trust check."""

    def __init__(self, trusted_keys: Sequence[KeySource] = (), *, allow_unsigned: bool = False):
        self.trusted_keys = tuple(read_key(k) for k in trusted_keys)
        if not self.trusted_keys and not allow_unsigned:
            raise ValueError(
                "a bundle needs trusted_keys (PEM public keys) to verify it, or "
                "allow_unsigned=True to use it unverified"
            )
        if self.trusted_keys:  # a bad key fails here, not at the first fetch
            from errorclass_client.bundle._verify import public_key

            for pem in self.trusted_keys:
                try:
                    public_key(pem)
                except ValueError as exc:
                    raise BundleError("invalid_key", f"a trusted key: {exc}") from None
        self.allow_unsigned = allow_unsigned
        self.current: Bundle | None = None
        """The bundle in use; None until one is loaded. Replaced whole, never changed."""
        self.refusals = 0
        """How many bundles were refused (a start file, a fetch, a load)."""
        self.last_refusal = ""
        """`code: message` of the latest refusal; empty when none."""
        self.refused_ruleset = ""
        """The ruleset digest of the latest bundle refused from the service: answers naming
        it do not ask for the same bundle again."""
        self._lock = threading.Lock()

    @property
    def digest(self) -> str:
        """The bundle digest in use; empty without a bundle."""
        current = self.current
        return current.bundle_digest if current is not None else ""

    def load_file(
        self, path: str | os.PathLike[str], signatures: str | os.PathLike[str] | None = None
    ) -> Bundle:
        """Take a bundle file (its signatures default to `<bundle>.sig.json`); BundleError
        when refused, the bundle in use kept."""
        try:
            data = Path(path).read_bytes()
            sigfile = Path(signatures) if signatures else Path(f"{os.fspath(path)}.sig.json")
            signed = sigfile.read_bytes() if sigfile.exists() else None
        except OSError as exc:
            refused = BundleError("unreadable_file", f"{path}: {exc.strerror or exc}")
            raise self._refused(refused) from None
        return self.accept(data, signed)

    def accept(self, data: bytes, signatures: bytes | None) -> Bundle:
        """Verify a bundle's bytes (with trusted keys) and put it in use; BundleError with
        its stable code when refused, the bundle in use kept."""
        try:
            bundle = Bundle.from_bytes(data, signatures=signatures, trusted_keys=self.trusted_keys)
        except BundleError as exc:
            raise self._refused(exc) from None
        with self._lock:
            self.current = bundle
        return bundle

    def _refused(self, exc: BundleError) -> BundleError:
        with self._lock:
            self.refusals += 1
            self.last_refusal = str(exc)
        log.warning(
            "bundle refused (%s); the bundle in use stays: %s", exc.code, self.digest or "none"
        )
        return exc


class Refresher:
    """Fetches the service's bundle into a BundleSource: at most one fetch at a time, in
    the background when asked (`wanted`), and after a failure not sooner than a backoff."""

    def __init__(
        self,
        source: BundleSource,
        fetch: Callable[[str, float | None], Fetched],
        timeout: float | None,
    ):
        self.source = source
        self._fetch = fetch
        self._timeout = timeout
        self._one = threading.Lock()
        """Held while a fetch is in flight."""
        self._wake = threading.Condition()
        self._wanted = False
        self._closed = False
        self._failures = 0
        self._not_before = 0.0
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Fetch now in the background (the first classify never waits for it)."""
        self._thread = threading.Thread(target=self._run, name="errorclass-bundle", daemon=True)
        self._thread.start()
        self.want()

    def want(self) -> None:
        """Ask for a fetch (an answer named another ruleset than the bundle's)."""
        with self._wake:
            if not self._wanted:
                self._wanted = True
                self._wake.notify()

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def refresh(self, timeout: float | None = None) -> bool:
        """Fetch now, in this thread (waiting for a fetch in flight first, within the
        timeout); whether the bundle in use changed. Raises what the fetch raised: a
        BundleError (refused) or the call's error."""
        limit = self._timeout if timeout is None else timeout
        if not self._one.acquire(timeout=-1 if limit is None else limit):
            raise TimeoutError("a bundle fetch already in flight did not end within the deadline")
        try:
            return self._fetch_once(limit)
        finally:
            self._one.release()

    def _fetch_once(self, timeout: float | None) -> bool:
        before = self.source.digest
        try:
            got = self._fetch(before, timeout)
            if got.bundle is None:  # unchanged
                changed = False
            else:
                try:
                    self.source.accept(got.bundle, got.signatures)
                except BundleError:
                    self.source.refused_ruleset = got.ruleset_digest
                    raise
                changed = self.source.digest != before
        except BaseException:
            self._failures += 1
            self._not_before = time.monotonic() + min(
                RETRY_MAX, RETRY_FIRST * 2 ** (self._failures - 1)
            )
            raise
        self._failures = 0
        self._not_before = 0.0
        if changed:
            log.info("bundle %s in use (was %s)", self.source.digest, before or "none")
        return changed

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._closed and not self._wanted:
                    self._wake.wait()
                if self._closed:
                    return
                wait = self._not_before - time.monotonic()
                if wait > 0:
                    self._wake.wait(wait)
                    continue
                self._wanted = False
            if not self._one.acquire(blocking=False):
                continue  # a synchronous refresh is fetching
            try:
                self._fetch_once(self._timeout)
            except BundleError:
                pass  # recorded; fetched again only when an answer names another ruleset
            except Exception as exc:
                log.info(
                    "bundle fetch failed (%s); next try in %.0f s",
                    exc,
                    self._not_before - time.monotonic(),
                )
                with self._wake:
                    self._wanted = True  # the service may be back after the backoff
            finally:
                self._one.release()
