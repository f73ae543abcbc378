"""Read a ruleset folder into validated documents with positions.

This is the only module that reads rule files: the folder walk (the globs, the
limits checked before a byte is read, links followed once), the layers and their
bases, and each layer's digest over the bytes it read. It returns every problem it
finds (not just the first) as located diagnostics, in the order it met them
(RulesetError sorts them by file and line). pydantic's errors become diagnostics in
`validation`; how files are named in them is `display`'s.

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
import re
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from classifier.codes import Code
from classifier.errors import Diagnostic, RulesetError
from classifier.location import Location
from classifier.source.display import display_path, layer_name, shown_file
from classifier.source.display import shown_source as shown_source  # server/web/queries.py's
from classifier.source.documents import (
    ACTION_ID_PATTERN,
    DEFAULT_INCLUDE,
    BaseDoc,
    CatalogDoc,
    ManifestDoc,
    RuleDoc,
    RuleFileDoc,
)
from classifier.source.library import LIBRARY_NAME, bundled_library
from classifier.source.validation import validated
from classifier.source.yamlsource import Path_, Positions, YamlDocument, parse_yaml
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
class InvalidRule:
    """A rule that failed validation, and what later stages still check of it: the catalog
    is asked for its action, so an unknown action is reported in the same run as the
    rule's other problems, not in the next one."""

    rule_id: str
    action: str
    action_at: Location


@dataclass(frozen=True)
class LayerFiles:
    """One ruleset layer held in memory: its files' bytes, and the names it is shown by.

    The source stage reads a ruleset from these, never from a folder: a folder
    is read into one (`read_folder`), a Spark job ships them to its workers,
    and `unknowns --propose` compiles its drafts as one over the target
    without copying anything to disk.
    """

    name: str
    """What its files' locations start with: `library:default` for the bundled library, a
    folder as `display_path` shows it, or any label for a layer that is only in memory."""
    files: tuple[tuple[str, bytes], ...]
    """(path relative to the layer, with `/`, the file's bytes), in the order they were read."""
    source: str = ""
    """Where the layer is, whatever the working directory: a folder's absolute path (empty:
    the name)."""
    folder: str = ""
    """The resolved folder it was read from, for a watcher (empty: only in memory)."""
    problems: tuple[Diagnostic, ...] = ()
    """What reading the folder found: files too large or unreadable, too many or too large in
    all (their bytes are not here)."""
    unread: frozenset[str] = frozenset()
    """The manifest or catalog, when it is there but could not be read."""
    joins: bool = False
    """It adds to the layer below instead of stacking on it: its rules and actions count as
    that layer's, as if written into its folder (precedence, duplicate ids and lint are that
    layer's), and it has no manifest of its own. What `unknowns --propose` proves drafts in."""

    @property
    def where(self) -> str:
        return self.source or self.name

    def shown(self, rel: str) -> str:
        """How a location names one of the layer's files."""
        return shown_file(self.name, rel)


def layer_files(
    name: str, files: Mapping[str, bytes | str], *, source: str = "", joins: bool = False
) -> LayerFiles:
    """A layer from a mapping of relative path to contents (text is encoded as UTF-8)."""
    return LayerFiles(
        name,
        tuple(
            (rel, data.encode() if isinstance(data, str) else data) for rel, data in files.items()
        ),
        source=source,
        joins=joins,
    )


@dataclass(frozen=True)
class RulesetSource:
    """One layer, read and validated but not yet compiled."""

    layer: LayerFiles
    """The bytes it was read from: exactly what `digest` covers."""
    manifest: ManifestDoc | None
    manifest_positions: Positions
    catalog: CatalogDoc | None
    catalog_positions: Positions
    rules: tuple[RuleSource, ...]
    files: tuple[str, ...]
    """The rule files (manifest and catalog aside) the rules were read from, in ruleset order,
    relative to the layer."""
    digest: str
    diagnostics: tuple[Diagnostic, ...]
    invalid_rules: tuple[InvalidRule, ...] = ()
    """The rules that failed validation, each with the action it names."""
    catalog_read: bool = True
    """The layer has the catalog it needs (its own, or a base's it inherits): false when its
    actions.yaml is missing, unreadable or invalid, and so which actions exist is unknown."""

    @property
    def root(self) -> Path | None:
        """The folder the layer was read from (None: it is only in memory)."""
        return Path(self.layer.folder) if self.layer.folder else None


