"""The console's pages, made from the Jinja2 templates in `templates/` (shipped with the
package) and what each is given.

Markup comes only from those templates: the environment escapes every value put into one
(autoescape, through MarkupSafe), and what a template makes (a macro, a `set` block) is
markup already and is not escaped twice. Nothing here builds markup in Python; what is
computed here (the chart's geometry, diagnostic and example lines) is plain text or
numbers.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jinja2
from markupsafe import Markup

import classifier
from classifier.engine.ruleset import CompiledRule, Ruleset
from classifier.server.observers.activity import MinuteShare, RuleHits
from classifier.server.observers.shadow import Shadow
from classifier.server.shared.serving_ruleset import ReloadStatus, RulesetHolder
from classifier.server.web.queries import (
    MAX_FILTER_CHARS,
    MAX_PER_PAGE,
    Grouped,
    RulePage,
    RuleQuery,
    href,
    select_rules,
    shown_file,
)
from classifier.unknowns.cluster import Cluster
from classifier.unknowns.inbox_report import Assessed, example_line, headline, ruleset_lines, when

MAX_DIAGNOSTICS_SHOWN = 1000
DISAGREEMENTS_SHOWN = 50


def moment(ts: float | None) -> str:
    return "never" if not ts else f"{when(ts)} UTC"


def diagnostic_lines(status: ReloadStatus) -> str:
    """A failed reload's diagnostics, one a line, verbatim (at most MAX_DIAGNOSTICS_SHOWN)."""
    shown = status.diagnostics[:MAX_DIAGNOSTICS_SHOWN]
    lines = [d.render() for d in shown]
    if len(status.diagnostics) > len(shown):
        lines.append(f"... and {len(status.diagnostics) - len(shown)} more")
    return "\n".join(lines) if lines else status.error


@dataclass(frozen=True, slots=True)
class Bar:
    idle: bool
    """A minute with no answers: a grey line at the bottom."""
    x: str
    y: str
    width: str
    height: str
    fill: str
    at: str
    """The minute, hh:mm UTC."""
    unknown: int
    answers: int
    share: float


@dataclass(frozen=True, slots=True)
class GridLine:
    y: str
    label_y: str
    label: str


@dataclass(frozen=True, slots=True)
class Chart:
    """The Unknown share per minute as bars: the SVG's geometry, coordinates formatted."""

    width: int
    height: int
    left: int
    right: int
    label_x: int
    bottom: int
    grid: list[GridLine]
    bars: list[Bar]
    first: str
    last: str


def chart(minutes: Sequence[MinuteShare], width: int = 720, height: int = 160) -> Chart:
    top = max([0.05, *(m.share for m in minutes)])
    top = min(1.0, -(-top * 20 // 1) / 20)  # up to the next 5 %
    left, bottom = 44, 20
    plot_w, plot_h = width - left - 4, height - bottom - 6
    step = plot_w / max(1, len(minutes))
    bars = []
    for i, m in enumerate(minutes):
        x = left + i * step
        at = when(m.start)[11:16]
        if not m.answers:
            y, bar_h, fill = 6.0 + plot_h - 2, 2.0, "#ccc"
        else:
            bar_h = max(1.0, plot_h * m.share / top) if m.unknown else 1.0
            y, fill = 6 + plot_h - bar_h, "#c0392b" if m.unknown else "#27ae60"
        bars.append(
            Bar(
                not m.answers,
                f"{x:.1f}",
                f"{y:.1f}",
                f"{step - 1:.1f}",
                f"{bar_h:.1f}",
                fill,
                at,
                m.unknown,
                m.answers,
                m.share,
            )
        )
    grid = [
        GridLine(f"{6 + plot_h * (1 - f):.1f}", f"{6 + plot_h * (1 - f) + 3:.1f}", f"{top * f:.0%}")
        for f in (0.0, 0.5, 1.0)
    ]
    return Chart(
        width,
        height,
        left,
        width - 4,
        left - 4,
        height - 4,
        grid,
        bars,
        when(minutes[0].start)[11:16] if minutes else "",
        when(minutes[-1].start)[11:16] if minutes else "",
    )


def _example_lines(cluster: Cluster) -> str:
    return "\n".join(example_line(e) for e in cluster.examples)


def _near_lines(assessed: Assessed, ruleset: Ruleset | None) -> str:
    """A cluster's near misses and coverage, as `classifier unknowns` prints them."""
    return "\n".join(ruleset_lines(assessed, ruleset, ""))


@functools.cache
def environment() -> jinja2.Environment:
    """The templates' environment, made once: every value escaped, an unknown name an error."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("classifier.server.web", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.filters.update(
        moment=moment,
        thousands=lambda n: f"{n:,}",
        percent=lambda x: f"{x:.1%}",
        json=lambda data: json.dumps(data, ensure_ascii=False, sort_keys=True),
        repr=repr,
    )
    env.globals.update(
        version=classifier.__version__,
        chart=chart,
        diagnostic_lines=diagnostic_lines,
        example_lines=_example_lines,
        near_lines=_near_lines,
        headline=headline,
        shown_file=shown_file,
        rule_link=lambda rule_id: href("/console/rule", id=rule_id),
        max_filter=MAX_FILTER_CHARS,
        max_per_page=MAX_PER_PAGE,
        disagreements_shown=DISAGREEMENTS_SHOWN,
    )
    return env


def _render(template: str, **values: Any) -> str:
    return environment().get_template(template).render(**values)


def _macro(name: str, *args: Any) -> Markup:
    made: Markup = getattr(environment().get_template("sections.html").module, name)(*args)
    return made


def reload_section(role: str, status: ReloadStatus | None) -> Markup:
    return _macro("reload_section", role, status)


def share_chart(minutes: Sequence[MinuteShare]) -> Markup:
    return _macro("share_chart", chart(minutes))


def overview_page(
    active: RulesetHolder,
    candidate: RulesetHolder | None,
    started: float,
    minutes: Sequence[MinuteShare],
    hits: dict[str, RuleHits],
    q: RuleQuery,
    grouped: Grouped | None,
    shadow: Shadow | None,
) -> str:
    ruleset, bundle = active.serving
    found: RulePage = select_rules(ruleset, hits, q)
    return _render(
        "overview.html",
        title=f"{ruleset.name} {ruleset.version}: classifier console",
        pid=os.getpid(),
        started=started,
        active=active,
        candidate_holder=candidate,
        ruleset=ruleset,
        bundle=bundle,
        candidate=candidate.current if candidate is not None else None,
        minutes=minutes,
        found=found,
        never=sum(1 for r in ruleset.rules if r.id not in hits),
        never_link=RuleQuery(hits="never").link(),
        q=q,
        grouped=grouped,
        shadow=shadow,
    )


def rule_page(ruleset: Ruleset, rule: CompiledRule, hit: RuleHits | None) -> str:
    return _render(
        "rule.html",
        title=f"rule {rule.id}: classifier console",
        ruleset=ruleset,
        rule=rule,
        hit=hit,
    )


def explained_page(
    ruleset: Ruleset, kind: str, explanation: str, descriptor: str, rule_id: str
) -> str:
    """`kind` as `console_explanation` says: explained, invalid or no_rule."""
    return _render(
        "explained.html",
        title="explain: classifier console",
        ruleset=ruleset,
        kind=kind,
        explanation=explanation,
        descriptor=descriptor,
        rule_id=rule_id,
    )


def refused_page(status: str, message: str) -> str:
    return _render("refused.html", title=status, status=status, message=message)
