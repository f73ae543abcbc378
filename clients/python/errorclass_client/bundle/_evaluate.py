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
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from errorclass_client._private import re2_matcher
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
    message_lower: str | None = None
    """The message lower-cased, made by the first `(?i)` pattern's prefilter that needs it."""


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

        self.lower_language = "language" in self.lower
        self.lower_provider = "provider" in self.lower
        lim = self.limits
        self.max_causes = lim["MAX_CAUSES"]
        self.max_supertypes = lim["MAX_SUPERTYPES"]
        self.max_type = lim["MAX_TYPE_NAME_CHARS"]
        self.max_code = lim["MAX_CODE_CHARS"]
        self.max_label = lim["MAX_LABEL_CHARS"]
        self.max_attributes = lim["MAX_ATTRIBUTES"]
        self.max_key = lim["MAX_ATTRIBUTE_KEY_CHARS"]
        self.max_value = lim["MAX_ATTRIBUTE_VALUE_CHARS"]

    # The hottest code of an in-process answer (about half of it): written as plain loops
    # and local names, each step the bundle's `descriptor` rule (docs/bundles.md).

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
        """A cause as the service matches it (its type, code and message inlined, as the
        descriptor's are: a cause with a chain of five cost 1.8 us through three helper
        methods)."""
        ws = self.whitespace
        get = data.get
        name = data["type"].strip(ws)
        supertypes = get("supertypes")
        if supertypes:
            if len(supertypes) > self.max_supertypes:
                raise ValueError("descriptor.type: too many supertypes")
            chain: tuple[str, ...] = (name, *[t.strip(ws) for t in supertypes])
        else:
            chain = (name,)
        limit = self.max_type
        for n in chain:
            if not n or len(n) > limit:
                raise ValueError("descriptor.type: a type name empty or past its limit")
        http_status = get("http_status")
        grpc_status = get("grpc_status")
        code = get("code")
        if code is None or code == "":
            code = ""
        else:
            code = str(code).strip(ws)
            if len(code) > self.max_code:
                raise ValueError("descriptor.code: past its limit")
        text = get("message")
        if not text:
            text = ""
        elif text.isascii() and len(text) <= self.max_message:
            text = str(text)
        else:
            text = self.message(text)
        return _Cause(chain, http_status, grpc_status, code, text)

    def descriptor(self, data: Mapping[str, Any]) -> _Descriptor:
        """The descriptor as the service matches it; ValueError for one the service refuses
        (an answer for a descriptor it would not classify would be one it never gives)."""
        get = data.get
        origin = get("origin")
        if origin:
            origin = str(origin).strip().lower()
            origin = self.aliases.get(origin, origin)
            if origin == "unspecified":
                origin = ""
        else:
            origin = ""
        ws = self.whitespace
        language = get("language")
        language = language.strip(ws) if language else ""
        if language and self.lower_language:
            language = language.lower()
        provider = get("provider")
        provider = provider.strip(ws) if provider else ""
        if provider and self.lower_provider:
            provider = provider.lower()
        if len(language) > self.max_label or len(provider) > self.max_label:
            raise ValueError("descriptor.language/provider: past its limit")
        attributes = get("attributes") or {}
        if attributes:
            self._check_attributes(attributes)
        given = get("causes")
        if given:
            if len(given) > self.max_causes:
                raise ValueError(f"descriptor.causes: more than {self.max_causes} causes")
            causes = tuple([self.cause(c) for c in given])
        else:
            causes = ()
        # the descriptor's own type, code and message, inlined (as in `cause`)
        name = data["type"].strip(ws)
        supertypes = get("supertypes")
        if supertypes:
            if len(supertypes) > self.max_supertypes:
                raise ValueError("descriptor.type: too many supertypes")
            chain: tuple[str, ...] = (name, *[t.strip(ws) for t in supertypes])
        else:
            chain = (name,)
        limit = self.max_type
        for n in chain:
            if not n or len(n) > limit:
                raise ValueError("descriptor.type: a type name empty or past its limit")
        code = get("code")
        if code is None or code == "":
            code = ""
        else:
            code = str(code).strip(ws)
            if len(code) > self.max_code:
                raise ValueError("descriptor.code: past its limit")
        text = get("message")
        if not text:
            text = ""
        elif not text.isascii() or len(text) > self.max_message:
            text = self.message(text)
        return _Descriptor(
            chain,
            get("http_status"),
            get("grpc_status"),
            code,
            text,
            None,
            None,
            origin,
            language,
            provider,
            attributes,
            causes,
        )

    def _check_attributes(self, attributes: Mapping[str, str]) -> None:
        if len(attributes) > self.max_attributes:
            raise ValueError("descriptor.attributes: past a limit")
        key, value = self.max_key, self.max_value
        for k, v in attributes.items():
            if not 0 < len(k) <= key or len(v) > value:
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
        get = attrgetter(c["field"])
        if "ranges" in c:
            spans = tuple((lo, hi) for lo, hi in c["ranges"])

            def in_ranges(s: Subject) -> bool:
                v = get(s)
                if v is None:
                    return False
                for lo, hi in spans:  # noqa: SIM110  (a loop: no generator on the hot path)
                    if lo <= v <= hi:
                        return True
                return False

            return in_ranges
        values = frozenset(c["values"])
        return lambda s: get(s) in values
    if kind == "present":
        get, wanted = attrgetter(c["field"]), bool(c["present"])
        return lambda s: _is_set(get(s)) is wanted
    if kind == "message":
        pattern = c["pattern"]
        search = _matcher(pattern, re2)
        literal, anchored, whole = required_literal(pattern)
        if whole:  # the pattern is its literal: no regex at all
            return (
                (lambda s: s.message.startswith(literal))
                if anchored
                else (lambda s: literal in s.message)
            )

        needs, folded, exact, anchors = literals(pattern)
        if exact is not None:  # literal text, alternatives, \b: no regex (ASCII, if (?i) or \b)
            decide = _decider(exact, anchors)
            bounded = any(BOUNDARY in x for x in exact)
            if not folded and not bounded:
                return lambda s: decide(s.message)

            def decides_ascii(s: Subject) -> bool:
                text = s.message
                if text.isascii():  # RE2's case folding is str.lower's, its \w [0-9A-Za-z_]
                    if not folded:
                        return decide(text)
                    low = s.message_lower
                    if low is None:
                        low = s.message_lower = text.lower()
                    return decide(low)
                raw = s.message_bytes
                if raw is None:
                    raw = s.message_bytes = text.encode()
                return search(raw)

            return decides_ascii

        # RE2 is called only when the message holds a string of each of the pattern's needs
        # groups: an RE2 call costs 1 us warm but 10-35 us in the bench's interleaved run
        # (its code and DFA out of the CPU caches: 29.8 us median for a 38-byte message),
        # and the slowest 1 % of descriptors were those that called it. With the decisions
        # above, RE2 calls over the library's descriptors went from 985 (634 misses) to 213
        # (48 misses); bench p99 22-33 us -> 19-21 us (alternated runs, load 3.1-3.8).
        def matches(s: Subject) -> bool:
            text = s.message
            if literal and (not text.startswith(literal) if anchored else literal not in text):
                return False  # the text every match begins with is not there
            if needs:
                if not folded:
                    hay = text
                elif text.isascii():  # (?i): RE2's case folding is str.lower's on ASCII
                    hay = s.message_lower
                    if hay is None:
                        hay = s.message_lower = text.lower()
                else:
                    hay = None
                if hay is not None:
                    for group in needs:
                        for x in group:
                            if x in hay:
                                break
                        else:
                            return False
            raw = s.message_bytes
            if raw is None:
                raw = s.message_bytes = s.message.encode()
            return search(raw)

        return matches
    if kind == "attribute":
        name, values = c["name"], frozenset(c["values"])
        return lambda s: s.attributes.get(name) in values
    if kind == "cause":
        inner = tuple(_test(i, re2) for i in c["conditions"])

        def any_cause(s: Subject) -> bool:
            for cause in s.causes:
                for test in inner:
                    if not test(cause):
                        break
                else:
                    return True
            return False

        return any_cause
    raise BundleError("unsupported_format", f"a condition of kind {kind!r}")