@dataclass(frozen=True)
class StackSource:
    """A ruleset and the rulesets it builds on, read: its layers, bottom (a base) first.

    The top layer is the ruleset asked for; each base comes before the
    rulesets built on it, and a base two layers share is read once.
    """

    layers: tuple[RulesetSource, ...]
    diagnostics: tuple[Diagnostic, ...]
    """Problems with the stack itself (a base that is not there, a cycle)."""

    @property
    def top(self) -> RulesetSource:
        """The ruleset asked for: the topmost layer of its own (one that `joins` adds to it)."""
        return next(layer for layer in reversed(self.layers) if not layer.layer.joins)

    def numbers(self) -> list[int]:
        """Each layer's number, bottom first, as rules carry it: 0 the ruleset asked for, 1 its
        base...: how many layers of their own are above it (one that `joins` is not)."""
        above = 0
        out: list[int] = []
        for layer in reversed(self.layers):
            out.append(above)
            above += not layer.layer.joins
        return out[::-1]

    @property
    def digest(self) -> str:
        """The ruleset's one digest: a ruleset of its own keeps its layer's, a stack's covers
        every layer's. A pin, a server and every answer row use this one."""
        if len(self.layers) == 1:
            return self.top.digest
        lines = "".join(f"{layer.digest}\n" for layer in self.layers)
        return "sha256:" + hashlib.sha256(lines.encode()).hexdigest()

    def files(self) -> tuple[LayerFiles, ...]:
        """The layers' bytes, bottom first: what `stack_of` reads the same stack back from."""
        return tuple(layer.layer for layer in self.layers)

    def over(self, layer: LayerFiles) -> StackSource:
        """This stack with one more layer on top (its manifest's `base:` is not followed)."""
        return StackSource((*self.layers, read_layer(layer)), self.diagnostics)


def stack_of(layers: Sequence[LayerFiles]) -> StackSource:
    """A stack read from layers held in memory, bottom first; the manifests' `base:` entries
    are not followed (the layers are the stack)."""
    if not layers:
        raise ValueError("a stack needs at least one layer")
    return StackSource(tuple(read_layer(layer) for layer in layers), ())


def load_stack(root: Path | str) -> StackSource:
    """Read a ruleset folder and, through each manifest's `base:`, every ruleset under it.

    Raises RulesetError only when root is not a folder; a missing or cyclic
    base is a diagnostic at the manifest entry that names it.
    """
    layers: list[RulesetSource] = []
    found: list[Diagnostic] = []
    _load_layer(Path(root), (), layers, found)
    return StackSource(tuple(layers), tuple(found))


def _load_layer(
    root: Path, above: tuple[Path, ...], layers: list[RulesetSource], found: list[Diagnostic]
) -> None:
    """Load root after its bases (depth first, each folder once), unless it is already loaded."""
    resolved = root.resolve()
    if any(layer.root == resolved for layer in layers):
        return
    source = load_source(root)
    manifest = source.manifest
    positions = source.manifest_positions
    for i, base in enumerate(manifest.base if manifest else ()):
        where = positions.value(("base", i))
        folder = _base_folder(resolved, base, where, found)
        if folder is None:
            continue
        if folder in (*above, resolved):
            chain = " -> ".join(display_path(p) for p in (*above, resolved, folder))
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
        _load_layer(folder, (*above, resolved), layers, found)
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


def _not_a_folder(root: Path) -> RulesetError:
    if not root.exists():
        why = f"the folder {display_path(root)} does not exist"
    else:
        why = f"{display_path(root)} is not a folder: give the folder that holds {MANIFEST}"
    return RulesetError([Diagnostic(Code.ruleset_not_found, why, Location(display_path(root)))])


