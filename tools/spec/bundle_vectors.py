"""The bundles of clients/spec/bundles/ and the `bundle` and `bundle_verify` vector files.

Bundles: the bundled library's (`library.json`) and one per purpose-built
ruleset of clients/spec/rulesets/ (precedence steps and ties, every
condition kind, layers with override and disable), built by the service's
own `classifier bundle build` code.

`bundle` vectors: a descriptor, spelt as every vector spells one, with the
answer the service's engine gives for it against the named bundle's
ruleset (the engine is the oracle; the indexed and the unindexed engine are
checked to agree on each). Their descriptors come from every case of the
bundled library, the public corpus, the conformance suite's drift list (the
real SDK type names recorded in the repository), and descriptors generated
around each rule's boundaries: a witness built from the rule's conditions,
then each condition moved to and past its edge (status ranges +-1, codes,
labels as sent, type depth, cause depth, the message cut, Unicode), all in
a fixed order with no randomness.

`bundle_verify` vectors: a bundle, its signatures and the trusted public
keys, with the verifier's verdict, signed with the TEST keys of
clients/spec/keys/ (generated once, committed, used nowhere else).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, assert_never

import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from classifier import limits
from classifier.answer import retry_after_dict
from classifier.bundle import bundle_bytes
from classifier.bundle.build import ranges
from classifier.bundle.format import SignaturesDoc
from classifier.bundle.signing import (
    BundleRefusedError,
    Refusal,
    add_signature,
    dump_signatures,
    parse_signatures,
    public_key_from_pem,
    sign,
    verify,
)
from classifier.engine.compiler import load_ruleset
from classifier.engine.conditions import (
    AttributeIs,
    CauseMatches,
    Condition,
    FieldIn,
    FieldPresent,
    MessageMatches,
    TypeIs,
)
from classifier.engine.evaluate import classify, classify_unindexed
from classifier.engine.retry_after import SOURCES
from classifier.engine.ruleset import CompiledRule, Ruleset
from classifier.lint.witness import WitnessBuilder
from classifier.regress.cases import files_under, is_case_file, read_case_file
from classifier.source.descriptor_file import descriptor_from_data
from classifier.source.library import bundled_library
from classifier.taxonomy import Origin
from tools.spec.facts import ROOT, SPEC
from tools.spec.vectors import _accepted, vector_fields

SOURCES_SET = frozenset(SOURCES)
RULESETS = SPEC / "rulesets"
BUNDLES = SPEC / "bundles"
KEYS = SPEC / "keys"
TEST_BUNDLES = ("precedence", "kinds", "layers")
"""The purpose-built rulesets of clients/spec/rulesets/ that have a bundle (layers-base is
only the base of layers)."""
FILLER_TYPE = "F"
FRESH_TYPE = "spec.Fresh"
WHITESPACE_SAMPLES = ("\u3000", "\u0085", "\u001c", "\t", "\u2028", " ")
"""Characters the spec's whitespace set strips that a language's own trim may keep."""
LABEL_SAMPLES = ("\u0130", "\u212a", "\u03a3", "\u00d6")
"""Letters whose lower case differs across languages' lower-casing (dotted capital I, the
Kelvin sign, capital sigma, a Latin-1 capital)."""


def _bundle_rulesets() -> dict[str, Path]:
    return {"library": bundled_library(), **{n: ROOT / RULESETS / n for n in TEST_BUNDLES}}


@functools.cache
def rulesets() -> dict[str, Ruleset]:
    """Each bundle's ruleset, compiled with the repository as the working directory, so a
    rule's location (`clients/spec/rulesets/kinds/rules.yaml:3:5`) does not depend on it."""
    with contextlib.chdir(ROOT):
        return {name: load_ruleset(path) for name, path in _bundle_rulesets().items()}


def bundle_files() -> dict[Path, str]:
    """Every bundle clients/spec holds, by path relative to the repository."""
    return {
        BUNDLES / f"{name}.json": bundle_bytes(rs).decode("ascii")
        for name, rs in rulesets().items()
    }


# answers ---------------------------------------------------------------------------------------


NOW = "2026-01-01T00:00:00Z"
"""The runtime's clock in every bundle vector whose descriptor carries retry evidence (a
date in a header becomes a wait against it when the provider sent no `date`)."""


def _now() -> dt.datetime:
    return dt.datetime.fromisoformat(NOW)


def has_retry_evidence(data: dict[str, Any]) -> bool:
    return not SOURCES_SET.isdisjoint(data.get("attributes", {}))


def want(ruleset: Ruleset, data: dict[str, Any]) -> dict[str, Any]:
    """The engine's answer, in the vectors' spelling (empty values left out)."""
    d = _accepted(data)
    answer = classify(ruleset, d, now=_now)
    oracle = classify_unindexed(ruleset, d, now=_now)
    assert answer == oracle, f"the index and the oracle disagree on {data}"
    out: dict[str, Any] = {
        "class": answer.error_class.name,
        "action": answer.action.id,
        "effect": answer.effect.label,
    }
    if answer.retryable:
        out["retryable"] = True
    if answer.rule_id:
        out["rule_id"] = answer.rule_id
    if answer.unknown_reason:
        out["unknown_reason"] = answer.unknown_reason.name
    if answer.retry_after is not None:
        out["retry_after"] = retry_after_dict(answer.retry_after)
    return out


