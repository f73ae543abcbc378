"""python -m tests.conformance.drift [--entries FILE.json ...] [--rules DIR] [--allow FILE]

Without --entries, the pinned Python SDKs are walked (in a subprocess); with it, the given
JSON lists are checked (the Node side passes its own). Exit 1 when an entry is undecided
or an allow-list entry is stale, with each one listed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tests.conformance.drift.run import ALLOWLIST, RULES, run_check


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.drift")
    parser.add_argument("--entries", type=Path, action="append", default=[])
    parser.add_argument("--rules", type=Path, default=RULES)
    parser.add_argument("--allow", type=Path, default=ALLOWLIST)
    args = parser.parse_args(argv)
    report = run_check(args.entries or None, rules=args.rules, allow=args.allow)
    print(report.text())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
