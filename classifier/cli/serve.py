"""`classifier serve`: run the gRPC service on a ruleset."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from classifier.compiler import load_ruleset
from classifier.errors import RulesetError
from classifier.server import DEFAULT_ADDRESS, serve
from classifier.server.app import DEFAULT_GRACE_SECONDS, DEFAULT_THREADS


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("serve", help="serve the classifier over gRPC")
    p.add_argument("--rules", default="rules", help="ruleset folder (default: rules)")
    p.add_argument(
        "--addr", default=DEFAULT_ADDRESS, help=f"listen address (default: {DEFAULT_ADDRESS})"
    )
    p.add_argument(
        "--threads", type=int, default=DEFAULT_THREADS, help="worker threads per process"
    )
    p.add_argument(
        "--grace",
        type=float,
        default=DEFAULT_GRACE_SECONDS,
        help="seconds in-flight calls get on shutdown",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        ruleset = load_ruleset(args.rules)
    except RulesetError as exc:
        print(exc.render(), file=sys.stderr)
        print(
            f"classifier: cannot serve: {len(exc.diagnostics)} error(s) in {args.rules}",
            file=sys.stderr,
        )
        return 1
    serve(ruleset, args.addr, threads=args.threads, grace=args.grace)
    return 0
