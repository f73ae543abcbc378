"""retry_after: every header form, a date against the provider's clock and ours, malformed
values skipped, the cap, and which source wins."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pytest

from classifier.answer import RetryAfter
from classifier.contract import EVIDENCE_HEADERS, GOOGLE_DETAIL_ATTRIBUTES, HEADER_ATTRIBUTE_PREFIX
from classifier.durations import decimal_seconds, go_duration, proto_duration
from classifier.engine.retry_after import DEFAULT_CAP, SOURCES, retry_after

H = HEADER_ATTRIBUTE_PREFIX
RETRY_DELAY = "google.rpc.retry_info.retry_delay"
NOW = dt.datetime(2025, 6, 1, 12, 0, 0, tzinfo=dt.UTC)
BIG = dt.timedelta(hours=24)


def fixed() -> dt.datetime:
    return NOW


def never() -> dt.datetime:
    raise AssertionError("the service's clock was read where the evidence needed none")


Clock = Callable[[], dt.datetime]


def wait(attrs: dict[str, str], cap: dt.timedelta = BIG, now: Clock = fixed) -> RetryAfter | None:
    return retry_after(attrs, cap, now)


def seconds(
    attrs: dict[str, str], cap: dt.timedelta = BIG, now: Clock = fixed
) -> tuple[float, str, bool]:
    found = wait(attrs, cap, now)
    assert found is not None, attrs
    return found.seconds, found.source, found.capped


# every form ----------------------------------------------------------------------------------


def test_retry_after_in_seconds() -> None:
    assert seconds({H + "retry-after": "20"}, now=never) == (20.0, H + "retry-after", False)


def test_retry_after_as_an_http_date_is_read_against_the_providers_date_header() -> None:
    """The provider's clock, not ours: our clock (NOW) is an hour off and is never read."""
    attrs = {
        H + "retry-after": "Sun, 01 Jun 2025 13:00:30 GMT",
        H + "date": "Sun, 01 Jun 2025 13:00:00 GMT",
    }
    assert seconds(attrs, now=never) == (30.0, H + "retry-after", False)


def test_retry_after_as_an_http_date_without_a_date_header_uses_the_service_clock() -> None:
    assert seconds({H + "retry-after": "Sun, 01 Jun 2025 12:00:45 GMT"}) == (
        45.0,
        H + "retry-after",
        False,
    )


def test_an_unreadable_date_header_falls_back_to_the_service_clock() -> None:
    attrs = {H + "retry-after": "Sun, 01 Jun 2025 12:00:45 GMT", H + "date": "yesterday"}
    assert seconds(attrs)[0] == 45.0


@pytest.mark.parametrize(
    "date",
    ["Sunday, 01-Jun-25 12:00:10 GMT", "Sun Jun  1 12:00:10 2025"],
    ids=["rfc850", "asctime"],
)
def test_the_obsolete_http_date_forms_are_read_too(date: str) -> None:
    assert seconds({H + "retry-after": date})[0] == 10.0


def test_a_date_already_past_is_a_wait_of_zero() -> None:
    assert seconds({H + "retry-after": "Sun, 01 Jun 2025 11:59:00 GMT"})[0] == 0.0


def test_retry_after_ms() -> None:
    assert seconds({H + "retry-after-ms": "1500"}, now=never) == (1.5, H + "retry-after-ms", False)


def test_x_ms_retry_after_ms() -> None:
    assert seconds({H + "x-ms-retry-after-ms": "6000"}, now=never) == (
        6.0,
        H + "x-ms-retry-after-ms",
        False,
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [("6m0s", 360.0), ("1s", 1.0), ("20ms", 0.02), ("2h3m4.5s", 7384.5), ("0s", 0.0)],
)
def test_openai_reset_headers_in_gos_duration_form(value: str, expected: float) -> None:
    assert seconds({H + "x-ratelimit-reset-tokens": value}, now=never) == pytest.approx(
        (expected, H + "x-ratelimit-reset-tokens", False)
    )


def test_anthropic_reset_timestamps_in_rfc_3339_against_the_date_header() -> None:
    attrs = {
        H + "anthropic-ratelimit-tokens-reset": "2025-06-01T13:00:12Z",
        H + "date": "Sun, 01 Jun 2025 13:00:00 GMT",
    }
    assert seconds(attrs, now=never) == (12.0, H + "anthropic-ratelimit-tokens-reset", False)


def test_anthropic_reset_with_an_offset_and_fractions_against_the_clock() -> None:
    attrs = {H + "anthropic-ratelimit-requests-reset": "2025-06-01T14:00:01.5+02:00"}
    assert seconds(attrs)[0] == 1.5


@pytest.mark.parametrize(
    ("value", "expected"), [("25s", 25.0), ("0.5s", 0.5), ("1.000000001s", 1.0)]
)
def test_googles_retry_info(value: str, expected: float) -> None:
    assert seconds({RETRY_DELAY: value}, now=never) == pytest.approx((expected, RETRY_DELAY, False))


