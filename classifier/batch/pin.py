"""Which ruleset a worker process classifies with, pinned by digest.

A job (a Spark job, a process pool) is planned on one machine and run by
many worker processes, each of which loads the ruleset itself, once. The
driver pins the ruleset it loaded: its digest, and either every layer's
bytes (shipped with the job, so a worker needs no shared storage, and
compiled from memory there) or the folder's path (which every worker must
be able to read). A worker that loads anything with another digest raises
`RulesetPinError` before it classifies a row, so the job fails rather than
mixing two rulesets in one output; every answer row carries the digest it
was classified under. The digest is the loader's, the one a server
reports in GetRuleset.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from classifier.batch.arrow import AnswerTable
from classifier.engine.compiler import compile_stack, load_ruleset
from classifier.engine.ruleset import Ruleset
from classifier.errors import ClassifierError
from classifier.source.loader import LayerFiles, load_stack, stack_of


class RulesetPinError(ClassifierError):
    """A worker loaded a ruleset whose digest is not the one its job is pinned to."""


@dataclass(frozen=True)
class RulesetPin:
    """A ruleset as a job's workers load it: the digest it must have, and where it is.

    `layers` are the stack's layers, bottom first, as the driver read them
    (shipped with the job); when empty, workers load `folder`, a path each
    of them can read.
    """

    digest: str
    folder: str = ""
    layers: tuple[LayerFiles, ...] = ()
    label: str = ""
    """How the driver named it (a folder, or REV:PATH), for messages."""

    def __post_init__(self) -> None:
        if not self.layers and not self.folder:
            raise ValueError("a ruleset pin needs a folder or its layers")

    @property
    def where(self) -> str:
        return self.label or self.folder or "the shipped ruleset"


def pin_ruleset(
    folder: str | Path, *, ship: bool = True, digest: str | None = None, label: str = ""
) -> tuple[RulesetPin, Ruleset]:
    """Load a ruleset folder (and its bases) on the driver and pin it: raises RulesetError if
    it is invalid, and RulesetPinError if `digest` is given and the ruleset's is another.

    Shipped, the pin holds the very bytes the driver compiled, every layer's.
    """
    stack = load_stack(folder)
    ruleset = compile_stack(stack)
    if digest is not None and ruleset.digest != digest:
        raise RulesetPinError(
            f"{label or folder} has digest {ruleset.digest}, not the {digest} asked for"
        )
    layers = stack.files() if ship else ()
    pin = RulesetPin(ruleset.digest, str(folder), layers, label or str(folder))
    if ship and stack_of(layers).digest != ruleset.digest:  # what a worker will read
        raise RulesetPinError(f"{pin.where}: the shipped layers do not read back the same")
    _PINNED[pin] = AnswerTable(ruleset)
    return pin, ruleset


_PINNED: dict[RulesetPin, AnswerTable] = {}
"""The one cache of pinned rulesets in a process (a driver, a pool worker, a Spark worker)."""
LOADS: Counter[str] = Counter()
"""How many times this process compiled each digest (once, for a pinned job)."""


def pinned_table(pin: RulesetPin) -> AnswerTable:
    """The pinned ruleset's answers, compiled once per process; RulesetPinError if its digest
    differs.

    A failed load is not remembered: a later task on the same worker tries
    again (and fails again while the folder is still not the pinned one).
    """
    table = _PINNED.get(pin)
    if table is not None:
        return table
    ruleset = compile_stack(stack_of(pin.layers)) if pin.layers else load_ruleset(pin.folder)
    LOADS[ruleset.digest] += 1
    if ruleset.digest != pin.digest:
        raise RulesetPinError(
            f"{pin.where} now has digest {ruleset.digest}, but this job is pinned to "
            f"{pin.digest}: the ruleset changed after the job started, or this worker sees "
            "another copy; no row was classified with it"
        )
    table = _PINNED[pin] = AnswerTable(ruleset)
    return table


def load_pinned(pin: RulesetPin) -> Ruleset:
    """The pinned ruleset (see `pinned_table`)."""
    return pinned_table(pin).ruleset
