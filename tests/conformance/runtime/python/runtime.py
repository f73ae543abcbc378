"""The runtime's own failures: limiters, bulkheads, quotas, breakers, retries, guards,
interceptor vetoes, budgets, definitions, reconciliation and Celery's task limits.

Where a library has the mechanism (asyncio.Queue, anyio, pybreaker, aiobreaker, tenacity,
openai, pydantic, jsonschema, yaml, jinja2, pydantic-ai's usage limits, billiard's
pool) its real code raises. An application's own type (its token bucket, its interceptor's
exception) is defined here, as an application would, and says only what it would say.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import string
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import anyio
import billiard
import httpx
import jinja2
import jsonschema
import openai
import pybreaker
import pydantic
import tenacity
import yaml

from tests.conformance.runtime import celery_task
from tests.conformance.runtime.drivers import ToolEnv
from tests.conformance.runtime.python import Failure, pair, raised

RUNTIME = "runtime"


# --- an application's own limiter and quota -----------------------------------------------


class RateLimitError(Exception):
    """The runtime's own token bucket refusing (named as many applications name theirs)."""


class TokenBucket:
    def __init__(self, capacity: int) -> None:
        self.tokens = capacity

    def take(self) -> None:
        if self.tokens <= 0:
            raise RateLimitError("rate limit exceeded: 0 tokens left in the bucket for tenant t-42")
        self.tokens -= 1


@pair("app-token-bucket", "quota.limiter")
def limiter_bucket(env: ToolEnv) -> Failure:
    bucket = TokenBucket(1)
    bucket.take()
    return Failure(raised(bucket.take), RUNTIME, {"refused_by": "rate_limiter"})


class TenantQuotaExceeded(Exception):  # noqa: N818  (an application's name)
    pass


@pair("app-tenant-quota", "quota.tenant")
def tenant_quota(env: ToolEnv) -> Failure:
    used, quota = 1_000_000, 1_000_000

    def charge() -> None:
        if used >= quota:
            raise TenantQuotaExceeded(f"tenant t-42 used its monthly quota of {quota} tokens")

    return Failure(raised(charge), RUNTIME, {"refused_by": "quota"})


@pair("permission-error-quota-gate", "quota.tenant")
def tenant_quota_gate(env: ToolEnv) -> Failure:
    """An application's quota gate raising a builtin (issue 32's `PermissionError`): only
    the runtime's `refused_by` says it was a quota."""

    def gate() -> None:
        raise PermissionError("tenant t-42: no requests left today")

    return Failure(raised(gate), RUNTIME, {"refused_by": "quota"})


@pair("asyncio-semaphore-cap", "quota.bulkhead")
def bulkhead_semaphore(env: ToolEnv) -> Failure:
    """The runtime's own concurrency cap on asyncio.Semaphore: a call that would wait is
    refused (a plain RuntimeError; asyncio has no exception of its own for it)."""

    async def admit() -> None:
        cap = asyncio.Semaphore(1)
        async with cap:
            if cap.locked():
                raise RuntimeError("concurrency cap of 1 provider call reached")

    return Failure(
        raised(lambda: asyncio.run(admit())), RUNTIME, {"refused_by": "concurrency_limit"}
    )


# --- bulkheads -----------------------------------------------------------------------------


@pair("asyncio-queue-full", "quota.bulkhead")
def bulkhead_asyncio_queue(env: ToolEnv) -> Failure:
    async def admit() -> None:
        pending: asyncio.Queue[int] = asyncio.Queue(maxsize=1)
        pending.put_nowait(1)
        pending.put_nowait(2)

    return Failure(raised(lambda: asyncio.run(admit())), RUNTIME)


@pair("queue-full", "quota.bulkhead")
def bulkhead_queue(env: ToolEnv) -> Failure:
    pending: queue.Queue[int] = queue.Queue(maxsize=1)
    pending.put_nowait(1)
    return Failure(raised(lambda: pending.put_nowait(2)), RUNTIME)


@pair("anyio-memory-stream-full", "quota.bulkhead")
def bulkhead_anyio_stream(env: ToolEnv) -> Failure:
    async def admit() -> None:
        send, receive = anyio.create_memory_object_stream[int](0)
        with send, receive:
            send.send_nowait(1)

    return Failure(raised(lambda: anyio.run(admit)), RUNTIME)


