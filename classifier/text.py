"""The small pieces of text every report shares, so each is written one way.

Counts with their noun, lists joined with "and", how far up the type chain
a rule matched, the escaping GitHub's workflow commands need, and the "did
you mean" of a misspelt name. The
renderers built on them (diagnostics, explanations, test reports) live
beside what they render.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from classifier.answer import NO_TYPE_DEPTH
from classifier.location import Location


def plural(count: int, noun: str) -> str:
    """`1 rule`, `2 rules`: a count with its noun, as every report writes one."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def and_list(items: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def depth_phrase(depth: int, *, sentence: bool = False) -> str:
    """Where a rule matched in the descriptor's type chain (`RuleMatch.type_depth`).

    As a label (`supertype 2 steps up`) or, with sentence, as what the rule
    does (`matches a supertype 2 steps up`).
    """
    if depth == NO_TYPE_DEPTH:
        return "has no type condition" if sentence else "no type condition"
    if depth == 0:
        return "matches the descriptor's own type" if sentence else "own type"
    steps = plural(depth, "step")
    return f"matches a supertype {steps} up" if sentence else f"supertype {steps} up"


def github_data(text: str) -> str:
    """Text escaped for the message part of a GitHub workflow command."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """Text escaped for a property (`file=`, `title=`) of a GitHub workflow command."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotation(kind: str, location: Location, title: str, message: str) -> str:
    """`::kind file=...,line=...,col=...,title=...::message`: a GitHub workflow command that a
    pull request shows on the line it names (a location without a line marks the file)."""
    props = [f"file={github_property(location.file)}"]
    if location.line:
        props += [f"line={location.line}", f"col={location.column}"]
    props.append(f"title={github_property(title)}")
    return f"::{kind} {','.join(props)}::{github_data(message)}"


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """` (did you mean 'RateLimited'?)` for the choice closest to a misspelt value, or "".

    Case is ignored when comparing (`ratelimited` finds `RateLimited`); the
    choice is shown as it is spelt.
    """
    spelt = {str(c).lower(): str(c) for c in choices}
    close = difflib.get_close_matches(value.lower(), list(spelt), n=1, cutoff=0.7)
    return f" (did you mean {spelt[close[0]]!r}?)" if close else ""


def doc_pointer(anchor: str) -> str:
    """Where a diagnostic's section is, from the registry's anchor (`rules.md#code`)."""
    return f"see docs/{anchor}"
