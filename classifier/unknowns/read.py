"""Records to cluster: decision logs (rotated folders included), JSON Lines and case files.

A decision-log line (`{"ts": ..., "ruleset_version": ..., "descriptor": ..., "answer": ...}`)
carries the answer the server gave, so its Unknowns are the ones it served; any other line
or case is a bare descriptor, which a ruleset classifies first (`needs_answer`). A line may
say how many times it stands for (`"seen": N`, as the server's live sample does).

Reading is the hot path of `classifier unknowns` over a large log: a classified decision
line is recognised without parsing its JSON (an Unknown answer always has
`unknown_reason`, which cannot occur unescaped inside a JSON string), and an Unknown's
descriptor is used in the descriptor-file shape the server wrote, validated only when a
cluster's examples are built from it.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from classifier.descriptor import Descriptor
from classifier.errors import DescriptorError
from classifier.regress.cases import read_case_file
from classifier.regress.corpus import JSON_LINES_SUFFIXES, STDIN, corpus_files
from classifier.source.descriptor_file import descriptor_dict, descriptor_from_data
from classifier.source.display import display_path

_DECISION_PREFIX = '{"ts":"'
_CLASSIFIED_MARK = '"answer":{"class":"'


@dataclass(slots=True)
class Record:
    """One line or case: where it is, when, under which ruleset, and what was answered.

    `descriptor` is in the descriptor-file shape; `answer_class` is empty when the source
    gave no answer (the record needs a ruleset to classify it); `parsed` is the validated
    descriptor when reading already built one.
    """

    where: str
    ts: float | None
    version: str
    descriptor: dict[str, Any]
    answer_class: str = ""
    reason: str = ""
    weight: int = 1
    parsed: Descriptor | None = None

    @property
    def needs_answer(self) -> bool:
        return not self.answer_class


@dataclass(slots=True)
class Classified:
    """A decision line answered with a class other than Unknown: counted, never parsed."""

    ts: float | None
    weight: int = 1


def parse_ts(text: object) -> float | None:
    """A decision log's `ts` (`2026-11-29T12:00:00.123Z`) as Unix seconds; None if unreadable."""
    if not isinstance(text, str):
        return None
    try:
        return dt.datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def read(paths: Iterable[str], errors: list[str]) -> Iterator[Record | Classified]:
    """Every record of every file; problems go to `errors` as `file:line: why`.

    Folders are searched for case files and JSON Lines (a rotated decision log's
    `d.jsonl`, `d.1.jsonl`, ...); raises FileNotFoundError for a path that does not exist.
    """
    for name in corpus_files(paths):
        if name == STDIN:
            yield from read_lines(sys.stdin, "<stdin>", errors)
        elif Path(name).suffix in JSON_LINES_SUFFIXES:
            with open(name, encoding="utf-8") as f:
                yield from read_lines(f, display_path(Path(name)), errors)
        else:
            yield from _read_cases(Path(name), errors)


def _read_cases(path: Path, errors: list[str]) -> Iterator[Record]:
    case_file = read_case_file(path)
    errors += [d.render() for d in case_file.diagnostics]
    for bad in case_file.bad_cases:
        errors += [d.render() for d in bad.diagnostics]
    for case in case_file.cases:
        d = case.descriptor
        yield Record(str(case.location), None, "", descriptor_dict(d), parsed=d)


def read_lines(stream: IO[str], shown: str, errors: list[str]) -> Iterator[Record | Classified]:
    for number, line in enumerate(stream, start=1):
        if (
            line.startswith(_DECISION_PREFIX)
            and '"unknown_reason"' not in line
            and _CLASSIFIED_MARK in line
            and '"seen"' not in line
        ):
            yield Classified(parse_ts(line[7 : line.find('"', 7)]))
            continue
        if not line.strip():
            continue
        record = _record(line, f"{shown}:{number}", errors)
        if record is not None:
            yield record


def _record(line: str, where: str, errors: list[str]) -> Record | Classified | None:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        errors.append(f"{where}: not JSON: {exc.msg} (column {exc.colno})")
        return None
    answer = data.get("answer") if isinstance(data, dict) else None
    if isinstance(answer, dict) and isinstance(data.get("descriptor"), dict):
        weight = data.get("seen", 1)
        weight = weight if isinstance(weight, int) and weight > 0 else 1
        ts = parse_ts(data.get("ts"))
        if answer.get("class") != "Unknown":
            return Classified(ts, weight)
        descriptor = data["descriptor"]
        if not isinstance(descriptor.get("type"), str) or not descriptor["type"]:
            errors.append(f"{where}: descriptor.type: must be a non-empty string")
            return None
        return Record(
            where,
            ts,
            str(data.get("ruleset_version") or answer.get("ruleset_version") or ""),
            descriptor,
            "Unknown",
            str(answer.get("unknown_reason") or "no_match"),
            weight,
        )
    if isinstance(data, dict) and "descriptor" in data:
        data = data["descriptor"]
    try:
        parsed = descriptor_from_data(data)
    except DescriptorError as exc:
        errors += [f"{where}: {v}" for v in exc.violations]
        return None
    return Record(where, None, "", descriptor_dict(parsed), parsed=parsed)
