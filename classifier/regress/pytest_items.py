"""pytest collectors for case files: the same runner and the same failure text as the CLI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from classifier.engine.ruleset import Ruleset
from classifier.regress.cases import BadCase, Case, read_case_file
from classifier.regress.report import result_text
from classifier.regress.runner import (
    CaseResult,
    Problem,
    RulesetCache,
    Status,
    bad_case_result,
    check_case,
    resolve,
)

_CACHE = pytest.StashKey[RulesetCache]()


class CaseFileError(Exception):
    """A case file, or the ruleset it tests, could not be used."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.render())
        self.problem = problem


class CaseFailedError(Exception):
    """A case did not get the answer it wants (or a todo case passes now)."""

    def __init__(self, result: CaseResult) -> None:
        super().__init__(result_text(result))
        self.result = result


def _cache(config: pytest.Config) -> RulesetCache:
    if _CACHE not in config.stash:
        config.stash[_CACHE] = RulesetCache()
    return config.stash[_CACHE]


class CaseFileCollector(pytest.File):
    """A `*.cases.yaml` file: one item per case."""

    def collect(self) -> Iterator[pytest.Item]:
        case_file = read_case_file(self.path)
        rules = self.config.getoption("classifier_rules", None)
        target = resolve(case_file, Path(rules) if rules else None, _cache(self.config))
        if isinstance(target, Problem):
            raise CaseFileError(target)
        for entry in case_file.entries:
            if isinstance(entry, BadCase):
                yield BadCaseItem.from_parent(self, name=entry.name, bad=entry)
            else:
                yield CaseItem.from_parent(self, name=entry.note, case=entry, ruleset=target)

    def repr_failure(  # type: ignore[override]
        self, excinfo: pytest.ExceptionInfo[BaseException]
    ) -> str | Any:
        if isinstance(excinfo.value, CaseFileError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class _CaseItemBase(pytest.Item):
    line = 1

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | Any:
        if isinstance(excinfo.value, CaseFailedError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.line - 1, f"case: {self.name}"


class CaseItem(_CaseItemBase):
    """One case, judged by the runner the CLI uses."""

    def __init__(self, *, case: Case, ruleset: Ruleset, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.ruleset = ruleset
        self.line = case.location.line

    def runtest(self) -> None:
        result = check_case(self.ruleset, self.case)
        if result.status is Status.todo:
            pytest.xfail(f"todo: {self.case.todo}")
        if not result.status.ok:
            raise CaseFailedError(result)


class BadCaseItem(_CaseItemBase):
    """A case that could not be read: it fails with its located diagnostics."""

    def __init__(self, *, bad: BadCase, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bad = bad
        self.line = bad.location.line

    def runtest(self) -> None:
        raise CaseFailedError(bad_case_result(self.bad))
