"""Canceled vs ToolTimeout vs Timeout: the same mechanisms, set by different hands.

A wrapper's limit and the tool's own limit raise the same chain (asyncio.wait_for's
TimeoutError from CancelledError either way, checked in README.md's observations), so
only `time_limit` says whose limit it was. Sleeps are short and every call is bounded.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from typing import Any

import anyio
import httpx
import requests

from tests.conformance.runtime.drivers import ToolEnv
from tests.conformance.runtime.python import Failure, pair, raised

LIMIT_S = 0.05
SLOW_S = 2.0
TOOL = "tool"
WRAPPER = {"time_limit": "tool"}
RUN = {"time_limit": "run"}


async def _slow_tool() -> None:
    await asyncio.sleep(SLOW_S)


def _sleep_child() -> list[str]:
    return [sys.executable, "-c", f"import time; time.sleep({SLOW_S})"]


# --- the tool wrapper's own limit fired (ToolTimeout) -------------------------------------


async def _wrapper_asyncio_timeout() -> None:
    async with asyncio.timeout(LIMIT_S):
        await _slow_tool()


@pair("asyncio-timeout", "tool-timeout.wrapper-limit")
def wrapper_asyncio_timeout(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: asyncio.run(_wrapper_asyncio_timeout())), TOOL, WRAPPER)


@pair("asyncio-wait-for", "tool-timeout.wrapper-limit")
def wrapper_wait_for(env: ToolEnv) -> Failure:
    return Failure(
        raised(lambda: asyncio.run(asyncio.wait_for(_slow_tool(), LIMIT_S))), TOOL, WRAPPER
    )


@pair("futures-result-timeout", "tool-timeout.wrapper-limit")
def wrapper_future(env: ToolEnv) -> Failure:
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(time.sleep, 0.3)
        return Failure(raised(lambda: future.result(timeout=LIMIT_S)), TOOL, WRAPPER)


@pair("subprocess-run-timeout", "tool-timeout.wrapper-limit")
def wrapper_subprocess(env: ToolEnv) -> Failure:
    """The runtime runs the tool as a process and its own limit kills it."""
    return Failure(raised(lambda: subprocess.run(_sleep_child(), timeout=0.3)), TOOL, WRAPPER)


async def _wrapper_anyio() -> None:
    with anyio.fail_after(LIMIT_S):
        await anyio.sleep(SLOW_S)


@pair("anyio-fail-after", "tool-timeout.wrapper-limit")
def wrapper_anyio(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: anyio.run(_wrapper_anyio)), TOOL, WRAPPER)


@pair("thread-join-timeout", "tool-timeout.wrapper-limit")
def wrapper_thread_join(env: ToolEnv) -> Failure:
    """threading's join(timeout) raises nothing: the wrapper raises TimeoutError itself."""

    def run_tool() -> None:
        worker = threading.Thread(target=time.sleep, args=(0.3,), daemon=True)
        worker.start()
        worker.join(LIMIT_S)
        if worker.is_alive():
            raise TimeoutError(f"tool did not finish within {LIMIT_S} s")

    return Failure(raised(run_tool), TOOL, WRAPPER)


# --- the tool's own client timed out and the tool threw (ToolError) -----------------------


@pair("httpx-read-timeout", "tool-error.own-timeout")
def own_httpx(env: ToolEnv) -> Failure:
    url = f"{env.tool_api}/slow/1000"
    return Failure(raised(lambda: httpx.get(url, timeout=LIMIT_S)), TOOL)


@pair("requests-read-timeout", "tool-error.own-timeout")
def own_requests(env: ToolEnv) -> Failure:
    url = f"{env.tool_api}/slow/1000"
    return Failure(raised(lambda: requests.get(url, timeout=LIMIT_S)), TOOL)


@pair("urllib-timeout", "tool-error.own-timeout")
def own_urllib(env: ToolEnv) -> Failure:
    url = f"{env.tool_api}/slow/1000"
    return Failure(raised(lambda: urllib.request.urlopen(url, timeout=LIMIT_S)), TOOL)


@pair("socket-timeout", "tool-error.own-timeout")
def own_socket(env: ToolEnv) -> Failure:
    host, port = env.tool_api.removeprefix("http://").split(":")

    def read() -> None:
        with socket.create_connection((host, int(port)), timeout=LIMIT_S) as s:
            s.recv(1)  # the API waits for a request line: nothing comes back in time

    return Failure(raised(read), TOOL)


@pair("subprocess-run-timeout", "tool-error.own-timeout")
def own_subprocess(env: ToolEnv) -> Failure:
    """The tool ran a command with its own timeout and let TimeoutExpired out."""
    return Failure(raised(lambda: subprocess.run(_sleep_child(), timeout=0.3)), TOOL)


async def _tool_with_own_wait_for() -> None:
    await asyncio.wait_for(asyncio.sleep(SLOW_S), LIMIT_S)


