"""The server's one token bucket: pages taken only when there are tokens, CPU charged into
debt, refilled at its rate up to its burst."""

from __future__ import annotations

import math

from classifier.server.shared.token_bucket import TokenBucket


def test_take_spends_only_what_the_bucket_holds_and_refills_at_its_rate() -> None:
    now = [0.0]
    bucket = TokenBucket(5.0, 20, clock=lambda: now[0])
    assert sum(bucket.take() for _ in range(30)) == 20
    now[0] = 1.0
    assert sum(bucket.take() for _ in range(30)) == 5
    now[0] = 100.0  # refilled to the burst, never past it
    assert sum(bucket.take() for _ in range(30)) == 20


def test_charge_goes_into_debt_and_wait_says_until_when() -> None:
    now = [0.0]
    bucket = TokenBucket(0.5, 1.0, clock=lambda: now[0])
    assert bucket.wait() == 0.0
    bucket.charge(2.0)
    assert bucket.level == -1.0
    assert bucket.wait() == 2.0  # a debt of 1 at half a token a second
    assert not bucket.take(0.1)
    now[0] = 2.0
    assert bucket.level == 0.0
    assert bucket.wait() == 0.0
    now[0] = 3.0
    assert bucket.take(0.5)
    assert bucket.level == 0.0


def test_a_bucket_that_never_refills_waits_forever_once_in_debt() -> None:
    bucket = TokenBucket(0.0, 1.0, clock=lambda: 0.0)
    bucket.charge(1.5)
    assert math.isinf(bucket.wait())