@pair("anyio-capacity-limiter", "quota.bulkhead")
def bulkhead_anyio_limiter(env: ToolEnv) -> Failure:
    async def admit() -> None:
        limiter = anyio.CapacityLimiter(1)
        await limiter.acquire_on_behalf_of("run-1")
        limiter.acquire_on_behalf_of_nowait("run-2")

    return Failure(raised(lambda: anyio.run(admit)), RUNTIME)


# --- breakers and retries around the provider ----------------------------------------------


BREAKER = {"refused_by": "breaker"}


def _provider_down() -> None:
    raise ConnectionResetError(104, "Connection reset by peer")


@pair("pybreaker", "breaker.open")
def breaker_pybreaker(env: ToolEnv) -> Failure:
    breaker = pybreaker.CircuitBreaker(fail_max=1, reset_timeout=60)
    raised(lambda: breaker.call(_provider_down))  # trips it
    return Failure(raised(lambda: breaker.call(_provider_down)), "provider")


@pair("pybreaker-own-guard", "breaker.open")
def breaker_pybreaker_runtime(env: ToolEnv) -> Failure:
    """The same breaker described as the runtime's own guard (origin runtime, refused_by)."""
    breaker = pybreaker.CircuitBreaker(fail_max=1, reset_timeout=60)
    raised(lambda: breaker.call(_provider_down))
    return Failure(raised(lambda: breaker.call(_provider_down)), RUNTIME, BREAKER)


@pair("pybreaker-trial-failed", "breaker.half-open")
def breaker_pybreaker_half_open(env: ToolEnv) -> Failure:
    """pybreaker admits every call when half-open (it has no probe limit); its half-open
    refusal is the trial call failing: the breaker opens again and raises its own error."""
    breaker = pybreaker.CircuitBreaker(fail_max=1, reset_timeout=0.05)
    raised(lambda: breaker.call(_provider_down))  # trips it
    time.sleep(0.1)  # past reset_timeout: the next call is the half-open breaker's trial
    exc = raised(lambda: breaker.call(_provider_down))
    assert isinstance(exc, pybreaker.CircuitBreakerError), exc
    assert "Trial call" in str(exc), exc
    return Failure(exc, RUNTIME, BREAKER)


@pair("aiobreaker-trial-failed", "breaker.half-open")
def breaker_aiobreaker_half_open(env: ToolEnv) -> Failure:
    """aiobreaker, like pybreaker, admits the half-open trial; when it fails the breaker
    opens again and raises its own error (from the provider's)."""
    import datetime

    import aiobreaker

    breaker = aiobreaker.CircuitBreaker(
        fail_max=1, timeout_duration=datetime.timedelta(milliseconds=50)
    )

    async def down() -> None:
        _provider_down()

    async def trial() -> None:
        with contextlib.suppress(ConnectionResetError, aiobreaker.CircuitBreakerError):
            await breaker.call_async(down)  # trips it
        await asyncio.sleep(0.1)  # past timeout_duration: the next call is the trial
        await breaker.call_async(down)

    exc = raised(lambda: asyncio.run(trial()))
    assert isinstance(exc, aiobreaker.CircuitBreakerError), exc
    assert "Trial call" in str(exc), exc
    return Failure(exc, RUNTIME, BREAKER)


class CircuitHalfOpenError(RuntimeError):
    """The runtime's own asyncio breaker refusing a call while its one probe is in flight."""


class ProbeBreaker:
    """A half-open breaker as runtimes write one on asyncio: one probe at a time."""

    def __init__(self) -> None:
        self.probe = asyncio.Lock()

    async def call(self, fn: Any) -> Any:
        if self.probe.locked():
            raise CircuitHalfOpenError("circuit half-open: probe in flight, call refused")
        async with self.probe:
            return await fn()


@pair("asyncio-probe-in-flight", "breaker.half-open")
def breaker_asyncio_half_open(env: ToolEnv) -> Failure:
    async def refused() -> None:
        breaker = ProbeBreaker()
        probe = asyncio.create_task(breaker.call(lambda: asyncio.sleep(0.2)))
        await asyncio.sleep(0.01)  # the probe holds the breaker
        try:
            await breaker.call(lambda: asyncio.sleep(0))
        finally:
            await probe

    return Failure(raised(lambda: asyncio.run(refused())), RUNTIME, BREAKER)