Vector = dict[str, Any]


class Vectors:
    """Vectors of one file in the order they are added, each (bundle, descriptor) once."""

    def __init__(self) -> None:
        self.items: list[Vector] = []
        self.seen: set[str] = set()
        self.names: set[str] = set()
        self.sources: dict[str, int] = {}

    def add(
        self, bundle: str, source: str, name: str, note: str, descriptor: dict[str, Any]
    ) -> None:
        key = json.dumps([bundle, descriptor], sort_keys=True)
        if key in self.seen:
            return
        self.seen.add(key)
        unique, n = f"{bundle}/{name}", 1
        while unique in self.names:
            n += 1
            unique = f"{bundle}/{name}#{n}"
        self.names.add(unique)
        self.sources[source] = self.sources.get(source, 0) + 1
        written, pad = padded(descriptor)
        self.items.append(
            {
                "name": unique,
                "note": note,
                "input": {
                    "bundle": bundle,
                    "descriptor": written,
                    **pad,
                    **({"now": NOW} if has_retry_evidence(descriptor) else {}),
                },
                "want": want(rulesets()[bundle], descriptor),
            }
        )


PAD = "@PAD@"
PAD_FROM = 256
"""A message starting with a run of one character this long is written small: the run
becomes PAD, and the input's `pad` says what it stands for (as error_body vectors do)."""


