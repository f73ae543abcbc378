"""The Java half of the drift check: the pinned Java SDKs' Throwable classes, as drift entries.

    python -m tests.conformance.drift.java     # build the worker (Maven), enumerate, check

`tests/conformance/java`'s `ErrorClasses` walks the jars of the SDKs pinned in its pom.xml
(openai-java, anthropic-java, LangChain4j, Spring AI, AWS SDK v2's Bedrock Runtime and
core, OkHttp, resilience4j) for public Throwable classes and prints them as the JSON
entries `read_entries` takes: `{"sdk", "language": "java", "type", "supertypes"}`, with
`type` and `supertypes` exactly as clients/java's `Descriptors.from` sends them. The Java
names of `deliberately-unknown.yaml` are checked, for staleness too, only in a run with
Java entries.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from tests.conformance.drift.entries import Entry, read_entries
from tests.conformance.drift.run import run_check
from tests.conformance.java_drivers import JAVA_DIR, build, java_command

ENUMERATOR = "dev.errorclass.conformance.ErrorClasses"


def java_entries(out: Path) -> list[Entry]:
    """Build the worker project if needed, write the Java SDKs' entries to `out`, read them."""
    command = java_command(build(), main=ENUMERATOR)
    with out.open("w") as f:
        subprocess.run(
            command,
            cwd=JAVA_DIR,
            stdout=f,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            check=True,
        )
    return read_entries(out)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "java-entries.json"
        java_entries(path)
        report = run_check([path])
    print(report.text())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
