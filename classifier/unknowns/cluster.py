"""Unknown records into clusters a person would call "the same failure".

Each Unknown is split first by its structural key (`structure`), then by the template of
its masked message (`mask`, `miner`). A cluster is one (key, template) pair; its id is a
hash of the two, so a later run over another log, or under a newer ruleset, names the
same failure the same way as long as its template is the same (masking makes most
templates independent of which messages a log happened to hold).

Memory follows the number of clusters, not of lines: a masked message seen before is not
given to the miner again, and per cluster only counts, a time histogram, three examples
and a small sample of distinct descriptors are kept.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from classifier.descriptor import Descriptor
from classifier.engine.evaluate import classify
from classifier.engine.ruleset import Ruleset
from classifier.errors import DescriptorError
from classifier.source.descriptor_file import descriptor_from_data
from classifier.taxonomy import ErrorClass
from classifier.unknowns.mask import mask
from classifier.unknowns.miner import TemplateMiner
from classifier.unknowns.read import Classified, Record
from classifier.unknowns.structure import StructuralKey, structural_key

EXAMPLES = 3
SAMPLE = 16
"""Distinct descriptors kept per cluster to check a ruleset's coverage of it."""
TREND_BUCKETS = 8
TREND_MIN_BUCKET_SECONDS = 60.0
"""A trend's bucket is at least a minute wide: over a shorter span (under eight minutes)
no trend word is given (`gone` over a 15-second log would say nothing)."""
MAX_BINS = 100_000
"""Time bins kept across all clusters; past it, bins double in width."""
CACHE_MAX = 200_000
"""Messages and masked messages remembered (not masked or mined again) before the memory is
cleared."""
SPARKS = "▁▂▃▄▅▆▇█"


def cluster_id(key: StructuralKey, template: str) -> str:
    """`u` and 10 hex digits of a hash of the structural key and the template."""
    digest = hashlib.blake2b(f"{key.text()}\n{template}".encode(), digest_size=5).hexdigest()
    return f"u{digest}"


@dataclass(frozen=True, slots=True)
class Example:
    where: str
    ts: float | None
    descriptor: dict[str, Any]
    masked: str = ""
    """The masked message: examples of one cluster are picked to differ in it."""

    def parsed(self) -> Descriptor:
        """The validated descriptor; raises DescriptorError when the line's is malformed."""
        return descriptor_from_data(self.descriptor)


