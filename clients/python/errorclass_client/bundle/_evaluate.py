"""The evaluator: a bundle's rules, indexed once, and the precedence over their matches.

Everything here follows docs/bundles.md and the bundle itself (its
`descriptor` normalisation, its `precedence`), never the service's code:
this is the reference the other languages' evaluators are read against,
and clients/spec/vectors/bundle*.json hold all of them to the service's
answers.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from errorclass_client.retry_after import EVIDENCE, RetryAfter, retry_after, utc_now

Subject = Any
"""A normalised descriptor (`_Descriptor`) or one of its causes (`_Cause`)."""
Test = Callable[[Subject], bool]

UNTYPED = 1 << 30
"""The type depth of a rule without a type: after every typed rule (a chain is at most
MAX_SUPERTYPES + 1 long)."""


class BundleError(Exception):
    """A bundle this evaluator will not use; `code` is stable (docs/bundles.md):

    unsigned, unknown_key, bad_signature, malformed_signatures   (verification)
    invalid_bundle, unsupported_format                            (the document)
    missing_dependency                                            (an extra not installed)
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class Action:
    id: str
    summary: str
    runbook_url: str = ""


@dataclass(frozen=True, slots=True)
class Answer:
    """What the service answers for a descriptor, from the bundle: class (number and name),
    action, effect, retryable, the deciding rule (empty for an Unknown), the ruleset's
    version and digest, and why an Unknown is one (`no_match`, `conflict`; empty otherwise)."""

    error_class: int
    class_name: str
    action: Action
    effect: str
    retryable: bool
    rule_id: str
    ruleset_version: str
    ruleset_digest: str
    unknown_reason: str = ""
    retry_after: RetryAfter | None = None
    """How long to wait before retrying, for a retryable answer whose descriptor carries
    the provider's retry evidence (capped by the rule's `retry_after_cap_seconds`)."""


@dataclass(slots=True)
class _Cause:
    chain: tuple[str, ...]
    http_status: int | None
    grpc_status: int | None
    code: str
    message: str
    message_bytes: bytes | None = None


@dataclass(slots=True)
class _Descriptor(_Cause):
    origin: str = ""
    language: str = ""
    provider: str = ""
    attributes: Mapping[str, str] | None = None
    causes: tuple[_Cause, ...] = ()


@dataclass(frozen=True, slots=True)
class _Rule:
    id: str
    order: int
    names: frozenset[str] | None
    tests: tuple[Test, ...]
    split: tuple[str, frozenset[Any]] | None
    """A plain field and its values, one of the rule's conditions: a descriptor whose field
    is elsewhere cannot match, so a bucket looks the rule up by it instead of testing it."""
    tier: int
    """0 decisive, 1 decisive fallback, 2 plain, 3 fallback: the first two precedence keys."""
    rank: tuple[int, int, int]
    """(-condition_count, -priority, layer): the keys after type depth."""
    answer: Answer
    agree_on: tuple[int, str]
    """(class, effect): what tied rules must agree on."""
    cap: dt.timedelta | None
    """The longest wait the answer advises: present exactly when it is retryable."""


