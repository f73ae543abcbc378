"""aiohttp as a hand-rolled provider client: POST the API's request, `raise_for_status()`.

Two ways to use it. `python.aiohttp` raises at once, and its ClientResponseError keeps no
body (a bare 400 is then Unknown). `python.aiohttp-body` reads the error body first and
hands it to the helper (`descriptor_from_exception(exc, body=...)`), as docs/clients.md
tells aiohttp users to.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import aiohttp

from tests.conformance.apis import request_for
from tests.conformance.drivers import TIMEOUT_S, Outcome, driver, outcome_of
from tests.conformance.loader import Scenario


@contextlib.asynccontextmanager
async def _posted(scenario: Scenario, base: str) -> AsyncIterator[aiohttp.ClientResponse]:
    """The API's request POSTed with the suite's timeouts; the response, still open."""
    req = request_for(scenario, base)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=TIMEOUT_S, sock_read=TIMEOUT_S)
    async with (
        aiohttp.ClientSession(timeout=timeout) as session,
        session.post(req.url, headers=req.headers, json=req.json) as response,
    ):
        yield response


async def _result(scenario: Scenario, response: aiohttp.ClientResponse) -> object:
    if scenario.stream is not None:
        return [line async for line in response.content]
    return await response.json()


async def call(scenario: Scenario, base: str) -> object:
    async with _posted(scenario, base) as response:
        response.raise_for_status()
        return await _result(scenario, response)


@driver("python.aiohttp")
def drive(scenario: Scenario, base: str) -> Outcome:
    return outcome_of(lambda: asyncio.run(call(scenario, base)))


class _FailedError(Exception):
    def __init__(self, error: aiohttp.ClientResponseError, body: bytes) -> None:
        super().__init__(str(error))
        self.error, self.body = error, body


async def call_reading_the_body(scenario: Scenario, base: str) -> object:
    async with _posted(scenario, base) as response:
        if response.status >= 400:
            body = await response.read()
            try:
                response.raise_for_status()
            except aiohttp.ClientResponseError as error:
                raise _FailedError(error, body) from None
        return await _result(scenario, response)


@driver("python.aiohttp-body")
def drive_reading_the_body(scenario: Scenario, base: str) -> Outcome:
    outcome = outcome_of(lambda: asyncio.run(call_reading_the_body(scenario, base)))
    if isinstance(outcome.exception, _FailedError):
        return Outcome(exception=outcome.exception.error, body=outcome.exception.body)
    return outcome
