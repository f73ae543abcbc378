"""Read a ruleset folder into validated documents with positions.

This is the only module that reads rule files. It returns every problem it
finds (not just the first) as located diagnostics, in the order it met them
(RulesetError sorts them by file and line).

A ruleset folder holds:

    ruleset.yaml    the manifest (name, version, description, changelog)
    actions.yaml    the action catalog and every class's defaults
    **/*.yaml       rule files (each a mapping with a `rules:` list),
                    except *.cases.yaml (regression cases) and hidden paths
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from classifier.codes import Code, parse_code
from classifier.errors import Diagnostic, RulesetError
from classifier.location import Location
from classifier.source import messages
from classifier.source.documents import (
    DEFAULT_INCLUDE,
    BaseDoc,
    CatalogDoc,
    ManifestDoc,
    RuleDoc,
    RuleFileDoc,
    doc_path,
)
from classifier.source.library import LIBRARY_NAME, bundled_library
from classifier.source.yamlsource import Path_, Positions, YamlDocument, read_yaml_file
from classifier.text import did_you_mean

MANIFEST = "ruleset.yaml"
CATALOG = "actions.yaml"
CASES_SUFFIX = ".cases.yaml"
MAX_RULE_FILE_BYTES = 4 * 1024 * 1024
MAX_RULE_FILES = 2000
MAX_RULESET_BYTES = 16 * 1024 * 1024
"""Bytes of one folder's files in all (manifest, catalog, rule files): past it, no rule of
the folder is read (`ruleset_too_large`), before any is parsed or compiled."""
MAX_RULESET_RULES = 10_000
"""Rules of one folder: compiling costs about 0.2 ms and 20 KB a rule (5,000 rules load in
under a second in about 100 MB), so this bounds a load's time and memory."""

DocT = TypeVar("DocT", bound=BaseModel)


@dataclass(frozen=True)
class RuleSource:
    """A rule as written, with where it and each of its fields sit."""

    doc: RuleDoc
    written: Mapping[str, Any]
    """The rule's YAML value as the author wrote it: what its canonical text echoes."""
    location: Location
    positions: Positions
    path: Path_

    def at(self, *field: str | int) -> Location:
        """The location of a field of this rule (`at("when", "message")`)."""
        return self.positions.value((*self.path, *field))


@dataclass(frozen=True)
class RulesetSource:
    """A ruleset folder, read and validated but not yet compiled."""

    root: Path
    manifest: ManifestDoc | None
    manifest_positions: Positions
    catalog: CatalogDoc | None
    catalog_positions: Positions
    rules: tuple[RuleSource, ...]
    files: tuple[Path, ...]
    """The rule files (manifest and catalog aside) the rules were read from, in ruleset order."""
    digest: str
    diagnostics: tuple[Diagnostic, ...]


@dataclass(frozen=True)
class StackSource:
    """A ruleset and the rulesets it builds on, read: its layers, bottom (a base) first.

    The top layer is the folder asked for; each base comes before the
    rulesets built on it, and a base two layers share is read once.
    """

    layers: tuple[RulesetSource, ...]
    diagnostics: tuple[Diagnostic, ...]
    """Problems with the stack itself (a base that is not there, a cycle)."""

    @property
    def top(self) -> RulesetSource:
        return self.layers[-1]


def load_stack(root: Path | str) -> StackSource:
    """Read a ruleset folder and, through each manifest's `base:`, every ruleset under it.

    Raises RulesetError only when root is not a folder; a missing or cyclic
    base is a diagnostic at the manifest entry that names it.
    """
    layers: list[RulesetSource] = []
    found: list[Diagnostic] = []
    _load_layer(Path(root).resolve(), (), layers, found)
    return StackSource(tuple(layers), tuple(found))


