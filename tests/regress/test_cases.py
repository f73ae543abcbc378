"""Case files are read with positions; every problem is a located diagnostic."""

from __future__ import annotations

import textwrap
from pathlib import Path

from classifier.regress.cases import find_case_files, nearest_ruleset, read_case_file
from classifier.taxonomy import ErrorClass, Origin


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_cases_carry_their_note_descriptor_want_and_line(small: Path) -> None:
    """Each case keeps the line of its `- note:` item, for file:line in every report."""
    f = read_case_file(small / "rules.cases.yaml")
    assert not f.diagnostics
    assert not f.bad_cases
    assert [c.note for c in f.cases] == [
        "a provider 429 is RateLimited",
        "HttpClient timeout is a Timeout",
        "a teapot is not classified",
    ]
    first = f.cases[0]
    assert (first.location.line, first.location.column) == (2, 5)
    assert first.descriptor.origin is Origin.provider
    assert first.descriptor.http_status == 429
    assert first.want.fields() == [
        ("class", "RateLimited"),
        ("rule", "http.429"),
        ("effect", "fail"),
        ("action", "provider.backoff"),
        ("retryable", True),
    ]
    assert f.cases[2].want.error_class is ErrorClass.Unknown
    assert f.cases[1].location.line == 5


def test_a_bad_case_is_located_and_the_others_still_load(tmp_path: Path) -> None:
    """A wrong origin and an unknown class point at their own keys; the good case survives."""
    path = _write(
        tmp_path / "x.cases.yaml",
        """\
        cases:
          - note: good
            descriptor: {type: a.B}
            want: {class: Unknown}
          - note: bad
            descriptor:
              type: a.B
              origin: martian
            want: {class: Timeoutx, colour: red}
          - descriptor: {type: a.B}
            want: {class: Timeout}
        """,
    )
    f = read_case_file(path)
    assert [c.note for c in f.cases] == ["good"]
    assert [b.name for b in f.bad_cases] == ["bad", "cases[2]"]
    rendered = sorted(d.render() for d in f.bad_cases[0].diagnostics)
    shown = f.shown
    assert rendered == [
        f"{shown}:8:15: unknown_origin: unknown origin 'martian'; known: provider, tool, guard, runtime, interceptor, reconciler, user",
        f"{shown}:9:19: unknown_class: unknown class 'Timeoutx' (did you mean 'Timeout'?); known: Unknown, ProviderError, ProviderUnavailable, RateLimited, QuotaExceeded, ContentFiltered, ToolError, Timeout, CompilationFailed, BudgetExceeded, Canceled, ContentBlocked, Infrastructure, ToolTimeout",
        f"{shown}:9:29: unknown_key: unknown key 'colour' at want; valid keys there: class, rule, effect, action, retryable, unknown_reason",
    ]
    (missing,) = f.bad_cases[1].diagnostics
    assert missing.render() == (
        f"{shown}:10:5: missing_key: missing required key 'note' (a case needs note, descriptor and want)"
    )


def test_a_descriptor_out_of_range_is_an_invalid_descriptor(tmp_path: Path) -> None:
    """Values the descriptor builder refuses are reported at the case's descriptor."""
    path = _write(
        tmp_path / "x.cases.yaml",
        """\
        cases:
          - note: status out of range
            descriptor: {type: a.B, http_status: 999}
            want: {class: Unknown}
        """,
    )
    (bad,) = read_case_file(path).bad_cases
    (d,) = bad.diagnostics
    assert (d.code, d.location.line, d.location.column) == ("invalid_descriptor", 3, 17)
    assert "descriptor.http_status" in d.message


def test_notes_must_be_unique_in_a_file(tmp_path: Path) -> None:
    """A note names its case (in pytest too), so a repeated note is an error."""
    path = _write(
        tmp_path / "x.cases.yaml",
        """\
        cases:
          - note: same
            descriptor: {type: a.B}
            want: {class: Unknown}
          - note: same
            descriptor: {type: a.C}
            want: {class: Unknown}
        """,
    )
    f = read_case_file(path)
    assert len(f.cases) == 1
    (d,) = f.bad_cases[0].diagnostics
    assert d.code == "duplicate_case_note"
    assert d.location.line == 5
    assert d.related[0].line == 2


def test_file_level_problems_are_diagnostics(tmp_path: Path) -> None:
    """YAML errors, a missing `cases:` list, unknown keys and a bad `rules:` path are located."""
    syntax = read_case_file(_write(tmp_path / "a.cases.yaml", "cases: [\n"))
    assert [d.code for d in syntax.diagnostics] == ["yaml_syntax_error"]
    empty = read_case_file(_write(tmp_path / "b.cases.yaml", ""))
    assert [d.code for d in empty.diagnostics] == ["empty_document"]
    shape = read_case_file(_write(tmp_path / "c.cases.yaml", "case: []\n"))
    assert sorted(d.code for d in shape.diagnostics) == ["missing_key", "unknown_key"]
    rules = read_case_file(_write(tmp_path / "d.cases.yaml", "rules: ../nowhere\ncases: []\n"))
    (d,) = rules.diagnostics
    assert (d.code, d.location.line, d.location.column) == ("ruleset_not_found", 1, 8)


def test_the_rules_key_names_a_folder_relative_to_the_file(small: Path, tmp_path: Path) -> None:
    path = _write(tmp_path / "elsewhere" / "x.cases.yaml", f"rules: ../{small.name}\ncases: []\n")
    f = read_case_file(path)
    assert not f.diagnostics
    assert f.rules is not None
    assert f.rules.resolve() == small.resolve()


def test_the_nearest_ruleset_folder_is_found_upwards(small: Path) -> None:
    deep = small / "a" / "b"
    deep.mkdir(parents=True)
    assert nearest_ruleset(deep) == small
    assert nearest_ruleset(small) == small
    assert nearest_ruleset(small.parent) is None


def test_case_files_are_found_recursively_skipping_hidden_folders(tmp_path: Path) -> None:
    a = _write(tmp_path / "r" / "a.cases.yaml", "cases: []\n")
    b = _write(tmp_path / "r" / "sub" / "b.cases.yaml", "cases: []\n")
    _write(tmp_path / "r" / ".git" / "c.cases.yaml", "cases: []\n")
    _write(tmp_path / "r" / "rules.yaml", "rules: []\n")
    explicit = _write(tmp_path / "named.yaml", "cases: []\n")
    assert find_case_files([tmp_path / "r", explicit]) == [a, b, explicit]
