"""Run every (sdk, scenario) pair outside pytest and print the table per SDK.

    python -m tests.conformance.report              # the tables (per SDK; per language, right
                                                    # class, right action and right retry_after
                                                    # apart), then every pair not right
    python -m tests.conformance.report --sdk python.openai --details

The same `judge` as the pytest items: the fake provider and a classifier server serving
the bundled rules/ are started on loopback for the run and stopped after it.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

from classifier import load_ruleset
from classifier.server import create_server
from errorclass_client import Client
from tests.conformance.drivers import load_all
from tests.conformance.fake_provider import serving
from tests.conformance.go_drivers import go_available
from tests.conformance.go_drivers import running as running_go
from tests.conformance.java_drivers import java_available
from tests.conformance.java_drivers import running as running_java
from tests.conformance.loader import load_scenarios
from tests.conformance.node_drivers import node_available
from tests.conformance.node_drivers import running as running_node
from tests.conformance.runner import RIGHT, VERDICTS, WRONG_WAIT, Result, judge, pairs
from tests.conformance.verdict_table import class_and_action_table, verdict_table
from tests.support import BUNDLED_RULES


def run(
    sdks: set[str] | None = None,
    *,
    rules: Path = BUNDLED_RULES,
    node: bool = True,
    node_helper: Path | None = None,
    go: bool = True,
    java: bool = True,
) -> list[Result]:
    """Every pair (or those of `sdks`), the Node, Go and Java drivers too where node, go,
    and java with mvn are installed;
    `rules` and `node_helper` swap in another ruleset or Node helper (for a baseline)."""
    scenarios = load_scenarios()
    drivers = load_all()
    server = create_server(load_ruleset(rules), "127.0.0.1:0")
    server.start()
    try:
        with contextlib.ExitStack() as stack:
            provider = stack.enter_context(serving(scenarios))
            client = stack.enter_context(Client(f"127.0.0.1:{server.port}"))
            if (
                node
                and node_available()
                and (sdks is None or any(s.startswith("node.") for s in sdks))
            ):
                drivers = {**drivers, **stack.enter_context(running_node(node_helper))}
            if go and go_available() and (sdks is None or any(s.startswith("go.") for s in sdks)):
                drivers = {**drivers, **stack.enter_context(running_go())}
            if (
                java
                and java_available()
                and (sdks is None or any(s.startswith("java.") for s in sdks))
            ):
                drivers = {**drivers, **stack.enter_context(running_java())}
            return [
                judge(sdk, scenario, drivers[sdk], provider, client)
                for sdk, scenario in pairs(scenarios, drivers)
                if sdks is None or sdk in sdks
            ]
    finally:
        server.stop(grace=1)


def table(results: list[Result]) -> str:
    """Per SDK: pairs, right, wrong class, wrong action, wrong retry_after, Unknown, no
    failure; and a total."""
    columns = (
        "sdk",
        "pairs",
        "right",
        "wrong class",
        "wrong action",
        "wrong retry_after",
        "Unknown",
        "no failure",
    )
    return verdict_table(results, lambda r: r.sdk, columns, VERDICTS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdk", action="append", help="only this driver (repeatable)")
    parser.add_argument(
        "--details", action="store_true", help="print the descriptor of every pair not right"
    )
    parser.add_argument(
        "--rules", type=Path, default=BUNDLED_RULES, help="the ruleset to serve (default: rules/)"
    )
    parser.add_argument("--no-node", action="store_true", help="leave out the Node drivers")
    parser.add_argument("--no-go", action="store_true", help="leave out the Go drivers")
    parser.add_argument("--no-java", action="store_true", help="leave out the Java drivers")
    parser.add_argument(
        "--node-helper",
        type=Path,
        help="another copy of clients/node/classifier.js for the Node drivers (a baseline)",
    )
    args = parser.parse_args(argv)
    start = time.monotonic()
    results = run(
        set(args.sdk) if args.sdk else None,
        rules=args.rules,
        node=not args.no_node,
        node_helper=args.node_helper,
        go=not args.no_go,
        java=not args.no_java,
    )
    print(table(results))
    print()
    print(class_and_action_table(results))
    print(f"\n{len(results)} pairs in {time.monotonic() - start:.1f} s\n")
    for r in results:
        if r.verdict != RIGHT or r.attempts != r.expected_attempts or r.stream_mismatches:
            known = r.scenario.known.get(r.sdk)
            if args.details:
                print(r.explain() + (f"\n  known: {known}" if known else ""))
            else:
                print(
                    f"- {r.pair_id}: {r.verdict}, got {r.got_class}/{r.got_action or '-'}"
                    f" ({r.rule_id or '-'}), want {r.scenario.want.error_class}"
                    + (f"/{r.scenario.want.action}" if r.scenario.want.action else "")
                    + (
                        f", retry_after got {r.got_retry_after} want {r.scenario.want.retry_after}"
                        if r.verdict == WRONG_WAIT
                        else ""
                    )
                    + (" [stream asked, non-stream answer]" if r.stream_mismatches else "")
                    + (" [known]" if known else "")
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