def _load_layer(
    root: Path, above: tuple[Path, ...], layers: list[RulesetSource], found: list[Diagnostic]
) -> None:
    """Load root after its bases (depth first, each folder once), unless it is already loaded."""
    if any(layer.root.resolve() == root for layer in layers):
        return
    source = load_source(root)
    manifest = source.manifest
    positions = source.manifest_positions
    for i, base in enumerate(manifest.base if manifest else ()):
        where = positions.value(("base", i))
        folder = _base_folder(root, base, where, found)
        if folder is None:
            continue
        if folder in (*above, root):
            chain = " -> ".join(display_path(p) for p in (*above, root, folder))
            found.append(
                Diagnostic(
                    Code.base_cycle,
                    f"the bases form a cycle ({chain}); a ruleset cannot build on itself",
                    where,
                )
            )
            continue
        if not folder.is_dir():
            found.append(
                Diagnostic(
                    Code.ruleset_not_found,
                    f"base {display_path(folder)} is not a ruleset folder",
                    where,
                )
            )
            continue
        _load_layer(folder, (*above, root), layers, found)
    layers.append(source)


def _base_folder(
    root: Path, base: BaseDoc, where: Location, found: list[Diagnostic]
) -> Path | None:
    if base.path is not None:
        return (root / base.path).resolve()
    if base.library == LIBRARY_NAME:
        return bundled_library().resolve()
    hint = did_you_mean(str(base.library), [LIBRARY_NAME])
    found.append(
        Diagnostic(
            Code.unknown_base,
            f"no library is called {base.library!r}{hint}; the package ships one, "
            f"{LIBRARY_NAME!r} (or name a folder with `path:`)",
            where,
        )
    )
    return None


