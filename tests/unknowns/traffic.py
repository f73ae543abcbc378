"""Traffic built from the real corpus (`tests/corpus/real-descriptors.yaml`), with known clusters.

Each `Family` is one true cluster: a real descriptor the bundled rules leave Unknown, whose
message is varied the way that message really varies (the quoted names, the numbers, the
free text a model wrote, the signal a worker died of, the pydantic release in a URL), and
whose attributes carry the ids and timestamps every real descriptor has (a run id, a
trace id, a start time). Two families share a structural key and differ only in their
message template (AttributeError on None, AttributeError on a module), so the template
step is measured as well as the structural split. The classified part of the corpus is
mixed in, with fresh ids, as the traffic around them.
"""

from __future__ import annotations

import copy
import datetime as dt
import random
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from tests.support import ROOT

CORPUS = ROOT / "tests" / "corpus" / "real-descriptors.yaml"

Vary = Callable[[random.Random], str]


def _pick(rng: random.Random, *options: str) -> str:
    return rng.choice(options)


@dataclass(frozen=True)
class Family:
    """A true cluster: a corpus descriptor and how its message varies."""

    name: str
    corpus_id: str
    message: Vary
    weight: int
    """Relative frequency in generated traffic."""


FAMILIES: tuple[Family, ...] = (
    Family(
        "celery-worker-lost",
        "celery-worker-lost-observed-live",
        lambda r: (
            f"Worker exited prematurely: signal {_pick(r, '9 (SIGKILL)', '15 (SIGTERM)', '6 (SIGABRT)')}"
            f" Job: {r.randint(1, 90_000)}."
        ),
        40,
    ),
    Family(
        "python-json-decode",
        "python-json-decode-error-runtime",
        lambda r: (
            "Expecting " + _pick(r, "','", "':'", "'\"'") + f" delimiter: line {r.randint(1, 40)} "
            f"column {r.randint(1, 300)} (char {r.randint(1, 9000)})"
        ),
        30,
    ),
    Family(
        "python-recursion",
        "python-recursion-error-runtime",
        lambda r: _pick(
            r,
            "maximum recursion depth exceeded while calling a Python object",
            "maximum recursion depth exceeded in comparison",
        ),
        6,
    ),
    Family(
        "python-attribute-none",
        "python-attribute-error-none",
        lambda r: (
            f"'NoneType' object has no attribute '{_pick(r, 'content', 'choices', 'text', 'get', 'message')}'"
        ),
        25,
    ),
    Family(
        "python-attribute-module",
        "python-attribute-error-none",
        lambda r: (
            f"module '{_pick(r, 'openai', 'anthropic', 'langchain')}' has no attribute "
            f"'{_pick(r, 'ChatCompletion', 'Completion', 'error')}'"
        ),
        8,
    ),
    Family(
        "pydantic-model-output",
        "pydantic-validation-model-output-runtime",
        lambda r: (
            f"1 validation error for {_pick(r, 'Invoice', 'Order')}\n{_pick(r, 'total', 'currency', 'lines')}\n"
            f"  Field required [type=missing, input_value={{'currency': '{_pick(r, 'EUR', 'USD')}', "
            f"'id': 'inv_{r.randint(100, 99999)}'}}, input_type=dict]\n"
            f"    For further information visit https://errors.pydantic.dev/2.{r.randint(5, 11)}/v/missing"
        ),
        20,
    ),
    Family(
        "langchain-output-parser",
        "langchain-output-parser-exception",
        lambda r: (
            "Invalid json output: "
            + _pick(
                r,
                f"I think the answer is {r.randint(1, 100)}",
                "Sure! Here is the JSON you asked for:",
                "```json",
                f"The total is {r.randint(1, 999)}.{r.randint(0, 99):02d} EUR, as computed above.",
                "I cannot help with that request.",
            )
            + "\nFor troubleshooting, visit: "
            "https://python.langchain.com/docs/troubleshooting/errors/OUTPUT_PARSING_FAILURE "
        ),
        15,
    ),
    Family(
        "langgraph-node-cancelled",
        "langgraph-node-cancelled-error",
        lambda r: (
            f"Node '{_pick(r, 'summarize', 'plan', 'call_tools', 'retrieve', 'grade')}' raised asyncio.CancelledError"
        ),
        12,
    ),
    Family(
        "agentforge4j-command-parse",
        "agentforge4j-llm-command-parse",
        lambda r: (
            f"Command type '{_pick(r, 'delegate', 'call_tool', 'finish', 'ask_user')}' is missing "
            f"required field '{_pick(r, 'agentId', 'toolName', 'arguments', 'question')}'."
        ),
        10,
    ),
    Family(
        "agentforge4j-policy-denial",
        "agentforge4j-policy-denial-terminal",
        lambda r: (
            f"Tool invocation 'ti-{r.randint(1, 500)}' for run 'run-{r.randint(1, 9000)}' was denied by "
            f"policy ({_pick(r, 'shell access disabled', 'network egress blocked', 'file writes disabled')}); "
            "only Reject or the runtime's non-executing Continue may resolve it, never Approve."
        ),
        6,
    ),
    Family(
        "dotnet-key-not-found",
        "dotnet-key-not-found-runtime",
        lambda r: (
            f"The given key '{_pick(r, 'model', 'temperature', 'tool_choice', 'gpt-4o-mini')}' was not present in the dictionary."
        ),
        5,
    ),
    Family(
        "dotnet-json-tool-args",
        "dotnet-system-text-json-tool-args-runtime",
        lambda r: (
            f"'{_pick(r, 's', 'T', 'I', '}')}' is an invalid start of a value. Path: "
            f"{_pick(r, '$', '$.arguments', '$.query')} | LineNumber: {r.randint(0, 3)} | "
            f"BytePositionInLine: {r.randint(0, 80)}."
        ),
        4,
    ),
    Family(
        "dotnet-argument-null",
        "dotnet-argument-null-runtime",
        lambda r: (
            f"Value cannot be null. (Parameter '{_pick(r, 'input', 'source', 'key', 'messages')}')"
        ),
        3,
    ),
)


