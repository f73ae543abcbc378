"""Run cases through the production loader and engine, and judge each answer.

The CLI (`classifier test`) and the pytest plugin both call `check_case`,
so a case passes or fails the same way, with the same words, in both.
Classification goes through `load_ruleset` and `classify`, the code the
server runs; `explain` (the same engine with a tracer) runs only for a
failing case, to say which rule decided or which came close.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from classifier.answer import Classification, RuleVerdict
from classifier.codes import Code
from classifier.engine.compiler import load_ruleset
from classifier.engine.evaluate import classify
from classifier.engine.explain import explain, explain_rule, near_miss_lines, render_verdict
from classifier.engine.ruleset import Ruleset
from classifier.errors import Diagnostic, RulesetError
from classifier.location import Location
from classifier.regress.cases import BadCase, Case, CaseFile, nearest_ruleset, read_case_file
from classifier.taxonomy import ErrorClass, UnknownReason
from classifier.text import did_you_mean


class Status(StrEnum):
    """How a case ended. `todo` is an expected failure; `fixed` a todo that now passes."""

    passed = "passed"
    failed = "failed"
    todo = "todo"
    fixed = "fixed"
    error = "error"

    @property
    def ok(self) -> bool:
        return self in (Status.passed, Status.todo)


@dataclass(frozen=True, slots=True)
class Mismatch:
    field: str
    want: object
    got: object


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One case's outcome: the answer, what differed, and the text a person reads."""

    name: str
    location: Location
    status: Status
    ruleset: str = ""
    got: Classification | None = None
    want_class: str = ""
    mismatches: tuple[Mismatch, ...] = ()
    details: str = ""
    todo: str | None = None
    seconds: float = 0.0
    """What the run spent on the case, set by `run_cases`: the time since the previous case
    ended (for a file's first case, reading the file and loading its ruleset too, as a test
    runner counts a fixture's setup in the first test that uses it), so a run's cases add up
    to its time."""


def observed(c: Classification) -> dict[str, object]:
    """The answer's values under the names a case's `want` uses."""
    return {
        "class": c.error_class.name,
        "rule": c.rule_id,
        "effect": c.effect.label,
        "action": c.action.id,
        "retryable": c.retryable,
        "unknown_reason": c.unknown_reason.name,
    }


def compare(case: Case, got: Classification) -> tuple[Mismatch, ...]:
    """The wanted fields the answer does not satisfy."""
    seen = observed(got)
    return tuple(
        Mismatch(name, want, seen[name]) for name, want in case.want.fields() if seen[name] != want
    )


def check_case(ruleset: Ruleset, case: Case) -> CaseResult:
    """Classify one case and judge it (todo cases are expected to fail)."""
    got = classify(ruleset, case.descriptor)
    mismatches = compare(case, got)
    if mismatches:
        status = Status.todo if case.todo else Status.failed
    else:
        status = Status.fixed if case.todo else Status.passed
    details = ""
    if status is Status.failed or status is Status.todo:
        details = failure_details(ruleset, case, mismatches)
    elif status is Status.fixed:
        details = (
            f"marked todo ({case.todo}) but it passes now: remove `todo:` to make it a regular case"
        )
    return CaseResult(
        name=case.note,
        location=case.location,
        status=status,
        ruleset=ruleset.source,
        got=got,
        want_class=case.want.error_class.name,
        mismatches=mismatches,
        details=details,
        todo=case.todo,
    )


def failure_details(ruleset: Ruleset, case: Case, mismatches: Sequence[Mismatch]) -> str:
    """Want vs got, field by field, then the rule that decided or the rules that came close,
    and for a case that names its rule, why that rule did not decide (which of its
    conditions failed, with what the descriptor has there; or the precedence step it lost),
    as `classifier explain --rule` says it: the same traced evaluation, read once."""
    width = max(len(m.field) for m in mismatches)
    lines = [
        f"{m.field + ':':<{width + 1}} want {_show(m.want)}, got {_show(m.got)}" for m in mismatches
    ]
    wanted = ruleset.rule(case.want.rule) if case.want.rule else None
    verdict: RuleVerdict | None = None
    if wanted is not None:
        answer, verdict = explain_rule(ruleset, case.descriptor, wanted.id)
    else:
        answer = explain(ruleset, case.descriptor)
    e = answer.explanation
    if answer.rule_id:
        rule = ruleset.rule(answer.rule_id)
        where = f" ({rule.location})" if rule else ""
        lines.append(
            f"decided by: {answer.rule_id} -> {answer.error_class.name}, "
            f"{answer.effect.label}, {answer.action.id}{where}"
        )
    elif answer.unknown_reason is UnknownReason.conflict and e is not None:
        lines.append("conflict: equally specific rules disagree:")
        lines += [f"  {d.reason}" for d in e.decisions]
    elif e is not None and e.near_misses:
        lines += ["no rule matched; near misses:", *near_miss_lines(e.near_misses, "  ")]
    else:
        lines.append("no rule matched, and no rule came close")
    if case.want.rule and wanted is None:
        hint = did_you_mean(case.want.rule, (r.id for r in ruleset.rules))
        lines.append(f"note: the ruleset has no rule {case.want.rule!r}{hint}")
    elif verdict is not None:
        first, *rest = render_verdict(verdict)
        lines += [f"wanted {first}", *rest]
    return "\n".join(lines)


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if value != "" else '""'


def bad_case_result(bad: BadCase) -> CaseResult:
    return CaseResult(
        name=bad.name,
        location=bad.location,
        status=Status.error,
        details="\n".join(d.render() for d in bad.diagnostics),
    )