class Normaliser:
    """What a descriptor goes through before matching, read from the bundle's `descriptor`."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.whitespace: str = spec["whitespace"]
        self.max_message: int = spec["message_max_chars"]
        self.aliases: dict[str, str] = dict(spec["origin_aliases"])
        self.limits: dict[str, int] = dict(spec["limits"])
        self.lower = frozenset(spec["lower_cased"])
        if set(spec["stripped"]) != {"type", "supertypes", "code", "language", "provider"}:
            raise BundleError(
                "unsupported_format", "the bundle strips fields this evaluator does not"
            )

    def strip(self, text: str) -> str:
        return text.strip(self.whitespace)

    def message(self, text: str) -> str:
        if not text.isascii():
            try:
                text.encode()
            except UnicodeEncodeError:
                text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return text[: self.max_message]

    def cause(self, data: Mapping[str, Any]) -> _Cause:
        return _Cause(
            chain=self._chain(data),
            http_status=data.get("http_status"),
            grpc_status=data.get("grpc_status"),
            code=self.strip(str(data.get("code", ""))),
            message=self.message(data.get("message", "")),
        )

    def descriptor(self, data: Mapping[str, Any]) -> _Descriptor:
        origin = str(data.get("origin", "") or "").strip().lower()
        origin = self.aliases.get(origin, origin)
        language = self.strip(data.get("language", ""))
        provider = self.strip(data.get("provider", ""))
        d = _Descriptor(
            chain=self._chain(data),
            http_status=data.get("http_status"),
            grpc_status=data.get("grpc_status"),
            code=self.strip(str(data.get("code", ""))),
            message=self.message(data.get("message", "")),
            origin="" if origin == "unspecified" else origin,
            language=language.lower() if "language" in self.lower else language,
            provider=provider.lower() if "provider" in self.lower else provider,
            attributes=data.get("attributes") or {},
            causes=tuple(self.cause(c) for c in data.get("causes", ())),
        )
        self._check(d)
        return d

    def _chain(self, data: Mapping[str, Any]) -> tuple[str, ...]:
        return (self.strip(data["type"]), *(self.strip(s) for s in data.get("supertypes", ())))

    def _check(self, d: _Descriptor) -> None:
        """Refuse what the service refuses (ValueError naming the field): an answer for a
        descriptor the service would not classify would be a local answer it never gives."""
        lim = self.limits
        subjects: Sequence[_Cause] = (d, *d.causes)
        if len(d.causes) > lim["MAX_CAUSES"]:
            raise ValueError(f"descriptor.causes: more than {lim['MAX_CAUSES']} causes")
        for s in subjects:
            if not s.chain[0] or len(s.chain) - 1 > lim["MAX_SUPERTYPES"]:
                raise ValueError("descriptor.type: empty, or too many supertypes")
            if any(not n or len(n) > lim["MAX_TYPE_NAME_CHARS"] for n in s.chain):
                raise ValueError("descriptor.type: a type name empty or past its limit")
            if len(s.code) > lim["MAX_CODE_CHARS"]:
                raise ValueError("descriptor.code: past its limit")
        if max(len(d.language), len(d.provider)) > lim["MAX_LABEL_CHARS"]:
            raise ValueError("descriptor.language/provider: past its limit")
        attributes = d.attributes or {}
        if len(attributes) > lim["MAX_ATTRIBUTES"] or any(
            not 0 < len(k) <= lim["MAX_ATTRIBUTE_KEY_CHARS"]
            or len(v) > lim["MAX_ATTRIBUTE_VALUE_CHARS"]
            for k, v in attributes.items()
        ):
            raise ValueError("descriptor.attributes: past a limit, or an empty key")


def _is_set(value: Any) -> bool:
    return value is not None and value != ""


def _test(c: Mapping[str, Any], re2: Any) -> Test:
    """One condition of the bundle as a test of a subject (closed over its values)."""
    kind = c["kind"]
    if kind == "type":
        names = frozenset(c["names"])
        return lambda s: not names.isdisjoint(s.chain)
    if kind == "field_in":
        field = c["field"]
        if "ranges" in c:
            spans = tuple((lo, hi) for lo, hi in c["ranges"])

            def in_ranges(s: Subject) -> bool:
                v = getattr(s, field)
                return v is not None and any(lo <= v <= hi for lo, hi in spans)

            return in_ranges
        values = frozenset(c["values"])
        return lambda s: getattr(s, field) in values
    if kind == "present":
        field, wanted = c["field"], bool(c["present"])
        return lambda s: _is_set(getattr(s, field)) is wanted
    if kind == "message":
        search = re2.compile(c["pattern"], _options(re2)).search

        def matches(s: Subject) -> bool:
            raw = s.message_bytes
            if raw is None:
                raw = s.message_bytes = s.message.encode()
            return search(raw) is not None

        return matches
    if kind == "attribute":
        name, values = c["name"], frozenset(c["values"])
        return lambda s: s.attributes.get(name) in values
    if kind == "cause":
        inner = tuple(_test(i, re2) for i in c["conditions"])
        return lambda s: any(all(t(cause) for t in inner) for cause in s.causes)
    raise BundleError("unsupported_format", f"a condition of kind {kind!r}")


_OPTIONS: list[Any] = []


def _options(re2: Any) -> Any:
    """RE2 as the service runs it: errors not logged, 8 MiB of memory per pattern."""
    if not _OPTIONS:
        options = re2.Options()
        options.log_errors = False
        options.max_mem = 8 * 1024 * 1024
        _OPTIONS.append(options)
    return _OPTIONS[0]


SPLIT_FIELDS = ("code", "grpc_status", "provider", "origin", "language")


class _Bucket:
    """Rules that share a type name (or have none), looked up by their split field."""

    __slots__ = ("always", "by_field")

    def __init__(self, rules: Sequence[_Rule]) -> None:
        self.always = [r for r in rules if r.split is None]
        by_field: dict[str, dict[Any, list[_Rule]]] = {}
        for rule in rules:
            if rule.split is not None:
                field, values = rule.split
                for value in values:
                    by_field.setdefault(field, {}).setdefault(value, []).append(rule)
        self.by_field = tuple(by_field.items())

    def found(self, d: _Descriptor) -> list[_Rule]:
        """The rules here whose every condition holds for d."""
        out = [r for r in self.always if _holds(r, d)]
        for field, index in self.by_field:
            for r in index.get(getattr(d, field), ()):
                if _holds(r, d):
                    out.append(r)
        return out


def _holds(rule: _Rule, d: _Descriptor) -> bool:
    # A loop, not all(<generator>): half the cost, on the hottest path.
    for test in rule.tests:  # noqa: SIM110
        if not test(d):
            return False
    return True


def _split(conditions: Sequence[Mapping[str, Any]]) -> tuple[str, frozenset[Any]] | None:
    plain = {
        c["field"]: c["values"] for c in conditions if c["kind"] == "field_in" and "values" in c
    }
    field = next((f for f in SPLIT_FIELDS if f in plain), None)
    return None if field is None else (field, frozenset(plain[field]))


def _cap(answer: Mapping[str, Any]) -> dt.timedelta | None:
    """A retryable answer's cap on the wait it advises; None for one that advises none."""
    seconds = answer.get("retry_after_cap_seconds")
    if seconds is None or not answer["retryable"]:
        return None
    return dt.timedelta(seconds=seconds)