def display_path(path: Path) -> str:
    """A path as diagnostics show it: relative to the working directory when possible."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def load_source(root: Path | str) -> RulesetSource:
    """Read and validate a ruleset folder.

    Problems come back in `diagnostics` (with whatever could still be read),
    so the compiler can add its own and an author sees every problem in one
    run. Raises RulesetError only when root is not a folder.
    """
    root = Path(root)
    diagnostics: list[Diagnostic] = []
    if not root.is_dir():
        raise RulesetError(
            [
                Diagnostic(
                    Code.ruleset_not_found, "not a ruleset folder", Location(display_path(root))
                )
            ]
        )
    digest = hashlib.sha256()

    def read(path: Path) -> YamlDocument | None:
        data, doc = read_yaml_file(path, display_path(path), MAX_RULE_FILE_BYTES)
        diagnostics.extend(doc.diagnostics)
        if data is None:
            return None
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + data + b"\0")
        return doc

    manifest_doc = _required(root / MANIFEST, read, diagnostics, Code.missing_manifest)
    manifest = _validate(manifest_doc, ManifestDoc, diagnostics) if manifest_doc else None
    if manifest is not None and manifest.base and not (root / CATALOG).is_file():
        catalog_doc = None  # a layer inherits its base's catalog
    else:
        catalog_doc = _required(root / CATALOG, read, diagnostics, Code.missing_catalog)
    catalog = _validate(catalog_doc, CatalogDoc, diagnostics) if catalog_doc else None

    if manifest is None:
        files = rule_files(root, DEFAULT_INCLUDE, ())
    else:
        files = rule_files(root, manifest.include, manifest.exclude)
    if len(files) > MAX_RULE_FILES:
        diagnostics.append(
            Diagnostic(
                Code.too_many_files,
                f"{len(files)} rule files exceed the limit of {MAX_RULE_FILES}",
                Location(display_path(root)),
            )
        )
        files = []
    total = sum(_size(p) for p in files)
    if total > MAX_RULESET_BYTES:
        diagnostics.append(
            Diagnostic(
                Code.ruleset_too_large,
                f"the rule files hold {total:,} bytes, past the limit of {MAX_RULESET_BYTES:,}",
                Location(display_path(root)),
            )
        )
        files = []
    rules: list[RuleSource] = []
    for path in files:
        doc = read(path)
        if doc is None or (doc.value is None and doc.diagnostics):
            continue
        parsed = _validate(doc, RuleFileDoc, diagnostics)
        if parsed is not None:
            rules.extend(_rule_source(rule, doc, i) for i, rule in enumerate(parsed.rules))
        else:
            rules.extend(_salvage_rules(doc, diagnostics))
    if len(rules) > MAX_RULESET_RULES:
        diagnostics.append(
            Diagnostic(
                Code.ruleset_too_large,
                f"{len(rules):,} rules exceed the limit of {MAX_RULESET_RULES:,}",
                Location(display_path(root)),
            )
        )
        rules = []
    return RulesetSource(
        root=root,
        manifest=manifest,
        manifest_positions=manifest_doc.positions
        if manifest_doc
        else Positions(display_path(root / MANIFEST)),
        catalog=catalog,
        catalog_positions=catalog_doc.positions
        if catalog_doc
        else Positions(display_path(root / CATALOG)),
        rules=tuple(rules),
        files=tuple(files),
        digest="sha256:" + digest.hexdigest(),
        diagnostics=tuple(diagnostics),
    )


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def unreadable_entries(root: Path) -> list[str]:
    """Entries of a rules folder that are skipped without being read: dangling links, link
    loops, FIFOs, sockets and devices (each as `path: why`), for the server to warn about."""
    found: list[str] = []
    visited: set[str] = set()
    for folder, dirs, files in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in visited:
            if Path(folder).is_symlink():
                found.append(f"{display_path(Path(folder))}: a link loop (a folder seen before)")
            dirs.clear()
            continue
        visited.add(real)
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in [*files, *dirs]:
            if name.startswith("."):
                continue
            path = Path(folder, name)
            try:
                st = path.stat()
            except OSError as exc:
                why = "a dangling link" if path.is_symlink() else exc.strerror or str(exc)
                found.append(f"{display_path(path)}: {why}")
                continue
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                found.append(f"{display_path(path)}: not a file (a FIFO, socket or device)")
        if len(found) > 100 or len(visited) > MAX_RULE_FILES:
            break
    return found


def rule_files(root: Path, include: Iterable[str], exclude: Iterable[str]) -> list[Path]:
    """Rule files under root in a stable order: included, not excluded, not cases, not hidden.

    Both glob lists are matched the same way (`glob_match`), against the whole
    path relative to root.

    Linked folders are followed (a Kubernetes ConfigMap volume links each
    subfolder into its hidden `..data` folder) but each real folder is
    visited once, so a link loop cannot make the walk endless.
    """
    included = [tuple(p.split("/")) for p in include]
    excluded = [tuple(p.split("/")) for p in exclude]
    found: list[Path] = []
    visited: set[str] = set()
    for folder, dirs, files in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in visited:
            dirs.clear()
            continue
        visited.add(real)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = Path(folder, name)
            rel = PurePosixPath(path.relative_to(root).as_posix())
            if (
                not name.startswith(".")
                and str(rel) not in (MANIFEST, CATALOG)
                and not name.endswith(CASES_SUFFIX)
                and any(glob_match(rel.parts, p) for p in included)
                and not any(glob_match(rel.parts, p) for p in excluded)
                and path.is_file()
            ):
                found.append(path)
        if len(found) > MAX_RULE_FILES:
            break
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def glob_match(parts: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    """Whether a relative path matches a glob split on `/`, where `**` spans any folders."""

    @functools.cache
    def match(i: int, j: int) -> bool:
        if j == len(pattern):
            return i == len(parts)
        if pattern[j] == "**":
            return match(i, j + 1) or (i < len(parts) and match(i + 1, j))
        return i < len(parts) and fnmatch.fnmatchcase(parts[i], pattern[j]) and match(i + 1, j + 1)

    return match(0, 0)


def _required(
    path: Path,
    read: Callable[[Path], YamlDocument | None],
    diagnostics: list[Diagnostic],
    code: Code,
) -> YamlDocument | None:
    """Read a file every ruleset has; a missing one is reported with code."""
    if not path.is_file():
        diagnostics.append(
            Diagnostic(code, f"the ruleset has no {path.name}", Location(display_path(path)))
        )
        return None
    return read(path)


def _validate(doc: YamlDocument, model: type[DocT], diagnostics: list[Diagnostic]) -> DocT | None:
    if doc.value is None and not doc.diagnostics:
        diagnostics.append(
            Diagnostic(
                Code.empty_document,
                f"expected a {messages.title(model)}, but the file holds no YAML document "
                "(only comments, or nothing)",
                doc.positions.value(()),
            )
        )
        return None
    if doc.value is None:
        return None
    try:
        return model.model_validate(doc.value)
    except ValidationError as exc:
        diagnostics.extend(pydantic_diagnostics(exc, doc.positions, doc.value, model))
        return None


def _salvage_rules(doc: YamlDocument, diagnostics: list[Diagnostic]) -> list[RuleSource]:
    """When a rule file is invalid, still validate its rules one by one.

    The file-level error is already reported; this only lets later stages
    (duplicate ids, patterns) see the rules that are themselves valid, so an
    author gets every problem in one run.
    """
    value = doc.value
    if not isinstance(value, dict) or not isinstance(value.get("rules"), list):
        return []
    out = []
    for i, item in enumerate(value["rules"]):
        try:
            rule = RuleDoc.model_validate(item)
        except ValidationError:
            continue
        out.append(_rule_source(rule, doc, i))
    return out


def _rule_source(rule: RuleDoc, doc: YamlDocument, i: int) -> RuleSource:
    path = ("rules", i)
    return RuleSource(rule, doc.value["rules"][i], doc.positions.value(path), doc.positions, path)


def pydantic_diagnostics(
    exc: ValidationError, positions: Positions, value: Any, model: type[BaseModel] | None = None
) -> list[Diagnostic]:
    """Turn pydantic's errors into located diagnostics with stable codes.

    The codes documents.py raises pass through; pydantic's own error types
    become `unknown_key`, `missing_key` or `invalid_value`, so the codes an
    author can see are the documented ones. Given the model that was
    validated, a wrong key comes with the valid ones and a missing key with
    what the mapping needs.
    """
    out = []
    for err in messages.merged(exc.errors(include_url=False)):
        loc = doc_path(err["loc"])
        code, message, where = _describe(err, loc, positions, value, model)
        out.append(Diagnostic(code, message, where, rule_id=_rule_id(value, loc)))
    return out


def _describe(
    err: Any, path: Path_, positions: Positions, value: Any, model: type[BaseModel] | None
) -> tuple[Code, str, Location]:
    kind = err["type"]
    field = ".".join(str(p) for p in path) or "document"
    if kind == "extra_forbidden":
        return Code.unknown_key, messages.unknown_key(path[-1], path, model), positions.key(path)
    if kind == "invalid_key":
        key = _written_key(value, path)
        message = messages.unknown_key(key, (*path[:-1], key), model)
        return Code.unknown_key, message, positions.key((*path[:-1], key))
    if kind == "missing":
        parent = path[:-1]
        return Code.missing_key, messages.missing_key(path, model), positions.value(parent)
    where = positions.value(path)
    if (code := parse_code(kind)) is not None:
        return code, str(err["msg"]), where
    return Code.invalid_value, messages.value_message(err, field), where


def _written_key(value: Any, path: Path_) -> Any:
    """The key as the document holds it (pydantic's error path spells some keys as text)."""
    mapping = value
    for part in path[:-1]:
        if isinstance(mapping, dict):
            mapping = mapping.get(part)
        elif isinstance(mapping, list) and isinstance(part, int) and part < len(mapping):
            mapping = mapping[part]
        else:
            return path[-1]
    if isinstance(mapping, dict):
        for key in mapping:
            if not isinstance(key, str) and path[-1] in (key, str(key), repr(key)):
                return key
    return path[-1]


def _rule_id(value: Any, path: Path_) -> str:
    if (
        len(path) >= 2
        and path[0] == "rules"
        and isinstance(path[1], int)
        and isinstance(value, dict)
    ):
        rules = value.get("rules")
        if isinstance(rules, list) and path[1] < len(rules) and isinstance(rules[path[1]], dict):
            rule_id = rules[path[1]].get("id")
            return rule_id if isinstance(rule_id, str) else ""
    return ""
