"""The operator console: one read-only page on the admin port about what the service does.

    GET  /console          the page: version, the serving ruleset and its layers, the
                           candidate, the last reload (a red banner with every diagnostic
                           when it failed), every rule with its hits (filtered, paged), the
                           Unknown share over the last hour, the live Unknowns grouped as
                           `classifier unknowns` groups them, the shadow's disagreements,
                           and the explain form
    GET  /console/rule     one rule: its outcome, conditions, location and hits, and a form
                           to explain a descriptor against it (`classifier explain --rule`)
    POST /console/explain  a descriptor (YAML or JSON) explained, the text exactly as
                           `classifier explain` prints it; changes nothing
    GET  /console/console.css

No script and nothing from elsewhere: the chart is SVG drawn here, the style sheet comes
from the package, and the Content-Security-Policy forbids any other load. Every value from
a ruleset, a descriptor or a request is escaped (`Html`, below: markup is built only from
constant templates, and whatever is put into one is escaped unless it is markup already).

Bounded work: at most CONSOLE_AT_ONCE pages are made at once (more is 503), and
PAGES_PER_SECOND on average (more is 429); rules are paged (at most MAX_PER_PAGE a page);
the Unknown groups, of the UNKNOWN_CLUSTERS_SHOWN largest failures, are remade within a
duty cycle (UNKNOWNS_DUTY) and shown with the time they were made; an explain request is
size-limited like a gRPC request (`--max-request-bytes`) and takes one of the server's
explain slots (the budget gRPC explain calls share), or is refused at once (429).
"""

from __future__ import annotations

import html
import io
import json
import os
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, LiteralString

import classifier
from classifier import limits
from classifier.engine.explain import explained_text
from classifier.engine.ruleset import CompiledRule, Ruleset
from classifier.errors import DescriptorError
from classifier.server.activity import Activity, MinuteShare, RuleHits
from classifier.server.admin import StartResponse
from classifier.server.explain_budget import ExplainBudget, ExplainRefusedError
from classifier.server.explainer import Explainer, ExplainerFailedError
from classifier.server.holder import ReloadStatus, RulesetHolder
from classifier.server.shadow import Disagreement, Shadow
from classifier.server.unknowns import UnknownSample
from classifier.source.descriptor_file import parse_descriptor
from classifier.source.loader import shown_source
from classifier.unknowns.cluster import Clusterer
from classifier.unknowns.read import read_lines
from classifier.unknowns.report import Report, assess, example_line, headline, ruleset_lines, when

CONSOLE_AT_ONCE = 2
"""Console requests served at once; another meanwhile is 503 (it never queues)."""
PAGES_PER_SECOND = 5.0
PAGES_BURST = 20
"""Pages made per second on average, and at most at once after a quiet spell; more is 429
at once (a page of 9,000 rules costs about 15 ms of the interpreter, which the gRPC threads
share: benchmarks/bench_console.py)."""
PER_PAGE = 50
MAX_PER_PAGE = 500
MAX_FILTER_CHARS = 200
UNKNOWN_CLUSTERS_SHOWN = 20
UNKNOWNS_MIN_SECONDS = 2.0
UNKNOWNS_DUTY = 0.05
"""The Unknown groups are remade when the sample changed, UNKNOWNS_MIN_SECONDS after the
last at the soonest, and later when making them was costly: never more than this share of
the time (clustering a full sample and explaining 20 failures against 9,000 rules takes
seconds; remade then at most once a minute)."""
DISAGREEMENTS_SHOWN = 50
MAX_DIAGNOSTICS_SHOWN = 1000
FORM_TYPE = "application/x-www-form-urlencoded"
PERCENT_ENCODING = 3
"""A byte of a form field takes at most three in the url-encoded body (`%XX`)."""

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    ("Content-Security-Policy", CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
    ("Cache-Control", "no-store"),
]

FAVICON = (
    b"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'>"
    b"<rect width='16' height='16' rx='3' fill='#233'/></svg>"
)


# markup ----------------------------------------------------------------------------------


class Html(str):
    """Markup safe to put in a page as it is. Made only by `h` and `join`."""

    __slots__ = ()


def esc(value: object) -> Html:
    """The value as text in a page: escaped, unless it is markup already."""
    return value if isinstance(value, Html) else Html(html.escape(str(value), quote=True))


def _filling(value: object) -> object:
    """Numbers as they are (format specs apply to them, and they need no escaping)."""
    return value if isinstance(value, int | float) else esc(value)


