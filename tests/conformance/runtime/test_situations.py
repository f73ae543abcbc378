"""The runtime suite's mechanics: situations.yaml is checked, pairs are named and known
entries name listed pairs, and the verdicts mean what the report says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conformance.runtime.judge import RIGHT, UNKNOWN, WRONG_CLASS, WRONG_EFFECT, verdict
from tests.conformance.runtime.situations import (
    Situation,
    SituationError,
    Want,
    check_pairs,
    load_situations,
    parse_pair,
)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "situations.yaml"
    path.write_text(text)
    return path


def test_the_bundled_situations_load_and_cover_every_hard_distinction() -> None:
    situations = load_situations()
    wanted = {s.want.error_class for s in situations.values()}
    assert {"ContentFiltered", "ContentBlocked", "Canceled", "ToolTimeout", "Timeout"} <= wanted
    assert {s.want.effect for s in situations.values()} >= {"pause", "fail", "continue"}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "situations: [{id: a, what: x, want: {class: Timeout}}, {id: a, what: y, want: {class: Timeout}}]",
            "duplicate id 'a'",
        ),
        ("situations: [{id: a, what: x, want: {class: Slow}}]", "unknown class 'Slow'"),
        (
            "situations: [{id: a, what: x, want: {class: Timeout, effect: stop}}]",
            "unknown effect 'stop'",
        ),
        (
            "situations: [{id: a, what: x, want: {class: Timeout}, wanted: 1}]",
            "unknown keys ['wanted']",
        ),
        ("situations: [{id: A B, what: x, want: {class: Timeout}}]", "an id is lower-case words"),
        (
            "situations: [{id: a, what: x, want: {class: Timeout}, known: {'python.m::b': why}}]",
            "belongs to another situation",
        ),
        (
            "situations: [{id: a, what: x, want: {class: Timeout}, known: {'python.m::a': ''}}]",
            "needs a reason",
        ),
        (
            "situations: [{id: a, what: x, want: {class: Timeout}, known: {'python::a': why}}]",
            "<language>.<mechanism>::<situation-id>",
        ),
    ],
)
def test_a_malformed_file_is_refused_naming_the_situation(
    tmp_path: Path, text: str, words: str
) -> None:
    with pytest.raises(SituationError, match=re.escape(words)):
        load_situations(write(tmp_path, text))


def test_known_entries_must_name_a_listed_pair_of_a_language_that_ran(tmp_path: Path) -> None:
    situations = load_situations(
        write(
            tmp_path,
            "situations: [{id: a, what: x, want: {class: Timeout}, known: {'python.m::a': why}}]",
        )
    )
    with pytest.raises(
        SituationError, match=re.escape("known pair 'python.m::a' is listed by no driver")
    ):
        check_pairs(situations, ["python.other::a"], languages=["python"])
    check_pairs(situations, ["node.m::a"], languages=["node"])  # python did not run: not checked
    with pytest.raises(SituationError, match="no situation 'b'"):
        check_pairs(situations, ["python.m::b"], languages=["python"])


def test_a_pair_id_splits_into_language_mechanism_situation() -> None:
    pair = parse_pair("python.asyncio-wait-for::tool-timeout.wrapper-limit")
    assert (pair.language, pair.mechanism, pair.situation) == (
        "python",
        "asyncio-wait-for",
        "tool-timeout.wrapper-limit",
    )


@pytest.mark.parametrize(
    ("want", "got", "expected"),
    [
        (Want("ToolTimeout", "continue"), ("ToolTimeout", "continue"), RIGHT),
        (Want("ToolTimeout", "continue"), ("ToolError", "continue"), WRONG_CLASS),
        (Want("BudgetExceeded", "pause"), ("BudgetExceeded", "fail"), WRONG_EFFECT),
        (Want("ContentBlocked"), ("ContentBlocked", "fail"), RIGHT),
        (Want("Timeout", "fail"), ("Unknown", "unspecified"), UNKNOWN),
        (Want("Unknown"), ("Unknown", "unspecified"), RIGHT),
    ],
)
def test_verdicts(want: Want, got: tuple[str, str], expected: str) -> None:
    assert verdict(Situation("s", "x", want), got[0], got[1], "some.action") == expected
