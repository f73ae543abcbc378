"""The error tree in `classifier.errors`' docstring names every project error."""

from __future__ import annotations

import ast
import importlib
import re

import classifier.errors
from tests.support import ROOT

PACKAGE = ROOT / "classifier"
ROOT_ERROR = "ClassifierError"


def _bases() -> dict[str, set[str]]:
    """Each class defined in the package, by name, and the names of its bases."""
    out: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if "_proto" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                names = {b.id for b in node.bases if isinstance(b, ast.Name)}
                names |= {b.attr for b in node.bases if isinstance(b, ast.Attribute)}
                out.setdefault(node.name, set()).update(names)
    return out


def project_errors() -> set[str]:
    """Every class of the package that derives, at any depth, from ClassifierError."""
    bases = _bases()
    found: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, parents in bases.items():
            if name not in found and parents & (found | {ROOT_ERROR}):
                found.add(name)
                grew = True
    return found


def _tree_names() -> set[str]:
    doc = classifier.errors.__doc__ or ""
    return set(re.findall(r"^[\s│├└─]*([A-Z]\w*Error)\b", doc, re.MULTILINE))


def test_the_search_finds_the_known_errors() -> None:
    found = project_errors()
    assert {"RulesetError", "DescriptorError", "InputError", "SparkSetupError"} <= found
    assert ROOT_ERROR not in found


def test_the_docstring_tree_names_every_project_error() -> None:
    named = _tree_names()
    missing = project_errors() - named
    assert not missing, f"add to the error tree in classifier/errors.py: {sorted(missing)}"
    assert ROOT_ERROR in named


def test_the_docstring_tree_names_no_error_that_is_not_one() -> None:
    extra = _tree_names() - project_errors() - {ROOT_ERROR}
    assert not extra, f"not a ClassifierError in the package: {sorted(extra)}"


_ENTRY = re.compile(r"^(?P<indent>[\s│├└─]*)(?P<name>[A-Z]\w*Error)\b\s*(?:(?P<module>[a-z_.]+):)?")


def _tree() -> list[tuple[str, str, str]]:
    """(error, its parent in the tree, the module the tree says it lives in) per entry."""
    out: list[tuple[str, str, str]] = []
    open_parents: list[tuple[int, str]] = []
    for line in (classifier.errors.__doc__ or "").splitlines():
        m = _ENTRY.match(line)
        if m is None:
            continue
        depth = len(m["indent"])
        while open_parents and open_parents[-1][0] >= depth:
            open_parents.pop()
        parent = open_parents[-1][1] if open_parents else ""
        out.append((m["name"], parent, f"classifier.{m['module'] or 'errors'}"))
        open_parents.append((depth, m["name"]))
    return out


def test_each_error_sits_under_its_real_base_in_the_module_the_tree_names() -> None:
    """Imported, not read: the class is where the tree says, and derives from its parent."""
    entries = _tree()
    assert entries[0] == (ROOT_ERROR, "", "classifier.errors")
    classes = {}
    for name, parent, module in entries:
        cls = getattr(importlib.import_module(module), name, None)
        assert isinstance(cls, type), f"{module} has no class {name}"
        classes[name] = cls
        if parent:
            assert classes[parent] in cls.__bases__, f"{name} is not a direct {parent}"
    assert issubclass(classes["InputError"], classifier.errors.ClassifierError)