# malformed values are skipped ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value"),
    [
        (H + "retry-after", "soon"),
        (H + "retry-after", "-1"),
        (H + "retry-after", "1e3"),
        (H + "retry-after", "inf"),
        (H + "retry-after", "NaN"),
        (H + "retry-after", ""),
        (H + "retry-after", "1.5.2"),
        (H + "retry-after", "٣"),  # an Arabic-Indic digit: float() reads it, HTTP does not
        (H + "retry-after", "Sun, 32 Jun 2025 12:00:00 GMT"),
        (H + "retry-after-ms", "1500ms"),
        (H + "x-ms-retry-after-ms", "-5"),
        (RETRY_DELAY, "25"),
        (RETRY_DELAY, "-1s"),
        (RETRY_DELAY, "1.0000000001s"),
        (H + "x-ratelimit-reset-requests", "6m0"),
        (H + "x-ratelimit-reset-requests", "-1s"),
        (H + "x-ratelimit-reset-requests", "1d"),
        (H + "x-ratelimit-reset-requests", ""),
        (H + "anthropic-ratelimit-tokens-reset", "2025-06-01T12:00:30"),
        (H + "anthropic-ratelimit-tokens-reset", "2025-06-01"),
        (H + "anthropic-ratelimit-tokens-reset", "tomorrow"),
    ],
)
def test_a_malformed_value_is_ignored(name: str, value: str) -> None:
    assert wait({name: value}) is None


def test_a_malformed_value_gives_way_to_the_next_source() -> None:
    attrs = {H + "retry-after-ms": "soon", H + "retry-after": "later", RETRY_DELAY: "25s"}
    assert seconds(attrs) == (25.0, RETRY_DELAY, False)


def test_no_evidence_says_no_wait() -> None:
    assert wait({}) is None
    assert wait({"error_code": "x", H + "x-request-id": "req_1", H + "date": "whenever"}) is None


# the cap -------------------------------------------------------------------------------------


def test_the_cap_cuts_a_longer_wait_and_says_so() -> None:
    found = wait({H + "x-ratelimit-reset-tokens": "6m0s"}, cap=DEFAULT_CAP)
    assert found == RetryAfter(DEFAULT_CAP, H + "x-ratelimit-reset-tokens", capped=True)
    assert found is not None
    assert found.text() == (
        "retry after 60 s (the cap; http.response.header.x-ratelimit-reset-tokens asked for longer)"
    )


def test_a_wait_equal_to_the_cap_is_not_cut() -> None:
    assert seconds({H + "retry-after": "60"}, cap=DEFAULT_CAP) == (60.0, H + "retry-after", False)


def test_a_number_too_large_for_a_float_is_capped_not_refused() -> None:
    assert seconds({H + "retry-after": "9" * 400}, cap=dt.timedelta(seconds=30)) == (
        30.0,
        H + "retry-after",
        True,
    )


def test_the_text_names_the_source() -> None:
    found = wait({H + "retry-after": "20"})
    assert found is not None
    assert found.text() == ("retry after 20 s (from http.response.header.retry-after)")


# precedence ----------------------------------------------------------------------------------


def test_the_most_specific_source_wins_in_the_documented_order() -> None:
    """Each source in turn, with every less specific one present too, decides."""
    values = {
        H + "retry-after-ms": "1000",
        H + "x-ms-retry-after-ms": "2000",
        H + "retry-after": "3",
        RETRY_DELAY: "4s",
        H + "x-ratelimit-reset-requests": "5s",
        H + "x-ratelimit-reset-tokens": "5s",
        H + "anthropic-ratelimit-requests-reset": "2025-06-01T12:00:06Z",
        H + "anthropic-ratelimit-tokens-reset": "2025-06-01T12:00:06Z",
        H + "anthropic-ratelimit-input-tokens-reset": "2025-06-01T12:00:06Z",
        H + "anthropic-ratelimit-output-tokens-reset": "2025-06-01T12:00:06Z",
    }
    order = [H + "retry-after-ms", H + "x-ms-retry-after-ms", H + "retry-after", RETRY_DELAY]
    order += [H + "x-ratelimit-reset-requests", H + "anthropic-ratelimit-requests-reset"]
    remaining = dict(values)
    for expected, source in zip([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], order, strict=True):
        assert seconds(remaining)[:2] == (expected, source)
        remaining = {k: v for k, v in remaining.items() if SOURCES.index(k) > SOURCES.index(source)}
        if source == H + "x-ratelimit-reset-requests":
            remaining.pop(H + "x-ratelimit-reset-tokens", None)


def test_of_openais_two_resets_the_later_wins() -> None:
    attrs = {H + "x-ratelimit-reset-requests": "1s", H + "x-ratelimit-reset-tokens": "6m0s"}
    assert seconds(attrs)[:2] == (360.0, H + "x-ratelimit-reset-tokens")


def test_of_anthropics_resets_the_latest_wins_and_a_bad_one_is_skipped() -> None:
    attrs = {
        H + "anthropic-ratelimit-requests-reset": "2025-06-01T12:00:05Z",
        H + "anthropic-ratelimit-input-tokens-reset": "2025-06-01T12:00:40Z",
        H + "anthropic-ratelimit-output-tokens-reset": "not a time",
    }
    assert seconds(attrs)[:2] == (40.0, H + "anthropic-ratelimit-input-tokens-reset")


def test_every_source_is_evidence_the_clients_keep() -> None:
    """A source no client captures could never decide (classifier/contract.py)."""
    kept = {H + h for h in EVIDENCE_HEADERS} | set(GOOGLE_DETAIL_ATTRIBUTES)
    assert set(SOURCES) <= kept
    assert kept - set(SOURCES) == {H + "date", "google.rpc.error_info.reason",
                                   "google.rpc.quota_failure.quota_id"}  # fmt: skip


# the duration forms on their own -------------------------------------------------------------


def test_duration_forms() -> None:
    assert go_duration("1h") == 3600.0
    assert go_duration("1.5m") == 90.0
    assert go_duration("100us") == pytest.approx(1e-4)
    assert go_duration("0") == 0.0
    assert go_duration("5") is None
    assert proto_duration(" 3s ") == 3.0
    assert decimal_seconds("1.25") == 1.25
    assert decimal_seconds(".5") is None