@pair("asyncio-wait-for", "tool-error.own-timeout")
def own_wait_for(env: ToolEnv) -> Failure:
    """Inside the tool: the same chain as the wrapper's wait_for, but not the wrapper's."""
    return Failure(raised(lambda: asyncio.run(_tool_with_own_wait_for())), TOOL)


@pair("futures-result-timeout", "tool-error.own-timeout")
def own_future(env: ToolEnv) -> Failure:
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(time.sleep, 0.3)
        return Failure(raised(lambda: future.result(timeout=LIMIT_S)), TOOL)


async def _tool_aiohttp(url: str) -> None:
    import aiohttp

    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=LIMIT_S)) as session,
        session.get(url) as resp,
    ):
        await resp.read()


@pair("aiohttp-timeout", "tool-error.own-timeout")
def own_aiohttp(env: ToolEnv) -> Failure:
    url = f"{env.tool_api}/slow/1000"
    return Failure(raised(lambda: asyncio.run(_tool_aiohttp(url))), TOOL)


# --- the user cancelled (Canceled) ---------------------------------------------------------


async def _cancelled_by_caller(message: str | None) -> None:
    task = asyncio.create_task(_slow_tool())
    await asyncio.sleep(0.01)
    task.cancel(message)
    await task


@pair("task-cancel", "cancel.user")
def user_task_cancel(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: asyncio.run(_cancelled_by_caller("user pressed stop"))), "user")


@pair("future-cancel", "cancel.user")
def user_future_cancel(env: ToolEnv) -> Failure:
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(time.sleep, 0.1)
        queued = pool.submit(time.sleep, 0.1)
        queued.cancel()
        return Failure(raised(queued.result), "user")


