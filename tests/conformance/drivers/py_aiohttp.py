"""aiohttp as a hand-rolled provider client: POST the API's request, `raise_for_status()`."""

from __future__ import annotations

import asyncio

import aiohttp

from tests.conformance.apis import request_for
from tests.conformance.drivers import TIMEOUT_S, Outcome, driver, outcome_of
from tests.conformance.loader import Scenario


async def call(scenario: Scenario, base: str) -> object:
    req = request_for(scenario, base)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=TIMEOUT_S, sock_read=TIMEOUT_S)
    async with (
        aiohttp.ClientSession(timeout=timeout) as session,
        session.post(req.url, headers=req.headers, json=req.json) as response,
    ):
        response.raise_for_status()
        if scenario.stream is not None:
            return [line async for line in response.content]
        return await response.json()


@driver("python.aiohttp")
def drive(scenario: Scenario, base: str) -> Outcome:
    return outcome_of(lambda: asyncio.run(call(scenario, base)))
