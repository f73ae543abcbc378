"""Run every runtime pair outside pytest and print the table per language.

    python -m tests.conformance.runtime.report                 # the tables, then every pair not right
    python -m tests.conformance.runtime.report --language node --details
    python -m tests.conformance.runtime.report --baseline      # origin only: no contract attributes

The same `judge` as the pytest items: a classifier server serving the bundled rules/ (or
`--rules`) and the tool API are started on loopback for the run and stopped after it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from classifier import load_ruleset
from classifier.server import create_server
from errorclass_client import Client
from tests.conformance.runtime.judge import RIGHT, VERDICTS, Result
from tests.conformance.runtime.situations import parse_pair
from tests.conformance.runtime.suite import Listing, listed, running
from tests.conformance.verdict_table import class_and_action_table, verdict_table
from tests.support import BUNDLED_RULES


def run(listing: Listing, *, rules: Path = BUNDLED_RULES, contract: bool = True) -> list[Result]:
    server = create_server(load_ruleset(rules), "127.0.0.1:0")
    server.start()
    try:
        with (
            Client(f"127.0.0.1:{server.port}", timeout=10.0) as client,
            running(client, listing) as suite,
        ):
            return [suite.judge(pair, contract=contract) for pair in listing.pairs]
    finally:
        server.stop(grace=1)


def table(results: list[Result]) -> str:
    """Per language: pairs, right, wrong class, wrong effect, Unknown; and a total."""
    columns = ("language", "pairs", "right", "wrong class", "wrong effect", "Unknown")
    return verdict_table(results, lambda r: r.language, columns, VERDICTS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--language", action="append", help="only this language (repeatable)")
    parser.add_argument("--details", action="store_true", help="explain every pair not right")
    parser.add_argument("--rules", type=Path, default=BUNDLED_RULES, help="the ruleset to serve")
    parser.add_argument(
        "--baseline",
        action="store_true",
        help="describe with the origin only, as a runtime did before the contract",
    )
    args = parser.parse_args(argv)
    start = time.monotonic()
    listing = listed(set(args.language) if args.language else None)
    for language, reason in listing.unavailable.items():
        print(f"({language} left out: {reason})", file=sys.stderr)
    results = run(listing, rules=args.rules, contract=not args.baseline)
    print(table(results))
    print()
    print(class_and_action_table(results))
    print(f"\n{len(results)} pairs in {time.monotonic() - start:.1f} s\n")
    for r in results:
        if r.verdict == RIGHT:
            continue
        known = listing.situations[parse_pair(r.pair).situation].known.get(r.pair)
        if args.details:
            print(r.explain() + (f"\n  known: {known}" if known else ""))
        else:
            print(
                f"- {r.pair}: {r.verdict}, got {r.got_class}/{r.got_effect} ({r.rule_id or '-'}),"
                f" want {r.situation.want.error_class}/{r.situation.want.effect or '-'}"
                + (" [known]" if known else "")
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