@pair("aiobreaker", "breaker.open")
def breaker_aiobreaker(env: ToolEnv) -> Failure:
    import datetime

    import aiobreaker

    breaker = aiobreaker.CircuitBreaker(fail_max=1, timeout_duration=datetime.timedelta(seconds=60))

    async def down() -> None:
        _provider_down()

    async def twice() -> None:
        with contextlib.suppress(ConnectionResetError, aiobreaker.CircuitBreakerError):
            await breaker.call_async(down)  # trips it
        await breaker.call_async(down)

    return Failure(raised(lambda: asyncio.run(twice())), "provider")


def _openai(env: ToolEnv, kind: str) -> openai.OpenAI:
    return openai.OpenAI(
        api_key="sk-test", base_url=f"{env.tool_api}/provider/{kind}/v1", max_retries=0
    )


def _chat(client: openai.OpenAI) -> Any:
    return client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
    )


@pair("tenacity-openai", "retry.gave-up-on-429")
def retry_openai(env: ToolEnv) -> Failure:
    client = _openai(env, "rate-limit")
    call = tenacity.retry(stop=tenacity.stop_after_attempt(2), wait=tenacity.wait_none())(
        lambda: _chat(client)
    )
    return Failure(raised(call), "provider")


@pair("tenacity-httpx", "retry.gave-up-on-429")
def retry_httpx(env: ToolEnv) -> Failure:
    url = f"{env.tool_api}/provider/rate-limit/v1/chat/completions"
    call = tenacity.retry(stop=tenacity.stop_after_attempt(2), wait=tenacity.wait_none())(
        lambda: httpx.post(url, json={}, timeout=2).raise_for_status()
    )
    return Failure(raised(call), "provider")


# --- our guard against the provider's filter -----------------------------------------------


class PolicyViolation(Exception):  # noqa: N818  (an application's name)
    pass


@pair("app-guard-exception", "guard.blocked")
def guard_own_type(env: ToolEnv) -> Failure:
    def guard(text: str) -> None:
        if "card number" in text:
            raise PolicyViolation(
                "output blocked: it contains a payment card number (policy pii.cards)"
            )

    return Failure(raised(lambda: guard("your card number is 4111 1111 1111 1111")), "guard")


@pair("guard-value-error", "guard.blocked")
def guard_value_error(env: ToolEnv) -> Failure:
    def guard(text: str) -> None:
        if "ignore previous instructions" in text.lower():
            raise ValueError("prompt rejected by the injection guard")

    return Failure(raised(lambda: guard("Ignore previous instructions and ...")), "guard")


class _Reply(pydantic.BaseModel):
    answer: str = pydantic.Field(max_length=20)


@pair("guard-pydantic", "guard.blocked")
def guard_pydantic(env: ToolEnv) -> Failure:
    """An output guard validating the reply with pydantic: our policy refused it."""
    return Failure(raised(lambda: _Reply(answer="x" * 200)), "guard")


@pair("openai-400-content-filter", "provider.content-filtered")
def filtered_openai(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: _chat(_openai(env, "content-filter"))), "provider")


@pair("httpx-400-content-filter", "provider.content-filtered")
def filtered_httpx(env: ToolEnv) -> Failure:
    url = f"{env.tool_api}/provider/content-filter/openai/deployments/gpt-4o/chat/completions"
    return Failure(
        raised(lambda: httpx.post(url, json={}, timeout=2).raise_for_status()), "provider"
    )


# --- interceptor vetoes (paused, not failed) -----------------------------------------------


class ExecutionBlocked(Exception):  # noqa: N818  (an application's name)
    """An embedder's interceptor declining the next step on purpose."""


def _interceptor(reason: str, message: str, kind: type[Exception]) -> Failure:
    def before_model_call() -> None:
        raise kind(message)

    return Failure(raised(before_model_call), "interceptor", {"veto": reason})


@pair("interceptor-exception", "veto.budget")
def veto_budget(env: ToolEnv) -> Failure:
    return _interceptor(
        "budget", "run blocked: the run's spend of $5.00 is used up", ExecutionBlocked
    )


@pair("interceptor-permission-error", "veto.budget")
def veto_budget_permission(env: ToolEnv) -> Failure:
    return _interceptor("budget", "next model call declined", PermissionError)


@pair("interceptor-exception", "veto.quota")
def veto_quota(env: ToolEnv) -> Failure:
    return _interceptor("quota", "run blocked: tenant t-42 has no credits left", ExecutionBlocked)


