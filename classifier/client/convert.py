"""The server's answer types and the client's, each way: where the server's package meets
its client (the CLI's remote commands, the in-process fallback).

The client (`errorclass_client`) cannot import the server's package, so it has answer
types of its own with the same field names; these functions carry an answer across,
class, effect and reason by their permanent numbers. Descriptors need nothing here:
the client takes the server's `Descriptor` as it is (any object with the fields), and
`classifier.descriptor.as_descriptor` takes the client's.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import errorclass_client as client
from classifier import answer
from classifier.answer import Classification
from classifier.taxonomy import Effect, ErrorClass, UnknownReason

_T = TypeVar("_T")


def _same(kind: type[_T], value: Any) -> _T:
    """A dataclass of `kind` with the fields of `value` (the other side's twin)."""
    return kind(**{f.name: getattr(value, f.name) for f in dataclasses.fields(kind)})  # type: ignore[arg-type]


def explanation_to_server(e: client.Explanation) -> answer.Explanation:
    return answer.Explanation(
        matches=tuple(_same(answer.RuleMatch, m) for m in e.matches),
        winner_rule_id=e.winner_rule_id,
        decisions=tuple(_same(answer.PrecedenceDecision, d) for d in e.decisions),
        near_misses=tuple(_same(answer.NearMiss, n) for n in e.near_misses),
    )


def explanation_to_client(e: answer.Explanation) -> client.Explanation:
    return client.Explanation(
        matches=tuple(_same(client.RuleMatch, m) for m in e.matches),
        winner_rule_id=e.winner_rule_id,
        decisions=tuple(_same(client.PrecedenceDecision, d) for d in e.decisions),
        near_misses=tuple(_same(client.NearMiss, n) for n in e.near_misses),
    )


def classification_of(reply: client.Answer) -> Classification | None:
    """A server's answer as the engine's Classification, so both print alike; None for a
    class number this classifier does not know (the server runs a newer taxonomy)."""
    if int(reply.error_class) not in ErrorClass._value2member_map_:
        return None
    return Classification(
        error_class=ErrorClass(int(reply.error_class)),
        action=_same(answer.Action, reply.action),
        effect=Effect(int(reply.effect)),
        retryable=reply.retryable,
        rule_id=reply.rule_id,
        ruleset_version=reply.ruleset_version,
        ruleset_digest=reply.ruleset_digest,
        unknown_reason=UnknownReason(int(reply.unknown_reason)),
        explanation=explanation_to_server(reply.explanation) if reply.explanation else None,
        retry_after=(
            answer.RetryAfter.from_labelled(reply.retry_after, reply.retry_after_source)
            if reply.retry_after is not None
            else None
        ),
    )


def answer_of(c: Classification, *, local: bool = False) -> client.Answer:
    """The engine's Classification as the client answers it (`local`: classified in
    process, by the fallback)."""
    return client.Answer(
        error_class=client.ErrorClass(int(c.error_class)),
        class_name=c.error_class.name,
        action=_same(client.Action, c.action),
        effect=client.Effect(int(c.effect)),
        retryable=c.retryable,
        rule_id=c.rule_id,
        ruleset_version=c.ruleset_version,
        ruleset_digest=c.ruleset_digest,
        unknown_reason=client.UnknownReason(int(c.unknown_reason)),
        explanation=explanation_to_client(c.explanation) if c.explanation else None,
        local=local,
        retry_after=c.retry_after.delay if c.retry_after is not None else None,
        retry_after_source=c.retry_after.labelled_source if c.retry_after is not None else "",
    )