def _decider(exact: frozenset[str], anchors: str) -> Callable[[str], bool]:
    """Whether a pattern that is a finite set of strings (`literals`' exact) matches a
    message (an ASCII one when a string holds a BOUNDARY)."""
    if any(BOUNDARY in x for x in exact):
        bounded = tuple(_bounded(x) for x in sorted(exact))
        return lambda text: _bounded_match(text, bounded, anchors)
    if anchors == "^$":
        return exact.__contains__
    options = tuple(sorted(exact))
    if anchors == "^":
        return lambda text: text.startswith(options)
    if anchors == "$":
        return lambda text: text.endswith(options)

    def contains(text: str) -> bool:
        for x in options:  # noqa: SIM110  (a loop: no generator on the hot path)
            if x in text:
                return True
        return False

    return contains


def _bounded(text: str) -> tuple[str, tuple[int, ...]]:
    """An exact string with its BOUNDARY marks taken out, and where they were."""
    plain: list[str] = []
    marks: list[int] = []
    for ch in text:
        if ch == BOUNDARY:
            marks.append(len(plain))
        else:
            plain.append(ch)
    return "".join(plain), tuple(marks)


def _bounded_match(text: str, bounded: Sequence[tuple[str, tuple[int, ...]]], anchors: str) -> bool:
    """Whether one of the strings occurs in text (ASCII) with a word boundary at each of
    its marks, where the anchors allow: RE2's `\\b`, a word character on exactly one
    side (the text's ends are not word characters)."""
    end = len(text)
    for plain, marks in bounded:
        size = len(plain)
        if anchors == "^$":
            at = 0 if size == end else -1
        elif anchors == "^":
            at = 0
        elif anchors == "$":
            at = end - size
        else:
            at = text.find(plain)
        while 0 <= at <= end - size:
            if text.startswith(plain, at):
                for mark in marks:
                    q = at + mark
                    before = q > 0 and text[q - 1] in _WORD
                    after = q < end and text[q] in _WORD
                    if before == after:
                        break
                else:
                    return True
            if anchors:
                break
            at = text.find(plain, at + 1)
    return False


