"""Java's runtime pairs: `dev.errorclass.conformance.RuntimePairs`, a JSON-lines JVM worker.

The worker (tests/conformance/java, built with Maven as for the provider suite) raises each
failure with real JDK code (`Future.get` and `CompletableFuture.orTimeout` timeouts,
`cancel`, a thread interrupt, java.net.http timeouts and refusals, `Files`, parsing,
ExecutionException / CompletionException wrapping) or resilience4j (TimeLimiter,
RateLimiter, Bulkhead, CircuitBreaker), and describes it with clients/java's
`Descriptors.from`, the contract's attributes set through `RuntimeFacts`. The pairs are
listed by `RuntimeList.java` run as a single source file, which needs no build.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tests.conformance.java_drivers import JAVA_DIR, build, java_available, java_command
from tests.conformance.node_drivers import worker_environment
from tests.conformance.runtime.drivers import (
    JsonLinesWorker,
    RuntimeDriver,
    worker_list,
    worker_session,
)

LANGUAGE = "java"
SOURCES = JAVA_DIR / "src" / "main" / "java" / "dev" / "errorclass" / "conformance"
LIST_COMMAND = ["java", str(SOURCES / "RuntimeList.java")]
WORKER_CLASS = "dev.errorclass.conformance.RuntimePairs"


def unavailable() -> str | None:
    return None if java_available() else "java and mvn are not on PATH (JDK 17 and Maven)"


def list_pairs() -> list[str]:
    return worker_list(LIST_COMMAND, cwd=JAVA_DIR, env=worker_environment())


@contextmanager
def open_driver() -> Iterator[RuntimeDriver]:
    command = java_command(build(), main=WORKER_CLASS)
    worker = JsonLinesWorker(LANGUAGE, command, cwd=JAVA_DIR, env=worker_environment())
    yield from worker_session(worker)