def h(template: LiteralString, /, *args: object, **kwargs: object) -> Html:
    """A constant template filled with escaped values (`{}` and `{name}` fields)."""
    return Html(
        template.format(*map(_filling, args), **{k: _filling(v) for k, v in kwargs.items()})
    )


def join(parts: Iterable[object], sep: LiteralString = "") -> Html:
    return Html(sep.join(esc(p) for p in parts))


def href(path: LiteralString, **query: object) -> str:
    """A console link; escaped when put into an attribute by `h`."""
    pairs = {k: str(v) for k, v in query.items() if v not in ("", None)}
    return f"{path}?{urllib.parse.urlencode(pairs)}" if pairs else path


def page(title: str, body: Html) -> Html:
    return h(
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width, initial-scale=1'>"
        "<title>{title}</title><link rel=stylesheet href=/console/console.css>"
        "<link rel=icon href=/console/favicon.svg></head>"
        "<body><header><a class=home href=/console>errorclass classifier</a> "
        "<span class=version>{version}</span>"
        "<nav><a href='/console#rulesets'>rulesets</a> <a href='/console#rules'>rules</a> "
        "<a href='/console#unknowns'>unknowns</a> <a href='/console#shadow'>shadow</a> "
        "<a href='/console#explain'>explain</a></nav></header>\n"
        "<main>{body}</main></body></html>\n",
        title=title,
        version=classifier.__version__,
        body=body,
    )


def moment(ts: float | None) -> str:
    return "never" if not ts else f"{when(ts)} UTC"


# the state shown -------------------------------------------------------------------------


@dataclass(frozen=True)
class Sources:
    """What the page reads: the process's own state, never changed from here."""

    active: RulesetHolder
    activity: Activity
    explain_budget: ExplainBudget
    """The server's explain budget, shared with gRPC explain calls."""
    explainer: Explainer
    """The server's explaining process, shared with gRPC explain calls."""
    max_request_bytes: int
    candidate: RulesetHolder | None = None
    sample: UnknownSample | None = None
    shadow: Shadow | None = None


@dataclass(frozen=True, slots=True)
class RuleQuery:
    """Which rules a page of the table shows."""

    text: str = ""
    hits: str = "all"
    """all, never (not hit since start) or hit."""
    sort: str = "order"
    """order (ruleset order), hits (most first), last (latest first) or id."""
    page: int = 1
    per: int = PER_PAGE

    @classmethod
    def parse(cls, query: dict[str, list[str]]) -> RuleQuery:
        def one(name: str, default: str) -> str:
            return (query.get(name) or [default])[0]

        def number(name: str, default: int, top: int) -> int:
            try:
                return max(1, min(top, int(one(name, str(default)))))
            except ValueError:
                return default

        hits = one("hits", "all")
        sort = one("sort", "order")
        return cls(
            text=one("q", "").strip()[:MAX_FILTER_CHARS],
            hits=hits if hits in ("all", "never", "hit") else "all",
            sort=sort if sort in ("order", "hits", "last", "id") else "order",
            page=number("page", 1, 1_000_000),
            per=number("per", PER_PAGE, MAX_PER_PAGE),
        )

    def link(self, **changes: object) -> str:
        values: dict[str, object] = {
            "q": self.text,
            "hits": "" if self.hits == "all" else self.hits,
            "sort": "" if self.sort == "order" else self.sort,
            "page": self.page if self.page != 1 else "",
            "per": self.per if self.per != PER_PAGE else "",
        }
        values.update(changes)
        return href("/console", **values) + "#rules"


@dataclass(frozen=True, slots=True)
class RulePage:
    rows: list[tuple[CompiledRule, RuleHits | None]]
    matched: int
    """Rules the filter kept, on every page."""
    pages: int
    page: int


