"""Case files: regression cases for a ruleset, read with positions.

A case file (`*.cases.yaml`) is a mapping:

    rules: ../some-ruleset     # optional, relative to this file
    cases:
      - note: dotnet/HttpClient timeout is a Timeout, not a cancel
        descriptor: {type: System.Threading.Tasks.TaskCanceledException, ...}
        want: {class: Timeout, rule: dotnet.httpclient-timeout}
        todo: "why it fails today"                 # optional

Each case is validated on its own, so one bad case is reported at its
`file:line:col` while the file's other cases still run. The ruleset a file
tests is its `rules:` folder, else the nearest folder (the file's own, then
its parents) holding `ruleset.yaml`, else the one the caller gives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from classifier.codes import Code
from classifier.descriptor import Descriptor
from classifier.errors import DescriptorError, Diagnostic, sorted_diagnostics
from classifier.location import Location
from classifier.source.descriptor_file import DescriptorDoc
from classifier.source.display import display_path
from classifier.source.documents import Doc, parse_class, parsed_as
from classifier.source.loader import CASES_SUFFIX, MANIFEST
from classifier.source.validation import pydantic_diagnostics
from classifier.source.yamlsource import Positions, YamlDocument, parse_yaml, read_yaml_file
from classifier.taxonomy import ErrorClass

MAX_CASE_FILE_BYTES = 16 * 1024 * 1024


class WantDoc(Doc):
    """What a case expects; only `class` is required, the rest is checked when given."""

    model_config = ConfigDict(title="expected answer")

    class_: Annotated[
        ErrorClass,
        parsed_as(str, parse_class),
        Field(alias="class", json_schema_extra={"enum": list(ErrorClass.__members__)}),
    ]
    rule: str | None = None
    effect: Literal["fail", "pause", "continue", "unspecified"] | None = None
    action: str | None = None
    retryable: bool | None = None
    unknown_reason: Literal["no_match", "conflict"] | None = None


class CaseDoc(Doc):
    """One case as written."""

    model_config = ConfigDict(title="case")

    note: Annotated[str, Field(min_length=1)]
    descriptor: DescriptorDoc
    want: WantDoc
    todo: Annotated[str, Field(min_length=1)] | None = None


class CaseFileHeadDoc(Doc):
    """The file around the cases; the cases themselves are validated one by one."""

    rules: Annotated[str, Field(min_length=1)] | None = None
    """The ruleset folder the cases test, relative to this file (default: the nearest
    folder, this one or a parent, holding ruleset.yaml)."""
    cases: list[Any]


class CaseFileDoc(CaseFileHeadDoc):
    """Regression cases for a ruleset (`*.cases.yaml`).

    The whole file as one document, for its JSON Schema; the reader validates
    the head and then each case on its own, so one bad case does not hide the rest.
    """

    model_config = ConfigDict(title="case file (*.cases.yaml)")

    cases: list[CaseDoc]


@dataclass(frozen=True, slots=True)
class Want:
    """The expectation of a case, with the taxonomy types resolved."""

    error_class: ErrorClass
    rule: str | None = None
    effect: str | None = None
    action: str | None = None
    retryable: bool | None = None
    unknown_reason: str | None = None

    def fields(self) -> list[tuple[str, object]]:
        """The checked fields in a stable order, as (name, wanted value)."""
        out: list[tuple[str, object]] = [("class", self.error_class.name)]
        for name in ("rule", "effect", "action", "retryable", "unknown_reason"):
            value = getattr(self, name)
            if value is not None:
                out.append((name, value))
        return out


@dataclass(frozen=True, slots=True)
class Case:
    """A valid case, ready to run, and where it is written."""

    note: str
    descriptor: Descriptor
    want: Want
    location: Location
    todo: str | None = None


@dataclass(frozen=True, slots=True)
class BadCase:
    """A case that could not be read; it counts as an error, never as skipped."""

    name: str
    location: Location
    diagnostics: tuple[Diagnostic, ...]


@dataclass(frozen=True)
class CaseFile:
    """A case file: its cases, the ruleset it names, and file-level problems."""

    path: Path
    shown: str
    rules: Path | None
    cases: tuple[Case, ...]
    bad_cases: tuple[BadCase, ...]
    diagnostics: tuple[Diagnostic, ...]

    @property
    def entries(self) -> list[Case | BadCase]:
        """Cases and bad cases in file order."""
        return sorted([*self.cases, *self.bad_cases], key=lambda c: c.location)


def is_case_file(path: Path) -> bool:
    return path.name.endswith(CASES_SUFFIX)


def find_case_files(paths: Iterable[Path]) -> list[Path]:
    """Case files named or found (recursively, hidden folders skipped) under paths.

    A path that does not exist raises FileNotFoundError; a file given
    explicitly is read as a case file whatever its name.
    """
    found: dict[Path, None] = {}
    for path in paths:
        if path.is_file():
            found[path] = None
        elif path.is_dir():
            found.update(dict.fromkeys(files_under(path, is_case_file)))
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
    return list(found)


def files_under(folder: Path, accept: Callable[[Path], bool]) -> list[Path]:
    """The files under folder (recursively, in path order, hidden paths skipped) accept takes."""
    return [
        candidate
        for candidate in sorted(folder.rglob("*"))
        if accept(candidate)
        and candidate.is_file()
        and not any(part.startswith(".") for part in candidate.relative_to(folder).parts)
    ]


def nearest_ruleset(start: Path) -> Path | None:
    """The nearest folder, start itself first, then its parents, that holds ruleset.yaml."""
    for folder in (start, *start.parents):
        if (folder / MANIFEST).is_file():
            return folder
    return None


def read_case_file(path: Path) -> CaseFile:
    """Read and validate a case file; problems come back as located diagnostics."""
    shown = display_path(path)
    _, doc = read_yaml_file(path, shown, MAX_CASE_FILE_BYTES)
    return _case_file(path, shown, doc)


def parse_case_file(text: str, path: Path, shown: str) -> CaseFile:
    """A case file held in memory, read as `read_case_file` reads one on disk (`path` is what a
    `rules:` key is relative to)."""
    return _case_file(path, shown, parse_yaml(text, shown))


def _case_file(path: Path, shown: str, doc: YamlDocument) -> CaseFile:
    where = Location(shown)
    diagnostics = sorted_diagnostics(doc.diagnostics)
    if doc.value is None:
        if not diagnostics:
            diagnostics.append(
                Diagnostic(Code.empty_document, "expected a case file with a `cases:` list", where)
            )
        return CaseFile(path, shown, None, (), (), tuple(diagnostics))
    try:
        head = CaseFileHeadDoc.model_validate(doc.value)
    except ValidationError as exc:
        diagnostics.extend(pydantic_diagnostics(exc, doc.positions, doc.value, CaseFileHeadDoc))
        return CaseFile(path, shown, None, (), (), tuple(diagnostics))
    rules = (path.parent / head.rules) if head.rules is not None else None
    if rules is not None and not (rules / MANIFEST).is_file():
        diagnostics.append(
            Diagnostic(
                Code.ruleset_not_found,
                f"rules: {head.rules!r} is not a ruleset folder (no {MANIFEST} in {rules})",
                doc.positions.value(("rules",)),
            )
        )
    cases, bad = _cases(head.cases, doc.positions)
    return CaseFile(path, shown, rules, tuple(cases), tuple(bad), tuple(diagnostics))


def _cases(items: Sequence[Any], positions: Positions) -> tuple[list[Case], list[BadCase]]:
    cases: list[Case] = []
    bad: list[BadCase] = []
    notes: dict[str, Location] = {}
    for i, item in enumerate(items):
        path = ("cases", i)
        where = positions.value(path)
        note = item.get("note") if isinstance(item, dict) else None
        name = note if isinstance(note, str) and note else f"cases[{i}]"
        try:
            doc = CaseDoc.model_validate(item)
        except ValidationError as exc:
            found = pydantic_diagnostics(exc, _Shifted(positions, path), item, CaseDoc)
            bad.append(BadCase(name, where, tuple(found)))
            continue
        try:
            descriptor = doc.descriptor.to_descriptor()
        except DescriptorError as exc:
            at = positions.value((*path, "descriptor"))
            found = [Diagnostic(Code.invalid_descriptor, str(v), at) for v in exc.violations]
            bad.append(BadCase(name, where, tuple(found)))
            continue
        if doc.note in notes:
            first = notes[doc.note]
            bad.append(
                BadCase(
                    name,
                    where,
                    (
                        Diagnostic(
                            Code.duplicate_case_note,
                            f"note {doc.note!r} is already used at line {first.line}; "
                            "a note names its case, so each must be unique in a file",
                            positions.value((*path, "note")),
                            related=(first,),
                        ),
                    ),
                )
            )
            continue
        notes[doc.note] = where
        w = doc.want
        want = Want(
            error_class=w.class_,
            rule=w.rule,
            effect=w.effect,
            action=w.action,
            retryable=w.retryable,
            unknown_reason=w.unknown_reason,
        )
        cases.append(Case(doc.note, descriptor, want, where, doc.todo))
    return cases, bad


class _Shifted(Positions):
    """Positions of one case, addressed relative to the case (for pydantic's error paths)."""

    def __init__(self, inner: Positions, prefix: tuple[str | int, ...]) -> None:
        super().__init__(inner.file, inner.values, inner.keys)
        self.prefix = prefix

    def value(self, path: tuple[str | int, ...]) -> Location:
        return super().value((*self.prefix, *path))

    def key(self, path: tuple[str | int, ...]) -> Location:
        return super().key((*self.prefix, *path))
