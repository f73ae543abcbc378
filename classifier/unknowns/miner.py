"""Message templates within one structural key: drain3's Drain, and a merge for free-text tails.

The miner is Drain (He et al., 2017) as drain3 implements it, from `drain3-improved`, the
maintained fork of IBM's drain3 (whose last release was in 2022): a fixed-depth prefix
tree over a message's tokens, grouped first by token count, in which a message joins the
most similar template (the share of equal tokens, at least `SIMILARITY`) and turns the
tokens that differ into `<*>`. Only its `Drain` class is used: masking is this package's
own (`mask`), done before the miner sees a message, and nothing is persisted.

One Drain per structural key, so templates are never shared across keys. Drain keeps
messages of different lengths apart, which splits a failure whose message ends in free
text (`Invalid json output: <whatever the model said>`) or that a runtime words two ways
(`maximum recursion depth exceeded` ... `while calling a Python object`, `in comparison`).
Exception messages put the fixed part first, so within one key two templates merge into
their common prefix and `<*>` when they share a head (at least two literal tokens ending in
`:`, within the first few tokens) or a prefix of at least PREFIX_TOKENS tokens that is half
the shorter template.
"""

from __future__ import annotations

from collections import defaultdict

from drain3.drain import Drain

from classifier.unknowns.mask import is_value
from classifier.unknowns.structure import StructuralKey

SIMILARITY = 0.5
"""Drain's similarity threshold: the share of a template's literal tokens a message must share."""
DEPTH = 4
"""Drain's tree depth: token count, then the first token, decide where a message is compared."""
HEAD_TOKENS = 6
"""How far into a template a head (ending in `:`) may end."""
WILDCARD = "<*>"
PREFIX_TOKENS = 3
"""Templates of one key sharing this many leading tokens (and half the shorter one) merge."""
MAX_COMPARED = 500
"""Templates compared pairwise per first token, at most."""


class TemplateMiner:
    """Templates per structural key; `add` returns the message's template id within its key."""

    def __init__(self) -> None:
        self._drains: dict[StructuralKey, Drain] = {}

    def add(self, key: StructuralKey, masked: str) -> int:
        drain = self._drains.get(key)
        if drain is None:
            drain = self._drains[key] = Drain(
                depth=DEPTH, sim_th=SIMILARITY, max_children=100, param_str=WILDCARD
            )
        cluster, _change = drain.add_log_message(masked)
        return cluster.cluster_id

    def templates(self, key: StructuralKey) -> dict[int, str]:
        """Each template id of a key with its final template, templates of one failure merged."""
        drain = self._drains.get(key)
        if drain is None:
            return {}
        found = {c.cluster_id: tuple(c.log_template_tokens) for c in drain.clusters}
        out = {cid: " ".join(tokens) for cid, tokens in found.items()}
        for group in _merged(found):
            prefix = _common_prefix([found[cid] for cid in group])
            merged = " ".join([*prefix, WILDCARD])
            for cid in group:
                out[cid] = merged
        return out


def _merged(found: dict[int, tuple[str, ...]]) -> list[list[int]]:
    """Groups (of two or more) of templates that are one failure: they share a head, or a
    prefix of at least PREFIX_TOKENS tokens and half the shorter one."""
    parent = {cid: cid for cid in found}

    def root(cid: int) -> int:
        while parent[cid] != cid:
            parent[cid] = parent[parent[cid]]
            cid = parent[cid]
        return cid

    by_first: dict[str, list[int]] = defaultdict(list)
    for cid, tokens in found.items():
        if tokens:
            by_first[tokens[0]].append(cid)
    for ids in by_first.values():
        ids = ids[:MAX_COMPARED]
        heads = {cid: head(found[cid]) for cid in ids}
        for i, a in enumerate(ids):
            for b in ids[i + 1 :]:
                if _one_failure(found[a], found[b], heads[a], heads[b]):
                    parent[root(a)] = root(b)
    groups: dict[int, list[int]] = defaultdict(list)
    for cid in found:
        groups[root(cid)].append(cid)
    return [sorted(g) for g in groups.values() if len(g) > 1]


def _one_failure(
    a: tuple[str, ...], b: tuple[str, ...], head_a: tuple[str, ...] | None, head_b: object
) -> bool:
    if head_a is not None and head_a == head_b:
        return True
    shared = len(_common_prefix([a, b]))
    return shared >= PREFIX_TOKENS and 2 * shared >= min(len(a), len(b))


def _common_prefix(templates: list[tuple[str, ...]]) -> tuple[str, ...]:
    first = templates[0]
    n = min(len(t) for t in templates)
    for i in range(n):
        if any(t[i] != first[i] for t in templates):
            return first[:i]
    return first[:n]


def head(tokens: tuple[str, ...]) -> tuple[str, ...] | None:
    """The fixed part before a colon (`Invalid json output:`), when the template has one."""
    for i, token in enumerate(tokens[:HEAD_TOKENS]):
        if token.endswith(":") and not is_value(token):
            literal = [t for t in tokens[: i + 1] if not is_value(t)]
            return tuple(tokens[: i + 1]) if len(literal) >= 2 and i + 1 < len(tokens) else None
    return None
