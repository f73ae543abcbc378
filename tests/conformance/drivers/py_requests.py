"""requests as a hand-rolled provider client: POST the API's request, `raise_for_status()`.

requests' default adapter makes one attempt (urllib3 `Retry(0, read=False)`).
"""

from __future__ import annotations

import requests

from tests.conformance.apis import request_for
from tests.conformance.drivers import TIMEOUT_S, Outcome, driver, outcome_of
from tests.conformance.loader import Scenario


def call(session: requests.Session, scenario: Scenario, base: str) -> object:
    req = request_for(scenario, base)
    stream = scenario.stream is not None
    response = session.post(
        req.url, headers=req.headers, json=req.json, timeout=TIMEOUT_S, stream=stream
    )
    response.raise_for_status()
    if stream:
        return list(response.iter_lines())
    return response.json()


@driver("python.requests")
def drive(scenario: Scenario, base: str) -> Outcome:
    with requests.Session() as session:
        return outcome_of(lambda: call(session, scenario, base))
