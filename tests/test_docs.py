"""docs/rules.md: every diagnostic code is documented, and each bad example and fix is true;
the README's layout tables name every folder, package and top-level module, and nothing else."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from classifier import RulesetError, load_ruleset
from classifier.codes import LINT_CODES, REGISTRY
from classifier.lint.checks import lint
from tests.catalog import CATALOG
from tests.support import ROOT, committable_files

DOC = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
PROSE_ONLY = {
    "yaml_too_deep": "an example would be 65 levels deep",
    "pattern_too_long": "an example would be 2,049 characters long",
    "missing_manifest": "about the folder, not a file",
    "missing_catalog": "about the folder, not a file",
    "ruleset_not_found": "about the folder, not a file",
    "file_too_large": "a limit",
    "too_many_files": "a limit",
    "ruleset_too_large": "a limit",
    "unreadable_file": "a limit",
}
_BLOCK = re.compile(r"```yaml\n(# (bad|fix)(?:: (\S+))?( \(added to the catalog\))?\n.*?)```", re.S)


def _documented_here() -> set[str]:
    """The registry's codes whose documentation is a section of this page."""
    return {code.value for code, info in REGISTRY.items() if info.anchor.startswith("rules.md#")}


_FENCED = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
_QUOTED = re.compile(r"^[\w./-]+\.yaml:\d+:\d+: (?:warning: )?[a-z_]+: .*$", re.M)
"""A diagnostic line as `classifier check` prints it, quoted in a plain block."""


@dataclass
class Section:
    code: str
    text: str
    examples: dict[str, list[tuple[str, bool, str]]] = field(default_factory=dict)

    @property
    def quoted(self) -> list[str]:
        """The diagnostic lines the section quotes (`…` stands for text left out)."""
        plain = [body for lang, body in _FENCED.findall(self.text) if not lang]
        return [line for block in plain for line in _QUOTED.findall(block)]


def _sections() -> dict[str, Section]:
    out = {}
    parts = re.split(r"^#### ", DOC.split("\n## Diagnostics\n", 1)[1], flags=re.M)
    for part in parts[1:]:
        heading, _, body = part.partition("\n")
        for code in re.findall(r"`([a-z_]+)`", heading):
            section = Section(code, body)
            for block, kind, file, merge in _BLOCK.findall(body):
                section.examples.setdefault(kind, []).append(
                    (file or "rules.yaml", bool(merge), block)
                )
            out[code] = section
    return out


SECTIONS = _sections()
TESTED = sorted(code for code, s in SECTIONS.items() if code not in PROSE_ONLY)


def test_every_diagnostic_code_has_a_section() -> None:
    assert sorted(SECTIONS) == sorted(_documented_here())


def test_prose_only_sections_are_the_untestable_ones() -> None:
    assert {code for code, s in SECTIONS.items() if "bad" not in s.examples} == set(PROSE_ONLY)


def _catalog() -> dict[str, Any]:
    """The fixed test catalog: every class's default and no other action."""
    catalog: dict[str, Any] = yaml.safe_load(CATALOG.read_text())
    return catalog


def _codes(examples: list[tuple[str, bool, str]]) -> tuple[set[str], bool]:
    """The codes an example ruleset gets, and whether they are errors."""
    diagnostics, is_error = _diagnostics(examples)
    return set(diagnostics), is_error


def _diagnostics(examples: list[tuple[str, bool, str]]) -> tuple[dict[str, list[str]], bool]:
    """The diagnostics an example ruleset gets, by code, each rendered as `classifier check`
    prints it (paths relative to the ruleset), and whether they are errors."""
    files: dict[str, str] = {"ruleset.yaml": "name: docs\nversion: '1'\n"}
    catalog = _catalog()
    for name, merge, text in examples:
        if merge:
            added = yaml.safe_load(text)
            catalog["actions"] += added.get("actions", [])
            catalog["classes"].update(added.get("classes", {}))
        else:
            files[name] = text
    files.setdefault("actions.yaml", yaml.safe_dump(catalog, sort_keys=False))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, text in files.items():
            (root / name).write_text(text, encoding="utf-8")
        try:
            found, is_error = lint(load_ruleset(root)), False
        except RulesetError as exc:
            found, is_error = exc.diagnostics, True
        out: dict[str, list[str]] = {}
        for d in found:
            out.setdefault(d.code, []).append(d.render().replace(f"{root}/", ""))
        return out, is_error