def _matcher(pattern: str, re2: Any) -> Callable[[bytes], bool]:
    """Whether `pattern` matches somewhere in a message: compiled without its capturing
    groups (a rule asks only whether it matches, and RE2 finds a match several times faster
    when it need not say where each group is), else as written."""
    try:
        regexp = re2.compile(uncaptured(pattern), _options(re2))
    except re2.error:
        regexp = re2.compile(pattern, _options(re2))
    return re2_matcher(regexp)


def uncaptured(pattern: str) -> str:
    """`pattern` with each capturing group, named or not, made non-capturing (`(a)` and
    `(?P<n>a)` become `(?:a)`): the same messages match. Escapes, classes (POSIX ones
    inside included) and `\\Q...\\E` are copied as they are."""
    out: list[str] = []
    i, n, in_class = 0, len(pattern), False
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            if pattern[i + 1 : i + 2] == "Q":
                end = pattern.find("\\E", i + 2)
                stop = n if end < 0 else end + 2
                out.append(pattern[i:stop])
                i = stop
                continue
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if pattern.startswith("[:", i):
                end = pattern.find(":]", i + 2)
                if end >= 0:
                    out.append(pattern[i : end + 2])
                    i = end + 2
                    continue
            in_class = ch != "]"
            out.append(ch)
            i += 1
            continue
        if ch == "[":
            j = i + 1
            if pattern[j : j + 1] == "^":
                j += 1
            if pattern[j : j + 1] == "]":
                j += 1
            out.append(pattern[i:j])
            in_class, i = True, j
            continue
        if ch == "(":
            if pattern[i + 1 : i + 2] != "?":
                out.append("(?:")
                i += 1
                continue
            if pattern.startswith(("(?P<", "(?<"), i):
                end = pattern.find(">", i)
                if end >= 0:
                    out.append("(?:")
                    i = end + 1
                    continue
        out.append(ch)
        i += 1
    return "".join(out)


_META = frozenset(".[](){}?*+|^$\\")


