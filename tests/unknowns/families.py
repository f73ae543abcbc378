"""Invented failure families for `--propose`, written with the taxonomy beside them.

Each family is a failure the bundled rules leave Unknown, in the shape its runtime reports
it (types and causes as the SDKs and standard libraries name them: `%T` in Go, full names
in Java and .NET, Rust paths), and what a careful person would say its class is:

- `settles`: the evidence that decides classes names one class (a cause the rules already
  classify, a status, a code): the draft must carry exactly that class;
- `placeholder`: no evidence in the descriptor can settle it (the same exception is a
  Timeout, a ProviderError or a bug depending on facts the descriptor does not hold): the
  draft must carry the `TO CHOOSE` placeholder, which fails `classifier check`.

Five are the families of issue 26 (the index that is not ready, Go's connection refused
three causes deep, the LINQ bug, reqwest's timeout from the provider, and a `TypeError`
repeated word for word).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True)
class Family:
    name: str
    language: str
    members: list[dict[str, Any]]
    settles: str
    """The class the evidence settles, or "" for a placeholder."""
    rule_id: str
    """The drafted id a team keeps: the type's namespace and name."""
    why: str


def _n(count: int, make: Any) -> list[dict[str, Any]]:
    return [make(i) for i in range(count)]


FAMILIES: list[Family] = [
    Family(
        "python-index-not-ready",
        "python",
        _n(
            6,
            lambda i: {
                "type": "acme.vector.IndexNotReady",
                "supertypes": ["acme.vector.VectorError", "Exception"],
                "language": "python",
                "message": f"index 'docs-{i}' is not ready: build {10 * i + 40}% complete",
            },
        ),
        "",
        "acme.vector.index-not-ready",
        "an index still building: a tool's failure if a tool searched it, the provider's if "
        "a hosted store; the descriptor says neither (no origin), and `language: python` "
        "holding on some rule is no evidence",
    ),
    Family(
        "go-connection-refused",
        "go",
        _n(
            5,
            lambda i: {
                "type": "*fmt.wrapError",
                "language": "go",
                "message": f'search: Post "http://127.0.0.{i + 2}:8080/q": dial tcp '
                f"127.0.0.{i + 2}:8080: connect: connection refused",
                "causes": [
                    {
                        "type": "*url.Error",
                        "message": f'Post "http://127.0.0.{i + 2}:8080/q": dial tcp 127.0.0.{i + 2}:8080: '
                        "connect: connection refused",
                    },
                    {
                        "type": "*net.OpError",
                        "message": f"dial tcp 127.0.0.{i + 2}:8080: connect: connection refused",
                    },
                    {"type": "*os.SyscallError", "message": "connect: connection refused"},
                ],
            },
        ),
        "",
        "go.net.connect-connection-refused",
        "refused by whom: the provider (ProviderError) or a tool's backend (ToolError); no "
        "origin is given, and the deadline rule that failed on its deadline cause lends nothing",
    ),
    Family(
        "dotnet-linq-no-elements",
        "dotnet",
        _n(
            4,
            lambda i: {
                "type": "System.InvalidOperationException",
                "supertypes": ["System.SystemException", "System.Exception"],
                "language": "dotnet",
                "origin": "runtime",
                "message": "Sequence contains no elements",
                "attributes": {"step": f"s{i}"},
            },
        ),
        "",
        "dotnet.system.sequence-contains-no-elements",
        "a bug in our own code (First() on an empty list): no class of the taxonomy fits, "
        "and CompilationFailed (the runtime's origin) would be a lie",
    ),
    Family(
        "rust-reqwest-timed-out",
        "rust",
        _n(
            4,
            lambda i: {
                "type": "reqwest::Error",
                "language": "rust",
                "origin": "provider",
                "message": f"error sending request for url (https://127.0.0.1:{8000 + i}/v1/chat): "
                "operation timed out",
                "causes": [
                    {"type": "hyper_util::client::legacy::Error", "message": "operation timed out"}
                ],
            },
        ),
        "",
        "reqwest.error-sending-request-for",
        "from the provider (ProviderError by origin), but it says it timed out, which the "
        "library's rules key on (a timeout is a Timeout): the evidence disagrees",
    ),
    Family(
        "node-type-error-undefined",
        "node",
        [
            {
                "type": "TypeError",
                "supertypes": ["Error"],
                "language": "node",
                "message": "Cannot read properties of undefined (reading 'choices')",
            }
        ]
        * 5,
        "",
        "node.cannot-read-properties-of",
        "a bug in our code reading a reply; whose reply and where it ran the descriptor does "
        "not say; TypeError alone must never scope a draft",
    ),
    Family(
        "java-ledger-locked",
        "java",
        _n(
            3,
            lambda i: {
                "type": "com.acme.billing.LedgerLockedException",
                "supertypes": [
                    "java.lang.IllegalStateException",
                    "java.lang.RuntimeException",
                    "java.lang.Exception",
                    "java.lang.Throwable",
                ],
                "language": "java",
                "message": f"ledger {1000 + i} is locked by another writer",
            },
        ),
        "",
        "com.acme.billing.ledger-locked",
        "our own billing code refusing a concurrent write: a tool's error if a tool wrote, "
        "a quota of ours if it is a limiter; nothing in the descriptor says",
    ),
    Family(
        "java-step-read-timeout",
        "java",
        _n(
            4,
            lambda i: {
                "type": "com.acme.agent.StepFailedException",
                "supertypes": [
                    "java.lang.RuntimeException",
                    "java.lang.Exception",
                    "java.lang.Throwable",
                ],
                "language": "java",
                "message": f"step 'fetch-{i}' failed: Read timed out",
                "causes": [
                    {
                        "type": "java.net.SocketTimeoutException",
                        "supertypes": [
                            "java.io.InterruptedIOException",
                            "java.io.IOException",
                            "java.lang.Exception",
                            "java.lang.Throwable",
                        ],
                        "message": "Read timed out",
                    }
                ],
            },
        ),
        "Timeout",
        "com.acme.agent.step-failed",
        "its cause, java.net.SocketTimeoutException, is a Timeout by the JDK rules",
    ),
    Family(
        "python-retrieval-read-timeout",
        "python",
        _n(
            4,
            lambda i: {
                "type": "acme.rag.RetrievalError",
                "supertypes": ["acme.rag.RagError", "Exception"],
                "language": "python",
                "message": f"retrieval for query q{i} failed",
                "causes": [
                    {
                        "type": "httpx.ReadTimeout",
                        "supertypes": [
                            "httpx.TimeoutException",
                            "httpx.TransportError",
                            "httpx.RequestError",
                            "httpx.HTTPError",
                            "Exception",
                        ],
                        "message": "The read operation timed out",
                    }
                ],
            },
        ),
        "Timeout",
        "acme.rag.retrieval",
        "its cause, httpx.ReadTimeout, is a Timeout by the httpx rules",
    ),
    Family(
        "dotnet-search-http-timeout",
        "dotnet",
        _n(
            3,
            lambda i: {
                "type": "Acme.Search.SearchFailedException",
                "supertypes": ["System.Exception"],
                "language": "dotnet",
                "message": f"search {i} failed",
                "causes": [
                    {
                        "type": "System.Threading.Tasks.TaskCanceledException",
                        "supertypes": [
                            "System.OperationCanceledException",
                            "System.SystemException",
                            "System.Exception",
                        ],
                        "message": "The request was canceled due to the configured HttpClient.Timeout "
                        "of 100 seconds elapsing.",
                    },
                    {
                        "type": "System.TimeoutException",
                        "supertypes": ["System.SystemException", "System.Exception"],
                        "message": "The operation was canceled.",
                    },
                ],
            },
        ),
        "Timeout",
        "acme.search.search-failed",
        "its cause, HttpClient's TaskCanceledException over a TimeoutException, is a Timeout "
        "by the .NET rules (not a cancel)",
    ),
]


def pick(target: Path, choices: dict[str, str]) -> None:
    """A person picks: each drafted rule (and its cases) gets the class chosen for its id."""
    for rule_id, cls in choices.items():
        rules = target / f"{rule_id}.yaml"
        data = yaml.safe_load(rules.read_text())
        data["rules"][0]["class"] = cls
        rules.write_text(yaml.safe_dump(data, sort_keys=False))
        cases = target / f"{rule_id}.cases.yaml"
        data = yaml.safe_load(cases.read_text())
        for case in data["cases"]:
            case["want"]["class"] = cls
        cases.write_text(yaml.safe_dump(data, sort_keys=False))
