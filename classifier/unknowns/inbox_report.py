"""The inbox's report: each cluster against a ruleset, in text, markdown or JSON.

What `classifier unknowns` prints (and the console shows) about the Unknowns.

Given the ruleset in force (`--rules`), each cluster's typical member is explained (the
near misses: the rules that came closest, each failed condition with what the
descriptor had), and a sample of its distinct members is classified again: a cluster
that the log recorded as Unknown and the ruleset now decides is reported as covered, by
the rule that decides it, under the same cluster id as before.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from classifier.answer import NearMiss
from classifier.engine.evaluate import classify
from classifier.engine.explain import explain, near_miss_lines
from classifier.engine.ruleset import Ruleset
from classifier.errors import DescriptorError
from classifier.source.descriptor_file import descriptor_from_data
from classifier.source.display import shown_source
from classifier.taxonomy import ErrorClass
from classifier.text import plural
from classifier.unknowns.cluster import Cluster, Clusters, Example

MAX_MESSAGE = 160
"""Characters of an example's message shown in text and markdown."""


@dataclass(frozen=True, slots=True)
class Coverage:
    """How a ruleset answers a cluster's sampled members now."""

    checked: int
    unknown: int
    decided: tuple[tuple[str, str, int], ...]
    """(rule, class, members) for each rule that decides some, the most first."""

    @property
    def covered(self) -> bool:
        return self.checked > 0 and self.unknown == 0

    def line(self, ruleset: Ruleset) -> str:
        """What the ruleset does with the cluster now; the text report shows it after
        `now: `, the markdown report in its `now` column."""
        rs = f"{ruleset.name} {ruleset.version}"
        if not self.decided:
            return f"still Unknown under {rs}"
        rules = ", ".join(f"{rule} ({cls}, {n})" for rule, cls, n in self.decided)
        if self.covered:
            (rule, cls, _), *more = self.decided
            by = f"rule {rule} ({cls})" if not more else f"rules {rules}"
            members = (
                "its one sampled member"
                if self.checked == 1
                else f"all {plural(self.checked, 'sampled member')}"
            )
            return f"covered by {by} under {rs}: {members}"
        return (
            f"partly covered under {rs}: {self.checked - self.unknown} of "
            f"{plural(self.checked, 'sampled member')}, by {rules}"
        )


@dataclass(frozen=True, slots=True)
class Assessed:
    """A cluster with what the ruleset says about it (nothing without a ruleset)."""

    cluster: Cluster
    near_misses: tuple[NearMiss, ...] = ()
    tied: tuple[str, ...] = ()
    """For a conflict: the rules that tie and disagree on the typical member."""
    coverage: Coverage | None = None
    problem: str = ""
    """Why the typical member could not be explained (a malformed descriptor)."""


@dataclass
class Report:
    clusters: Clusters
    assessed: list[Assessed]
    ruleset: Ruleset | None = None
    sources: list[str] = field(default_factory=list)


def assess(
    clusters: Clusters, ruleset: Ruleset | None, sources: list[str], top: int | None = None
) -> Report:
    shown = clusters.clusters if top is None else clusters.clusters[:top]
    if ruleset is None:
        return Report(clusters, [Assessed(c) for c in shown], None, sources)
    return Report(clusters, [_assess(c, ruleset) for c in shown], ruleset, sources)


def _assess(c: Cluster, ruleset: Ruleset) -> Assessed:
    try:
        typical = c.typical.parsed()
    except DescriptorError as exc:
        return Assessed(c, problem=f"{c.typical.where}: {exc.violations[0]}")
    explained = explain(ruleset, typical)
    e = explained.explanation
    near = e.near_misses if e is not None else ()
    tied = (
        tuple(d.loser_rule_id for d in e.decisions)
        if e is not None and not e.winner_rule_id
        else ()
    )
    return Assessed(c, near, tied, _coverage(c, ruleset))


def _coverage(c: Cluster, ruleset: Ruleset) -> Coverage:
    decided: Counter[tuple[str, str]] = Counter()
    unknown = checked = 0
    for data in c.sample:
        try:
            d = descriptor_from_data(data)
        except DescriptorError:
            continue
        checked += 1
        result = classify(ruleset, d)
        if result.error_class is ErrorClass.Unknown:
            unknown += 1
        else:
            decided[result.rule_id, result.error_class.name] += 1
    return Coverage(checked, unknown, tuple((r, cls, n) for (r, cls), n in decided.most_common()))


# text ------------------------------------------------------------------------------------