def required_literal(pattern: str) -> tuple[str, bool, bool]:
    """The text every match of `pattern` begins with (its leading literal characters), whether
    the pattern anchors it at the start (`^`), and whether the pattern is nothing else.

    A message without that text cannot match, so the evaluator checks it (a `startswith` or
    `in` on the message, tens of nanoseconds) before calling RE2 (a microsecond): most
    rules found by type are told apart by their message. Conservative: flags, escapes that
    are not punctuation, a top-level alternation or a quantifier end the literal (a
    character a quantifier applies to is left out), so the check never refuses a message
    the pattern matches."""
    if _alternates(pattern):
        return "", False, False
    anchored = pattern.startswith("^")
    i = 1 if anchored else 0
    out: list[str] = []
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            nxt = pattern[i + 1 : i + 2]
            if not nxt or not nxt.isascii() or nxt.isalnum():
                break  # \b, \d, \x{..}, \Q...: not a plain character
            literal, step = nxt, 2
        elif ch in _META:
            break
        else:
            literal, step = ch, 1
        after = pattern[i + step : i + step + 1]
        if after and after in "?*+{":
            break
        out.append(literal)
        i += step
    return "".join(out), anchored, i == len(pattern) and bool(out)


class _UnreadError(Exception):
    """A pattern outside what `literals` reads: it gives no prefilter (RE2 decides)."""


_Lits = frozenset[str] | None
MAX_LITERALS = 32
"""The most strings a finite part of a pattern is expanded to (past it: not finite)."""
MAX_NEEDS = 3
"""The most needs groups a message is checked for before RE2 runs."""
_Needs = tuple[frozenset[str], ...]
BOUNDARY = "\ue000"
"""`\\b` in an exact string: not ASCII, so never in a message it is decided on (ASCII)."""
_AT_BOUNDARY = frozenset([BOUNDARY])
_WORD = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")
"""RE2's `\\w`, which its `\\b` is read against (ASCII only)."""


def literals(
    pattern: str,
) -> tuple[tuple[tuple[str, ...], ...], bool, frozenset[str] | None, str]:
    """What a message must hold for `pattern` to match it, read without RE2:

    (needs, folded, exact, anchors). `needs`: groups of strings, every match containing
    one string of each group (at most MAX_NEEDS groups, the most selective), lower-cased
    when `folded` (the pattern is `(?i)...`,
    so a message is checked lower-cased, and only when it is ASCII: RE2's case folding
    and str.lower agree there). `exact`: for a pattern that is nothing but literal text,
    alternatives and optional parts (between an optional `^` and `$`, the `anchors`),
    every string it matches (lower-cased when folded), so `in`/`startswith`/`endswith`/`==`
    decide it (for a folded one, on an ASCII message lower-cased). Conservative: anything
    else in a pattern (a class, `.`, an escape that is not punctuation, flags but a leading
    `(?i)`) contributes no literal, and a pattern this reader does not follow gives
    ((), False, None, "")."""
    folded = pattern.startswith("(?i)")
    body = pattern[4:] if folded else pattern
    try:
        found = _Reader(body, folded).alternation()[1]
    except _UnreadError:
        return (), False, None, ""
    groups = {g for g in found if "" not in g and not (folded and not all(x.isascii() for x in g))}
    needs = tuple(tuple(sorted(g)) for g in sorted(groups, key=_selectivity)[:MAX_NEEDS])
    decided = None
    anchors = ""
    if not _alternates(body):  # `^a|b$` anchors one alternative each
        inner = body
        if inner.startswith("^"):
            inner, anchors = inner[1:], "^"
        if inner.endswith("$") and not _escaped_end(inner):
            inner, anchors = inner[:-1], anchors + "$"
        try:
            decided, _ = _Reader(inner, folded).alternation()
        except _UnreadError:
            decided = None
    return needs, folded, decided, anchors


def _selectivity(group: frozenset[str]) -> tuple[int, int, list[str]]:
    """A needs group's sort key, the most selective first: its shortest string the longest,
    then the fewest strings (then the strings, for a stable order)."""
    return (-min(map(len, group)), len(group), sorted(group))


def _escaped_end(text: str) -> bool:
    """Whether text's last character is escaped (an odd run of backslashes before it)."""
    run = len(text) - 1 - len(text[:-1].rstrip("\\"))
    return run % 2 == 1


