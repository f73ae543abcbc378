"""The Java drivers: real Java SDK calls, made by one long-lived JVM worker process.

`tests/conformance/java` is a Maven project (the SDKs pinned in its pom.xml) whose
`dev.errorclass.conformance.Worker` reads one JSON request per line (the SDK, the
scenario's base URL, api, stream and fault), makes that one call with the real Java SDK,
describes what it raised with the client package's `Descriptors.from` (clients/java; an
HTTP error response a raw client returned, with `Descriptors.fromHttpResponse`), and
answers with the descriptor on one line, as tests/conformance/node/worker.mjs does. The
drivers here hand that descriptor to the shared runner as `Outcome(descriptor=...)`, so a
Java pair is judged exactly like a Python or Node one.

`build()` installs the client package into the local Maven repository (`mvn install`,
tests skipped: `make java-client` runs them) and packages the worker, under a file lock
(pytest-xdist workers share the target folders); Maven skips what is up to date.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conformance.drivers import Driver
from tests.conformance.line_worker import LineWorker, worker_environment
from tests.support import ROOT

JAVA_DIR = Path(__file__).with_name("java")
CLIENT_DIR = ROOT / "clients" / "java"
CLASSPATH_FILE = JAVA_DIR / "target" / "classpath.txt"
WORKER_CLASS = "dev.errorclass.conformance.Worker"
JAVA_SDKS: dict[str, tuple[str, ...]] = {
    "java.openai": ("openai", "azure"),
    "java.anthropic": ("anthropic",),
    "java.langchain4j-openai": ("openai",),
    "java.langchain4j-anthropic": ("anthropic",),
    "java.spring-ai-openai": ("openai",),
    "java.bedrock": ("bedrock",),
    "java.http": ("openai", "azure", "anthropic", "gemini"),
    "java.okhttp": ("openai", "azure", "anthropic", "gemini"),
    "java.resilience4j": ("openai",),
}
"""Each Java driver and the APIs it can call (Worker --list says the same; a test checks)."""
MAVEN_LIMIT_S = 900.0
MAVEN = ["mvn", "-B", "-q", "-ntp"]


class JavaUnavailableError(RuntimeError):
    """java or mvn is missing, or the Maven build failed."""


def java_available() -> bool:
    return shutil.which("java") is not None and shutil.which("mvn") is not None


def maven(folder: Path, *goals: str) -> None:
    done = subprocess.run(
        [*MAVEN, *goals],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=MAVEN_LIMIT_S,
        check=False,
    )
    if done.returncode != 0:
        raise JavaUnavailableError(
            f"mvn {' '.join(goals)} failed in {folder}:\n{done.stdout[-6000:]}\n{done.stderr[-3000:]}"
        )


@contextmanager
def maven_lock() -> Iterator[None]:
    """One Maven build of the repository's Java folders at a time (pytest-xdist workers and
    the README test share their target folders and the local repository)."""
    lock = (
        Path(tempfile.gettempdir())
        / f"errorclass-mvn-{hashlib.sha256(bytes(ROOT)).hexdigest()[:16]}.lock"
    )
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield


@functools.cache
def build() -> str:
    """Install the client package, package the worker; return the worker's class path.

    Once per process: a Maven run that finds everything up to date still takes some 20 s
    here, and the provider pairs, the runtime pairs and the drift check all need the worker."""
    with maven_lock():
        maven(CLIENT_DIR, "install", "-DskipTests")
        maven(
            JAVA_DIR,
            "package",
            "dependency:build-classpath",
            f"-Dmdep.outputFile={CLASSPATH_FILE}",
        )
    return f"{JAVA_DIR / 'target' / 'classes'}:{CLASSPATH_FILE.read_text().strip()}"


def java_command(classpath: str, *args: str, main: str = WORKER_CLASS) -> list[str]:
    """The worker's command line: no proxies, no AWS profile lookups, a small heap."""
    return [
        "java",
        "-Xss1m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-Djava.net.useSystemProxies=false",
        "-Daws.disableEc2Metadata=true",
        "-cp",
        classpath,
        main,
        *args,
    ]


def java_worker(classpath: str) -> LineWorker:
    """The JVM worker, spoken to as the Node worker is (one JSON line each way)."""
    return LineWorker(java_command(classpath), JAVA_DIR, worker_environment(), "Java")


@contextmanager
def running() -> Iterator[dict[str, Driver]]:
    """The Java drivers for the block: built, a worker started, ended after."""
    if not java_available():
        raise JavaUnavailableError("java and mvn are not on PATH (the Java drivers need JDK 17)")
    worker = java_worker(build())
    try:
        yield worker.drivers(JAVA_SDKS)
    finally:
        worker.close()