def padded(d: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The descriptor with a long message's leading run written as PAD, and the `pad` key
    (none when no message has such a run; at most one run per descriptor)."""
    subjects = [d, *d.get("causes", ())]
    for i, subject in enumerate(subjects):
        m = subject.get("message", "")
        run = len(m) - len(m.lstrip(m[:1])) if m else 0
        if run >= PAD_FROM:
            assert PAD not in m
            changed = {**subject, "message": PAD + m[run:]}
            if i == 0:
                out = {**d, **changed}
            else:
                causes = list(d["causes"])
                causes[i - 1] = changed
                out = {**d, "causes": causes}
            return out, {"pad": {"text": m[0], "count": run}}
    return d, {}


# sources ---------------------------------------------------------------------------------------


def library_cases(out: Vectors) -> None:
    """Every case of the bundled library, as written and with its names padded and labels
    upper-cased (which normalisation must undo)."""
    library = bundled_library()
    for path in files_under(library, is_case_file):
        shown = path.relative_to(library).as_posix()
        for i, case in enumerate(read_case_file(path).cases):
            d = vector_fields(case.descriptor)
            note = f"rules/{shown}: {case.note}"
            out.add("library", "library cases", f"case/{shown}/{i}", note, d)
            out.add(
                "library",
                "library cases, sent unnormalised",
                f"case/{shown}/{i}/unnormalised",
                f"{note} (names padded with the spec's whitespace, labels upper-cased: the "
                "normalisation undoes both)",
                unnormalised(d, i),
            )
            out.add(
                "library",
                "library cases, under a subclass",
                f"case/{shown}/{i}/subclass",
                f"{note} (raised as an application's subclass of the type: every type rule "
                "now matches one supertype further up)",
                subclass(d),
            )


def unnormalised(d: dict[str, Any], i: int) -> dict[str, Any]:
    pad = WHITESPACE_SAMPLES[i % len(WHITESPACE_SAMPLES)]
    out = dict(d)
    out["type"] = pad + d["type"] + pad
    if "supertypes" in d:
        out["supertypes"] = [f"{s}{pad}" for s in d["supertypes"]]
    if "code" in d:
        out["code"] = f"{pad}{d['code']}"
    for label in ("language", "provider"):
        if label in d:
            out[label] = f" {d[label].upper()}{pad}"
    if "causes" in d:
        out["causes"] = [{**c, "type": f"{pad}{c['type']}"} for c in d["causes"]]
    return out


def subclass(d: dict[str, Any]) -> dict[str, Any]:
    return {**d, "type": "spec.app.Subclass", "supertypes": [d["type"], *d.get("supertypes", ())]}


def corpus(out: Vectors) -> None:
    """The public corpus of real descriptors (tests/corpus/real-descriptors.yaml)."""
    data = yaml.safe_load((ROOT / "tests/corpus/real-descriptors.yaml").read_text("utf-8"))
    for entry in data["cases"]:
        d = vector_fields(descriptor_from_data(entry["descriptor"]))
        note = f"tests/corpus/real-descriptors.yaml {entry['id']}: {entry.get('source', '')}"
        out.add("library", "public corpus", f"corpus/{entry['id']}", note.strip(), d)
        out.add(
            "library",
            "public corpus, sent unnormalised",
            f"corpus/{entry['id']}/unnormalised",
            f"{note.strip()} (names padded, labels upper-cased)",
            unnormalised(d, len(out.items)),
        )
        out.add(
            "library",
            "public corpus, under a subclass",
            f"corpus/{entry['id']}/subclass",
            f"{note.strip()} (raised as an application's subclass of the type)",
            subclass(d),
        )


def conformance(out: Vectors) -> None:
    """The real SDK exception types the conformance suite's drift check records
    (tests/conformance/drift/deliberately-unknown.yaml): each as sent alone, from the
    provider, and as a tool's failure."""
    path = "tests/conformance/drift/deliberately-unknown.yaml"
    data = yaml.safe_load((ROOT / path).read_text("utf-8"))
    for group in data["deliberately_unknown"]:
        language = group["language"]
        for name in group["names"]:
            base = {"type": name, "language": language}
            for origin in ("", "provider", "tool"):
                d = {**base, "origin": origin} if origin else base
                out.add(
                    "library",
                    "conformance drift list",
                    f"conformance/{language}/{name}/{origin or 'no-origin'}",
                    f"{path}: a real {language} SDK type"
                    + (f", origin {origin}" if origin else ", no origin"),
                    d,
                )
            out.add(
                "library",
                "conformance drift list, as a cause",
                f"conformance/{language}/{name}/as-cause",
                f"{path}: a real {language} SDK type, as the cause of a wrapper from the provider",
                {"type": "spec.app.Wrapper", "origin": "provider", "causes": [{"type": name}]},
            )


def boundaries(out: Vectors, bundle: str) -> None:
    """Descriptors around each rule's edges, from a witness the rule matches."""
    rs = rulesets()[bundle]
    builder = WitnessBuilder(rs)
    for rule in rs.rules:
        witness = next(iter(builder.candidates([rule], limit=1)), None)
        if witness is None:
            continue
        base = vector_fields(witness)
        for variant, note, d in variants(rule, base):
            out.add(
                bundle,
                f"{bundle} rule boundaries",
                f"rule/{rule.id}/{variant}",
                f"around rule {rule.id} ({rule.location}): {note}",
                d,
            )


def variants(rule: CompiledRule, w: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """The witness, then each of the rule's conditions moved to and past its edge."""
    yield "witness", "a descriptor built from the rule's conditions", w
    if rule.type_condition is not None:
        yield from type_variants(rule.type_condition, w)
    for c in rule.conditions:
        yield from condition_variants(c, w, w, lambda d, subject: subject)
    yield from message_variants(w)


def type_variants(c: TypeIs, w: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    n = limits.MAX_SUPERTYPES
    for name in sorted(c.names)[:3]:
        yield f"type/{name}/own", f"the type {name} as the own type", {**w, "type": name}
        yield (
            f"type/{name}/depth-1",
            f"{name} one supertype up",
            {**w, "type": FRESH_TYPE, "supertypes": [name]},
        )
        yield (
            f"type/{name}/depth-{n}",
            f"{name} as the last of MAX_SUPERTYPES supertypes",
            {
                **w,
                "type": FRESH_TYPE,
                "supertypes": [f"{FILLER_TYPE}{i}" for i in range(n - 1)] + [name],
            },
        )
    yield "type/none", "no type the rule names", {**w, "type": FRESH_TYPE, "supertypes": []}


Place = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]
"""Puts a changed subject (the descriptor, or a cause of it) back into the descriptor."""


def condition_variants(
    c: Condition, w: dict[str, Any], subject: dict[str, Any], place: Place
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    def put(**changes: Any) -> dict[str, Any]:
        changed = {k: v for k, v in {**subject, **changes}.items() if v is not None}
        return place(w, changed)

    match c:
        case TypeIs(names=names):
            for name in sorted(names)[:2]:
                yield f"cause-type/{name}", f"the cause's type {name}", put(type=name)
                yield (
                    f"cause-type/{name}/super",
                    f"{name} as the cause's supertype",
                    put(type=FRESH_TYPE, supertypes=[name]),
                )
            yield "cause-type/none", "a cause type the rule does not name", put(type=FRESH_TYPE)
        case FieldIn(field="http_status", values=values):
            for lo, hi in ranges(frozenset(values))[:4]:
                for v, why in (
                    (lo - 1, "below"),
                    (lo, "lowest"),
                    (hi, "highest"),
                    (hi + 1, "above"),
                ):
                    if 100 <= v <= 599:
                        yield f"http/{v}", f"HTTP {v}, {why} {lo}-{hi}", put(http_status=v)
            yield "http/none", "no HTTP status", put(http_status=None)
        case FieldIn(field="grpc_status", values=values):
            for v in sorted(values)[:3]:
                for x in (v - 1, v, v + 1):
                    if 0 <= x <= 16:
                        yield (
                            f"grpc/{x}",
                            f"gRPC status {x} (the rule names {v})",
                            put(grpc_status=x),
                        )
            yield "grpc/none", "no gRPC status", put(grpc_status=None)
        case FieldIn(field="code", values=values):
            for v in sorted(values)[:3]:
                yield f"code/{v}", f"code {v!r}", put(code=v)
                yield (
                    f"code/{v}/padded",
                    "the code padded (stripped before matching)",
                    put(code=f"\u3000{v} "),
                )
                if v.upper() != v:
                    yield (
                        f"code/{v}/upper",
                        "the code upper-cased (codes are compared exactly)",
                        put(code=v.upper()),
                    )
                yield f"code/{v}/longer", "a longer code", put(code=f"{v}_x")
            yield "code/none", "no code", put(code=None)
        case FieldIn(field="origin", values=values):
            for o_name in sorted(o.name for o in values if isinstance(o, Origin))[:3]:
                yield f"origin/{o_name}", f"origin {o_name}", put(origin=o_name)
            other = next(o.name for o in Origin if o and o not in values)
            yield f"origin/{other}", f"origin {other}, not one the rule names", put(origin=other)
            yield "origin/none", "no origin", put(origin=None)
        case FieldIn(field=label, values=values):
            for v in sorted(values)[:3]:
                yield f"{label}/{v}", f"{label} {v!r}", put(**{label: v})
                yield (
                    f"{label}/{v}/as-sent",
                    f"{label} upper-cased and padded (lower-cased and stripped before matching)",
                    put(**{label: f" {v.upper()}\u3000"}),
                )
            yield f"{label}/none", f"no {label}", put(**{label: None})
        case FieldPresent(field=name, present=present):
            if present:
                yield (
                    f"has/{name}/without",
                    f"without {name}, which the rule asks for",
                    put(**{name: None}),
                )
                if name in ("code", "provider", "language"):
                    yield (
                        f"has/{name}/blank",
                        f"a {name} of whitespace alone is no {name}",
                        put(**{name: " \u3000"}),
                    )
            else:
                value: Any = {"http_status": 500, "grpc_status": 14, "message": "m"}.get(
                    name, "set"
                )
                yield (
                    f"lacks/{name}/with",
                    f"with a {name}, which the rule rules out",
                    put(**{name: value}),
                )
        case MessageMatches():
            pass  # the message variants cover every rule
        case AttributeIs(name=name, values=values):
            attrs = dict(subject.get("attributes", {}))
            for a_value in sorted(values)[:3]:
                yield (
                    f"attr/{name}/{a_value}",
                    f"attribute {name}={a_value!r}",
                    put(attributes={**attrs, name: a_value}),
                )
                yield (
                    f"attr/{name}/{a_value}/padded",
                    "the value padded (attribute values are compared as sent)",
                    put(attributes={**attrs, name: f" {a_value}"}),
                )
            rest = {k: v for k, v in attrs.items() if k != name}
            yield f"attr/{name}/none", f"no attribute {name}", put(attributes=rest or None)
        case CauseMatches(conditions=inner):
            causes = list(w.get("causes", []))
            if not causes:
                return
            first = causes[0]
            n = limits.MAX_CAUSES
            fillers = [{"type": f"{FILLER_TYPE}{i}"} for i in range(n - 1)]
            yield (
                f"cause/last-of-{n}",
                "the cause last of MAX_CAUSES causes",
                {**w, "causes": [*fillers, first]},
            )
            yield "cause/none", "without the cause", {k: v for k, v in w.items() if k != "causes"}

            def in_cause(d: dict[str, Any], cause: dict[str, Any]) -> dict[str, Any]:
                return {**d, "causes": [cause, *causes[1:]]}

            for i in inner:
                for name, note, d in condition_variants(i, w, first, in_cause):
                    yield f"cause/{name}", f"in the cause: {note}", d
        case _:
            assert_never(c)


def message_variants(w: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    m = w.get("message", "")
    if m:
        yield "message/upper", "the message upper-cased", {**w, "message": m.upper()}
        cut = limits.MAX_MESSAGE_CHARS
        pad = "\U0001f600" * (cut - len(m) + 1)
        yield (
            "message/past-the-cut",
            "the message moved past MAX_MESSAGE_CHARS by astral characters (the cut counts code "
            "points)",
            {**w, "message": pad + m},
        )
        yield (
            "message/unicode",
            "the message after non-ASCII text",
            {**w, "message": f"caf\u00e9 \u4e2d {m}"},
        )
    else:
        yield (
            "message/some",
            "a message the rule does not ask for",
            {**w, "message": "spec message"},
        )


def pairs(out: Vectors, bundle: str, *, every: bool) -> None:
    """A descriptor two rules both match (a witness of the pair), for every pair of rules
    (`every`), or for the pairs that share a type name or that are both untyped: where
    precedence, ties and conflicts are decided."""
    rs = rulesets()[bundle]
    builder = WitnessBuilder(rs)
    rules = rs.rules
    for i, a in enumerate(rules):
        for b in rules[i + 1 :]:
            if not every and not _neighbours(a, b):
                continue
            d = next(iter(builder.candidates([a, b], limit=1)), None)
            if d is not None:
                out.add(
                    bundle,
                    f"{bundle} rule pairs",
                    f"pair/{a.id}/{b.id}",
                    f"both {a.id} ({a.location}) and {b.id} ({b.location}) match: precedence, "
                    "a tie or a conflict decides",
                    vector_fields(d),
                )


def _neighbours(a: CompiledRule, b: CompiledRule) -> bool:
    ta, tb = a.type_condition, b.type_condition
    if ta is None or tb is None:
        return ta is None and tb is None
    return not ta.names.isdisjoint(tb.names)


def unicode_and_limits(out: Vectors) -> None:
    """Labels whose lower case differs between languages, whitespace a language's own trim
    keeps, messages at the cut, lone surrogates, names and lists at their limits (against
    the kinds bundle, whose rules name labels, codes and patterns with non-ASCII text)."""
    n = limits.MAX_MESSAGE_CHARS
    cases: list[tuple[str, str, dict[str, Any]]] = []
    for ch in LABEL_SAMPLES:
        for label in ("provider", "language"):
            cases.append(
                (
                    f"label/{label}/U+{ord(ch):04X}",
                    f"{label} with U+{ord(ch):04X}: Python's str.lower (Unicode's full mapping, "
                    "final sigma included) decides; Go's strings.ToLower differs on U+0130 and "
                    "final sigma",
                    {"type": "k.Label", label: f"OPEN{ch}I"},
                )
            )
    cases += [
        (
            "label/azure-stripped",
            "a rule's label is stripped and lower-cased as a descriptor's",
            {"type": "k.Label", "provider": "AZURE"},
        ),
        (
            "label/sigma",
            "a capital sigma at the end lower-cases to the final form",
            {"type": "k.Label", "provider": "\u039f\u0394\u039f\u03a3"},
        ),
        (
            "code/non-ascii",
            "codes with non-ASCII characters are compared exactly",
            {"type": "k.Code", "code": "\u0394-code"},
        ),
        ("code/non-ascii-case", "and not case-folded", {"type": "k.Code", "code": "c\u00d6de"}),
        (
            "code/at-limit",
            "a code of MAX_CODE_CHARS",
            {"type": "k.Has", "code": "c" * limits.MAX_CODE_CHARS},
        ),
        (
            "code/whitespace-only",
            "a code of whitespace is no code",
            {"type": "k.Has", "code": "\u2028\u3000"},
        ),
        (
            "message/at-cut",
            "the pattern ends at the last kept character",
            {"type": "k.Msg", "message": "x" * (n - 14) + "quota exceeded"},
        ),
        (
            "message/past-cut",
            "the pattern's last character is cut",
            {"type": "k.Msg", "message": "x" * (n - 13) + "quota exceeded"},
        ),
        (
            "message/astral-cut",
            "the cut counts code points, never splitting a surrogate pair",
            {
                "type": "k.Msg",
                "code": "u",
                "message": "\U0001f600" * (n - 7) + "caf\u00e9 \U0001f600",
            },
        ),
        (
            "message/astral-past-cut",
            "one code point more and the pattern is cut",
            {
                "type": "k.Msg",
                "code": "u",
                "message": "\U0001f600" * (n - 6) + "caf\u00e9 \U0001f600",
            },
        ),
        (
            "message/lone-surrogate",
            "a lone surrogate becomes U+FFFD and the rest still matches",
            {"type": "k.Msg", "message": "\ud800 quota exceeded"},
        ),
        (
            "message/han",
            "a pattern of Han characters",
            {"type": "k.Msg", "code": "u", "message": "\u4e2d\u6587"},
        ),
        (
            "message/decomposed",
            "an e with a combining accent is not U+00E9",
            {"type": "k.Msg", "code": "u", "message": "cafe\u0301 \U0001f600"},
        ),
        (
            "message/kelvin-caseless",
            "(?i) with ASCII k also matches the Kelvin sign U+212A, in every RE2",
            {"type": "k.Msg", "code": "i", "message": "\u212aill switch"},
        ),
        (
            "message/long-s",
            "(?i) with ASCII s also matches the long s U+017F, in every RE2",
            {"type": "k.Msg", "code": "i", "message": "too many reque\u017fts"},
        ),
        (
            "message/caseless-upper",
            "(?i) matches upper case",
            {"type": "k.Msg", "code": "i", "message": "RATE-LIMIT"},
        ),
        (
            "message/word-boundary-unicode",
            "\\b is an ASCII word boundary: an accented letter is not a word character",
            {"type": "k.Msg", "code": "c", "message": "\u00e9HTTP 503\u00e9"},
        ),
        (
            "message/dotall",
            "(?s) lets . cross a newline",
            {"type": "k.Msg", "code": "s", "message": "start\nmiddle\nend"},
        ),
        (
            "message/dollar",
            "$ matches at the end of text only, not before a final newline",
            {"type": "k.Msg", "code": "s", "message": "start end\n"},
        ),
        (
            "message/multiline-anchor",
            "^ matches at the start of text only",
            {"type": "k.Msg", "code": "a", "message": "x\nexactly this"},
        ),
        (
            "message/crlf",
            "a message with CRLF line ends",
            {"type": "k.Msg", "code": "a", "message": "exactly this\r\n"},
        ),
        (
            "type/unicode",
            "type names with non-ASCII letters",
            {"type": "k.\u00dcber", "supertypes": ["k.Http"], "http_status": 503},
        ),
        (
            "type/whitespace-only-supertypes",
            "supertypes padded with the spec's whitespace",
            {"type": "x", "supertypes": ["\u0085k.Http\u2029"], "http_status": 500},
        ),
        (
            "type/last-supertype",
            "the rule's type as the last of MAX_SUPERTYPES supertypes",
            {
                "type": "x",
                "supertypes": [f"s{i}" for i in range(limits.MAX_SUPERTYPES - 1)] + ["k.Grpc"],
                "grpc_status": 16,
            },
        ),
        (
            "cause/last",
            "the matching cause last of MAX_CAUSES",
            {
                "type": "k.Cause",
                "causes": [{"type": f"c{i}"} for i in range(limits.MAX_CAUSES - 1)]
                + [
                    {
                        "type": "k.Inner",
                        "http_status": 503,
                        "grpc_status": 14,
                        "code": "deep",
                        "message": "going down",
                    }
                ],
            },
        ),
        (
            "cause/split",
            "the cause conditions hold on two different causes: no match",
            {
                "type": "k.Cause",
                "causes": [
                    {"type": "k.Inner", "http_status": 503, "grpc_status": 14, "message": "down"},
                    {"type": "k.Inner", "code": "deep", "message": "down"},
                ],
            },
        ),
        (
            "cause/supertype",
            "a cause matched by its supertype",
            {"type": "k.Cause2", "causes": [{"type": "x", "supertypes": ["k.Inner"]}]},
        ),
        (
            "cause/code-blank",
            "a cause's code of whitespace is no code (lacks: code holds)",
            {"type": "k.Cause2", "causes": [{"type": "k.Inner", "code": "\u3000"}]},
        ),
        (
            "attributes/many",
            "MAX_ATTRIBUTES attributes, the rule's among them",
            {
                "type": "k.Attr",
                "attributes": {
                    **{f"a{i}": "v" for i in range(limits.MAX_ATTRIBUTES - 1)},
                    "time_limit": "tool",
                },
            },
        ),
        (
            "attributes/number-text",
            "an attribute value compared as text",
            {"type": "k.Attr", "attributes": {"stage": "compile", "retries": "3"}},
        ),
        (
            "attributes/case",
            "attribute values are compared exactly, case included",
            {"type": "k.Attr", "attributes": {"time_limit": "Tool"}},
        ),
        ("origin/alias", "origin caller is user", {"type": "k.Origin", "origin": "caller"}),
        (
            "origin/upper",
            "an origin name is read case-insensitively",
            {"type": "k.Origin", "origin": "Provider"},
        ),
        ("grpc/ok", "gRPC status 0 (OK) is a status", {"type": "k.Grpc", "grpc_status": 0}),
        (
            "http/100",
            "the lowest HTTP status",
            {"type": "k.Http", "http_status": 100, "code": "list"},
        ),
        (
            "http/599",
            "the highest HTTP status",
            {"type": "k.Http", "http_status": 599, "code": "list"},
        ),
    ]
    for name, note, d in cases:
        out.add("kinds", "Unicode and limits", name, note, d)


# files -----------------------------------------------------------------------------------------

COMMENT = (
    "Generated by `make spec` (tools/spec/bundle_vectors.py): the service's engine is the "
    "oracle; do not edit. Each input names a bundle of clients/spec/bundles/."
)


def retry_evidence(out: Vectors) -> None:
    """The retry evidence of `retry_after.json` on answers of the library: on each
    retryable rule's first case (the wait, within the rule's cap) and on a few that are not
    retryable (no wait, whatever the headers say)."""
    from tools.spec.retry_after_vectors import INPUTS  # one list of forms for both kinds

    for code in ("own", "ruleset", "never"):
        for name, note, attributes, _cap in INPUTS:
            d = {"type": "k.Retry", "code": code, "attributes": attributes}
            out.add("kinds", "retry", f"retry/{code}/{name}", f"{note}; the {code} cap", d)
    library = rulesets()["library"]
    retryable: list[tuple[str, dict[str, Any]]] = []
    never: list[tuple[str, dict[str, Any]]] = []
    for v in bundle_vector_sets_cases():
        rule = _rule_named(library, v["want"].get("rule_id", ""))
        if rule is None or "@PAD@" in json.dumps(v["input"]):
            continue
        answer = library.answers.get(rule)
        if answer is None:
            continue
        (retryable if answer.retryable else never).append((v["name"], v["input"]["descriptor"]))
    chosen = retryable[:: max(1, len(retryable) // 12)][:12] + never[:: max(1, len(never) // 4)][:4]
    for i, (source, descriptor) in enumerate(chosen):
        for name, note, attributes, _cap in INPUTS[i % 3 :: 3]:
            d = {**descriptor, "attributes": {**descriptor.get("attributes", {}), **attributes}}
            out.add("library", "retry", f"retry/{name}/{i}", f"{note}, on {source}", d)


def _rule_named(ruleset: Ruleset, rule_id: str) -> CompiledRule | None:
    return next((r for r in ruleset.rules if r.id == rule_id), None)


@functools.cache
def _library_case_vectors() -> tuple[Vector, ...]:
    cases = Vectors()
    library_cases(cases)
    return tuple(cases.items)


def bundle_vector_sets_cases() -> tuple[Vector, ...]:
    return _library_case_vectors()


def _file(vectors: Vectors) -> str:
    """A vector file with one vector a line: ten thousand vectors stay a few MB."""
    head = json.dumps({"$comment": COMMENT, "kind": "bundle"}, ensure_ascii=True)[:-1]
    body = ",\n".join(
        json.dumps(v, ensure_ascii=True, separators=(",", ":")) for v in vectors.items
    )
    return f'{head}, "vectors": [\n{body}\n]}}\n'


@functools.cache
def bundle_vector_sets() -> dict[str, Vectors]:
    """Each `bundle` vector file's vectors, by file name."""
    tests = Vectors()
    for name in TEST_BUNDLES:
        boundaries(tests, name)
        pairs(tests, name, every=True)
    unicode_and_limits(tests)
    retry_evidence(tests)
    cases = Vectors()
    library_cases(cases)
    corpus(cases)
    conformance(cases)
    edges = Vectors()
    boundaries(edges, "library")
    pairs(edges, "library", every=False)
    return {"bundle.json": tests, "bundle.library.json": cases, "bundle.library-rules.json": edges}


def vector_files() -> dict[str, str]:
    """The `bundle` and `bundle_verify` vector files, by name, with their text."""
    out = {name: _file(v) for name, v in bundle_vector_sets().items()}
    out["bundle_verify.json"] = json.dumps(verify_vectors(), indent=2, ensure_ascii=True) + "\n"
    return out


# bundle_verify ---------------------------------------------------------------------------------

TEST_KEYS = ("TEST-ONLY-a", "TEST-ONLY-b", "TEST-ONLY-c")
"""Key pairs for the verify vectors only (clients/spec/keys/, private keys committed on
purpose): never trust them anywhere. a is the old key of a rotation, b the new one, c a key
no verifier trusts."""


def _private(name: str) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key((ROOT / KEYS / f"{name}.key").read_bytes(), None)
    assert isinstance(key, Ed25519PrivateKey)
    return key


def _signed(data: bytes, *names: str) -> str:
    doc: SignaturesDoc | None = None
    for name in names:
        doc = add_signature(doc, sign(data, _private(name)))
    if doc is None:
        doc = SignaturesDoc(format="errorclass-bundle-signatures", format_version=1, signatures=[])
    return dump_signatures(doc).decode("ascii")


def verify_vectors() -> dict[str, Any]:
    """Bundles with their signatures and trusted keys, and the verdict of the service's own
    verifier (`classifier bundle verify`)."""
    texts = {path.stem: text.encode("ascii") for path, text in bundle_files().items()}
    kinds, library = texts["kinds"], texts["library"]
    mid = len(kinds) // 2
    wrong_algorithm = json.loads(_signed(kinds, "TEST-ONLY-a"))
    wrong_algorithm["signatures"][0]["algorithm"] = "ed448"
    bad_base64 = json.loads(_signed(kinds, "TEST-ONLY-a"))
    bad_base64["signatures"][0]["signature"] = "not base64!"
    cases: list[tuple[str, str, dict[str, Any]]] = [
        (
            "signed-trusted",
            "signed by a, a trusted",
            {"signatures": _signed(kinds, "TEST-ONLY-a"), "trusted_keys": ["TEST-ONLY-a"]},
        ),
        (
            "rotation-old",
            "signed by a (old) and b (new): a verifier still trusting only a accepts",
            {
                "signatures": _signed(kinds, "TEST-ONLY-a", "TEST-ONLY-b"),
                "trusted_keys": ["TEST-ONLY-a"],
            },
        ),
        (
            "rotation-new",
            "the same bundle: a verifier moved to b accepts",
            {
                "signatures": _signed(kinds, "TEST-ONLY-a", "TEST-ONLY-b"),
                "trusted_keys": ["TEST-ONLY-b"],
            },
        ),
        (
            "rotation-both",
            "a verifier trusting both accepts, naming both",
            {
                "signatures": _signed(kinds, "TEST-ONLY-a", "TEST-ONLY-b"),
                "trusted_keys": ["TEST-ONLY-a", "TEST-ONLY-b"],
            },
        ),
        (
            "after-rotation",
            "signed by b only: a verifier trusting a and b accepts",
            {
                "signatures": _signed(kinds, "TEST-ONLY-b"),
                "trusted_keys": ["TEST-ONLY-a", "TEST-ONLY-b"],
            },
        ),
        (
            "trusted-beside-unknown",
            "signed by c (unknown) and a (trusted): accepted",
            {
                "signatures": _signed(kinds, "TEST-ONLY-c", "TEST-ONLY-a"),
                "trusted_keys": ["TEST-ONLY-a"],
            },
        ),
        (
            "unknown-key",
            "signed by c alone, which no verifier trusts",
            {
                "signatures": _signed(kinds, "TEST-ONLY-c"),
                "trusted_keys": ["TEST-ONLY-a", "TEST-ONLY-b"],
            },
        ),
        (
            "old-key-dropped",
            "signed by a only, the verifier moved to b",
            {"signatures": _signed(kinds, "TEST-ONLY-a"), "trusted_keys": ["TEST-ONLY-b"]},
        ),
        (
            "unsigned-empty",
            "a signatures document listing no signature",
            {"signatures": _signed(kinds), "trusted_keys": ["TEST-ONLY-a"]},
        ),
        (
            "unsigned-missing",
            "no signatures document at all",
            {"signatures": None, "trusted_keys": ["TEST-ONLY-a"]},
        ),
        (
            "tampered-first-byte",
            "one byte of the bundle changed after signing (the first)",
            {
                "signatures": _signed(kinds, "TEST-ONLY-a"),
                "trusted_keys": ["TEST-ONLY-a"],
                "flip_byte": 0,
            },
        ),
        (
            "tampered-middle-byte",
            "one byte in the middle",
            {
                "signatures": _signed(kinds, "TEST-ONLY-a"),
                "trusted_keys": ["TEST-ONLY-a"],
                "flip_byte": mid,
            },
        ),
        (
            "tampered-last-byte",
            "the final newline",
            {
                "signatures": _signed(kinds, "TEST-ONLY-a"),
                "trusted_keys": ["TEST-ONLY-a"],
                "flip_byte": len(kinds) - 1,
            },
        ),
        (
            "tampered-both-keys",
            "a bundle signed by a and b, changed: neither verifies",
            {
                "signatures": _signed(kinds, "TEST-ONLY-a", "TEST-ONLY-b"),
                "trusted_keys": ["TEST-ONLY-a", "TEST-ONLY-b"],
                "flip_byte": mid,
            },
        ),
        (
            "tampered-unknown-key",
            "changed and signed by an unknown key only: the unknown key is the reason",
            {
                "signatures": _signed(kinds, "TEST-ONLY-c"),
                "trusted_keys": ["TEST-ONLY-a"],
                "flip_byte": mid,
            },
        ),
        (
            "other-bundle",
            "a's signature of another bundle (the library's) beside this one",
            {"signatures": _signed(library, "TEST-ONLY-a"), "trusted_keys": ["TEST-ONLY-a"]},
        ),
        (
            "bad-base64",
            "a trusted key's entry whose signature is not base64",
            {"signatures": json.dumps(bad_base64), "trusted_keys": ["TEST-ONLY-a"]},
        ),
        (
            "unknown-algorithm",
            "an entry of an algorithm the verifier does not know is skipped",
            {"signatures": json.dumps(wrong_algorithm), "trusted_keys": ["TEST-ONLY-a"]},
        ),
        (
            "malformed-not-json",
            "the signatures file is not JSON",
            {"signatures": "signed by a, honest", "trusted_keys": ["TEST-ONLY-a"]},
        ),
        (
            "malformed-format",
            "a JSON document of another format",
            {
                "signatures": json.dumps({"format": "x", "format_version": 1, "signatures": []}),
                "trusted_keys": ["TEST-ONLY-a"],
            },
        ),
        (
            "malformed-entry",
            "an entry without its key id",
            {
                "signatures": json.dumps(
                    {
                        "format": "errorclass-bundle-signatures",
                        "format_version": 1,
                        "signatures": [{"algorithm": "ed25519", "signature": "AA=="}],
                    }
                ),
                "trusted_keys": ["TEST-ONLY-a"],
            },
        ),
    ]
    vectors = []
    for name, note, data in cases:
        body = bytearray(kinds)
        if "flip_byte" in data:
            body[data["flip_byte"]] ^= 0x01
        inp = {"bundle": "kinds", **data}
        vectors.append(
            {"name": name, "note": note, "input": inp, "want": _verdict(bytes(body), data)}
        )
    return {
        "$comment": "Generated by `make spec` (tools/spec/bundle_vectors.py): the service's "
        "verifier is the oracle; do not edit. `bundle` names clients/spec/bundles/NAME.json, "
        "`flip_byte` an offset whose byte is XORed with 1 before verifying, `signatures` the "
        "signatures file's text (null: none), `trusted_keys` clients/spec/keys/NAME.pub.",
        "kind": "bundle_verify",
        "vectors": vectors,
    }


def _verdict(data: bytes, case: dict[str, Any]) -> dict[str, Any]:
    keys = [
        public_key_from_pem((ROOT / KEYS / f"{k}.pub").read_bytes()) for k in case["trusted_keys"]
    ]
    text = case["signatures"]
    try:
        if text is None:
            raise BundleRefusedError(Refusal.unsigned, "no signatures document")
        verified = verify(data, parse_signatures(text.encode()), keys)
    except BundleRefusedError as exc:
        return {"refused": exc.reason.value}
    return {"accepted": True, "key_ids": list(verified.key_ids)}
