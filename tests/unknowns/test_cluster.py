"""Clustering Unknowns: the structural split, templates, stable ids, trend, inputs and reports."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from classifier.cli import main
from classifier.unknowns.cluster import Clusterer, cluster_id
from classifier.unknowns.read import Record, read
from classifier.unknowns.structure import structural_key
from tests.golden_files import assert_golden
from tests.support import ROOT
from tests.unknowns.test_propose import write_log
from tests.unknowns.traffic import FAMILIES, Traffic

GOLDEN = ROOT / "tests" / "golden" / "unknowns"


def _record(data: dict[str, Any], ts: float | None = None, reason: str = "no_match") -> Record:
    return Record("x:1", ts, "1.0.0", data, "Unknown", reason)


def _clusters(records: list[Record]) -> list[Any]:
    return Clusterer().feed(records).result().clusters


def test_never_merged_across_runtimes_or_sdks() -> None:
    """The same type name and message in two languages, or under two supertype chains (two
    SDK versions), or from two providers, are four failures."""
    message = "The operation timed out after 30s"
    records = [
        _record({"type": "TimeoutError", "language": "python", "message": message}),
        _record({"type": "TimeoutError", "language": "node", "message": message}),
        _record(
            {
                "type": "TimeoutError",
                "language": "node",
                "supertypes": ["Error"],
                "message": message,
            }
        ),
        _record(
            {"type": "TimeoutError", "language": "node", "provider": "openai", "message": message}
        ),
    ]
    assert len(_clusters(records * 3)) == 4


def test_structure_first_then_the_template() -> None:
    def attr(msg: str) -> Record:
        return _record({"type": "AttributeError", "language": "python", "message": msg})

    clusters = _clusters(
        [attr(f"'NoneType' object has no attribute '{a}'") for a in ("content", "text", "get")]
        + [attr(f"module '{m}' has no attribute 'ChatCompletion'") for m in ("openai", "x")]
    )
    assert sorted((c.count, c.template) for c in clusters) == [
        (2, "module <QUOTED> has no attribute <QUOTED>"),
        (3, "<QUOTED> object has no attribute <QUOTED>"),
    ]


def test_free_text_tails_and_rewordings_stay_one_failure() -> None:
    """Drain keeps messages of different lengths apart; a shared head (`...output:`) or a
    long shared prefix joins them again, within one structural key only."""

    def rec(t: str, msg: str) -> Record:
        return _record({"type": t, "language": "python", "message": msg})

    clusters = _clusters(
        [
            rec("OutputParserException", "Invalid json output: I think it is 42"),
            rec("OutputParserException", "Invalid json output: Sure!"),
            rec(
                "OutputParserException",
                "Invalid json output: Here is the JSON you asked for, in full",
            ),
            rec("RecursionError", "maximum recursion depth exceeded while calling a Python object"),
            rec("RecursionError", "maximum recursion depth exceeded in comparison"),
            rec("ValueError", "Expecting value: line 1 column 1 (char 0)"),
            rec("ValueError", "Invalid format string"),
        ]
    )
    assert sorted((c.key.type, c.template) for c in clusters) == [
        ("OutputParserException", "Invalid json output: <*>"),
        ("RecursionError", "maximum recursion depth exceeded <*>"),
        ("ValueError", "Expecting value: line <NUM> column <NUM> (char <NUM>)"),
        ("ValueError", "Invalid format string"),
    ]


def test_ids_are_a_hash_of_the_key_and_the_template() -> None:
    data = {"type": "KeyError", "language": "python", "message": "'model'"}
    [c] = _clusters([_record(data)])
    assert c.id == cluster_id(structural_key(data, "no_match"), "<QUOTED>")
    [again] = _clusters([_record({**data, "message": "'temperature'"})] * 5)
    assert again.id == c.id  # another log, other values: the same failure, the same id
    [conflict] = _clusters([_record(data, reason="conflict")])
    assert conflict.id != c.id


def test_the_trend_over_the_log_span() -> None:
    t0 = dt.datetime(2026, 11, 29, tzinfo=dt.UTC).timestamp()
    hour = 3600.0

    def at(kind: str, hours: list[float]) -> list[Record]:
        return [_record({"type": kind, "message": "m"}, t0 + h * hour) for h in hours]

    clusters = (
        Clusterer()
        .feed(
            at("New", [7.5, 7.8])
            + at("Gone", [0.0, 0.5, 1.0])
            + at("Rising", [0.2, 4.1, 5.0, 5.5, 6.0, 7.0, 7.9])
            + at("Steady", [0.1, 2.0, 4.5, 6.5, 8.0])
        )
        .result()
    )
    labels = {c.key.type: (c.trend_label(), len(c.trend), sum(c.trend)) for c in clusters.clusters}
    assert labels == {
        "New": ("new", 8, 2),
        "Gone": ("gone", 8, 3),
        "Rising": ("rising", 8, 7),
        "Steady": ("steady", 8, 5),
    }


def test_a_live_sample_line_counts_as_often_as_it_was_seen(tmp_path: Path) -> None:
    line = {
        "ts": "2026-11-29T12:00:00.000Z",
        "ruleset_version": "1.0.0",
        "descriptor": {"type": "x.Y", "message": "boom"},
        "answer": {"class": "Unknown", "unknown_reason": "no_match"},
        "seen": 40,
    }
    path = tmp_path / "live.jsonl"
    path.write_text(json.dumps(line) + "\n")
    result = Clusterer().feed(read([str(path)], [])).result()
    assert (result.unknowns, result.clusters[0].count) == (40, 40)


def test_case_files_and_bare_descriptors_are_classified_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = GOLDEN / "rules"
    (tmp_path / "bare.jsonl").write_text(
        '{"type": "TimeoutError", "language": "python"}\n{"type": "x.Weird", "message": "n 1"}\n'
    )
    (tmp_path / "some.cases.yaml").write_text(
        "cases:\n  - note: weird\n    descriptor: {type: x.Weird, message: n 2}\n"
        "    want: {class: Unknown}\n"
    )
    assert main(["unknowns", "--rules", str(rules), "--format", "json", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["unknowns"], report["lines"]) == (2, 3)
    [c] = report["ranked"]
    assert (c["key"]["type"], c["count"], c["template"]) == ("x.Weird", 2, "n <NUM>")
    assert main(["unknowns", str(tmp_path)]) == 2
    assert "no answer recorded; classifying it needs --rules" in capsys.readouterr().err


def test_a_missing_path_and_a_bad_line_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["unknowns", str(tmp_path / "nope")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    assert main(["unknowns", str(tmp_path / "bad.jsonl")]) == 2
    assert "bad.jsonl:1: not JSON" in capsys.readouterr().err


@pytest.fixture
def golden_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A decision log of the families at fixed times, in a folder whose paths read the same
    everywhere (the report names them), with the golden rules beside it."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(GOLDEN / "rules", tmp_path / "rules")
    (tmp_path / "logs").mkdir()
    traffic = Traffic(seed=7)
    weights = {"celery-worker-lost": 9, "python-attribute-none": 6, "python-attribute-module": 4}
    items = [traffic.unknown(f).descriptor for f in FAMILIES for _ in range(weights.get(f.name, 2))]
    traffic.rng.shuffle(items)
    write_log(tmp_path / "logs" / "d.1.jsonl", tmp_path / "rules", items[:30], step_s=900)
    write_log(tmp_path / "logs" / "d.jsonl", tmp_path / "rules", items[30:], step_s=1200)
    return tmp_path / "logs"


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_golden_report(golden_log: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["unknowns", "--rules", "rules", "--format", fmt, "--top", "4", "logs"]
    assert main(args) == 0
    assert_golden(GOLDEN / f"report.{'txt' if fmt == 'text' else 'md'}", capsys.readouterr().out)


def test_golden_proposals(golden_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["unknowns", "--rules", "rules", "--propose", "--top", "4", "logs"]) == 0
    assert_golden(GOLDEN / "propose.txt", capsys.readouterr().out)


def test_now_reads_as_a_sentence_in_the_singular_and_the_plural(
    make_ruleset: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cluster the ruleset covers now: `now: covered by rule ...` (never `now: now
    covered`), `its one sampled member` for one, `all 3 sampled members` for three; partly
    covered in the plural."""
    from tests.unknowns.test_propose import write_log

    before = make_ruleset("rules: []\n", name="before")
    after = make_ruleset(
        """
        rules:
          - id: acme.queue-full
            when: {type: acme.QueueFull}
            class: QuotaExceeded
          - id: acme.late
            when: {type: acme.Late}
            class: Timeout
          - id: acme.slow-east
            when: {type: acme.SlowTool, message: 'region east'}
            class: ToolTimeout
        """,
        name="after",
    )
    log = write_log(
        tmp_path / "decisions.jsonl",
        before,
        [
            {"type": "acme.QueueFull", "origin": "tool", "message": "queue is full"},
            *({"type": "acme.Late", "message": f"late by {i} s"} for i in range(3)),
            *(
                {"type": "acme.SlowTool", "message": f"slow in region {r}"}
                for r in ("east", "west")
            ),
        ],
    )
    capsys.readouterr()
    assert main(["unknowns", "--rules", str(after), str(log)]) == 0
    now = [line.strip() for line in capsys.readouterr().out.splitlines() if "now:" in line]
    assert sorted(now) == [
        "now: covered by rule acme.late (Timeout) under test 1.0.0: all 3 sampled members",
        "now: covered by rule acme.queue-full (QuotaExceeded) under test 1.0.0: "
        "its one sampled member",
        "now: partly covered under test 1.0.0: 1 of 2 sampled members, by "
        "acme.slow-east (ToolTimeout, 1)",
    ]
    assert not any("now: now" in line for line in now)
