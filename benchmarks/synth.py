"""Synthetic rulesets and descriptors shaped like a real rule library, at any size.

A library grows by vendors (SDK families), not by piling rules onto one
type: each family has its own exception types (a base type and a dozen
leaves under it, in one of five ecosystems) and about twenty rules on them,
mixing what real rules test: statuses, codes, origins, providers, message
patterns, causes, attributes, and a few untyped rules keyed by provider.
A fixed set of ecosystem-wide rules (timeouts, cancellations, gRPC
deadlines) sits above every family. So a 5,000-rule set is the 50-rule set
with more vendors, which is what "flat in the number of rules" must survive.

Descriptors are drawn the same way at every size: a leaf of a random family
(type + 4 supertypes, HTTP status, origin, code, a 100-character message,
one cause) for ones that match, and the same shape from a vendor no rule
knows for ones that match nothing.
"""

from __future__ import annotations

import random
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "rules" / "actions.yaml"
RULES_PER_FILE = 100
LEAVES = 12
MESSAGE_CHARS = 100

Rule = dict[str, Any]
DescriptorData = dict[str, Any]


@dataclass(frozen=True)
class Ecosystem:
    """How one runtime names a vendor's exceptions, and its shared base types."""

    name: str
    leaf: str
    base: str
    roots: tuple[str, str, str]
    timeout: tuple[str, ...]
    io_error: tuple[str, ...]


ECOSYSTEMS = (
    Ecosystem(
        "java",
        "com.v{f}.sdk.Leaf{k}Exception",
        "com.v{f}.sdk.V{f}Exception",
        ("java.io.IOException", "java.lang.Exception", "java.lang.Throwable"),
        (
            "java.net.SocketTimeoutException",
            "java.io.InterruptedIOException",
            "java.io.IOException",
            "java.lang.Exception",
        ),
        ("java.net.SocketException", "java.io.IOException", "java.lang.Exception"),
    ),
    Ecosystem(
        "dotnet",
        "V{f}.Sdk.Leaf{k}Exception",
        "V{f}.Sdk.V{f}Exception",
        ("System.Net.Http.HttpRequestException", "System.Exception", "System.Object"),
        ("System.TimeoutException", "System.SystemException", "System.Exception"),
        ("System.IO.IOException", "System.SystemException", "System.Exception"),
    ),
    Ecosystem(
        "python",
        "v{f}.Leaf{k}Error",
        "v{f}.V{f}Error",
        ("v{f}.APIError", "builtins.Exception", "builtins.BaseException"),
        ("builtins.TimeoutError", "builtins.OSError", "builtins.Exception"),
        ("builtins.ConnectionResetError", "builtins.ConnectionError", "builtins.OSError"),
    ),
    Ecosystem(
        "node",
        "@v{f}/sdk.Leaf{k}Error",
        "@v{f}/sdk.V{f}Error",
        ("@v{f}/sdk.APIError", "Error", "Object"),
        ("TimeoutError", "Error"),
        ("SystemError", "Error"),
    ),
    Ecosystem(
        "go",
        "*v{f}.Leaf{k}Error",
        "*v{f}.V{f}Error",
        ("v{f}.APIError", "error", "any"),
        ("context.deadlineExceededError", "error"),
        ("*net.OpError", "net.Error", "error"),
    ),
)

