"""JUnit XML for CI systems: one <testsuite> per case file, one <testcase> per case.

The shape is the common JUnit dialect CI systems read (Jenkins, GitLab,
GitHub reporters): `<testcase>` carries `file` and `line` so a failure links
to its case, a todo case that still fails is `<skipped>` (as pytest writes
an xfail), and a case or file that could not run is an `<error>`.
`tests/regress/junit.xsd` is the schema a test validates this against. A case's `time` is
what the run spent on it, its file's reading and ruleset loading in the file's first case
(`CaseResult.seconds`), so the times add up to the run's.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

from classifier.regress.report import LABELS, headline, result_text
from classifier.regress.runner import CaseResult, Report, Status
from classifier.source.loader import CASES_SUFFIX

SUITES_NAME = "classifier test"


def _seconds(seconds: float) -> str:
    """A `time` attribute: to the microsecond, as a case takes microseconds (at three
    decimals nearly every one read 0.000)."""
    return f"{seconds:.6f}"


def _classname(file: str) -> str:
    return file.removesuffix(CASES_SUFFIX).replace("/", ".")


def junit_xml(report: Report) -> ET.ElementTree[ET.Element]:
    """The report as a JUnit XML tree."""
    by_file: dict[str, list[CaseResult]] = defaultdict(list)
    for r in report.results:
        by_file[r.location.file].append(r)
    root = ET.Element("testsuites", name=SUITES_NAME)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total_time = 0.0
    for problem in report.problems:
        suite = ET.SubElement(
            root,
            "testsuite",
            name=problem.location.file,
            tests="1",
            failures="0",
            errors="1",
            skipped="0",
            time="0.000",
            file=problem.location.file,
        )
        case = ET.SubElement(
            suite,
            "testcase",
            name=problem.summary,
            classname=_classname(problem.location.file),
            file=problem.location.file,
            line=str(problem.location.line),
            time="0.000",
        )
        error = ET.SubElement(case, "error", message=problem.summary, type="invalid")
        error.text = problem.render()
        totals["tests"] += 1
        totals["errors"] += 1
    for file, results in by_file.items():
        counts = {
            "failures": sum(r.status in (Status.failed, Status.fixed) for r in results),
            "errors": sum(r.status is Status.error for r in results),
            "skipped": sum(r.status is Status.todo for r in results),
        }
        seconds = sum(r.seconds for r in results)
        suite = ET.SubElement(
            root,
            "testsuite",
            name=file,
            tests=str(len(results)),
            failures=str(counts["failures"]),
            errors=str(counts["errors"]),
            skipped=str(counts["skipped"]),
            time=_seconds(seconds),
            file=file,
        )
        for r in results:
            suite.append(_testcase(r))
        totals["tests"] += len(results)
        for key, n in counts.items():
            totals[key] += n
        total_time += seconds
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failures"]))
    root.set("errors", str(totals["errors"]))
    root.set("skipped", str(totals["skipped"]))
    root.set("time", _seconds(total_time))
    ET.indent(root)
    return ET.ElementTree(root)


def _testcase(r: CaseResult) -> ET.Element:
    case = ET.Element(
        "testcase",
        name=r.name,
        classname=_classname(r.location.file),
        file=r.location.file,
        line=str(r.location.line),
        time=_seconds(r.seconds),
    )
    if r.status in (Status.failed, Status.fixed):
        kind = "todo_passes" if r.status is Status.fixed else "mismatch"
        failure = ET.SubElement(case, "failure", message=headline(r), type=kind)
        failure.text = result_text(r)
    elif r.status is Status.error:
        error = ET.SubElement(case, "error", message=headline(r), type="invalid_case")
        error.text = result_text(r)
    elif r.status is Status.todo:
        ET.SubElement(case, "skipped", type="todo", message=f"{LABELS[r.status]}: {r.todo}")
    return case


def write_junit(report: Report, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    junit_xml(report).write(path, encoding="utf-8", xml_declaration=True)