@dataclass(frozen=True, slots=True)
class Problem:
    """A case file or ruleset that could not be used: its cases did not run."""

    location: Location
    diagnostics: tuple[Diagnostic, ...]
    summary: str

    def render(self) -> str:
        return "\n".join([self.summary, *(d.render() for d in self.diagnostics)])


@dataclass(frozen=True)
class Coverage:
    """Which rules of one ruleset decided at least one case."""

    ruleset: str
    name: str
    version: str
    rules: tuple[str, ...]
    covered: frozenset[str]
    locations: dict[str, Location]

    @property
    def uncovered(self) -> list[str]:
        return [r for r in self.rules if r not in self.covered]

    @property
    def percent(self) -> float:
        return 100.0 if not self.rules else 100.0 * len(self.covered) / len(self.rules)


@dataclass
class Report:
    """Everything one run found: results in file order, problems, coverage."""

    results: list[CaseResult] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    rulesets: dict[str, Ruleset] = field(default_factory=dict)
    seconds: float = 0.0

    def counts(self) -> Counter[Status]:
        return Counter(r.status for r in self.results)

    @property
    def ran(self) -> int:
        return sum(1 for r in self.results if r.status is not Status.error)

    @property
    def ok(self) -> bool:
        return self.ran > 0 and not self.problems and all(r.status.ok for r in self.results)

    def coverage(self) -> list[Coverage]:
        """Per ruleset: a rule is covered when it decided a case (whether or not it passed).

        Only a stack's top layer counts: its bases' rules are their own cases' business.
        """
        decided: dict[str, set[str]] = {source: set() for source in self.rulesets}
        for r in self.results:
            if r.got is not None and r.got.rule_id:
                decided.setdefault(r.ruleset, set()).add(r.got.rule_id)
        out = []
        for source, rs in self.rulesets.items():
            own = [rule for rule in rs.rules if rule.layer == 0]
            ids = tuple(rule.id for rule in own)
            out.append(
                Coverage(
                    ruleset=source,
                    name=rs.name,
                    version=rs.version,
                    rules=ids,
                    # A case a base rule decides is allowed, and counts for none of these.
                    covered=frozenset(decided[source] & set(ids)),
                    locations={rule.id: rule.location for rule in own},
                )
            )
        return out

    def confusion(self) -> dict[tuple[str, str], int]:
        """(wanted class, answered class) -> number of cases, over cases that ran."""
        out: Counter[tuple[str, str]] = Counter()
        for r in self.results:
            if r.got is not None:
                out[(r.want_class, r.got.error_class.name)] += 1
        return dict(out)


class RulesetCache:
    """Each ruleset folder is loaded once per run; a broken one is reported once."""

    def __init__(self) -> None:
        self.loaded: dict[Path, Ruleset | RulesetError] = {}

    def get(self, folder: Path) -> Ruleset | RulesetError:
        key = folder.resolve()
        if key not in self.loaded:
            try:
                self.loaded[key] = load_ruleset(folder)
            except RulesetError as exc:
                self.loaded[key] = exc
        return self.loaded[key]


def ruleset_folder(case_file: CaseFile, default: Path | None) -> Path | None:
    """The ruleset a case file tests: its own `rules:`, the nearest manifest, else default."""
    if case_file.rules is not None:
        return case_file.rules
    return nearest_ruleset(case_file.path.resolve().parent) or default


def resolve(case_file: CaseFile, default: Path | None, cache: RulesetCache) -> Ruleset | Problem:
    """The compiled ruleset for a case file, or the problem that stops its cases."""
    where = Location(case_file.shown)
    if case_file.diagnostics:
        return Problem(where, case_file.diagnostics, f"{case_file.shown}: invalid case file")
    folder = ruleset_folder(case_file, default)
    if folder is None:
        return Problem(
            where,
            (
                Diagnostic(
                    Code.no_ruleset,
                    "no ruleset for these cases: no `rules:` key, no ruleset.yaml in this "
                    "folder or above, and no --rules given",
                    where,
                ),
            ),
            f"{case_file.shown}: no ruleset",
        )
    loaded = cache.get(folder)
    if isinstance(loaded, RulesetError):
        return Problem(
            where,
            tuple(loaded.diagnostics),
            f"{case_file.shown}: the ruleset it tests ({folder}) is invalid",
        )
    return loaded


def run_cases(
    paths: Iterable[Path],
    *,
    rules: Path | None = None,
    run: re.Pattern[str] | None = None,
) -> Report:
    """Read every case file in paths, run its cases, and gather the report."""
    start = time.perf_counter()
    report = Report()
    cache = RulesetCache()
    mark = start  # where the next case's time begins
    for path in paths:
        case_file = read_case_file(path)
        target = resolve(case_file, rules, cache)
        if isinstance(target, Problem):
            if any(p.diagnostics == target.diagnostics for p in report.problems):
                target = Problem(target.location, (), target.summary + " (see above)")
            report.problems.append(target)
            mark = time.perf_counter()  # no case to carry a file that did not run
            continue
        report.rulesets.setdefault(target.source, target)
        for entry in case_file.entries:
            if run is not None and not run.search(entry_name(entry)):
                continue
            if isinstance(entry, BadCase):
                result = bad_case_result(entry)
            else:
                result = check_case(target, entry)
            now = time.perf_counter()
            report.results.append(dataclasses.replace(result, seconds=now - mark))
            mark = now
    report.seconds = time.perf_counter() - start
    return report


def entry_name(entry: Case | BadCase) -> str:
    return entry.name if isinstance(entry, BadCase) else entry.note


def class_order(names: Iterable[str]) -> list[str]:
    """Class names in taxonomy order."""
    return sorted(set(names), key=lambda n: ErrorClass[n].value)
