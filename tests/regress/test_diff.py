"""`classifier diff` lists exactly the descriptors a rule change reclassifies."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from classifier import load_ruleset
from classifier.cli import main
from classifier.regress.corpus import read_corpus
from classifier.regress.diff import diff_rulesets
from classifier.regress.revision import RevisionError, resolve_spec

CORPUS = """\
cases:
  - note: a provider 429
    descriptor: {type: openai.RateLimitError, http_status: 429, origin: provider}
    want: {class: RateLimited}
  - note: a tool failed
    descriptor: {type: tools.Boom, origin: tool}
    want: {class: ToolError}
  - note: a provider 503
    descriptor: {type: x.ServerError, http_status: 503, origin: provider}
    want: {class: Unknown}
  - note: HttpClient timeout
    descriptor:
      type: System.Threading.Tasks.TaskCanceledException
      causes: [{type: System.TimeoutException}]
    want: {class: Timeout}
"""

JSON_LINES = [
    {"type": "openai.RateLimitError", "http_status": 429, "origin": "provider"},
    {"descriptor": {"type": "tools.Boom", "origin": "tool"}, "answer": {"class": "ToolError"}},
    {"descriptor": {"type": "tools.Boom", "origin": "tool"}, "ts": "2026-11-29T10:00:00Z"},
    {"type": "x.ServerError", "http_status": 503, "origin": "provider"},
    {"type": "teapot.Error", "http_status": 418, "origin": "provider"},
]


def _edit(head: Path) -> None:
    """The rule change under review: tool errors become ToolTimeout; a new 503 rule."""
    rules = head / "rules.yaml"
    text = rules.read_text().replace(
        "when: {origin: tool}\n    class: ToolError", "when: {origin: tool}\n    class: ToolTimeout"
    )
    text += "  - id: http.503\n    when: {origin: provider, http_status: 503}\n    class: ProviderError\n"
    rules.write_text(text)


@pytest.fixture
def pair(small: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    """Base and head rulesets (head edited) and a corpus folder with a case file and JSON Lines."""
    head = tmp_path / "head"
    shutil.copytree(small, head)
    _edit(head)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "replay.cases.yaml").write_text(CORPUS)
    (corpus / "log.jsonl").write_text(
        "\n".join(json.dumps(line) for line in JSON_LINES[:3])
        + "\n\n"
        + "\n".join(json.dumps(line) for line in JSON_LINES[3:])
        + "\n"
    )
    return small, head, corpus


def test_exactly_the_changed_descriptors_are_listed_from_case_files(
    pair: tuple[Path, Path, Path],
) -> None:
    base, head, corpus = pair
    result = diff_rulesets(
        load_ruleset(base),
        load_ruleset(head),
        read_corpus([str(corpus / "replay.cases.yaml")]).entries,
        base_label="base",
        head_label="head",
    )
    assert (result.total, result.distinct, result.changed) == (4, 4, 2)
    assert [(c.note, c.group, c.fields) for c in result.changes] == [
        ("a tool failed", ("ToolError", "ToolTimeout"), ("class", "action", "retryable")),
        (
            "a provider 503",
            ("Unknown", "ProviderError"),
            ("class", "effect", "action", "rule", "retryable", "unknown_reason"),
        ),
    ]


def test_exactly_the_changed_descriptors_are_listed_from_json_lines(
    pair: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Bare descriptors and {"descriptor": ...} objects; repeats are counted, blank lines skipped."""
    base, head, corpus = pair
    log = str(corpus / "log.jsonl")
    assert main(["diff", "--base", str(base), "--head", str(head), "--format", "json", log]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["total"], data["distinct"], data["changed"]) == (5, 4, 3)
    groups = [(g["from"], g["to"], g["count"]) for g in data["groups"]]
    assert groups == [("ToolError", "ToolTimeout", 2), ("Unknown", "ProviderError", 1)]
    tool, server = (g["changes"][0] for g in data["groups"])
    assert tool["where"].endswith("log.jsonl:2")
    assert tool["count"] == 2
    assert tool["descriptor"] == {"type": "tools.Boom", "origin": "tool"}
    assert (tool["base"]["class"], tool["head"]["class"]) == ("ToolError", "ToolTimeout")
    assert server["where"].endswith("log.jsonl:5")
    assert (server["base"]["rule"], server["head"]["rule"]) == ("", "http.503")