class _Reader:
    """A recursive reading of a pattern for `literals`: each part's exact strings (a
    finite set, or None) and its needs (groups of strings: every match of the part holds
    one string of each group)."""

    def __init__(self, pattern: str, folded: bool) -> None:
        self.p, self.i, self.folded = pattern, 0, folded

    def alternation(self) -> tuple[_Lits, _Needs]:
        exact, needs = self.sequence()
        exacts, branches = [exact], [needs]
        while self.i < len(self.p) and self.p[self.i] == "|":
            self.i += 1
            exact, needs = self.sequence()
            exacts.append(exact)
            branches.append(needs)
        if len(exacts) == 1:
            return exact, needs
        # a match is one branch's: it holds one string of the union of each branch's best
        best = [min(b, key=_selectivity) if b else None for b in branches]
        union = _union(best)
        return _union(exacts), (() if union is None or "" in union else (union,))

    def sequence(self) -> tuple[_Lits, _Needs]:
        parts: list[tuple[_Lits, _Needs]] = []
        while self.i < len(self.p) and self.p[self.i] not in "|)":
            parts.append(self.quantified())
        exact: _Lits = frozenset([""])
        for e, _ in parts:
            exact = _product(exact, e)
        # every part's needs, a run of exact parts as one group (their strings in a row)
        needs: list[frozenset[str]] = []
        run: frozenset[str] = frozenset([""])
        for e, n in [*parts, (None, ())]:
            if e is not None and any(BOUNDARY in x for x in e):  # a needed string holds none
                needs.append(run)
                run = frozenset([""])
            elif e is not None:
                longer = _product(run, e)
                if longer is None:  # too many: start the run again at this part
                    needs.append(run)
                    longer = e
                run = longer
            else:
                needs.append(run)
                needs.extend(n)
                run = frozenset([""])
        return exact, tuple(g for g in needs if "" not in g and not any(BOUNDARY in x for x in g))

    def quantified(self) -> tuple[_Lits, _Needs]:
        exact, needs = self.atom()
        p = self.p
        if self.i < len(p) and p[self.i] in "?*+{":
            ch = p[self.i]
            if ch == "{":
                end = p.find("}", self.i)
                spec = p[self.i + 1 : end] if end > 0 else ""
                low = spec.split(",")[0]
                if not low.isdigit() or not all(x.isdigit() for x in spec.split(",")[1:2] if x):
                    raise _UnreadError  # a literal brace: not followed here
                if spec.count(",") > 1:
                    raise _UnreadError
                self.i = end + 1
                if int(low) == 0:
                    exact, needs = None, ()
                else:
                    exact = exact if spec == "1" else None
                    needs = needs or (() if exact is None else (exact,))
            else:
                self.i += 1
                if ch == "?":
                    exact = _union([exact, frozenset([""])])
                    needs = ()
                elif ch == "*":
                    exact, needs = None, ()
                else:  # +: the part at least once
                    needs = needs or (() if exact is None else (exact,))
                    exact = None
            if self.i < len(p) and p[self.i] == "?":  # lazy
                self.i += 1
            if self.i < len(p) and p[self.i] in "?*+{":
                raise _UnreadError
        return exact, needs

    def atom(self) -> tuple[_Lits, _Needs]:
        p, i = self.p, self.i
        ch = p[i]
        if ch == "(":
            if p.startswith("(?:", i):
                self.i = i + 3
            elif p.startswith(("(?P<", "(?<"), i):
                end = p.find(">", i)
                if end < 0:
                    raise _UnreadError
                self.i = end + 1
            elif p.startswith("(?", i):
                raise _UnreadError  # flags, or anything else
            else:
                self.i = i + 1
            result = self.alternation()
            if self.i >= len(p) or p[self.i] != ")":
                raise _UnreadError
            self.i += 1
            return result
        if ch == "[":
            self.i = _class_end(p, i)
            return None, ()
        if ch == "\\":
            nxt = p[i + 1 : i + 2]
            if not nxt:
                raise _UnreadError
            if nxt == "b":  # a word boundary: in exact strings as BOUNDARY, never needed
                self.i = i + 2
                return _AT_BOUNDARY, ()
            if nxt in "dDsSwWBAz":
                self.i = i + 2
                return None, ()
            if not nxt.isascii() or nxt.isalnum():
                raise _UnreadError  # \x.., \p{..}, \Q, \C, \n ...: not followed here
            self.i = i + 2
            return self._char(nxt)
        if ch in ".^$":
            self.i = i + 1
            return None, ()
        if ch in "?*+{)|":
            raise _UnreadError
        self.i = i + 1
        return self._char(ch)

    def _char(self, ch: str) -> tuple[_Lits, _Needs]:
        if self.folded:
            if not ch.isascii():
                raise _UnreadError
            ch = ch.lower()
        lit = frozenset([ch])
        return lit, (lit,)