def read_folder(root: Path | str) -> LayerFiles:
    """Read a ruleset folder's manifest, catalog and rule files into memory.

    The limits are checked before a byte is read (a file's size, the number of
    rule files, their bytes in all): what is past them is a problem, not
    read. Raises RulesetError only when root is not a folder.
    """
    root = Path(root)
    if not root.is_dir():
        raise _not_a_folder(root)
    folder = root.resolve()
    name = layer_name(root)
    problems: list[Diagnostic] = []
    files: dict[str, bytes] = {}
    unread: set[str] = set()

    def take(path: Path, rel: str) -> None:
        where = Location(shown_file(name, rel))
        try:
            size = path.stat().st_size
            if size > MAX_RULE_FILE_BYTES:
                message = f"{size} bytes exceed the limit of {MAX_RULE_FILE_BYTES} bytes"
                problems.append(Diagnostic(Code.file_too_large, message, where))
                unread.add(rel)
                return
            files[rel] = path.read_bytes()
        except OSError as exc:
            problems.append(Diagnostic(Code.unreadable_file, str(exc), where))
            unread.add(rel)

    for special in (MANIFEST, CATALOG):
        if (root / special).is_file():
            take(root / special, special)
    include, exclude = _globs(files.get(MANIFEST))
    paths = rule_files(root, include, exclude)
    past = _past_limits(len(paths), lambda: sum(_size(p) for p in paths), Location(name))
    if past:
        problems += past
        paths = []
    for path in paths:
        take(path, path.relative_to(root).as_posix())
    return LayerFiles(
        name,
        tuple(files.items()),
        source=str(folder),
        folder=str(folder),
        problems=tuple(problems),
        unread=frozenset(unread & {MANIFEST, CATALOG}),
    )


def _past_limits(count: int, total: Callable[[], int], where: Location) -> list[Diagnostic]:
    """Why a layer's rule files are not read at all: too many, or too many bytes in all
    (`total` is asked only when the count is within its limit)."""
    if count > MAX_RULE_FILES:
        message = f"{count} rule files exceed the limit of {MAX_RULE_FILES}"
        return [Diagnostic(Code.too_many_files, message, where)]
    size = total()
    if size > MAX_RULESET_BYTES:
        message = f"the rule files hold {size:,} bytes, past the limit of {MAX_RULESET_BYTES:,}"
        return [Diagnostic(Code.ruleset_too_large, message, where)]
    return []


def _globs(manifest: bytes | None) -> tuple[Sequence[str], Sequence[str]]:
    """The manifest's include and exclude globs (the defaults when it does not say or is
    invalid: the manifest's own problems are reported when the layer is read)."""
    if manifest is None:
        return DEFAULT_INCLUDE, ()
    try:
        doc = parse_yaml(manifest.decode("utf-8"), MANIFEST)
        parsed = ManifestDoc.model_validate(doc.value) if doc.value is not None else None
    except (UnicodeDecodeError, ValidationError):
        parsed = None
    if parsed is None:
        return DEFAULT_INCLUDE, ()
    return parsed.include, parsed.exclude


def load_source(root: Path | str) -> RulesetSource:
    """Read and validate a ruleset folder (`read_folder`, then `read_layer`).

    Raises RulesetError only when root is not a folder.
    """
    return read_layer(read_folder(root))


