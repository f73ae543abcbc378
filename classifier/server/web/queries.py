"""What the console's pages read: the process's own state (`Sources`), never changed from
here, and the questions asked of it: which rules a page of the table shows, and the live
Unknowns grouped, kept between pages (`UnknownGroups`) because grouping costs seconds.
"""

from __future__ import annotations

import io
import threading
import time
import urllib.parse
from dataclasses import dataclass

from classifier.engine.ruleset import CompiledRule, Ruleset
from classifier.server.explain import Explaining
from classifier.server.observers.activity import Activity, RuleHits
from classifier.server.observers.shadow import Shadow
from classifier.server.observers.unknown_sample import UnknownSample
from classifier.server.shared.serving_ruleset import RulesetHolder
from classifier.source.loader import shown_source
from classifier.unknowns.cluster import Clusterer
from classifier.unknowns.inbox_report import Report, assess
from classifier.unknowns.read import read_lines

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


@dataclass(frozen=True)
class Sources:
    """What the pages read: the process's own state, never changed from here."""

    active: RulesetHolder
    activity: Activity
    explaining: Explaining
    """The server's explanations (its explain budget and explaining process), shared with
    gRPC explain calls."""
    max_request_bytes: int
    candidate: RulesetHolder | None = None
    sample: UnknownSample | None = None
    shadow: Shadow | None = None


def href(path: str, **query: object) -> str:
    """A console link (escaped where a template puts it into an attribute)."""
    pairs = {k: str(v) for k, v in query.items() if v not in ("", None)}
    return f"{path}?{urllib.parse.urlencode(pairs)}" if pairs else path


@dataclass(frozen=True, slots=True)
class RuleQuery:
    """Which rules a page of the table shows."""

    text: str = ""
    hits: str = "all"
    """all, never (not hit since start) or hit."""
    sort: str = "order"
    """order (ruleset order, the top layer's rules first), hits (most first), last (latest
    first) or id."""
    page: int = 1
    per: int = PER_PAGE
    layer: str = ""
    """Only the rules of the layers of this name; "" for every layer."""

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
            layer=one("layer", "").strip()[:MAX_FILTER_CHARS],
        )

    def link(self, **changes: object) -> str:
        values: dict[str, object] = {
            "q": self.text,
            "hits": "" if self.hits == "all" else self.hits,
            "sort": "" if self.sort == "order" else self.sort,
            "page": self.page if self.page != 1 else "",
            "per": self.per if self.per != PER_PAGE else "",
            "layer": self.layer,
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
    """The rules of one page of the table: filtered, sorted, then cut to the page.

    In ruleset order, the top layer's rules come first: a team's own dozen rules are
    what its operators look for, not the last page after the library's hundreds."""
    needle = q.text.lower()
    layers = {i for i, layer in enumerate(ruleset.layers) if layer.name == q.layer}
    rows = [
        (rule, hits.get(rule.id))
        for rule in ruleset.rules
        if (not q.layer or rule.layer in layers)
        and (
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
    if q.sort == "order" and len(ruleset.layers) > 1:
        rows.sort(key=lambda r: r[0].layer)  # stable: ruleset order within a layer
    elif q.sort == "hits":
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


def unknowns_report(sample: UnknownSample, ruleset: Ruleset) -> Report:
    """The live sample grouped and assessed as `classifier unknowns --addr --rules` does."""
    source = "live sample"
    errors: list[str] = []
    clusterer = Clusterer(ruleset)
    clusterer.feed_sample(read_lines(io.StringIO(sample.lines()), source, errors))
    return assess(clusterer.result(), ruleset, [source], UNKNOWN_CLUSTERS_SHOWN)


@dataclass(frozen=True, slots=True)
class Grouped:
    """The live Unknowns grouped once, and when."""

    made: float
    """time.time() when it was made."""
    ready: float
    """time.monotonic() from which it may be remade."""
    key: tuple[int, str]
    """(Unknowns taken in, ruleset digest) it was made from."""
    report: Report


class UnknownGroups:
    """The live sample grouped, kept between pages: remade when the sample or the serving
    ruleset changed and the duty cycle allows; while one request remakes it, others show the
    last one."""

    def __init__(self, sample: UnknownSample | None) -> None:
        self.sample = sample
        self._lock = threading.Lock()
        self._last: Grouped | None = None

    def get(self, ruleset: Ruleset) -> Grouped | None:
        """The groups to show under `ruleset`; None when the live sample is off."""
        sample = self.sample
        if sample is None:
            return None
        key = (sample.taken, ruleset.digest)
        last = self._last
        if last is not None and (last.key == key or time.monotonic() < last.ready):
            return last
        if not self._lock.acquire(blocking=last is None):
            return last
        try:
            last = self._last
            if last is not None and (last.key == key or time.monotonic() < last.ready):
                return last
            started = time.monotonic()
            report = unknowns_report(sample, ruleset)
            took = time.monotonic() - started
            pause = max(UNKNOWNS_MIN_SECONDS, took / UNKNOWNS_DUTY)
            self._last = Grouped(time.time(), started + took + pause, key, report)
            return self._last
        finally:
            self._lock.release()