def corpus_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))["cases"]
    return cases


@dataclass(frozen=True)
class Generated:
    """One descriptor of the traffic and the true cluster it belongs to ('' when classified)."""

    descriptor: dict[str, Any]
    family: str


class Traffic:
    """Descriptors from the corpus: the families (Unknown) and the rest (classified)."""

    def __init__(self, seed: int = 13) -> None:
        self.rng = random.Random(seed)
        cases = corpus_cases()
        by_id = {c["id"]: c for c in cases}
        self.bases = {f.name: by_id[f.corpus_id]["descriptor"] for f in FAMILIES}
        unknown_ids = {f.corpus_id for f in FAMILIES}
        self.classified = [
            c["descriptor"]
            for c in cases
            if c["id"] not in unknown_ids and c["expect"] != "Unknown"
        ]
        self.start = dt.datetime(2026, 11, 29, 8, 0, tzinfo=dt.UTC)

    def _ids(self, d: dict[str, Any]) -> dict[str, Any]:
        """The ids and time every real descriptor carries, fresh each time."""
        started = self.start + dt.timedelta(seconds=self.rng.randint(0, 86_400))
        attributes = {
            **d.get("attributes", {}),
            "run_id": str(uuid.UUID(int=self.rng.getrandbits(128), version=4)),
            "trace_id": f"{self.rng.getrandbits(128):032x}",
            "started_at": started.isoformat().replace("+00:00", "Z"),
        }
        return {**d, "attributes": attributes}

    def unknown(self, family: Family) -> Generated:
        d = copy.deepcopy(self.bases[family.name])
        d["message"] = family.message(self.rng)
        return Generated(self._ids(d), family.name)

    def classified_one(self) -> Generated:
        return Generated(self._ids(copy.deepcopy(self.rng.choice(self.classified))), "")

    def mixed(self, unknowns: int, classified: int) -> Iterator[Generated]:
        """`unknowns` family members (by weight) and `classified` others, shuffled."""
        families = self.rng.choices(FAMILIES, weights=[f.weight for f in FAMILIES], k=unknowns)
        # Every family at least three times, so each is a cluster worth proposing for.
        families[: 3 * len(FAMILIES)] = [f for f in FAMILIES for _ in range(3)]
        items = [self.unknown(f) for f in families]
        items += [self.classified_one() for _ in range(classified)]
        self.rng.shuffle(items)
        yield from items


@dataclass
class Recovery:
    """How the clusters found compare with the true ones: each family in one cluster, and no
    cluster holding two families."""

    rows: list[tuple[str, int, tuple[str, ...]]] = field(default_factory=list)
    """(family, Unknowns, the clusters its members landed in)."""
    mixed: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """cluster id -> the families it holds, for each cluster holding more than one."""
    clusters: int = 0

    @property
    def split(self) -> list[str]:
        return [family for family, _, found in self.rows if len(found) != 1]

    @property
    def exact(self) -> bool:
        return not self.split and not self.mixed and self.clusters == len(self.rows)

    def lines(self) -> list[str]:
        kept = len(self.rows) - len(self.split)
        pure = self.clusters - len(self.mixed)
        out = [
            f"{len(self.rows)} true clusters, {self.clusters} found: {kept} of {len(self.rows)} "
            f"families in exactly one cluster, {pure} of {self.clusters} clusters holding one "
            "family"
        ]
        out += [
            f"  {family:<28} {count:>5} Unknowns -> {', '.join(found)}"
            for family, count, found in self.rows
        ]
        out += [f"  MIXED {cid}: {', '.join(fams)}" for cid, fams in self.mixed.items()]
        return out


def measure(members: list[tuple[str, str]]) -> Recovery:
    """Recovery from (true family, cluster id found) for every Unknown line."""
    by_family: dict[str, Counter[str]] = {}
    by_cluster: dict[str, set[str]] = {}
    for family, cid in members:
        by_family.setdefault(family, Counter())[cid] += 1
        by_cluster.setdefault(cid, set()).add(family)
    r = Recovery(clusters=len(by_cluster))
    for family in sorted(by_family, key=lambda f: -sum(by_family[f].values())):
        found = by_family[family]
        r.rows.append((family, sum(found.values()), tuple(sorted(found))))
    r.mixed = {cid: tuple(sorted(f)) for cid, f in by_cluster.items() if len(f) > 1}
    return r


RECOVERY: list[Recovery] = []
"""Filled by the recovery test, printed in pytest's terminal summary (tests/unknowns/conftest.py)."""