@pytest.mark.parametrize("code", TESTED)
def test_the_bad_example_gets_its_code_and_the_fix_does_not(code: str) -> None:
    section = SECTIONS[code]
    bad, bad_is_error = _codes(section.examples["bad"])
    assert code in bad, f"{code}: the bad example gets {sorted(bad)}"
    assert bad_is_error == (code not in LINT_CODES)
    if "fix" not in section.examples:
        assert "The fix" in section.text, f"{code}: no fix example and no fix described"
        return
    fixed, fixed_is_error = _codes(section.examples["fix"])
    assert code not in fixed
    assert not fixed_is_error, f"{code}: the fix still has errors: {sorted(fixed)}"


QUOTING = sorted(code for code, s in SECTIONS.items() if s.quoted)


def test_the_sections_quote_messages() -> None:
    """The errors whose wording says how to fix them are quoted, so the quotes stay true."""
    assert {"unknown_key", "unknown_class", "invalid_pattern", "yaml_syntax_error"} <= set(QUOTING)


@pytest.mark.parametrize("code", QUOTING)
def test_every_quoted_message_is_what_the_bad_example_gets(code: str) -> None:
    """Each diagnostic line a section quotes is printed, word for word, for its bad example
    (`…` in a quote stands for any text)."""
    got, _ = _diagnostics(SECTIONS[code].examples["bad"])
    printed = [line for rendered in got.values() for d in rendered for line in d.splitlines()]
    for quote in SECTIONS[code].quoted:
        pattern = ".*".join(re.escape(part) for part in quote.split("…"))
        assert any(re.fullmatch(pattern, line) for line in printed), (quote, printed)


# the README's layout tables ----------------------------------------------------------------

README = (ROOT / "README.md").read_text(encoding="utf-8")
PACKAGE = ROOT / "classifier"
_NAME = re.compile(r"`([^`]+?)/?`")


def _first_column(header: str) -> set[str]:
    """The names in backticks in the first cell of each row of the table under `header`
    (a trailing `/` dropped)."""
    lines = README.split(f"\n{header}\n", 1)[1].split("\n")
    assert lines[0].startswith("|---"), f"no table under {header!r}"
    end = next(i for i, line in enumerate(lines) if not line.startswith("|"))
    rows = lines[1:end]
    return {name for row in rows for name in _NAME.findall(row.split("|")[1])}


def _entries(files: set[str], under: str = "") -> tuple[set[str], set[str]]:
    """The folders and the files directly in `under` (a path ending in `/`, or the root)."""
    inside = [f.removeprefix(under) for f in files if f.startswith(under)]
    return {f.split("/")[0] for f in inside if "/" in f}, {f for f in inside if "/" not in f}


def test_the_folder_table_names_every_folder_of_the_repository() -> None:
    folders, _ = _entries(set(committable_files()))
    present = {f for f in folders if not f.startswith(".")}
    named = _first_column("| folder | what |")
    assert not present - named, f"add to the README's folder table: {sorted(present - named)}"
    assert not named - present, f"not a folder of the repository: {sorted(named - present)}"


def test_the_layout_table_names_every_package_and_module_of_classifier() -> None:
    """Every package and top-level module in a row's first cell; a row may also name a
    package inside one (`server/rpc/`)."""
    packages, files = _entries(set(committable_files()), "classifier/")
    present = packages | {f.removesuffix(".py") for f in files if f.endswith(".py")}
    named = _first_column("| where | what | may import |")
    assert not present - named, f"add to the README's layout table: {sorted(present - named)}"
    stale = {n for n in named - present if not PACKAGE.joinpath(n).is_dir()}
    assert not stale, f"not in classifier/: {sorted(stale)}"