@dataclass
class Cluster:
    """One failure: its key, template, how often and when it was seen, and examples of it."""

    id: str
    key: StructuralKey
    template: str
    count: int
    first_seen: float | None
    last_seen: float | None
    versions: dict[str, int]
    trend: tuple[int, ...]
    """Counts in TREND_BUCKETS equal parts of the log's time span (empty without times, or
    when the log spans only a few seconds)."""
    examples: tuple[Example, ...]
    sample: tuple[dict[str, Any], ...]
    share: float = 0.0

    @property
    def reason(self) -> str:
        return self.key.reason

    @property
    def typical(self) -> Example:
        """The member explained for near misses: the first seen."""
        return self.examples[0]

    def trend_label(self) -> str:
        """new, gone, rising, falling or steady, over the log's time span."""
        t = self.trend
        if not t or sum(t) == 0:
            return "-"
        quarter = max(1, len(t) // 4)
        if sum(t[:-quarter]) == 0:
            return "new"
        if sum(t[-quarter:]) == 0:
            return "gone"
        half = len(t) // 2
        early, late = sum(t[:half]), sum(t[half:])
        if late > 1.5 * early:
            return "rising"
        if early > 1.5 * late:
            return "falling"
        return "steady"

    def sparkline(self) -> str:
        if not self.trend:
            return ""
        top = max(self.trend) or 1
        return "".join(
            "·" if n == 0 else SPARKS[min(len(SPARKS) - 1, n * len(SPARKS) // (top + 1))]
            for n in self.trend
        )


@dataclass
class Clusters:
    """Every cluster of a corpus, the largest first, and what the corpus held."""

    clusters: list[Cluster]
    unknowns: int
    lines: int
    start: float | None
    end: float | None
    errors: list[str] = field(default_factory=list)
    answers: int | None = None
    """All answers the Unknowns are a share of: the lines read, or None when some were read
    from a sample that holds only Unknowns (a server's live sample), whose share of all
    answers the lines cannot say."""
    assignments: dict[tuple[StructuralKey, str], str] = field(default_factory=dict)
    """(key, masked message) -> cluster id, when asked for (`--propose` needs it)."""

    def by_id(self, cid: str) -> Cluster | None:
        return next((c for c in self.clusters if c.id == cid), None)

    def cluster_of(self, data: dict[str, Any], reason: str) -> str | None:
        """The cluster a descriptor (descriptor-file shape) with this Unknown reason is in."""
        key = structural_key(data, reason)
        return self.assignments.get((key, mask(str(data.get("message", "")))))


@dataclass
class _Acc:
    count: int = 0
    first: float | None = None
    last: float | None = None
    versions: Counter[str] = field(default_factory=Counter)
    bins: Counter[int] = field(default_factory=Counter)
    examples: list[Example] = field(default_factory=list)
    sample: dict[str, None] = field(default_factory=dict)
    tries: int = 0


class Clusterer:
    """Feed records with `add`, then take the clusters with `result`.

    Records that carry no answer are classified under `ruleset` first (and a record
    without an answer and without a ruleset is an error).
    """

    def __init__(self, ruleset: Ruleset | None = None, *, keep_assignments: bool = False) -> None:
        self.ruleset = ruleset
        self.keep_assignments = keep_assignments
        self.miner = TemplateMiner()
        self._accs: dict[tuple[StructuralKey, int], _Acc] = {}
        self._seen: dict[tuple[StructuralKey, str], int] = {}
        self._masks: dict[str, str] = {}
        """Messages masked already (real traffic repeats its messages word for word)."""
        self._resolution = 1.0
        self._bins = 0
        self.unknowns = 0
        self.lines = 0
        self.start: float | None = None
        self.end: float | None = None
        self.errors: list[str] = []
        self.unknowns_only = False
        """Some records came from a sample of Unknowns only (see Clusters.answers)."""

    def feed(self, records: Iterable[Record | Classified]) -> Clusterer:
        for record in records:
            self.add(record)
        return self

    def feed_sample(self, records: Iterable[Record | Classified]) -> Clusterer:
        """Records of a sample that holds only Unknowns (a server's live sample)."""
        self.unknowns_only = True
        return self.feed(records)

    def add(self, record: Record | Classified) -> None:
        self.lines += record.weight
        ts = record.ts
        if ts is not None:
            if self.start is None or ts < self.start:
                self.start = ts
            if self.end is None or ts > self.end:
                self.end = ts
        if isinstance(record, Classified):
            return
        if record.needs_answer and not self._answer(record):
            return
        if record.answer_class != "Unknown":
            return
        self.unknowns += record.weight
        key = structural_key(record.descriptor, record.reason)
        message = str(record.descriptor.get("message", ""))
        masked = self._masks.get(message)
        if masked is None:
            masked = mask(message)
            if len(self._masks) >= CACHE_MAX:
                self._masks.clear()
            self._masks[message] = masked
        seen = (key, masked)
        tid = self._seen.get(seen)
        if tid is None:
            tid = self.miner.add(key, masked)
            if not self.keep_assignments and len(self._seen) >= CACHE_MAX:
                self._seen.clear()
            self._seen[seen] = tid
        acc = self._accs.get((key, tid))
        if acc is None:
            acc = self._accs[key, tid] = _Acc()
        self._count(acc, record, masked)

    def _answer(self, record: Record) -> bool:
        """Classify a record that came without an answer; False (an error) without a ruleset."""
        if self.ruleset is None:
            self.errors.append(f"{record.where}: no answer recorded; classifying it needs --rules")
            return False
        d = record.parsed
        if d is None:
            try:
                d = record.parsed = descriptor_from_data(record.descriptor)
            except DescriptorError as exc:
                self.errors += [f"{record.where}: {v}" for v in exc.violations]
                return False
        result = classify(self.ruleset, d)
        record.answer_class = result.error_class.name
        if result.error_class is ErrorClass.Unknown:
            record.reason = result.unknown_reason.name
            record.version = record.version or self.ruleset.version
        return True

    def _count(self, acc: _Acc, record: Record, masked: str) -> None:
        acc.count += record.weight
        ts = record.ts
        if ts is not None:
            if acc.first is None or ts < acc.first:
                acc.first = ts
            if acc.last is None or ts >= acc.last:
                acc.last = ts
            b = int(ts // self._resolution)
            if b not in acc.bins:
                self._bins += 1
            acc.bins[b] += record.weight
            if self._bins > MAX_BINS:
                self._coarsen()
        if record.version:
            acc.versions[record.version] += record.weight
        example = Example(record.where, ts, record.descriptor, masked)
        kept = acc.examples
        if len(kept) < 2:
            kept.append(example)
        elif _difference(kept[0], kept[1]) < _difference(kept[0], example):
            kept[1] = example  # a second example that differs from the first, when one does
        elif len(kept) < EXAMPLES:
            kept.append(example)
        else:
            kept[-1] = example  # and the latest
        if len(acc.sample) < SAMPLE and acc.tries < 4 * SAMPLE:
            acc.tries += 1
            acc.sample.setdefault(json.dumps(record.descriptor, sort_keys=True), None)

    def _coarsen(self) -> None:
        """Double the width of every time bin."""
        self._resolution *= 2
        self._bins = 0
        for acc in self._accs.values():
            merged: Counter[int] = Counter()
            for b, n in acc.bins.items():
                merged[b // 2] += n
            acc.bins = merged
            self._bins += len(merged)

    def result(self) -> Clusters:
        """The clusters, largest first (ties by id)."""
        merged: dict[str, tuple[StructuralKey, str, list[_Acc]]] = {}
        ids: dict[tuple[StructuralKey, int], str] = {}
        templates: dict[StructuralKey, dict[int, str]] = {}
        for (key, tid), acc in self._accs.items():
            if key not in templates:
                templates[key] = self.miner.templates(key)
            template = templates[key][tid]
            cid = cluster_id(key, template)
            ids[key, tid] = cid
            merged.setdefault(cid, (key, template, []))[2].append(acc)
        clusters = [self._cluster(cid, *parts) for cid, parts in merged.items()]
        for c in clusters:
            c.share = c.count / self.unknowns if self.unknowns else 0.0
        clusters.sort(key=lambda c: (-c.count, c.id))
        assignments = (
            {seen: ids[seen[0], tid] for seen, tid in self._seen.items()}
            if self.keep_assignments
            else {}
        )
        return Clusters(
            clusters,
            self.unknowns,
            self.lines,
            self.start,
            self.end,
            self.errors,
            None if self.unknowns_only else self.lines,
            assignments,
        )

    def _cluster(self, cid: str, key: StructuralKey, template: str, accs: list[_Acc]) -> Cluster:
        firsts = [a.first for a in accs if a.first is not None]
        lasts = [a.last for a in accs if a.last is not None]
        versions: Counter[str] = Counter()
        examples: list[Example] = []
        sample: dict[str, None] = {}
        for a in sorted(accs, key=lambda a: (a.first is None, a.first or 0.0)):
            versions.update(a.versions)
            examples += a.examples
            for s in a.sample:
                if len(sample) < SAMPLE:
                    sample.setdefault(s, None)
        return Cluster(
            id=cid,
            key=key,
            template=template,
            count=sum(a.count for a in accs),
            first_seen=min(firsts) if firsts else None,
            last_seen=max(lasts) if lasts else None,
            versions=dict(versions.most_common()),
            trend=self._trend(accs),
            examples=tuple(_distinct(examples)[:EXAMPLES]),
            sample=tuple(json.loads(s) for s in sample),
        )

    def _trend(self, accs: list[_Acc]) -> tuple[int, ...]:
        if self.start is None or self.end is None:
            return ()
        span = self.end - self.start
        if span < max(self._resolution, TREND_MIN_BUCKET_SECONDS) * TREND_BUCKETS:
            return ()  # too short a log for a trend to say anything
        counts = [0] * TREND_BUCKETS
        for a in accs:
            for b, n in a.bins.items():
                at = b * self._resolution
                i = int((at - self.start) / span * TREND_BUCKETS)
                counts[max(0, min(TREND_BUCKETS - 1, i))] += n
        return tuple(counts)


def _message(e: Example) -> str:
    return e.masked


def _difference(a: Example, b: Example) -> int:
    """2 when the masked messages differ (another variant), 1 when only the values do."""
    if a.masked != b.masked:
        return 2
    return 1 if a.descriptor.get("message") != b.descriptor.get("message") else 0


def _distinct(examples: list[Example]) -> list[Example]:
    """First seen first, then ones whose masked message differs from those kept."""
    out: list[Example] = []
    for e in examples:
        if all(_message(e) != _message(k) for k in out):
            out.append(e)
    for e in examples:
        if len(out) >= EXAMPLES:
            break
        if e not in out:
            out.append(e)
    return out
