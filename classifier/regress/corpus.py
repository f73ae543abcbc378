"""A corpus of descriptors to replay: case files, or JSON Lines from a log.

A JSON Lines line is either a bare descriptor (the descriptor-file shape)
or an object with a `"descriptor"` key holding one, plus anything else (a
decision log's `"answer"`, `"ts"`, ...). Every bad line or case is reported
with its `file:line`, and the good ones are still used.

A log is written by a process that can die or run out of disk mid-line, so a
JSON Lines line that is not UTF-8, not JSON or not a descriptor is *skipped*
(`Corpus.skipped`, each `file:line: reason`), never the file: every whole line
still replays. A bad case in a case file is an error (`Corpus.errors`): those
are written by hand, and a mistake there should fail the run.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from classifier.descriptor import Descriptor
from classifier.errors import DescriptorError
from classifier.regress.cases import files_under, is_case_file, read_case_file
from classifier.source.descriptor_file import descriptor_from_data
from classifier.source.display import display_path

JSON_LINES_SUFFIXES = (".jsonl", ".ndjson", ".json")
STDIN = "-"


@dataclass(frozen=True, slots=True)
class Entry:
    """One descriptor of the corpus and where it came from (`file:line`, and a case's note)."""

    where: str
    descriptor: Descriptor
    note: str = ""


@dataclass
class Corpus:
    entries: list[Entry] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """JSON Lines lines left out, each as `file:line: reason`."""


def _is_corpus_file(path: Path) -> bool:
    return is_case_file(path) or path.suffix in JSON_LINES_SUFFIXES


def corpus_files(paths: Iterable[str]) -> list[str]:
    """The files a corpus is read from; folders are searched for case files and JSON Lines."""
    out: dict[str, None] = {}
    for raw in paths:
        path = Path(raw)
        if raw == STDIN or path.is_file():
            out[raw] = None
        elif path.is_dir():
            for candidate in files_under(path, _is_corpus_file):
                out[str(candidate)] = None
        else:
            raise FileNotFoundError(f"{raw}: no such file or folder")
    return list(out)


def read_corpus(paths: Iterable[str]) -> Corpus:
    """Read every file; raises FileNotFoundError for a path that does not exist."""
    corpus = Corpus()
    for name in corpus_files(paths):
        if name == STDIN:
            _read_json_lines(sys.stdin.buffer, "<stdin>", corpus)
        elif Path(name).suffix in JSON_LINES_SUFFIXES:
            with open(name, "rb") as f:
                _read_json_lines(f, display_path(Path(name)), corpus)
        else:
            _read_cases(Path(name), corpus)
    return corpus


def _read_cases(path: Path, corpus: Corpus) -> None:
    case_file = read_case_file(path)
    corpus.errors += [d.render() for d in case_file.diagnostics]
    for bad in case_file.bad_cases:
        corpus.errors += [d.render() for d in bad.diagnostics]
    corpus.entries += [Entry(str(c.location), c.descriptor, c.note) for c in case_file.cases]


def _read_json_lines(stream: IO[bytes], shown: str, corpus: Corpus) -> None:
    for number, raw in _numbered(stream):
        where = f"{shown}:{number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            corpus.skipped.append(f"{where}: not UTF-8 (byte {exc.start + 1}): a torn line?")
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            corpus.skipped.append(f"{where}: not JSON: {exc.msg} (column {exc.colno})")
            continue
        if isinstance(data, dict) and "descriptor" in data:
            data = data["descriptor"]
        try:
            corpus.entries.append(Entry(where, descriptor_from_data(data)))
        except DescriptorError as exc:
            corpus.skipped += [f"{where}: {v}" for v in exc.violations]


def _numbered(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    for number, line in enumerate(stream, start=1):
        if line.strip():
            yield number, line