def _class_end(p: str, i: int) -> int:
    """The index just past the class that opens at p[i] (`[...]`)."""
    j = i + 1
    if p[j : j + 1] == "^":
        j += 1
    if p[j : j + 1] == "]":
        j += 1
    while j < len(p) and p[j] != "]":
        if p[j] == "\\":
            j += 1
        elif p.startswith("[:", j):
            end = p.find(":]", j + 2)
            if end >= 0:
                j = end + 1
        j += 1
    if j >= len(p):
        raise _UnreadError
    return j + 1


def _union(sets: Sequence[_Lits]) -> _Lits:
    out: set[str] = set()
    for s in sets:
        if s is None:
            return None
        out |= s
    return frozenset(out) if len(out) <= MAX_LITERALS else None


def _product(a: _Lits, b: _Lits) -> _Lits:
    if a is None or b is None or len(a) * len(b) > MAX_LITERALS:
        return None
    return frozenset(x + y for x in a for y in b)


def _alternates(pattern: str) -> bool:
    """Whether `pattern` has a `|` outside every group and class (`a|b`): then no text
    begins every match."""
    depth, i, n = 0, 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            if pattern[i + 1 : i + 2] == "Q":  # \Q...\E: be safe, read it as alternating
                return True
            i += 2
            continue
        if ch == "[":
            i += 1
            if pattern[i : i + 1] == "^":
                i += 1
            if pattern[i : i + 1] == "]":
                i += 1
            while i < n and pattern[i] != "]":
                if pattern[i] == "\\":
                    i += 1
                elif pattern[i : i + 2] == "[:":
                    end = pattern.find(":]", i + 2)
                    i = end + 1 if end >= 0 else i
                i += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth <= 0:
            return True
        i += 1
    return False


_OPTIONS: list[Any] = []


def _options(re2: Any) -> Any:
    """RE2 as the service runs it: errors not logged, 8 MiB of memory per pattern."""
    if not _OPTIONS:
        options = re2.Options()
        options.log_errors = False
        options.max_mem = 8 * 1024 * 1024
        _OPTIONS.append(options)
    return _OPTIONS[0]


SPLIT_FIELDS = (
    "code", "http_status", "grpc_status", "cause_codes", "cause_statuses", "cause_names",
    "provider", "language", "origin",
)  # fmt: skip
"""The fields a bucket looks a rule up by, the most selective first (a code names one
failure, a status a few, an origin most of a runtime's). The `cause_*` ones are a `cause`
condition's code, status or type test: the rule is looked up by each code, status or type
name of the descriptor's causes (and the condition still tested: its other tests must hold
for the same cause)."""
ATTRIBUTE = "attribute:"
"""A split on an attribute (its name after this), for a rule that names no plain field."""
CAUSE_FIELDS = {"code": "cause_codes", "http_status": "cause_statuses", "type": "cause_names"}
MAX_SPLIT_VALUES = 600
"""An http_status condition's ranges are looked up value by value up to this many (`4xx`
is 100 values; every status is 500)."""