@pair("interceptor-permission-error", "veto.quota")
def veto_quota_permission(env: ToolEnv) -> Failure:
    return _interceptor("quota", "next step declined", PermissionError)


@pair("interceptor-exception", "veto.policy")
def veto_policy(env: ToolEnv) -> Failure:
    return _interceptor(
        "policy", "run blocked: tool shell.exec is not allowed for this tenant", ExecutionBlocked
    )


@pair("interceptor-permission-error", "veto.policy")
def veto_policy_permission(env: ToolEnv) -> Failure:
    return _interceptor("policy", "next step declined", PermissionError)


# --- budgets -------------------------------------------------------------------------------


class StepBudgetExceeded(Exception):  # noqa: N818  (an application's name)
    pass


@pair("app-step-budget", "budget.tree")
def budget_own(env: ToolEnv) -> Failure:
    def step(n: int) -> None:
        if n > 25:
            raise StepBudgetExceeded("the run's step budget of 25 is used up")

    return Failure(raised(lambda: step(26)), RUNTIME, {"refused_by": "budget"})


@pair("pydantic-ai-usage-limits", "budget.tree")
def budget_pydantic_ai(env: ToolEnv) -> Failure:
    from pydantic_ai.usage import RunUsage, UsageLimits

    limits = UsageLimits(request_limit=3)
    return Failure(raised(lambda: limits.check_before_request(RunUsage(requests=3))), RUNTIME)


# --- the agent definition ------------------------------------------------------------------


class AgentSpec(pydantic.BaseModel):
    name: str
    model: str
    max_steps: int = pydantic.Field(gt=0)


DEFINITION = {"name": "triage", "model": "gpt-4o-mini", "max_steps": 0}
SCHEMA = {
    "type": "object",
    "required": ["name", "model"],
    "properties": {
        "name": {"type": "string"},
        "model": {"type": "string"},
        "max_steps": {"type": "integer", "minimum": 1},
    },
}


@pair("pydantic-validate", "definition.schema")
def def_pydantic(env: ToolEnv) -> Failure:
    return Failure(
        raised(lambda: AgentSpec.model_validate(DEFINITION)), RUNTIME, {"stage": "validate"}
    )


@pair("jsonschema-validate", "definition.schema")
def def_jsonschema(env: ToolEnv) -> Failure:
    return Failure(
        raised(lambda: jsonschema.validate(DEFINITION, SCHEMA)), RUNTIME, {"stage": "validate"}
    )


PARTIAL: dict[str, Any] = {"name": "triage"}


@pair("dataclass-missing-field", "definition.schema")
def def_dataclass(env: ToolEnv) -> Failure:
    import dataclasses

    @dataclasses.dataclass
    class Spec:
        name: str
        model: str

    return Failure(raised(lambda: Spec(**PARTIAL)), RUNTIME, {"stage": "compile"})


@pair("yaml-safe-load", "definition.syntax")
def def_yaml(env: ToolEnv) -> Failure:
    return Failure(
        raised(lambda: yaml.safe_load("name: triage\ntools: [search\n")),
        RUNTIME,
        {"stage": "parse"},
    )


@pair("json-loads", "definition.syntax")
def def_json(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: json.loads('{"name": "triage",}')), RUNTIME, {"stage": "parse"})


@pair("tomllib", "definition.syntax")
def def_toml(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: tomllib.loads("name = triage")), RUNTIME, {"stage": "parse"})


@pair("open-missing-file", "definition.syntax")
def def_missing(env: ToolEnv) -> Failure:
    path = Path(env.tmp) / "agents" / "triage.yaml"
    return Failure(raised(path.read_text), RUNTIME, {"stage": "load"})


@pair("jinja2-syntax", "definition.template")
def def_jinja_syntax(env: ToolEnv) -> Failure:
    return Failure(
        raised(lambda: jinja2.Environment().from_string("Hello {{ user.name ")),
        RUNTIME,
        {"stage": "compile"},
    )


@pair("jinja2-strict-undefined", "definition.template")
def def_jinja_undefined(env: ToolEnv) -> Failure:
    template = jinja2.Environment(undefined=jinja2.StrictUndefined).from_string("Hello {{ user }}")
    return Failure(raised(template.render), RUNTIME, {"stage": "compile"})


TEMPLATE = "Answer as {persona} about {topic}"