def test_text_output_groups_changes_by_old_and_new_class(
    pair: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base, head, corpus = pair
    assert main(["diff", "--base", str(base), "--head", str(head), str(corpus)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2] == "5 of 9 descriptors (2 of 5 distinct) change class, effect, action or rule"
    assert out[4] == "ToolError -> ToolTimeout: 3"
    assert out[5].endswith("corpus/log.jsonl:2: tools.Boom (x3)")
    assert out[6] == (
        "      class ToolError -> ToolTimeout; action tool.investigate -> tool.timeout-review; "
        "retryable false -> true"
    )
    assert out[8] == "Unknown -> ProviderError: 2"


def test_markdown_is_a_table_for_a_pull_request_comment(
    pair: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base, head, corpus = pair
    assert (
        main(
            ["diff", "--base", str(base), "--head", str(head), "--format", "markdown", str(corpus)]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "| old class | new class | descriptors |\n|---|---|---:|\n" in out
    assert "| ToolError | ToolTimeout | 3 |\n| Unknown | ProviderError | 2 |" in out
    assert "<details><summary>Unknown → ProviderError (2)</summary>" in out
    assert (
        "| `-` → `http.503` | `unspecified` → `fail` | `rules.add` → `provider.investigate` | 2 |"
        in out
    )


def test_the_version_gate_fails_until_the_version_is_bumped(
    pair: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base, head, corpus = pair
    args = ["diff", "--require-version-bump", "--base", str(base), "--head", str(head), str(corpus)]
    assert main(args) == 1
    assert (
        "5 descriptor(s) change but the ruleset version is still 1.0.0" in capsys.readouterr().err
    )
    manifest = head / "ruleset.yaml"
    manifest.write_text(manifest.read_text().replace("version: 1.0.0", "version: 1.1.0"))
    assert main(args) == 0
    capsys.readouterr()
    assert main([*args[:3], str(base), "--head", str(base), str(corpus)]) == 0
    assert "0 of 9 descriptors" in capsys.readouterr().out


def test_bad_corpus_lines_are_named_and_skipped_or_under_strict_fail_the_run(
    pair: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, head, _ = pair
    log = tmp_path / "bad.jsonl"
    log.write_text('{"type": "a.B"}\nnot json\n{"type": "a.B", "origin": "moon"}\n[1]\n')
    assert main(["diff", "--base", str(base), "--head", str(head), str(log)]) == 0
    out = capsys.readouterr()
    assert "of 1 descriptors" in out.out
    assert out.err.splitlines()[-1] == "classifier diff: 3 corpus lines skipped"
    assert main(["diff", "--strict", "--base", str(base), "--head", str(head), str(log)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].endswith("bad.jsonl:2: not JSON: Expecting value (column 1)")
    assert err[1].endswith(
        "bad.jsonl:3: descriptor.origin: unknown origin 'moon'; known: provider, tool, guard, runtime, interceptor, reconciler, user"
    )
    assert err[2].endswith("bad.jsonl:4: descriptor: must be a mapping")
    assert err[3] == "classifier diff: 3 corpus lines refused (--strict)"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert main(["diff", "--base", str(base), "--head", str(head), str(empty)]) == 2
    assert "the corpus is empty" in capsys.readouterr().err


def test_an_invalid_head_ruleset_is_reported(
    pair: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base, head, corpus = pair
    (head / "rules.yaml").write_text("rules:\n  - {id: a, when: {origin: moon}, class: Timeout}\n")
    assert main(["diff", "--base", str(base), "--head", str(head), str(corpus)]) == 2
    err = capsys.readouterr().err
    assert "head" in err
    assert "is invalid" in err
    assert "unknown_origin" in err


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def test_a_git_revision_names_the_base_ruleset(
    pair: tuple[Path, Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--base main` (the head folder's path at main) and `--base main:rules` both work."""
    base, _, corpus = pair
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    shutil.copytree(base, repo / "rules")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "rules")
    _edit(repo / "rules")
    monkeypatch.chdir(repo)
    for spec in ("main", "main:rules"):
        assert (
            main(["diff", "--base", spec, "--head", "rules", "--format", "json", str(corpus)]) == 0
        )
        data = json.loads(capsys.readouterr().out)
        assert data["base"]["spec"] == "main:rules"
        assert [(g["from"], g["to"], g["count"]) for g in data["groups"]] == [
            ("ToolError", "ToolTimeout", 3),
            ("Unknown", "ProviderError", 2),
        ]
    assert main(["diff", "--base", "rules", "--head", "main", "--format", "json", str(corpus)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["head"]["spec"], data["changed"]) == ("main:rules", 5), "a revision alone as head"
    assert main(["diff", "--base", "nope", "--head", "rules", str(corpus)]) == 2
    assert "'nope' is neither a folder nor a git tree" in capsys.readouterr().err
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RevisionError, match="not inside a git repository"):
        resolve_spec("main", corpus, tmp_path)


def test_json_lines_can_come_from_stdin(pair: tuple[Path, Path, Path]) -> None:
    """`-` reads a decision log piped into a real `classifier diff` process."""
    base, head, _ = pair
    run = subprocess.run(
        [sys.executable, "-m", "classifier", "diff", "--base", str(base), "--head", str(head), "-"],
        input="\n".join(json.dumps(line) for line in JSON_LINES) + "\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[2] == "3 of 5 descriptors (2 of 4 distinct) change class, effect, action or rule"
    assert lines[5] == "  <stdin>:2: tools.Boom (x2)"


def test_examples_limit_the_listing_not_the_counts(
    pair: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """--examples 0: every group by rule, with the rest counted; the headline unchanged."""
    base, head, corpus = pair
    assert (
        main(["diff", "--base", str(base), "--head", str(head), "--examples", "0", str(corpus)])
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out[2] == "5 of 9 descriptors (2 of 5 distinct) change class, effect, action or rule"
    assert out[4:7] == [
        "ToolError -> ToolTimeout: 3",
        "  by rule: tool.any: 3 (1 distinct)",
        "  ... and 1 more distinct (3 descriptors)",
    ]
    assert (
        main(
            [
                "diff",
                "--base",
                str(base),
                "--head",
                str(head),
                "--examples",
                "1",
                "--format",
                "json",
                str(corpus),
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["changed_distinct"] == 2
    assert [(g["distinct"], len(g["changes"])) for g in data["groups"]] == [(1, 1), (1, 1)]
    assert data["groups"][1]["by_rule"][0]["head_rule"] == "http.503"