class Evaluator:
    """A bundle's rules, indexed by type name within each precedence tier."""

    def __init__(self, data: Mapping[str, Any], re2: Any) -> None:
        ruleset = data["ruleset"]
        self.version: str = ruleset["version"]
        self.digest: str = ruleset["digest"]
        self.normaliser = Normaliser(data["descriptor"])
        self.unknown = {
            reason: self._answer(data["unknown"][reason], "", reason)
            for reason in ("no_match", "conflict")
        }
        rules = [self._rule(r, re2) for r in data["rules"]]
        self.tiers: list[tuple[dict[str, _Bucket], _Bucket]] = []
        for tier in range(4):
            by_type: dict[str, list[_Rule]] = {}
            untyped: list[_Rule] = []
            for rule in (r for r in rules if r.tier == tier):
                if rule.names is None:
                    untyped.append(rule)
                for name in rule.names or ():
                    by_type.setdefault(name, []).append(rule)
            if by_type or untyped:
                buckets = {name: _Bucket(rs) for name, rs in by_type.items()}
                self.tiers.append((buckets, _Bucket(untyped)))

    def _answer(self, a: Mapping[str, Any], rule_id: str, reason: str = "") -> Answer:
        act = a["action"]
        return Answer(
            error_class=a["class"],
            class_name=a["class_name"],
            action=Action(act["id"], act["summary"], act.get("runbook_url", "")),
            effect=a["effect"],
            retryable=a["retryable"],
            rule_id=rule_id,
            ruleset_version=self.version,
            ruleset_digest=self.digest,
            unknown_reason=reason,
        )

    def _rule(self, r: Mapping[str, Any], re2: Any) -> _Rule:
        names = r.get("type")
        answer = self._answer(r["answer"], r["id"])
        return _Rule(
            id=r["id"],
            order=r["order"],
            names=frozenset(names) if names is not None else None,
            tests=tuple(_test(c, re2) for c in r["conditions"]),
            split=_split(r["conditions"]),
            tier=(0 if r["decisive"] else 2) + (1 if r["fallback"] else 0),
            rank=(-r["condition_count"], -r["priority"], r["layer"]),
            answer=answer,
            agree_on=(answer.error_class, answer.effect),
            cap=_cap(r["answer"]),
        )

    def classify(self, data: Mapping[str, Any], now: dt.datetime | None = None) -> Answer:
        d = self.normaliser.descriptor(data)
        for by_type, untyped in self.tiers:
            found = self._nearest(by_type, untyped, d)
            if found:
                rule = self._decide(found)
                if rule is None:
                    return self.unknown["conflict"]
                attributes = d.attributes
                if rule.cap is None or not attributes or EVIDENCE.isdisjoint(attributes):
                    return rule.answer
                wait = retry_after(attributes, rule.cap, utc_now if now is None else lambda: now)
                return rule.answer if wait is None else replace(rule.answer, retry_after=wait)
        return self.unknown["no_match"]

    @staticmethod
    def _nearest(by_type: Mapping[str, _Bucket], untyped: _Bucket, d: _Descriptor) -> list[_Rule]:
        """The matching rules at the nearest type depth that has any (type depth is the next
        precedence key after the tier, so nothing deeper can win)."""
        for name in d.chain:
            bucket = by_type.get(name)
            if bucket is not None:
                found = bucket.found(d)
                if found:
                    return found
        return untyped.found(d)

    @staticmethod
    def _decide(found: list[_Rule]) -> _Rule | None:
        """The rule that answers among those found at one depth; None for a conflict."""
        best = min(r.rank for r in found)
        top = sorted((r for r in found if r.rank == best), key=lambda r: r.order)
        first = top[0]
        if any(r.agree_on != first.agree_on for r in top[1:]):
            return None
        return first
