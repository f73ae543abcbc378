"""`classifier reclassify` on one machine: files in, answer columns out, replays as `classifier diff`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from classifier import Ruleset, load_ruleset
from classifier.batch.arrow import ANSWER_COLUMNS, classify_batch
from classifier.batch.pin import RulesetPin, RulesetPinError, load_pinned, pin_ruleset
from classifier.cli import main
from tests.batch.tables import answers, engine_answers, struct_table
from tests.batch.test_arrow import public_descriptors
from tests.regress.test_diff import JSON_LINES, _edit
from tests.support import BUNDLED_RULES


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """A Parquet table of every public descriptor, three times, in several row groups."""
    ds = public_descriptors() * 3
    table = struct_table(ds, run_id=list(range(len(ds))))
    path = tmp_path / "runs.parquet"
    pq.write_table(table, path, row_group_size=500)
    return path


@pytest.mark.parametrize("workers", [1, 2])
def test_reclassify_writes_every_row_with_the_engines_answers(
    runs: Path, tmp_path: Path, bundled: Ruleset, workers: int, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.parquet"
    args = ["reclassify", "--rules", str(BUNDLED_RULES), str(runs), "-o", str(out)]
    assert main([*args, "--workers", str(workers), "--batch-rows", "700"]) == 0
    assert f"({bundled.digest})" in capsys.readouterr().err
    got = pq.read_table(out)
    source = pq.read_table(runs)
    assert got.column_names == [*source.column_names, *ANSWER_COLUMNS]
    assert got.column("run_id").to_pylist() == list(range(source.num_rows))
    ds = public_descriptors() * 3
    assert answers(got) == engine_answers(bundled, ds)


def test_json_lines_in_and_out_with_bad_lines_reported(
    tmp_path: Path, bundled: Ruleset, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(
        "\n".join(json.dumps(line) for line in JSON_LINES) + "\n\nnot json\n"
        '{"type": "a.B", "origin": "moon"}\n'
    )
    out = tmp_path / "out.jsonl"
    assert main(["reclassify", "--rules", str(BUNDLED_RULES), str(log), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "log.jsonl:7: descriptor: not JSON: Expecting value (column 1)" in err
    assert "log.jsonl:8: descriptor.origin: unknown origin 'moon'" in err
    assert "2 bad rows: written with the error column, not classified" in err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["line"] for r in rows] == [1, 2, 3, 4, 5, 7, 8]
    assert rows[1]["class_name"] == "ToolError"
    assert rows[5]["error"].startswith("descriptor: not JSON")
    assert rows[5]["class_name"] is None
    assert all(r["ruleset_digest"] == bundled.digest for r in rows)


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_the_descriptor_column_holds_each_lines_text_without_its_ending(
    tmp_path: Path, ending: str
) -> None:
    """Out as JSON Lines and as Parquet, each row's `descriptor` is its line as written,
    the line ending (LF or CRLF) trimmed; a last line without one is whole too."""
    written = [json.dumps(line) for line in JSON_LINES]
    written[1] = "  " + written[1] + " "  # spaces inside the line are the line's
    log = tmp_path / "log.jsonl"
    log.write_bytes((ending.join(written) + ending + written[0]).encode())
    for out in (tmp_path / "out.jsonl", tmp_path / "out.parquet"):
        assert main(["reclassify", "--rules", str(BUNDLED_RULES), str(log), "-o", str(out)]) == 0
        if out.suffix == ".jsonl":
            rows = [json.loads(line) for line in out.read_text().splitlines()]
        else:
            rows = pq.read_table(out).to_pylist()
        assert [r["descriptor"] for r in rows] == [*written, written[0]], out.name
        assert all(r["error"] is None for r in rows)


def test_a_second_backfill_can_be_pinned_to_the_first_ones_digest(
    runs: Path, tmp_path: Path, small: Path, bundled: Ruleset, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "again.parquet"
    args = ["reclassify", "--rules", str(small), str(runs), "-o", str(out)]
    assert main([*args, "--digest", bundled.digest, "--workers", "1"]) == 2
    assert f"not the {bundled.digest} asked for" in capsys.readouterr().err
    assert not out.exists()


@pytest.fixture
def pair(small: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    """Base and head rulesets (as classifier diff's tests edit them) and a decision log."""
    head = tmp_path / "head"
    shutil.copytree(small, head)
    _edit(head)
    log = tmp_path / "log.jsonl"
    lines = [*JSON_LINES, *JSON_LINES[::-1]] * 20
    log.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return small, head, log


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_a_replay_prints_what_classifier_diff_prints(
    pair: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """The same rows as JSON Lines and as a Parquet table: the same report, line for line."""
    base, head, log = pair
    sides = ["--base", str(base), "--head", str(head), "--format", fmt]
    assert main(["diff", *sides, str(log)]) == 0
    want = capsys.readouterr().out
    workers = "2" if fmt == "text" else "1"  # a pool once: spawning one costs seconds
    assert main(["reclassify", *sides, "--examples", "1000", "--workers", workers, str(log)]) == 0
    assert capsys.readouterr().out == want
    # The same rows in Parquet, named by a column as the log names them.
    texts = [line for line in log.read_text().splitlines() if line.strip()]
    shown = main(["diff", "--base", str(base), "--head", str(head), "--format", "json", str(log)])
    assert shown == 0
    wheres = [
        f"{c['where']}" for g in json.loads(capsys.readouterr().out)["groups"] for c in g["changes"]
    ]
    prefix = wheres[0].rsplit(":", 1)[0]
    table = pa.table(
        {"source": [f"{prefix}:{i}" for i in range(1, len(texts) + 1)], "descriptor": texts}
    )
    parquet = tmp_path / "log.parquet"
    pq.write_table(table, parquet, row_group_size=37)
    args = ["reclassify", *sides, "--examples", "1000", "--where", "source", str(parquet)]
    assert main([*args, "--batch-rows", "50", "--workers", "1"]) == 0
    assert capsys.readouterr().out == want


def test_a_replay_lists_a_few_examples_and_counts_every_change(
    pair: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base, head, log = pair
    args = ["reclassify", "--base", str(base), "--head", str(head), "--workers", "1"]
    assert main([*args, "--examples", "0", str(log)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2] == "120 of 200 descriptors (2 of 4 distinct) change class, effect, action or rule"
    assert out[4:7] == [
        "ToolError -> ToolTimeout: 80",
        "  by rule: tool.any: 80 (1 distinct)",
        "  ... and 1 more distinct (80 descriptors)",
    ]
    assert out[8:11] == [
        "Unknown -> ProviderError: 40",
        "  by rule: - -> http.503: 40 (1 distinct)",
        "  ... and 1 more distinct (40 descriptors)",
    ]


def test_bad_rows_fail_a_replay_as_they_fail_classifier_diff(
    pair: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, head, _ = pair
    log = tmp_path / "bad.jsonl"
    log.write_text('{"type": "a.B"}\nnot json\n')
    assert main(["reclassify", "--base", str(base), "--head", str(head), str(log)]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:2: descriptor: not JSON" in err
    assert "1 bad rows" in err


def test_a_shipped_pin_needs_no_folder_and_a_changed_folder_fails_the_load(
    small: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(small, copy)
    shipped, ruleset = pin_ruleset(copy)
    by_path, _ = pin_ruleset(copy, ship=False)
    shutil.rmtree(copy)
    fresh = RulesetPin(shipped.digest, shipped.folder, shipped.layers, "fresh")  # not cached
    assert load_pinned(fresh).digest == ruleset.digest
    shutil.copytree(small, copy)
    (copy / "rules.yaml").write_text((copy / "rules.yaml").read_text() + "\n# edited\n")
    moved = RulesetPin(by_path.digest, by_path.folder, label="moved")
    with pytest.raises(RulesetPinError, match=f"is pinned to {by_path.digest}"):
        load_pinned(moved)
    assert load_ruleset(copy).digest != ruleset.digest
    assert classify_batch(struct_table([]), load_pinned(fresh)).num_rows == 0
