"""The Node half of the drift check: the pinned Node SDKs' Error classes, as drift entries.

    python -m tests.conformance.drift.node     # npm ci (when the lockfile changed), enumerate, check

`tests/conformance/node/error_classes.mjs` imports each pinned Node SDK, walks its exports
for classes that extend Error and prints them as the JSON entries `read_entries` takes:
`{"sdk", "language": "node", "type", "supertypes", "code"?}`, with `type` and `supertypes`
exactly as clients/node's descriptorFromError sends them (an AWS SDK v3 service exception
is a code entry too: the helper sends its name as the code). The Node names of
`deliberately-unknown.yaml` are checked, for staleness too, only in a run with Node entries.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conformance.drift.entries import Entry, read_entries
from tests.conformance.drift.run import run_check
from tests.conformance.node_drivers import NODE_DIR, npm_ci, worker_environment


def node_entries(out: Path) -> list[Entry]:
    """Install the pinned Node SDKs if needed, write their entries to `out`, and read them."""
    npm_ci(NODE_DIR)
    with out.open("w") as f:
        subprocess.run(
            ["node", "error_classes.mjs"],
            cwd=NODE_DIR,
            stdout=f,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=True,
            env=worker_environment(),
        )
    return read_entries(out)


def main() -> int:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "node-entries.json"
        node_entries(path)
        report = run_check([path])
    print(report.text())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