class _Bucket:
    """Rules that share a type name (or have none), looked up by their split field."""

    __slots__ = ("always", "by_attribute", "by_cause", "by_field", "cause_codes",
                 "cause_names", "cause_statuses")  # fmt: skip

    def __init__(self, rules: Sequence[_Rule]) -> None:
        self.always = tuple(r for r in rules if r.split is None)
        by_field: dict[str, dict[Any, list[_Rule]]] = {}
        for rule in rules:
            if rule.split is not None:
                field, values = rule.split
                for value in values:
                    by_field.setdefault(field, {}).setdefault(value, []).append(rule)
        indexes = {
            field: {v: tuple(rs) for v, rs in index.items()} for field, index in by_field.items()
        }
        self.by_field = tuple(
            (attrgetter(field), index)
            for field, index in indexes.items()
            if field in SPLIT_FIELDS and not field.startswith("cause_")
        )
        self.by_attribute = tuple(
            (field.removeprefix(ATTRIBUTE), index)
            for field, index in indexes.items()
            if field.startswith(ATTRIBUTE)
        )
        """(attribute name, its values' rules): looked up only when the descriptor has
        attributes (most have none), so a rule of one `attribute` condition costs nothing."""
        self.cause_names = indexes.get("cause_names")
        self.cause_codes = indexes.get("cause_codes")
        self.cause_statuses = indexes.get("cause_statuses")
        self.by_cause = bool(self.cause_names or self.cause_codes or self.cause_statuses)
        """Whether a rule is looked up by its causes' type names, codes or HTTP statuses
        (read from each cause: the descriptor keeps no deduplicated copy of them)."""

    def found(self, d: _Descriptor) -> list[_Rule]:
        """The rules here whose every condition holds for d (plain loops: the hot path)."""
        out = []
        for rule in self.always:
            for test in rule.tests:
                if not test(d):
                    break
            else:
                out.append(rule)
        for get, index in self.by_field:
            for rule in index.get(get(d), ()):
                for test in rule.tests:
                    if not test(d):
                        break
                else:
                    out.append(rule)
        if self.by_attribute:
            attributes = d.attributes
            if attributes:
                for name, index in self.by_attribute:
                    for rule in index.get(attributes.get(name), ()):
                        for test in rule.tests:
                            if not test(d):
                                break
                        else:
                            out.append(rule)
        if self.by_cause and d.causes:
            names, codes, statuses = self.cause_names, self.cause_codes, self.cause_statuses
            tried: set[int] = set()
            for cause in d.causes:
                listed: list[tuple[_Rule, ...]] = []
                if names is not None:
                    for name in cause.chain:
                        if name in names:
                            listed.append(names[name])
                if codes is not None and cause.code and cause.code in codes:
                    listed.append(codes[cause.code])
                if (
                    statuses is not None
                    and cause.http_status is not None
                    and cause.http_status in statuses
                ):
                    listed.append(statuses[cause.http_status])
                for rules in listed:
                    for rule in rules:
                        if rule.order in tried:  # listed under two values of the causes
                            continue
                        tried.add(rule.order)
                        for test in rule.tests:
                            if not test(d):
                                break
                        else:
                            out.append(rule)
        return out


def _split(conditions: Sequence[Mapping[str, Any]]) -> tuple[int, str, frozenset[Any]] | None:
    """The condition a bucket looks the rule up by (its index, field and values): the most
    selective plain field the rule names, else its first `attribute` condition; None when
    it names neither."""
    plain: dict[str, tuple[int, frozenset[Any]]] = {}
    for i, c in enumerate(conditions):
        if c["kind"] == "cause":
            for inner in c["conditions"]:  # -1: the condition is still tested, on one cause
                kind = inner["kind"]
                field = CAUSE_FIELDS.get(inner.get("field", kind) if kind != "type" else kind)
                if field is None or field in plain or kind not in ("type", "field_in"):
                    continue
                if kind == "type":
                    plain[field] = (-1, frozenset(inner["names"]))
                elif "values" in inner:
                    plain[field] = (-1, frozenset(inner["values"]))
                else:
                    statuses = _statuses(inner["ranges"])
                    if statuses is not None:
                        plain[field] = (-1, statuses)
            continue
        if c["kind"] != "field_in" or c["field"] in plain:
            continue
        if "values" in c:
            plain[c["field"]] = (i, frozenset(c["values"]))
        elif c["field"] == "http_status":
            statuses = _statuses(c["ranges"])
            if statuses is not None:
                plain["http_status"] = (i, statuses)
    field = next((f for f in SPLIT_FIELDS if f in plain), None)
    if field is None:
        for i, c in enumerate(conditions):
            if c["kind"] == "attribute" and None not in c["values"]:
                return i, ATTRIBUTE + c["name"], frozenset(c["values"])
        return None
    index, values = plain[field]
    return index, field, values


def _statuses(ranges: Sequence[Sequence[int]]) -> frozenset[int] | None:
    """The statuses of inclusive ranges, when few enough to look up one by one."""
    if sum(hi - lo + 1 for lo, hi in ranges) > MAX_SPLIT_VALUES:
        return None
    return frozenset(v for lo, hi in ranges for v in range(lo, hi + 1))