def read_layer(layer: LayerFiles) -> RulesetSource:
    """Read and validate one layer held in memory.

    Problems come back in `diagnostics` (with whatever could still be read),
    so the compiler can add its own and an author sees every problem in one
    run. The digest covers the manifest, the catalog and the rule files read,
    each by its relative path and bytes.
    """
    diagnostics: list[Diagnostic] = list(layer.problems)
    data = dict(layer.files)
    digest = hashlib.sha256()

    def read(rel: str) -> YamlDocument | None:
        shown = layer.shown(rel)
        raw = data[rel]
        if len(raw) > MAX_RULE_FILE_BYTES:
            message = f"{len(raw)} bytes exceed the limit of {MAX_RULE_FILE_BYTES} bytes"
            diagnostics.append(Diagnostic(Code.file_too_large, message, Location(shown)))
            return None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            diagnostics.append(Diagnostic(Code.unreadable_file, str(exc), Location(shown)))
            return None
        doc = parse_yaml(text, shown)
        diagnostics.extend(doc.diagnostics)
        digest.update(rel.encode() + b"\0" + raw + b"\0")
        return doc

    def required(rel: str, code: Code) -> YamlDocument | None:
        """A file every ruleset has; a missing one is reported with code."""
        if rel in layer.unread:
            return None
        if rel not in data:
            diagnostics.append(
                Diagnostic(code, f"the ruleset has no {rel}", Location(layer.shown(rel)))
            )
            return None
        return read(rel)

    manifest_doc = None if layer.joins else required(MANIFEST, Code.missing_manifest)
    manifest = validated(manifest_doc, ManifestDoc, diagnostics) if manifest_doc else None
    inherits = (layer.joins or (manifest is not None and manifest.base)) and CATALOG not in data
    # a layer without its own catalog inherits its base's
    catalog_doc = None if inherits else required(CATALOG, Code.missing_catalog)
    catalog = validated(catalog_doc, CatalogDoc, diagnostics) if catalog_doc else None

    include, exclude = (manifest.include, manifest.exclude) if manifest else (DEFAULT_INCLUDE, ())
    files = select_rule_files(data, include, exclude)
    past = _past_limits(
        len(files), lambda: sum(len(data[rel]) for rel in files), Location(layer.name)
    )
    if past:
        diagnostics += past
        files = []
    rules: list[RuleSource] = []
    invalid: list[InvalidRule] = []
    for rel in files:
        doc = read(rel)
        if doc is None or (doc.value is None and doc.diagnostics):
            continue
        parsed = validated(doc, RuleFileDoc, diagnostics)
        if parsed is not None:
            rules.extend(_rule_source(rule, doc, i) for i, rule in enumerate(parsed.rules))
        else:
            valid, rejected = _salvage_rules(doc)
            rules += valid
            invalid += rejected
    if len(rules) > MAX_RULESET_RULES:
        diagnostics.append(
            Diagnostic(
                Code.ruleset_too_large,
                f"{len(rules):,} rules exceed the limit of {MAX_RULESET_RULES:,}",
                Location(layer.name),
            )
        )
        rules = []
    return RulesetSource(
        layer=layer,
        manifest=manifest,
        manifest_positions=manifest_doc.positions
        if manifest_doc
        else Positions(layer.shown(MANIFEST)),
        catalog=catalog,
        catalog_positions=catalog_doc.positions if catalog_doc else Positions(layer.shown(CATALOG)),
        rules=tuple(rules),
        files=tuple(files),
        digest="sha256:" + digest.hexdigest(),
        diagnostics=tuple(diagnostics),
        invalid_rules=tuple(invalid),
        catalog_read=bool(inherits) or catalog is not None,
    )


def select_rule_files(
    paths: Iterable[str], include: Iterable[str], exclude: Iterable[str]
) -> list[str]:
    """The rule files among a layer's relative paths, as `rule_files` finds them in a folder:
    included, not excluded, not cases, not hidden, not the manifest or the catalog; sorted."""
    included = [tuple(p.split("/")) for p in include]
    excluded = [tuple(p.split("/")) for p in exclude]
    out = []
    for rel in paths:
        parts = tuple(PurePosixPath(rel).parts)
        if (
            rel not in (MANIFEST, CATALOG)
            and not any(part.startswith(".") for part in parts)
            and not parts[-1].endswith(CASES_SUFFIX)
            and any(glob_match(parts, p) for p in included)
            and not any(glob_match(parts, p) for p in excluded)
        ):
            out.append(rel)
    return sorted(out)


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


def _salvage_rules(doc: YamlDocument) -> tuple[list[RuleSource], list[InvalidRule]]:
    """When a rule file is invalid, still validate its rules one by one.

    The file-level error is already reported; this only lets later stages
    (duplicate ids, patterns) see the rules that are themselves valid, and the
    catalog be asked for an invalid rule's action, so an author gets every
    problem in one run.
    """
    value = doc.value
    if not isinstance(value, dict) or not isinstance(value.get("rules"), list):
        return [], []
    out = []
    invalid = []
    for i, item in enumerate(value["rules"]):
        try:
            rule = RuleDoc.model_validate(item)
        except ValidationError:
            if (bad := _invalid_rule(item, doc.positions, i)) is not None:
                invalid.append(bad)
            continue
        out.append(_rule_source(rule, doc, i))
    return out, invalid


def _invalid_rule(item: Any, positions: Positions, i: int) -> InvalidRule | None:
    """What of an invalid rule the compiler still checks: an action id that is well formed
    (one that is not was reported with the rule's other problems)."""
    if not isinstance(item, dict):
        return None
    action = item.get("action")
    if not isinstance(action, str) or not re.fullmatch(ACTION_ID_PATTERN, action):
        return None
    rule_id = item.get("id")
    return InvalidRule(
        rule_id if isinstance(rule_id, str) else "",
        action,
        positions.value(("rules", i, "action")),
    )


def _rule_source(rule: RuleDoc, doc: YamlDocument, i: int) -> RuleSource:
    path = ("rules", i)
    return RuleSource(rule, doc.value["rules"][i], doc.positions.value(path), doc.positions, path)