def when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def iso(ts: float | None) -> str | None:
    """A time as JSON gives it: ISO 8601 in UTC (`2026-11-29T08:00:00Z`), None when unknown."""
    if ts is None:
        return None
    return (
        dt.datetime.fromtimestamp(ts, dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    )


def _short(text: str, limit: int = MAX_MESSAGE) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def headline(r: Report) -> str:
    """How many Unknowns, in how many clusters, over what span; their share only against all
    answers (never against a sample that holds only Unknowns: that is 100 % by construction)."""
    c = r.clusters
    share = f" ({c.unknowns / c.answers:.1%} of {c.answers:,} answers)" if c.answers else ""
    return f"{c.unknowns:,} Unknown{share} in {plural(len(c.clusters), 'cluster')}" + (
        f", {when(c.start)} .. {when(c.end)} UTC" if c.start is not None else ""
    )


def _versions(c: Cluster) -> str:
    return ", ".join(f"{v} ({n:,})" for v, n in c.versions.items()) or "-"


def example_line(e: Example) -> str:
    return f"{e.where}  {_short(str(e.descriptor.get('message', '')) or '(no message)')}"


def render_text(r: Report) -> str:
    lines = [f"classifier unknowns: {headline(r)}"]
    if r.ruleset is not None:
        rs = r.ruleset
        lines.append(
            f"ruleset: {rs.name} {rs.version} ({rs.digest[:19]}), {shown_source(rs.source)}"
        )
    else:
        lines.append("ruleset: none given (--rules DIR adds near misses and coverage)")
    for i, a in enumerate(r.assessed, 1):
        c = a.cluster
        trend = f"  {c.trend_label()} {c.sparkline()}" if c.trend else ""
        lines += [
            "",
            f"{i:>2}. {c.id}  {c.count:,} ({c.share:.1%})  {c.reason}{trend}",
            f"    key:      {c.key.label()}",
            f"    template: {c.template or '(no message)'}",
            f"    seen:     {when(c.first_seen)} .. {when(c.last_seen)}; ruleset {_versions(c)}",
            "    examples:",
            *(f"      {example_line(e)}" for e in c.examples),
        ]
        lines += ruleset_lines(a, r.ruleset, "    ")
    return "\n".join(lines) + "\n"


def ruleset_lines(a: Assessed, ruleset: Ruleset | None, indent: str) -> list[str]:
    if ruleset is None:
        return []
    if a.problem:
        return [f"{indent}not explained: {a.problem}"]
    lines = []
    assert a.coverage is not None
    if a.tied:
        lines.append(f"{indent}tied and disagreeing: {', '.join(a.tied)}")
    if a.near_misses:
        lines.append(f"{indent}near misses of {a.cluster.typical.where}:")
        lines += near_miss_lines(a.near_misses, indent + "  ")
    elif not a.tied and not a.coverage.decided:
        lines.append(
            f"{indent}near misses: none (no rule held on a type, status, code, message or cause)"
        )
    lines.append(f"{indent}now: {a.coverage.line(ruleset)}")
    return lines


# markdown --------------------------------------------------------------------------------


def _md(text: str) -> str:
    value = text.replace("|", "\\|").replace("\n", " ")
    return f"`{value}`" if "`" not in value else value


def render_markdown(r: Report) -> str:
    lines = ["### Unknown answers, by failure", "", f"**{headline(r)}.**"]
    if r.ruleset is not None:
        lines += ["", f"Explained under {_md(r.ruleset.name)} {r.ruleset.version}."]
    lines += [
        "",
        "| # | cluster | count | share | reason | trend | key | template | now |",
        "|---:|---|---:|---:|---|---|---|---|---|",
    ]
    for i, a in enumerate(r.assessed, 1):
        c = a.cluster
        now = (
            a.coverage.line(r.ruleset).split(" under ")[0]
            if a.coverage is not None and r.ruleset is not None
            else ""
        )
        lines.append(
            f"| {i} | {_md(c.id)} | {c.count:,} | {c.share:.1%} | {c.reason} "
            f"| {c.trend_label()} {c.sparkline()} | {_md(c.key.label())} "
            f"| {_md(_short(c.template, 100))} | {now} |"
        )
    for i, a in enumerate(r.assessed, 1):
        c = a.cluster
        lines += [
            "",
            f"<details><summary>{i}. {c.id}: {c.key.type} ({c.count:,})</summary>",
            "",
            f"- first seen {when(c.first_seen)}, last seen {when(c.last_seen)} UTC",
            f"- ruleset versions: {_versions(c)}",
            "",
            "```text",
            *(example_line(e) for e in c.examples),
            *ruleset_lines(a, r.ruleset, ""),
            "```",
            "",
            "</details>",
        ]
    return "\n".join(lines) + "\n"


# json ------------------------------------------------------------------------------------


def cluster_dict(a: Assessed, ruleset: Ruleset | None) -> dict[str, Any]:
    c = a.cluster
    out: dict[str, Any] = {
        "id": c.id,
        "count": c.count,
        "share": round(c.share, 6),
        "reason": c.reason,
        "key": c.key.as_dict(),
        "template": c.template,
        "first_seen": iso(c.first_seen),
        "last_seen": iso(c.last_seen),
        "ruleset_versions": c.versions,
        "trend": {"buckets": list(c.trend), "label": c.trend_label()},
        "examples": [
            {"where": e.where, "ts": iso(e.ts), "descriptor": e.descriptor} for e in c.examples
        ],
    }
    if ruleset is not None:
        out["near_misses"] = [
            {
                "rule": n.rule_id,
                "location": n.location,
                "class": n.class_name,
                "held": list(n.held_conditions),
                "failed": list(n.failed_conditions),
                "observed": list(n.observed),
            }
            for n in a.near_misses
        ]
        out["tied"] = list(a.tied)
        if a.coverage is not None:
            out["now"] = {
                "covered": a.coverage.covered,
                "checked": a.coverage.checked,
                "unknown": a.coverage.unknown,
                "decided": [
                    {"rule": rule, "class": cls, "members": n}
                    for rule, cls, n in a.coverage.decided
                ],
                "summary": a.coverage.line(ruleset),
            }
        if a.problem:
            out["problem"] = a.problem
    return out


def report_dict(r: Report) -> dict[str, Any]:
    c = r.clusters
    out: dict[str, Any] = {
        "unknowns": c.unknowns,
        "lines": c.lines,
        "answers": c.answers,
        "clusters": len(c.clusters),
        "start": iso(c.start),
        "end": iso(c.end),
        "sources": r.sources,
    }
    if r.ruleset is not None:
        out["ruleset"] = {
            "name": r.ruleset.name,
            "version": r.ruleset.version,
            "digest": r.ruleset.digest,
        }
    out["ranked"] = [cluster_dict(a, r.ruleset) for a in r.assessed]
    return out


def render_json(r: Report) -> str:
    return json.dumps(report_dict(r), indent=2, ensure_ascii=False) + "\n"


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