GLOBAL_RULES: list[Rule] = [
    {"id": "g.grpc-deadline", "when": {"grpc_status": "DEADLINE_EXCEEDED"}, "class": "Timeout"},
    {"id": "g.guard", "when": {"origin": "guard"}, "class": "ContentBlocked"},
    {
        "id": "g.provider-429",
        "when": {"origin": "provider", "http_status": 429},
        "class": "RateLimited",
    },
    {
        "id": "g.java-socket-timeout",
        "when": {
            "type": "java.io.IOException",
            "cause": {"type": "java.net.SocketTimeoutException"},
        },
        "class": "Timeout",
    },
    {
        "id": "g.dotnet-httpclient-timeout",
        "when": {
            "type": "System.Threading.Tasks.TaskCanceledException",
            "cause": {"type": "System.TimeoutException"},
        },
        "class": "Timeout",
    },
    {
        "id": "g.dotnet-canceled",
        "when": {"type": "System.OperationCanceledException"},
        "class": "Canceled",
    },
    {"id": "g.python-timeout", "when": {"type": "builtins.TimeoutError"}, "class": "Timeout"},
    {"id": "g.go-deadline", "when": {"type": "context.deadlineExceededError"}, "class": "Timeout"},
    {"id": "g.reconciler", "when": {"origin": "reconciler"}, "class": "Infrastructure"},
    {
        "id": "g.context-length",
        "when": {"type": "builtins.Exception", "message": "(?i)maximum context length"},
        "class": "BudgetExceeded",
    },
]


def _family_rules(f: int) -> list[Rule]:
    """About twenty rules for one vendor; the first ones are the most common kinds."""
    eco = ECOSYSTEMS[f % len(ECOSYSTEMS)]

    def leaf(k: int) -> str:
        return eco.leaf.format(f=f, k=k)

    base = eco.base.format(f=f)
    v = f"v{f}"
    rules: list[Rule] = [
        {"when": {"type": leaf(0)}, "class": "ProviderError"},
        {"when": {"type": leaf(1), "http_status": 429}, "class": "RateLimited"},
        {
            "when": {
                "type": leaf(1),
                "http_status": 503,
                "message": "(?i)overloaded|over capacity",
            },
            "class": "ProviderError",
        },
        {"when": {"type": leaf(2), "code": f"{v}_insufficient_quota"}, "class": "QuotaExceeded"},
        {"when": {"type": [leaf(3), leaf(4)], "origin": "tool"}, "class": "ToolError"},
        {
            "when": {"type": leaf(5), "message": r"(?i)maximum context length is \d+ tokens"},
            "class": "BudgetExceeded",
        },
        {"when": {"type": leaf(6), "cause": {"type": eco.timeout[0]}}, "class": "Timeout"},
        {"when": {"type": base, "http_status": "5xx"}, "class": "ProviderError"},
        {
            "when": {"type": base, "http_status": [408, 504], "origin": "provider"},
            "class": "Timeout",
        },
        {
            "when": {"type": leaf(7), "grpc_status": "UNAVAILABLE", "origin": "provider"},
            "class": "ProviderError",
        },
        {"when": {"provider": v, "code": f"{v}_rate_limited"}, "class": "RateLimited"},
        {"when": {"provider": v, "http_status": 429}, "class": "RateLimited"},
        {
            "when": {"type": leaf(0), "code": f"{v}_content_filter", "origin": "provider"},
            "class": "ContentFiltered",
        },
        {
            "when": {
                "type": leaf(8),
                "cause": {"type": eco.io_error[0], "message": "(?i)connection reset"},
            },
            "class": "Infrastructure",
        },
        {"when": {"provider": v, "message": "(?i)quota.*exceeded"}, "class": "QuotaExceeded"},
        {"when": {"type": leaf(9), "attributes": {"provider_calls": "0"}}, "class": "ToolError"},
        {
            "when": {
                "type": leaf(10),
                "http_status": 400,
                "code": [f"{v}_invalid_request", f"{v}_bad_param"],
            },
            "class": "CompilationFailed",
        },
        {"when": {"type": leaf(11), "origin": ["guard", "interceptor"]}, "class": "ContentBlocked"},
        {
            "when": {"type": base, "code": f"{v}_budget"},
            "class": "BudgetExceeded",
            "priority": 5,
        },
        {
            "when": {
                "type": leaf(2),
                "grpc_status": "RESOURCE_EXHAUSTED",
                "code": f"{v}_insufficient_quota",
            },
            "class": "QuotaExceeded",
        },
        {
            "when": {"type": eco.roots[1], "provider": v, "http_status": [502, 503]},
            "class": "ProviderError",
        },
    ]
    for k, rule in enumerate(rules):
        rule["id"] = f"{eco.name}.v{f}.r{k}"
    return rules