def _cap(answer: Mapping[str, Any]) -> dt.timedelta | None:
    """A retryable answer's cap on the wait it advises; None for one that advises none."""
    seconds = answer.get("retry_after_cap_seconds")
    if seconds is None or not answer["retryable"]:
        return None
    return dt.timedelta(seconds=seconds)


_KEY = attrgetter("rank", "order")
_COSTS = {"message": 1, "cause": 2}


def _cost(indexed: tuple[int, Mapping[str, Any]]) -> int:
    """A condition's cost to test, cheapest first: a field or attribute look-up, a message
    (a literal check, then RE2), a cause (its tests over each cause). A rule's tests are
    a conjunction without effects, so their order changes only how soon one fails."""
    return _COSTS.get(indexed[1]["kind"], 0)


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
        tiers: list[tuple[dict[str, _Bucket], _Bucket | None]] = []
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
                tiers.append((buckets, _Bucket(untyped) if untyped else None))
        self.untyped: tuple[_Bucket | None, ...] = tuple(u for _, u in tiers)
        """Each tier's rules without a type (None when it has none), tried after its typed."""
        names = {name for by_type, _ in tiers for name in by_type}
        self.by_name: dict[str, tuple[_Bucket | None, ...]] = {
            name: tuple(by_type.get(name) for by_type, _ in tiers) for name in names
        }
        """Each type name a rule lists, and its bucket in each tier (None where no rule of
        that tier lists it): a descriptor's chain is looked up once, not once per tier."""

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
        conditions = r["conditions"]
        split = _split(conditions)
        skipped = -1 if split is None else split[0]  # looked up by, so never tested
        return _Rule(
            id=r["id"],
            order=r["order"],
            names=frozenset(names) if names is not None else None,
            tests=tuple(
                _test(c, re2) for i, c in sorted(enumerate(conditions), key=_cost) if i != skipped
            ),
            split=None if split is None else split[1:],
            tier=(0 if r["decisive"] else 2) + (1 if r["fallback"] else 0),
            rank=(-r["condition_count"], -r["priority"], r["layer"]),
            answer=answer,
            agree_on=(answer.error_class, answer.effect),
            cap=_cap(r["answer"]),
        )

    def classify(self, data: Mapping[str, Any], now: dt.datetime | None = None) -> Answer:
        d = self.normaliser.descriptor(data)
        listed = [b for b in map(self.by_name.get, d.chain) if b is not None]
        """The chain's names some rule lists, nearest first: type depth order."""
        for tier, untyped in enumerate(self.untyped):
            found = None
            for buckets in listed:
                bucket = buckets[tier]
                if bucket is not None:
                    found = bucket.found(d)
                    if found:
                        break
            else:
                if untyped is not None:
                    found = untyped.found(d)
            if found:
                return self._answered(found, d, now)
        return self.unknown["no_match"]

    def _answered(self, found: list[_Rule], d: _Descriptor, now: dt.datetime | None) -> Answer:
        """The answer of the matches at the nearest depth (type depth is the next precedence
        key after the tier, so nothing deeper can win), with the wait it advises."""
        rule = found[0] if len(found) == 1 else self._decide(found)
        if rule is None:
            return self.unknown["conflict"]
        attributes = d.attributes
        if rule.cap is None or not attributes or EVIDENCE.isdisjoint(attributes):
            return rule.answer
        wait = retry_after(attributes, rule.cap, utc_now if now is None else lambda: now)
        if wait is None:
            return rule.answer
        a = rule.answer  # not dataclasses.replace: a tenth of its cost
        return Answer(
            a.error_class, a.class_name, a.action, a.effect, a.retryable, a.rule_id,
            a.ruleset_version, a.ruleset_digest, a.unknown_reason, wait,
        )  # fmt: skip

    @staticmethod
    def _decide(found: list[_Rule]) -> _Rule | None:
        """The rule that answers among those found at one depth; None for a conflict."""
        first = min(found, key=_KEY)  # the best rank, the first in order among it
        best, agree_on = first.rank, first.agree_on
        for r in found:
            if r.rank == best and r.agree_on != agree_on:
                return None
        return first
