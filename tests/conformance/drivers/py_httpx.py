"""httpx as a hand-rolled provider client: POST the API's request, `raise_for_status()`.

A stream is read line by line; a hand-rolled client has no SSE error handling of its own,
so only a transport failure (a cut stream) raises there.
"""

from __future__ import annotations

import httpx

from tests.conformance.apis import request_for
from tests.conformance.drivers import TIMEOUT_S, Outcome, driver, outcome_of
from tests.conformance.loader import Scenario


def call(client: httpx.Client, scenario: Scenario, base: str) -> object:
    req = request_for(scenario, base)
    if scenario.stream is not None:
        with client.stream("POST", req.url, headers=req.headers, json=req.json) as response:
            response.raise_for_status()
            return list(response.iter_lines())
    response = client.post(req.url, headers=req.headers, json=req.json)
    response.raise_for_status()
    return response.json()


@driver("python.httpx")
def drive(scenario: Scenario, base: str) -> Outcome:
    with httpx.Client(timeout=TIMEOUT_S) as client:
        return outcome_of(lambda: call(client, scenario, base))