@pair("keyboard-interrupt", "cancel.user")
def user_sigint(env: ToolEnv) -> Failure:
    """Ctrl-C: SIGINT delivered to this (main) thread raises KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        raise AssertionError("SIGINT is delivered to the main thread only")
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return Failure(raised(lambda: signal.raise_signal(signal.SIGINT)), "user")
    finally:
        signal.signal(signal.SIGINT, previous)


async def _anyio_cancelled() -> None:
    async def tool(scope: anyio.CancelScope) -> None:
        await anyio.sleep(0.01)
        scope.cancel()

    # The caller's cancel scope, cancelled: inside it the tool call sees the backend's
    # cancellation exception (asyncio.CancelledError), which the runtime re-raises.
    with anyio.CancelScope() as scope:
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(tool, scope)
                await anyio.sleep(SLOW_S)
        except anyio.get_cancelled_exc_class() as exc:
            raise _Reraised(exc) from None


class _Reraised(Exception):  # noqa: N818  (carries the cancellation out of the scope)
    def __init__(self, exc: BaseException) -> None:
        super().__init__("cancelled")
        self.inner = exc


@pair("anyio-cancel-scope", "cancel.user")
def user_anyio(env: ToolEnv) -> Failure:
    carried = raised(lambda: anyio.run(_anyio_cancelled))
    assert isinstance(carried, _Reraised), carried
    return Failure(carried.inner, "user")


# --- the run's deadline fired (Timeout) ----------------------------------------------------


async def _run(step_s: float) -> None:
    await asyncio.sleep(step_s)


async def _run_deadline_timeout() -> None:
    async with asyncio.timeout(LIMIT_S):
        await _run(SLOW_S)


@pair("asyncio-timeout", "timeout.run-deadline")
def run_asyncio_timeout(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: asyncio.run(_run_deadline_timeout())), "runtime", RUN)


@pair("asyncio-wait-for", "timeout.run-deadline")
def run_wait_for(env: ToolEnv) -> Failure:
    return Failure(
        raised(lambda: asyncio.run(asyncio.wait_for(_run(SLOW_S), LIMIT_S))), "runtime", RUN
    )


async def _deadline_cancels_task() -> None:
    """The runtime's deadline cancels the run's task: the run sees CancelledError."""
    task = asyncio.create_task(_run(SLOW_S))
    asyncio.get_running_loop().call_later(LIMIT_S, task.cancel, "run deadline exceeded")
    await task


@pair("task-cancel", "timeout.run-deadline")
def run_task_cancel(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: asyncio.run(_deadline_cancels_task())), "runtime", RUN)


@pair("futures-result-timeout", "timeout.run-deadline")
def run_future(env: ToolEnv) -> Failure:
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(time.sleep, 0.3)
        return Failure(raised(lambda: future.result(timeout=LIMIT_S)), "runtime", RUN)


async def _run_anyio() -> None:
    with anyio.fail_after(LIMIT_S):
        await anyio.sleep(SLOW_S)


@pair("anyio-fail-after", "timeout.run-deadline")
def run_anyio(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: anyio.run(_run_anyio)), "runtime", RUN)


# --- the run's deadline cancelled a provider call in flight (Timeout, whatever surfaced) ---
#
# A real call to a provider API on loopback that answers only after 2 s; the run's deadline
# (50 ms) cancels it while it waits for the answer. What surfaces is whatever the HTTP
# client or SDK raises on that cancel, with the call's origin (`provider`); the runtime
# knows its deadline fired (`time_limit: run`), and that fact decides.


def _hanging_provider(env: ToolEnv) -> str:
    return f"{env.tool_api}/slow/2000"


async def _openai_under_run_deadline(env: ToolEnv) -> None:
    import openai

    client = openai.AsyncOpenAI(
        api_key="sk-test", base_url=f"{_hanging_provider(env)}/v1", max_retries=0
    )
    async with client, asyncio.timeout(LIMIT_S):  # the run's deadline
        await client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
        )


@pair("openai-async-run-deadline", "timeout.run-deadline")
def run_deadline_openai(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: asyncio.run(_openai_under_run_deadline(env))), "provider", RUN)


async def _anthropic_under_run_deadline(env: ToolEnv) -> None:
    import anthropic

    client = anthropic.AsyncAnthropic(
        api_key="sk-ant-test", base_url=_hanging_provider(env), max_retries=0
    )
    async with client:
        call = client.messages.create(
            model="claude-sonnet-4-5", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
        await asyncio.wait_for(call, LIMIT_S)  # the run's deadline


@pair("anthropic-async-run-deadline", "timeout.run-deadline")
def run_deadline_anthropic(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: asyncio.run(_anthropic_under_run_deadline(env))), "provider", RUN)


async def _httpx_under_run_deadline(env: ToolEnv) -> None:
    async with httpx.AsyncClient() as client:
        with anyio.fail_after(LIMIT_S):  # the run's deadline
            await client.post(f"{_hanging_provider(env)}/v1/chat/completions", json={})


@pair("httpx-async-run-deadline", "timeout.run-deadline")
def run_deadline_httpx(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: anyio.run(_httpx_under_run_deadline, env)), "provider", RUN)


async def _aiohttp_task_cancelled_by_run_deadline(env: ToolEnv) -> None:
    """The runtime's deadline cancels the run's task while aiohttp waits for the answer."""
    import aiohttp

    async def call() -> None:
        async with (
            aiohttp.ClientSession() as session,
            session.post(f"{_hanging_provider(env)}/v1/chat/completions", json={}) as response,
        ):
            await response.read()

    task = asyncio.create_task(call())
    asyncio.get_running_loop().call_later(LIMIT_S, task.cancel, "run deadline exceeded")
    await task


@pair("aiohttp-task-cancel-run-deadline", "timeout.run-deadline")
def run_deadline_aiohttp(env: ToolEnv) -> Failure:
    return Failure(
        raised(lambda: asyncio.run(_aiohttp_task_cancelled_by_run_deadline(env))), "provider", RUN
    )


# --- the provider call's own client timed out (Timeout) ------------------------------------


@pair("httpx-read-timeout", "timeout.provider-call")
def provider_httpx(env: ToolEnv) -> Failure:
    url = f"{env.tool_api}/slow/1000"
    return Failure(raised(lambda: httpx.post(url, timeout=LIMIT_S)), "provider")


@pair("requests-read-timeout", "timeout.provider-call")
def provider_requests(env: ToolEnv) -> Failure:
    url = f"{env.tool_api}/slow/1000"
    return Failure(raised(lambda: requests.post(url, timeout=LIMIT_S)), "provider")


@pair("aiohttp-timeout", "timeout.provider-call")
def provider_aiohttp(env: ToolEnv) -> Failure:
    url = f"{env.tool_api}/slow/1000"
    return Failure(raised(lambda: asyncio.run(_tool_aiohttp(url))), "provider")


@pair("openai-timeout", "timeout.provider-call")
def provider_openai(env: ToolEnv) -> Failure:
    import openai

    client = openai.OpenAI(
        api_key="sk-test", base_url=f"{env.tool_api}/slow/1000", timeout=LIMIT_S, max_retries=0
    )
    return Failure(
        raised(lambda: client.models.list()),
        "provider",
    )


# --- the contract's tool-wrapper helper: the wrapper knows whether *its* limit fired ----


async def _wrapped(tool: Any) -> Failure:
    """A wrapper as a runtime writes it: asyncio.timeout around the call, and
    `Timeout.expired()` says whether this limit (not one inside the tool) fired."""
    from errorclass_client import describe_tool_failure

    try:
        async with asyncio.timeout(LIMIT_S * 4) as limit:
            await tool()
    except Exception as exc:
        return Failure(
            None, TOOL, descriptor=describe_tool_failure(exc, limit_fired=limit.expired())
        )
    raise AssertionError("the tool returned")


@pair("asyncio-timeout-expired-helper", "tool-timeout.wrapper-limit")
def helper_wrapper_limit(env: ToolEnv) -> Failure:
    return asyncio.run(_wrapped(_slow_tool))


@pair("asyncio-timeout-expired-helper", "tool-error.own-timeout")
def helper_own_timeout(env: ToolEnv) -> Failure:
    return asyncio.run(_wrapped(_tool_with_own_wait_for))
