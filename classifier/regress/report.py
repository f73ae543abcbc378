"""Render a test run: text for people, JSON for tools, GitHub annotations for pull requests.

`result_text` is also what the pytest plugin shows for a failing item, so a
broken case reads the same from `classifier test` and from `pytest`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from classifier.answer import classification_dict
from classifier.regress.runner import CaseResult, Coverage, Report, Status, class_order
from classifier.source.display import shown_source
from classifier.text import github_annotation

LABELS = {
    Status.failed: "FAIL",
    Status.error: "ERROR",
    Status.fixed: "FIXED",
    Status.todo: "todo",
    Status.passed: "ok",
}


def headline(r: CaseResult) -> str:
    """`file:line:col: FAIL: note`, clickable in an editor."""
    todo = f" (todo: {r.todo})" if r.status is Status.todo and r.todo else ""
    return f"{r.location}: {LABELS[r.status]}: {r.name}{todo}"


def result_text(r: CaseResult) -> str:
    """The headline and the indented details: the message for a failing case."""
    details = [f"    {line}" for line in r.details.splitlines()]
    return "\n".join([headline(r), *details])


def summary_line(report: Report) -> str:
    counts = report.counts()
    parts = [f"{counts[Status.passed]} passed", f"{counts[Status.failed]} failed"]
    for status, word in (
        (Status.todo, "todo"),
        (Status.fixed, "todo now passing"),
        (Status.error, "invalid"),
    ):
        if counts[status]:
            parts.append(f"{counts[status]} {word}")
    if report.problems:
        parts.append(f"{len(report.problems)} file(s) not run")
    rate = f", {report.ran / report.seconds:,.0f} cases/s" if report.seconds and report.ran else ""
    n = len(report.results)
    return f"{n} case{'' if n == 1 else 's'}: {', '.join(parts)} ({report.seconds:.2f}s{rate})"


def coverage_text(coverage: Iterable[Coverage]) -> list[str]:
    lines = []
    for c in coverage:
        lines.append(
            f"coverage: {c.name} {c.version} ({shown_source(c.ruleset)}): {len(c.covered)} of "
            f"{len(c.rules)} rules decided a case ({c.percent:.1f}%)"
        )
        if c.uncovered:
            width = max(len(r) for r in c.uncovered)
            lines.append("  rules no case exercised:")
            lines += [f"    {r:<{width}}  {c.locations[r]}" for r in c.uncovered]
    return lines


def confusion_text(matrix: dict[tuple[str, str], int]) -> list[str]:
    """The per-class confusion matrix: a row per wanted class, a column per answered class."""
    if not matrix:
        return []
    wants = class_order(w for w, _ in matrix)
    gots = class_order(g for _, g in matrix)
    corner = "want \\ got"
    first = max(len(corner), *(len(w) for w in wants))
    widths = [max(len(g), 3) for g in gots]
    head = "  ".join(
        [f"{corner:<{first}}", *(f"{g:>{w}}" for g, w in zip(gots, widths, strict=True))]
    )
    lines = ["confusion matrix (rows: wanted class, columns: answered class):", "  " + head]
    for want in wants:
        cells = [
            f"{(matrix.get((want, g)) or '.')!s:>{w}}" for g, w in zip(gots, widths, strict=True)
        ]
        lines.append("  " + "  ".join([f"{want:<{first}}", *cells]))
    return lines


def render_text(report: Report, *, coverage: bool) -> str:
    lines: list[str] = []
    for problem in report.problems:
        lines += [problem.render(), ""]
    for r in report.results:
        if r.status is Status.passed:
            continue
        lines.append(headline(r) if r.status is Status.todo else result_text(r))
        if r.status is not Status.todo:
            lines.append("")
    if coverage:
        lines += [*coverage_text(report.coverage()), *confusion_text(report.confusion()), ""]
    lines.append(summary_line(report))
    return "\n".join(lines)


def result_dict(r: CaseResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": r.name,
        "file": r.location.file,
        "line": r.location.line,
        "column": r.location.column,
        "status": r.status.value,
    }
    if r.ruleset:
        out["ruleset"] = r.ruleset
    if r.want_class:
        out["want_class"] = r.want_class
    if r.got is not None:
        out["got"] = classification_dict(r.got)
    if r.mismatches:
        out["mismatches"] = [{"field": m.field, "want": m.want, "got": m.got} for m in r.mismatches]
    if r.todo:
        out["todo"] = r.todo
    if r.details:
        out["details"] = r.details
    return out


def render_json(report: Report, *, coverage: bool) -> str:
    counts = report.counts()
    data: dict[str, Any] = {
        "ok": report.ok,
        "summary": {
            "cases": len(report.results),
            **{status.value: counts[status] for status in Status},
            "seconds": round(report.seconds, 4),
        },
        "problems": [
            {
                "summary": p.summary,
                "file": p.location.file,
                "diagnostics": [d.render() for d in p.diagnostics],
            }
            for p in report.problems
        ],
        "cases": [result_dict(r) for r in report.results],
    }
    if coverage:
        data["coverage"] = [
            {
                "ruleset": c.ruleset,
                "name": c.name,
                "version": c.version,
                "rules": len(c.rules),
                "covered": len(c.covered),
                "percent": round(c.percent, 2),
                "uncovered": [{"rule": r, "location": str(c.locations[r])} for r in c.uncovered],
            }
            for c in report.coverage()
        ]
        data["confusion"] = [
            {"want": w, "got": g, "count": n} for (w, g), n in sorted(report.confusion().items())
        ]
    return json.dumps(data, indent=2)


def render_github(report: Report, *, coverage: bool) -> str:
    lines = []
    for p in report.problems:
        if not p.diagnostics:
            lines.append(github_annotation("error", p.location, p.summary, p.summary))
        for d in p.diagnostics:
            lines.append(github_annotation("error", d.location, f"{d.code}", d.message))
    for r in report.results:
        if r.status.ok:
            continue
        title = f"{LABELS[r.status]}: {r.name}"
        lines.append(github_annotation("error", r.location, title, r.details or r.name))
    if coverage:
        for c in report.coverage():
            for rule in c.uncovered:
                lines.append(
                    github_annotation(
                        "warning",
                        c.locations[rule],
                        f"rule not covered: {rule}",
                        f"no case is decided by rule {rule}; add a case for it",
                    )
                )
        lines += coverage_text(report.coverage())
    lines.append(summary_line(report))
    return "\n".join(lines)


RENDERERS = {"text": render_text, "json": render_json, "github": render_github}