def families_for(n_rules: int) -> int:
    per_family = len(_family_rules(0))
    return max(1, -(-(n_rules - len(GLOBAL_RULES)) // per_family))


def synthetic_rules(n_rules: int) -> list[Rule]:
    """Exactly n_rules rules: the global ones, then vendor families until the count is reached."""
    rules = [dict(r) for r in GLOBAL_RULES]
    f = 0
    while len(rules) < n_rules:
        rules.extend(_family_rules(f)[: n_rules - len(rules)])
        f += 1
    return rules[:n_rules]


def write_ruleset(folder: Path, rules: list[Rule], name: str = "synthetic") -> Path:
    """A ruleset folder on disk: the bundled catalog, a manifest, rules in files of 100."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    shutil.copy(CATALOG, folder / "actions.yaml")
    (folder / "ruleset.yaml").write_text(
        yaml.safe_dump({"name": name, "version": f"{len(rules)}.0.0"}, sort_keys=False)
    )
    for start in range(0, len(rules), RULES_PER_FILE):
        chunk = rules[start : start + RULES_PER_FILE]
        path = folder / "vendors" / f"part{start // RULES_PER_FILE:04d}.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(yaml.safe_dump({"rules": chunk}, sort_keys=False, width=200))
    return folder


_MESSAGES = (
    "The server is overloaded right now, please retry your request later",
    "This model's maximum context length is 8192 tokens, however you requested 9001 tokens",
    "You exceeded your current quota, please check your plan and billing details",
    "Invalid value for parameter temperature: expected a number between 0 and 2",
    "Upstream request failed while streaming the completion to the caller",
    "Tool call returned a non-zero exit status while the agent was running it",
)


def _message(rng: random.Random) -> str:
    text = rng.choice(_MESSAGES)
    tail = f" (request id req_{rng.getrandbits(64):016x})"
    return (text + tail).ljust(MESSAGE_CHARS, ".")[:MESSAGE_CHARS]


def _descriptor(rng: random.Random, f: int, known: bool) -> DescriptorData:
    eco = ECOSYSTEMS[f % len(ECOSYSTEMS)]
    v = f"v{f}"
    cause_type = rng.choice((eco.timeout, eco.io_error, ("com.acme.Unrelated", "Error")))
    if known:
        codes = (f"{v}_insufficient_quota", f"{v}_rate_limited", f"{v}_content_filter", "E42")
        return {
            "type": eco.leaf.format(f=f, k=rng.randrange(LEAVES)),
            "supertypes": [eco.base.format(f=f), *(r.format(f=f) for r in eco.roots)],
            "http_status": rng.choice((429, 503, 500, 400, 408)),
            "origin": rng.choice(("provider", "provider", "tool", "runtime")),
            "code": rng.choice(codes),
            "provider": v,
            "language": eco.name,
            "message": _message(rng),
            "causes": [
                {
                    "type": cause_type[0],
                    "supertypes": list(cause_type[1:]),
                    "message": "Connection reset by peer",
                }
            ],
        }
    return {
        "type": eco.leaf.format(f=f, k=rng.randrange(LEAVES)),
        "supertypes": [eco.base.format(f=f), *(r.format(f=f) for r in eco.roots)],
        "http_status": 418,
        "origin": "user",
        "code": "E_UNSEEN",
        "provider": f"unknown{f}",
        "language": eco.name,
        "message": _message(rng).replace("quota", "limit").replace("maximum", "largest"),
        "causes": [
            {"type": "com.acme.Unrelated", "supertypes": ["com.acme.Base"], "message": "no"}
        ],
    }


def descriptors(n_rules: int, count: int, *, known: bool, seed: int = 7) -> list[DescriptorData]:
    """Descriptors in the descriptor-file shape, from known vendors or from unknown ones."""
    rng = random.Random(seed)
    families = families_for(n_rules)
    out = []
    for _ in range(count):
        f = rng.randrange(families) if known else families + 1000 + rng.randrange(1000)
        out.append(_descriptor(rng, f, known))
    return out