@pair("str-format", "definition.template")
def def_format(env: ToolEnv) -> Failure:
    return Failure(
        raised(lambda: TEMPLATE.format(topic="tax")),
        RUNTIME,
        {"stage": "compile"},
    )


@pair("string-template", "definition.template")
def def_string_template(env: ToolEnv) -> Failure:
    template = string.Template("Answer as $persona")
    return Failure(raised(lambda: template.substitute({})), RUNTIME, {"stage": "compile"})


# --- reconciliation ------------------------------------------------------------------------


class OrphanedRun(Exception):  # noqa: N818  (an application's name)
    pass


def _dead_pid() -> int:
    """The pid of a process that has exited and been reaped (the run's worker, gone)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(timeout=10)
    return child.pid


@pair("process-lookup", "reconcile.vanished")
def reconcile_pid(env: ToolEnv) -> Failure:
    pid = _dead_pid()
    return Failure(raised(lambda: os.kill(pid, 0)), "reconciler", {"provider_calls": "0"})


@pair("app-orphaned-run", "reconcile.vanished")
def reconcile_own(env: ToolEnv) -> Failure:
    def check() -> None:
        raise OrphanedRun("run r-7 has had no heartbeat for 300 s and its worker is gone")

    return Failure(raised(check), "reconciler", {"provider_calls": "0"})


@pair("process-lookup", "reconcile.after-provider")
def reconcile_pid_after(env: ToolEnv) -> Failure:
    pid = _dead_pid()
    return Failure(raised(lambda: os.kill(pid, 0)), "reconciler", {"provider_calls": "3"})


@pair("app-orphaned-run", "reconcile.after-provider")
def reconcile_own_after(env: ToolEnv) -> Failure:
    def check() -> None:
        raise OrphanedRun("run r-8 has had no heartbeat for 300 s and its worker is gone")

    return Failure(raised(check), "reconciler", {"provider_calls": "3"})


# --- Celery's task limits (billiard, the pool Celery's prefork workers run) ----------------


POOL_ANSWER_S = 30.0
"""How long a spawned pool may take to start and answer (a loaded CI machine)."""


def _pool_failure(kind: str, **limits: float) -> BaseException:
    """What the task's result raises when billiard's pool enforces `limits` on it."""
    with billiard.get_context("spawn").Pool(1, **limits) as pool:
        result = pool.apply_async(celery_task.sleeps)
        exc = raised(lambda: result.get(timeout=POOL_ANSWER_S))
    expected = {
        "soft": "billiard.exceptions.SoftTimeLimitExceeded",
        "hard": "billiard.einfo.ExceptionWithTraceback",
    }[kind]
    got = f"{type(exc).__module__}.{type(exc).__qualname__}"
    if got != expected:  # e.g. the pool did not answer in time: a driver problem
        raise AssertionError(f"billiard's pool raised {exc!r}, not {expected}")
    return exc


@pair("celery-soft-time-limit", "task.soft-time-limit")
def celery_soft_limit(env: ToolEnv) -> Failure:
    """billiard's pool (spawned, as Celery's prefork workers) signals the task at its soft
    limit; the task sees SoftTimeLimitExceeded and it comes back through the result."""
    exc = _pool_failure("soft", soft_timeout=0.3, timeout=3)
    return Failure(exc, "tool", {"time_limit": "tool"})


@pair("celery-worker-lost", "task.worker-lost")
def celery_worker_lost(env: ToolEnv) -> Failure:
    """Celery's own WorkerLostError as its worker reports a job whose process died
    (celery.worker.request: 'Worker exited prematurely: signal 9 (SIGKILL)'), found by
    the runtime's reconciliation before any provider call was answered. Built, not raised
    by a dying pool: billiard's pool answers a killed job with its own time-limit error."""
    from billiard.exceptions import WorkerLostError

    def report() -> None:
        raise WorkerLostError("Worker exited prematurely: signal 9 (SIGKILL) Job: 0.")

    return Failure(raised(report), "reconciler", {"provider_calls": "0"})


@pair("celery-hard-time-limit", "task.hard-time-limit")
def celery_hard_limit(env: ToolEnv) -> Failure:
    """billiard's pool kills the task's process at its hard limit; the result raises
    ExceptionWithTraceback around TimeLimitExceeded (observed: not a cause), which the
    runtime that set the limit describes with `time_limit: tool`."""
    return Failure(_pool_failure("hard", timeout=0.3), "tool", {"time_limit": "tool"})