def select_rules(ruleset: Ruleset, hits: dict[str, RuleHits], q: RuleQuery) -> RulePage:
    """The rules of one page of the table: filtered, sorted, then cut to the page."""
    needle = q.text.lower()
    rows = [
        (rule, hits.get(rule.id))
        for rule in ruleset.rules
        if (
            not needle
            or needle in rule.id.lower()
            or needle in rule.outcome.error_class.name.lower()
            or needle in rule.location.file.lower()
        )
        and (
            q.hits == "all"
            or (q.hits == "never") == (rule.id not in hits)  # "hit": those that were
        )
    ]
    if q.sort == "hits":
        rows.sort(key=lambda r: -(r[1].count if r[1] else 0))
    elif q.sort == "last":
        rows.sort(key=lambda r: -(r[1].last if r[1] else 0.0))
    elif q.sort == "id":
        rows.sort(key=lambda r: r[0].id)
    pages = max(1, -(-len(rows) // q.per))
    current = min(q.page, pages)
    start = (current - 1) * q.per
    return RulePage(rows[start : start + q.per], len(rows), pages, current)


def shown_file(ruleset: Ruleset, rule: CompiledRule) -> str:
    """The rule's file, relative to its layer's folder when it is inside it."""
    file = rule.location.file
    if rule.layer < len(ruleset.layers):
        source = ruleset.layers[rule.layer].source
        for shown in (source, shown_source(source)):  # a file's location may be relative
            folder = shown.rstrip("/") + "/"
            if file.startswith(folder):
                return file[len(folder) :]
    return file


# sections --------------------------------------------------------------------------------


def reload_section(role: str, status: ReloadStatus | None) -> Html:
    if status is None:
        return h("<p class=reload>{}: no reload since start</p>", role)
    said = h(
        "{role}: last reload at {at} ({trigger}): <b>{result}</b>",
        role=role,
        at=status.at,
        trigger=status.trigger,
        result=status.result.value,
    )
    if status.ok:
        return h("<p class=reload>{}</p>", said)
    shown = status.diagnostics[:MAX_DIAGNOSTICS_SHOWN]
    lines = [d.render() for d in shown]
    if len(status.diagnostics) > len(shown):
        lines.append(f"... and {len(status.diagnostics) - len(shown)} more")
    if not lines:
        lines = [status.error]
    return h(
        "<section class=failed role=alert data-role={role}><h2>Reload failed: the last good "
        "ruleset keeps serving</h2><p>{said}</p><pre class=diagnostics>{lines}</pre></section>",
        role=role,
        said=said,
        lines="\n".join(lines),
    )


def ruleset_section(role: str, ruleset: Ruleset) -> Html:
    layers = join(
        h(
            "<tr><td>{i}</td><td>{name}</td><td>{version}</td><td><code>{digest}</code></td>"
            "<td>{source}</td></tr>",
            i=i,
            name=layer.name,
            version=layer.version,
            digest=layer.digest[:19],
            source=layer.source,
        )
        for i, layer in enumerate(ruleset.layers)
    )
    return h(
        "<section class=ruleset data-role={role}><h2>{role}: {name} {version}</h2><dl>"
        "<dt>digest</dt><dd><code>{digest}</code></dd><dt>rules</dt><dd>{rules}</dd>"
        "<dt>loaded at</dt><dd>{loaded}</dd><dt>source</dt><dd>{source}</dd></dl>"
        "<table class=layers><caption>layers (the ruleset asked for first)</caption>"
        "<tr><th>#</th><th>name</th><th>version</th><th>digest</th><th>source</th></tr>"
        "{layers}</table></section>",
        role=role,
        name=ruleset.name,
        version=ruleset.version,
        digest=ruleset.digest,
        rules=f"{len(ruleset.rules):,}",
        loaded=ruleset.loaded_at,
        source=ruleset.source,
        layers=layers,
    )


def share_chart(minutes: Sequence[MinuteShare], width: int = 720, height: int = 160) -> Html:
    """The Unknown share per minute as bars, in SVG (no script, no style sheet needed)."""
    top = max([0.05, *(m.share for m in minutes)])
    top = min(1.0, -(-top * 20 // 1) / 20)  # up to the next 5 %
    left, bottom = 44, 20
    plot_w, plot_h = width - left - 4, height - bottom - 6
    step = plot_w / max(1, len(minutes))
    bars = []
    for i, m in enumerate(minutes):
        x = left + i * step
        tip = h(
            "{at} UTC: {unknown} of {answers} Unknown ({share:.1%})",
            at=when(m.start)[11:16],
            unknown=m.unknown,
            answers=m.answers,
            share=m.share,
        )
        if not m.answers:
            bars.append(
                h(
                    "<rect class=idle x='{:.1f}' y='{:.1f}' width='{:.1f}' height=2 fill=#ccc>"
                    "<title>{} (no answers)</title></rect>",
                    x,
                    6 + plot_h - 2,
                    step - 1,
                    when(m.start)[11:16],
                )
            )
            continue
        bar_h = max(1.0, plot_h * m.share / top) if m.unknown else 1.0
        bars.append(
            h(
                "<rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{:.1f}' fill={}>"
                "<title>{}</title></rect>",
                x,
                6 + plot_h - bar_h,
                step - 1,
                bar_h,
                "#c0392b" if m.unknown else "#27ae60",
                tip,
            )
        )
    grid = join(
        h(
            "<line x1={l} x2={r} y1='{y:.1f}' y2='{y:.1f}' stroke=#ddd />"
            "<text x={tx} y='{ty:.1f}' text-anchor=end font-size=10 fill=#555>{label}</text>",
            l=left,
            r=width - 4,
            y=6 + plot_h * (1 - f),
            tx=left - 4,
            ty=6 + plot_h * (1 - f) + 3,
            label=f"{top * f:.0%}",
        )
        for f in (0.0, 0.5, 1.0)
    )
    labels = h(
        "<text x={l} y={y} font-size=10 fill=#555>{first} UTC</text>"
        "<text x={r} y={y} font-size=10 fill=#555 text-anchor=end>{last}</text>",
        l=left,
        r=width - 4,
        y=height - 4,
        first=when(minutes[0].start)[11:16] if minutes else "",
        last=when(minutes[-1].start)[11:16] if minutes else "",
    )
    return h(
        "<svg class=chart xmlns=http://www.w3.org/2000/svg width={w} height={h} "
        "viewBox='0 0 {w} {h}' role=img aria-label='Unknown share per minute, last hour'>"
        "{grid}{bars}{labels}</svg>",
        w=width,
        h=height,
        grid=grid,
        bars=join(bars),
        labels=labels,
    )


def share_section(activity: Activity) -> Html:
    minutes = activity.last_hour()
    answers = sum(m.answers for m in minutes)
    unknown = sum(m.unknown for m in minutes)
    share = f"{unknown / answers:.1%}" if answers else "-"
    return h(
        "<section id=share><h2>Unknown share, last hour</h2><p>{unknown} Unknown of {answers} "
        "answers ({share}), by minute:</p>{chart}</section>",
        unknown=f"{unknown:,}",
        answers=f"{answers:,}",
        share=share,
        chart=share_chart(minutes),
    )


def rules_section(ruleset: Ruleset, hits: dict[str, RuleHits], q: RuleQuery) -> Html:
    found = select_rules(ruleset, hits, q)
    never = sum(1 for r in ruleset.rules if r.id not in hits)
    layered = len(ruleset.layers) > 1
    rows = join(
        h(
            "<tr><td class=num>{order}</td><td><a class=rule href='{link}'>{id}</a></td>"
            "<td>{cls}</td><td class='num hits'>{count}</td><td>{last}</td>"
            "<td><code>{where}</code></td>{layer}</tr>",
            order=rule.order + 1,
            link=href("/console/rule", id=rule.id),
            id=rule.id,
            cls=rule.outcome.error_class.name,
            count=f"{hit.count:,}" if hit else "0",
            last=moment(hit.last) if hit else "never",
            where=f"{shown_file(ruleset, rule)}:{rule.location.line}",
            layer=h("<td>{}</td>", ruleset.layers[rule.layer].name) if layered else "",
        )
        for rule, hit in found.rows
    )

    def choice(value: str, current: str) -> Html:
        return h(
            "<option value={v}{sel}>{v}</option>",
            v=value,
            sel=Html(" selected") if value == current else "",
        )

    form = h(
        "<form class=filter method=get action='/console#rules'>"
        "<label>filter <input name=q value='{q}' maxlength={max} "
        "placeholder='id, class or file'></label> "
        "<label>show <select name=hits>{hits}</select></label> "
        "<label>sort <select name=sort>{sort}</select></label> "
        "<label>per page <input name=per type=number min=1 max={maxper} value={per}></label> "
        "<button>apply</button></form>",
        q=q.text,
        max=MAX_FILTER_CHARS,
        hits=join(choice(v, q.hits) for v in ("all", "never", "hit")),
        sort=join(choice(v, q.sort) for v in ("order", "hits", "last", "id")),
        maxper=MAX_PER_PAGE,
        per=q.per,
    )
    nav = h(
        "<p class=pages>page {page} of {pages} ({matched} rules) {prev} {next}</p>",
        page=found.page,
        pages=found.pages,
        matched=f"{found.matched:,}",
        prev=h("<a rel=prev href='{}'>previous</a>", q.link(page=found.page - 1))
        if found.page > 1
        else "",
        next=h("<a rel=next href='{}'>next</a>", q.link(page=found.page + 1))
        if found.page < found.pages
        else "",
    )
    return h(
        "<section id=rules><h2>Rules</h2><p>{total} rules; {never} never hit since start "
        "(<a href='{never_link}'>show them</a>).</p>{form}{nav}"
        "<table class=rules><tr><th>#</th><th>rule</th><th>class</th><th>hits</th>"
        "<th>last hit</th><th>location</th>{layer}</tr>{rows}</table>{nav}</section>",
        total=f"{len(ruleset.rules):,}",
        never=f"{never:,}",
        never_link=RuleQuery(hits="never").link(),
        form=form,
        nav=nav,
        layer=Html("<th>layer</th>") if layered else "",
        rows=rows,
    )


def unknowns_report(sample: UnknownSample, ruleset: Ruleset) -> Report:
    """The live sample grouped and assessed as `classifier unknowns --addr --rules` does."""
    source = "live sample"
    errors: list[str] = []
    clusterer = Clusterer(ruleset)
    clusterer.feed_sample(read_lines(io.StringIO(sample.lines()), source, errors))
    return assess(clusterer.result(), ruleset, [source], UNKNOWN_CLUSTERS_SHOWN)


def unknowns_section(grouped: _Grouped | None) -> Html:
    if grouped is None:
        return h(
            "<section id=unknowns><h2>Unknowns</h2><p>The live sample of Unknowns is off "
            "(--unknown-sample-bytes 0).</p></section>"
        )
    report = grouped.report
    clusters = join(
        h(
            "<article class=cluster id='{id}'><h3>{i}. <code>{id}</code> {count} ({share}) "
            "{reason}</h3><dl><dt>key</dt><dd><code>{key}</code></dd><dt>template</dt>"
            "<dd><code>{template}</code></dd><dt>seen</dt><dd>{first} .. {last}</dd></dl>"
            "<h4>examples</h4><pre class=examples>{examples}</pre>"
            "<h4>near misses and coverage</h4><pre class=near>{near}</pre></article>",
            i=i,
            id=a.cluster.id,
            count=f"{a.cluster.count:,}",
            share=f"{a.cluster.share:.1%}",
            reason=a.cluster.reason,
            key=a.cluster.key.label(),
            template=a.cluster.template or "(no message)",
            first=moment(a.cluster.first_seen),
            last=moment(a.cluster.last_seen),
            examples="\n".join(example_line(e) for e in a.cluster.examples),
            near="\n".join(ruleset_lines(a, report.ruleset, "")),
        )
        for i, a in enumerate(report.assessed, 1)
    )
    shown = len(report.assessed)
    more = len(report.clusters.clusters) - shown
    return h(
        "<section id=unknowns><h2>Unknowns</h2><p>The live sample holds {headline}, grouped as "
        "<code>classifier unknowns</code> groups them (their share of all answers: "
        "<a href='#share'>the chart above</a>); the {shown} largest{more}. "
        "<span class=note>Grouped at {made}.</span></p>{clusters}</section>",
        headline=headline(report),
        shown=shown,
        more=f" ({more} more not shown)" if more > 0 else "",
        made=moment(grouped.made),
        clusters=clusters,
    )


def shadow_section(shadow: Shadow | None, candidate: Ruleset | None) -> Html:
    if shadow is None or candidate is None:
        return h(
            "<section id=shadow><h2>Shadow</h2><p>No candidate ruleset "
            "(serve --candidate DIR shadows one).</p></section>"
        )
    found = shadow.disagreements()

    def example(e: Any) -> Html:
        return h(
            "<li><code>{d}</code><br>active: {ac} ({ar}) · candidate: {cc} ({cr})</li>",
            d=json.dumps(e.descriptor, ensure_ascii=False, sort_keys=True),
            ac=e.active.get("class", ""),
            ar=e.active.get("rule", "") or "-",
            cc=e.candidate.get("class", ""),
            cr=e.candidate.get("rule", "") or "-",
        )

    def kind(d: Disagreement) -> Html:
        active_class, candidate_class, active_rule, candidate_rule = d.kind
        return h(
            "<tr class=disagreement><td>{ar}</td><td>{ac}</td><td>{cr}</td><td>{cc}</td>"
            "<td class=num>{n}</td><td><ul>{examples}</ul></td></tr>",
            ar=active_rule or "-",
            ac=active_class,
            cr=candidate_rule or "-",
            cc=candidate_class,
            n=f"{d.count:,}",
            examples=join(example(e) for e in d.examples),
        )

    rows = join(kind(d) for d in found[:DISAGREEMENTS_SHOWN])
    untracked = (
        h(" {} more of kinds past the first thousand.", f"{shadow.untracked:,}")
        if shadow.untracked
        else ""
    )
    return h(
        "<section id=shadow><h2>Shadow: {name} {version} disagreements</h2><p>{kinds} kinds "
        "since {since} (kept afresh when either ruleset changes).{untracked}</p>"
        "<table class=shadow><tr><th>active rule</th><th>active class</th>"
        "<th>candidate rule</th><th>candidate class</th><th>count</th><th>examples "
        "(redacted)</th></tr>{rows}</table></section>",
        name=candidate.name,
        version=candidate.version,
        kinds=len(found),
        since=moment(shadow.since),
        untracked=untracked,
        rows=rows,
    )


def console_explanation(ruleset: Ruleset, text: str, rule_id: str) -> tuple[str, str]:
    """The form's descriptor explained as `classifier explain` prints it (what the explaining
    process runs): ("explained", text), ("invalid", the violations) or ("no_rule", "")."""
    try:
        descriptor = parse_descriptor(text, "<form>")
        _, _, explanation = explained_text(ruleset, descriptor, rule_id)
    except DescriptorError as exc:
        return "invalid", "\n".join(str(v) for v in exc.violations)
    except KeyError:
        return "no_rule", ""
    return "explained", explanation


def explain_form(descriptor: str = "", rule: str = "", *, fixed_rule: bool = False) -> Html:
    rule_field = (
        h("<input type=hidden name=rule value='{}'>", rule)
        if fixed_rule
        else h(
            "<label>rule (optional, as explain --rule) <input name=rule value='{}' "
            "maxlength=256></label>",
            rule,
        )
    )
    return h(
        "<form class=explain method=post action=/console/explain>"
        "<label for=descriptor>descriptor (YAML or JSON)</label>"
        "<textarea id=descriptor name=descriptor rows=10 cols=80 spellcheck=false "
        "placeholder='type: openai.RateLimitError&#10;http_status: 429&#10;origin: provider'>"
        "{descriptor}</textarea>{rule}<button>explain</button>"
        "<p class=note>Changes nothing. Explained in process against the serving ruleset, "
        "the text exactly as <code>classifier explain</code> prints it.</p></form>",
        descriptor=descriptor,
        rule=rule_field,
    )


def rule_page(ruleset: Ruleset, rule: CompiledRule, hit: RuleHits | None) -> Html:
    o = rule.outcome
    conditions = join(h("<li><code>{}</code></li>", c.text) for c in rule.all_conditions)
    runbook = h("<dt>runbook</dt><dd>{}</dd>", o.action.runbook_url) if o.action.runbook_url else ""
    return h(
        "<section class=rule><h2>rule <code id=rule-id>{id}</code> &rarr; {cls}</h2><dl>"
        "<dt>location</dt><dd><code>{where}</code></dd><dt>layer</dt><dd>{layer}</dd>"
        "<dt>description</dt><dd>{description}</dd><dt>effect</dt><dd>{effect}</dd>"
        "<dt>retryable</dt><dd>{retryable}</dd><dt>action</dt><dd><code>{action}</code>: "
        "{summary}</dd>{runbook}<dt>priority</dt><dd>{priority}</dd><dt>fallback</dt>"
        "<dd>{fallback}</dd><dt>hits since start</dt><dd class=hits>{hits}</dd>"
        "<dt>last hit</dt><dd>{last}</dd></dl><h3>when (every condition must hold)</h3>"
        "<ul class=conditions>{conditions}</ul></section>"
        "<section id=explain><h2>Explain a descriptor against this rule</h2>{form}</section>",
        id=rule.id,
        cls=o.error_class.name,
        where=str(rule.location),
        layer=ruleset.layers[rule.layer].name if ruleset.layers else ruleset.name,
        description=rule.description or "-",
        effect=o.effect.label,
        retryable="yes" if o.retryable else "no",
        action=o.action.id,
        summary=o.action.summary,
        runbook=runbook,
        priority=rule.priority,
        fallback="yes" if rule.fallback else "no",
        hits=f"{hit.count:,}" if hit else "0",
        last=moment(hit.last) if hit else "never",
        conditions=conditions,
        form=explain_form(rule=rule.id, fixed_rule=True),
    )


# the application -------------------------------------------------------------------------


class _RefusedError(Exception):
    """A response other than the page asked for (an error), raised to end the request."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class PageBudget:
    """A token bucket: `rate` pages a second on average, `burst` at most at once."""

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate, self.burst, self._clock = rate, burst, clock
        self._tokens = float(burst)
        self._at = clock()
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
            self._at = now
            if self._tokens < 1:
                return False
            self._tokens -= 1
            return True


@dataclass(frozen=True, slots=True)
class _Grouped:
    made: float
    """time.time() when it was made."""
    ready: float
    """time.monotonic() from which it may be remade."""
    key: tuple[int, str]
    """(Unknowns taken in, ruleset digest) it was made from."""
    report: Report


class Console:
    """The console's WSGI application; the admin port hands it every /console request."""

    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self._slots = threading.BoundedSemaphore(CONSOLE_AT_ONCE)
        self.budget = PageBudget(PAGES_PER_SECOND, PAGES_BURST)
        self._unknowns_lock = threading.Lock()
        self._unknowns: _Grouped | None = None
        self._css = resources.files("classifier.server").joinpath("console.css").read_bytes()

    def __call__(self, environ: dict[str, Any], start: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        method = environ.get("REQUEST_METHOD", "GET")
        if path == "/console/console.css":
            return self._send(start, "200 OK", self._css, "text/css; charset=utf-8")
        if path == "/console/favicon.svg":
            return self._send(start, "200 OK", FAVICON, "image/svg+xml")
        if not self.budget.take():
            return self._error(
                start,
                "429 Too Many Requests",
                f"the console makes at most {PAGES_PER_SECOND:g} pages a second; retry",
            )
        if not self._slots.acquire(blocking=False):
            return self._error(start, "503 Service Unavailable", "the console is busy; retry")
        try:
            started = time.perf_counter()
            body = self._route(path, method, environ)
            took = (time.perf_counter() - started) * 1000
            data = (body + f"<!-- made in {took:.1f} ms -->\n").encode()
            return self._send(start, "200 OK", data, "text/html; charset=utf-8")
        except _RefusedError as reply:
            return self._error(start, reply.status, reply.message)
        finally:
            self._slots.release()

    def _route(self, path: str, method: str, environ: dict[str, Any]) -> Html:
        query = urllib.parse.parse_qs(
            environ.get("QUERY_STRING", ""), keep_blank_values=True, max_num_fields=20
        )
        if path in ("/console", "/console/"):
            self._only(method, "GET")
            return self.overview(RuleQuery.parse(query))
        if path == "/console/rule":
            self._only(method, "GET")
            return self.rule((query.get("id") or [""])[0])
        if path == "/console/explain":
            self._only(method, "POST")
            return self.explain(self._form(environ))
        raise _RefusedError("404 Not Found", "not found")

    @staticmethod
    def _only(method: str, allowed: str) -> None:
        if method != allowed:
            raise _RefusedError("405 Method Not Allowed", f"use {allowed}")

    def overview(self, q: RuleQuery) -> Html:
        s = self.sources
        ruleset = s.active.current
        candidate = s.candidate.current if s.candidate is not None else None
        banners = [reload_section("active", s.active.last_reload)]
        if s.candidate is not None:
            banners.append(reload_section("candidate", s.candidate.last_reload))
        rulesets = [ruleset_section("serving", ruleset)]
        if candidate is not None:
            rulesets.append(ruleset_section("candidate", candidate))
        body = h(
            "<p class=process>classifier {version}, pid {pid}, up since {started}</p>"
            "{banners}<div id=rulesets>{rulesets}</div>{share}{unknowns}{shadow}"
            "<section id=explain><h2>Explain a descriptor</h2>{form}</section>{rules}",
            version=classifier.__version__,
            pid=os.getpid(),
            started=moment(s.activity.started),
            banners=join(banners),
            rulesets=join(rulesets),
            share=share_section(s.activity),
            rules=rules_section(ruleset, s.activity.hits(), q),
            unknowns=unknowns_section(self._unknowns_report(ruleset)),
            shadow=shadow_section(s.shadow, candidate),
            form=explain_form(),
        )
        return page(f"{ruleset.name} {ruleset.version}: classifier console", body)

    def rule(self, rule_id: str) -> Html:
        ruleset = self.sources.active.current
        rule = ruleset.rule(rule_id)
        if rule is None:
            raise _RefusedError(
                "404 Not Found",
                f"the serving ruleset ({ruleset.name} {ruleset.version}) has no rule {rule_id!r}",
            )
        hit = self.sources.activity.hit(rule.id)
        return page(f"rule {rule.id}: classifier console", rule_page(ruleset, rule, hit))

    def explain(self, form: dict[str, list[str]]) -> Html:
        text = (form.get("descriptor") or [""])[0]
        rule_id = (form.get("rule") or [""])[0].strip()
        if len(text.encode()) > self.sources.max_request_bytes:
            raise _RefusedError(
                "413 Content Too Large",
                f"the descriptor is larger than the request limit "
                f"({self.sources.max_request_bytes} bytes, --max-request-bytes)",
            )
        try:
            self.sources.explain_budget.take()
        except ExplainRefusedError as refused:
            raise _RefusedError("429 Too Many Requests", refused.reason) from None
        try:
            ruleset = self.sources.active.current
            try:
                (kind, explanation), cpu = self.sources.explainer.run(
                    ruleset, console_explanation, (text, rule_id), limits.EXPLAIN_TIMEOUT_SECONDS
                )
            except ExplainerFailedError as failed:
                raise _RefusedError(
                    "503 Service Unavailable", f"no explanation: {failed}"
                ) from None
            self.sources.explain_budget.charge(cpu)
        finally:
            self.sources.explain_budget.give()
        if kind == "invalid":
            result = h(
                "<section class=refused><h2>Not a valid descriptor</h2>"
                "<pre id=explanation>{}</pre></section>",
                explanation,
            )
        elif kind == "no_rule":
            result = h(
                "<section class=refused><h2>No such rule</h2><pre id=explanation>"
                "classifier explain: {} {} has no rule {}</pre></section>",
                ruleset.name,
                ruleset.version,
                repr(rule_id),
            )
        else:
            result = h(
                "<section class=explained><h2>Explained under {} {}</h2>"
                "<pre id=explanation>{}</pre></section>",
                ruleset.name,
                ruleset.version,
                explanation,
            )
        body = h(
            "{result}<section id=explain><h2>Explain another</h2>{form}</section>",
            result=result,
            form=explain_form(text, rule_id),
        )
        return page("explain: classifier console", body)

    def _form(self, environ: dict[str, Any]) -> dict[str, list[str]]:
        """The url-encoded form of a POST, refused unread when larger than a request may be."""
        limit = self.sources.max_request_bytes * PERCENT_ENCODING + 4096
        try:
            length = int(environ.get("CONTENT_LENGTH") or "")
        except ValueError:
            raise _RefusedError("411 Length Required", "send Content-Length") from None
        if length > limit:
            raise _RefusedError("413 Content Too Large", f"the form is larger than {limit} bytes")
        kind = environ.get("CONTENT_TYPE", "").split(";")[0].strip()
        if kind != FORM_TYPE:
            raise _RefusedError(
                "415 Unsupported Media Type", "send application/x-www-form-urlencoded"
            )
        raw = environ["wsgi.input"].read(length)
        try:
            return urllib.parse.parse_qs(
                raw.decode("utf-8"), keep_blank_values=True, max_num_fields=4, errors="strict"
            )
        except (UnicodeDecodeError, ValueError):
            raise _RefusedError("400 Bad Request", "the form is not url-encoded UTF-8") from None

    def _unknowns_report(self, ruleset: Ruleset) -> _Grouped | None:
        """The grouped live sample, remade when the sample or the serving ruleset changed and
        the duty cycle allows; while one request remakes it, others show the last one."""
        sample = self.sources.sample
        if sample is None:
            return None
        key = (sample.taken, ruleset.digest)
        last = self._unknowns
        if last is not None and (last.key == key or time.monotonic() < last.ready):
            return last
        if not self._unknowns_lock.acquire(blocking=last is None):
            return last
        try:
            last = self._unknowns
            if last is not None and (last.key == key or time.monotonic() < last.ready):
                return last
            started = time.monotonic()
            report = unknowns_report(sample, ruleset)
            took = time.monotonic() - started
            pause = max(UNKNOWNS_MIN_SECONDS, took / UNKNOWNS_DUTY)
            self._unknowns = _Grouped(time.time(), started + took + pause, key, report)
            return self._unknowns
        finally:
            self._unknowns_lock.release()

    @staticmethod
    def _send(start: StartResponse, status: str, data: bytes, kind: str) -> Iterable[bytes]:
        start(
            status,
            [("Content-Type", kind), ("Content-Length", str(len(data))), *SECURITY_HEADERS],
        )
        return [data]

    def _error(self, start: StartResponse, status: str, message: str) -> Iterable[bytes]:
        body = page(
            status, h("<section class=refused><h2>{}</h2><p>{}</p></section>", status, message)
        )
        return self._send(start, status, body.encode(), "text/html; charset=utf-8")
