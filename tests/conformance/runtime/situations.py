"""situations.yaml (beside this file): read, checked, and typed.

A situation is language-neutral: what happened, and the class and effect the taxonomy
gives it (`want`), written before any answer was looked at. A language implements it with
mechanisms; a pair is `<language>.<mechanism>::<situation-id>` (README.md beside this
file). `known` maps a pair id to the reason it cannot come out right; such a pair runs as
a strict xfail, and `check_pairs` refuses a `known` entry that names no listed pair.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from classifier.taxonomy import Effect, ErrorClass

SITUATIONS_FILE = Path(__file__).with_name("situations.yaml")
KEYS = {"id", "what", "want", "known"}
WANT_KEYS = {"class", "effect", "action"}
SITUATION_ID = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$")
PAIR_ID = re.compile(
    r"^(?P<language>[a-z]+)\.(?P<mechanism>[a-z0-9][a-z0-9.-]*)::(?P<situation>\S+)$"
)


class SituationError(ValueError):
    """situations.yaml, or a driver's pair list, breaks the agreement in README.md."""


@dataclass(frozen=True)
class Want:
    error_class: str
    effect: str | None = None
    """`fail`, `pause` or `continue`; None where the taxonomy leaves it to the catalog."""
    action: str | None = None


@dataclass(frozen=True)
class Situation:
    id: str
    what: str
    want: Want
    known: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PairId:
    language: str
    mechanism: str
    situation: str

    @property
    def text(self) -> str:
        return f"{self.language}.{self.mechanism}::{self.situation}"


def parse_pair(text: str) -> PairId:
    """`python.asyncio-wait-for::tool-timeout.wrapper-limit`, split; a bad name raises."""
    m = PAIR_ID.match(text)
    if m is None:
        raise SituationError(f"{text!r}: a pair id is <language>.<mechanism>::<situation-id>")
    return PairId(m["language"], m["mechanism"], m["situation"])


def load_situations(path: Path = SITUATIONS_FILE) -> dict[str, Situation]:
    """Every situation by id, in file order; a malformed file raises SituationError."""
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("situations"), list):
        raise SituationError(f"{path.name}: expected a mapping with a `situations:` list")
    out: dict[str, Situation] = {}
    for i, raw in enumerate(data["situations"]):
        situation = _situation(raw, f"{path.name}: situations[{i}]")
        if situation.id in out:
            raise SituationError(f"{path.name}: situations[{i}]: duplicate id {situation.id!r}")
        out[situation.id] = situation
    return out


def _situation(raw: object, where: str) -> Situation:
    if not isinstance(raw, dict):
        raise SituationError(f"{where}: a situation is a mapping")
    unknown = set(raw) - KEYS
    if unknown:
        raise SituationError(f"{where}: unknown keys {sorted(unknown)}; known: {sorted(KEYS)}")
    for key in ("id", "what", "want"):
        if key not in raw:
            raise SituationError(f"{where}: missing {key!r}")
    sid = str(raw["id"])
    where = f"{where} ({sid})"
    if not SITUATION_ID.match(sid):
        raise SituationError(f"{where}: an id is lower-case words joined by '.' or '-'")
    want = raw["want"]
    if not isinstance(want, dict) or "class" not in want or set(want) - WANT_KEYS:
        raise SituationError(f"{where}: want is {{class: ..., effect: ..., action: ...}}")
    if want["class"] not in ErrorClass.__members__:
        raise SituationError(f"{where}: unknown class {want['class']!r}")
    effect = want.get("effect")
    if effect is not None:
        try:
            Effect.from_label(str(effect))
        except KeyError:
            raise SituationError(
                f"{where}: unknown effect {effect!r}; known: fail, pause, continue"
            ) from None
    known = raw.get("known") or {}
    if not isinstance(known, dict):
        raise SituationError(f"{where}: known maps a pair id to the reason")
    for pair, reason in known.items():
        if parse_pair(str(pair)).situation != sid:
            raise SituationError(f"{where}: known pair {pair!r} belongs to another situation")
        if not str(reason or "").strip():
            raise SituationError(f"{where}: known pair {pair!r} needs a reason")
    return Situation(
        id=sid,
        what=str(raw["what"]),
        want=Want(
            error_class=str(want["class"]),
            effect=None if effect is None else str(effect),
            action=want.get("action"),
        ),
        known={str(k): str(v) for k, v in known.items()},
    )


def check_pairs(
    situations: Mapping[str, Situation], pairs: Iterable[str], *, languages: Iterable[str]
) -> None:
    """Every listed pair is well named and names a situation; every `known` entry of the
    `languages` that were listed names a listed pair (a language whose driver did not run
    here is not checked: its pairs are not known to this run)."""
    listed = set()
    for text in pairs:
        pair = parse_pair(text)
        if pair.situation not in situations:
            raise SituationError(f"{text}: no situation {pair.situation!r} in situations.yaml")
        listed.add(text)
    ran = set(languages)
    for situation in situations.values():
        for known in situation.known:
            if parse_pair(known).language in ran and known not in listed:
                raise SituationError(
                    f"situations.yaml ({situation.id}): known pair {known!r} is listed by no driver"
                )
