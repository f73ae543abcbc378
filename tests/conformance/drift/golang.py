"""The Go half of the drift check: the pinned Go SDKs' error types, as drift entries.

    python -m tests.conformance.drift.golang     # scan the module cache, check

`tests/conformance/go/errortypes` (`go run ./errortypes` in tests/conformance/go) lists,
for every package of an SDK module that the Go conformance worker links (`go list -deps`),
each exported type with an `Error() string` method, written as `%T` prints it (`*pkg.T`,
or `pkg.T` for a value receiver): exactly what errorclass.Describe sends as the type. An
aws-sdk-go-v2 service error is a code entry too (Describe sends its ErrorCode()). The Go
names of `deliberately-unknown.yaml` are checked, for staleness too, only in a run with
Go entries.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from tests.conformance.drift.entries import Entry, read_entries
from tests.conformance.drift.run import run_check
from tests.conformance.go_drivers import GO_DIR, go_environment

SCAN_LIMIT_S = 600


def go_entries(out: Path) -> list[Entry]:
    """Scan the pinned Go SDKs' sources (downloading the modules go.sum pins if needed)."""
    with out.open("w") as f:
        subprocess.run(
            ["go", "run", "./errortypes"],
            cwd=GO_DIR,
            stdout=f,
            stderr=subprocess.PIPE,
            text=True,
            timeout=SCAN_LIMIT_S,
            check=True,
            env=go_environment(),
        )
    return read_entries(out)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "go-entries.json"
        go_entries(path)
        report = run_check([path])
    print(report.text())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
