"""Which ruleset a worker process classifies with, pinned by digest.

A job (a Spark job, a process pool) is planned on one machine and run by
many worker processes, each of which loads the ruleset itself, once. The
driver pins the ruleset it loaded: its digest, and either the folder's
files (shipped with the job, so a worker needs no shared storage) or the
folder's path (which every worker must be able to read). A worker that
loads anything with another digest raises `RulesetPinError` before it
classifies a row, so the job fails rather than mixing two rulesets in one
output; every answer row carries the digest it was classified under.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from classifier.engine.compiler import load_ruleset
from classifier.engine.ruleset import Ruleset
from classifier.errors import ClassifierError
from classifier.source.loader import CATALOG, MANIFEST, load_source


class RulesetPinError(ClassifierError):
    """A worker loaded a ruleset whose digest is not the one its job is pinned to."""


@dataclass(frozen=True)
class RulesetPin:
    """A ruleset as a job's workers load it: the digest it must have, and where it is.

    `files` (relative path, bytes) is the folder itself, shipped with the
    job; when empty, workers load `folder`, a path each of them can read.
    """

    digest: str
    folder: str = ""
    files: tuple[tuple[str, bytes], ...] = ()
    label: str = ""
    """How the driver named it (a folder, or REV:PATH), for messages."""

    def __post_init__(self) -> None:
        if not self.files and not self.folder:
            raise ValueError("a ruleset pin needs a folder or its files")

    @property
    def where(self) -> str:
        return self.label or self.folder or "the shipped ruleset"


def pin_ruleset(
    folder: str | Path, *, ship: bool = True, digest: str | None = None, label: str = ""
) -> tuple[RulesetPin, Ruleset]:
    """Load a folder on the driver and pin it: raises RulesetError if it is invalid, and
    RulesetPinError if `digest` is given and the folder's is another."""
    ruleset = load_ruleset(folder)
    if digest is not None and ruleset.digest != digest:
        raise RulesetPinError(
            f"{label or folder} has digest {ruleset.digest}, not the {digest} asked for"
        )
    files: tuple[tuple[str, bytes], ...] = ()
    if ship:
        files = _files(Path(folder))
    pin = RulesetPin(ruleset.digest, str(folder), files, label or str(folder))
    if ship and load_pinned_digest(pin) != ruleset.digest:
        raise RulesetPinError(f"{pin.where} changed while it was being read; try again")
    _LOADED[pin] = ruleset
    return pin, ruleset


def _files(root: Path) -> tuple[tuple[str, bytes], ...]:
    """The files the digest covers: the manifest, the catalog and every rule file."""
    source = load_source(root)
    paths = [root / MANIFEST, root / CATALOG, *source.files]
    return tuple((p.relative_to(root).as_posix(), p.read_bytes()) for p in paths)


def load_pinned_digest(pin: RulesetPin) -> str:
    """The digest of the shipped files, computed as the loader computes a folder's (a check
    on the driver that the folder did not change while it was read)."""
    digest = hashlib.sha256()
    for rel, data in pin.files:
        digest.update(rel.encode() + b"\0" + data + b"\0")
    return "sha256:" + digest.hexdigest()


_LOADED: dict[RulesetPin, Ruleset] = {}
LOADS: Counter[str] = Counter()
"""How many times this process compiled each digest (once, for a pinned job)."""


def load_pinned(pin: RulesetPin) -> Ruleset:
    """The pinned ruleset, compiled once per process; RulesetPinError if its digest differs.

    A failed load is not remembered: a later task on the same worker tries
    again (and fails again while the folder is still not the pinned one).
    """
    loaded = _LOADED.get(pin)
    if loaded is not None:
        return loaded
    if pin.files:
        with tempfile.TemporaryDirectory(prefix="classifier-ruleset-") as tmp:
            root = Path(tmp)
            for rel, data in pin.files:
                path = root / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            ruleset = load_ruleset(root)
    else:
        ruleset = load_ruleset(pin.folder)
    LOADS[ruleset.digest] += 1
    if ruleset.digest != pin.digest:
        raise RulesetPinError(
            f"{pin.where} now has digest {ruleset.digest}, but this job is pinned to "
            f"{pin.digest}: the ruleset changed after the job started, or this worker sees "
            "another copy; no row was classified with it"
        )
    _LOADED[pin] = ruleset
    return ruleset
