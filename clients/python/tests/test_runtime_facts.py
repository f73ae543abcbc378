"""The contract's attributes (what only the runtime knows), as the Python helpers set them."""

from __future__ import annotations

import re

import pytest

from classifier.server import GrpcServer
from errorclass_client import (
    Client,
    Origin,
    describe_tool_failure,
    descriptor_from_exception,
    runtime_attributes,
)


def test_each_keyword_becomes_its_attribute() -> None:
    assert runtime_attributes(
        time_limit="tool", veto="Budget", stage="parse", provider_calls=0
    ) == {"time_limit": "tool", "veto": "budget", "stage": "parse", "provider_calls": "0"}
    assert runtime_attributes() == {}


@pytest.mark.parametrize(
    ("keywords", "words"),
    [
        ({"time_limit": "wrapper"}, "time_limit: 'wrapper' is not one of tool, run"),
        ({"stage": "lint"}, "stage: 'lint' is not one of load, parse, compile, validate"),
        ({"provider_calls": "-1"}, "provider_calls: '-1' is not a count"),
        ({"provider_calls": True}, "provider_calls: True is not a count"),
        ({"veto": "two words"}, "veto: 'two words' is not a word"),
    ],
)
def test_a_value_outside_the_contract_is_refused(keywords: dict[str, object], words: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(words)):
        runtime_attributes(**keywords)  # type: ignore[arg-type]


def test_another_veto_word_is_sent_as_it_is() -> None:
    assert runtime_attributes(veto="maintenance") == {"veto": "maintenance"}


def test_descriptor_from_exception_sends_them_beside_other_attributes() -> None:
    d = descriptor_from_exception(
        TimeoutError(), origin="tool", attributes={"tool": "search"}, time_limit="tool"
    )
    assert dict(d.attributes) == {"tool": "search", "time_limit": "tool"}


def test_the_same_attribute_given_twice_differently_is_refused() -> None:
    with pytest.raises(ValueError, match="time_limit: given as 'tool' and in attributes as 'run'"):
        descriptor_from_exception(
            TimeoutError(), attributes={"time_limit": "run"}, time_limit="tool"
        )


def test_the_tool_wrapper_helper_says_whether_its_own_limit_fired() -> None:
    fired = describe_tool_failure(TimeoutError(), limit_fired=True)
    own = describe_tool_failure(TimeoutError(), limit_fired=False)
    assert (fired.origin, dict(fired.attributes)) == (Origin.tool, {"time_limit": "tool"})
    assert (own.origin, dict(own.attributes)) == (Origin.tool, {})


def test_classify_exception_sends_what_the_runtime_knows(server: GrpcServer) -> None:
    """Over gRPC to the real server on the bundled rules: a veto pauses, a stage compiles."""
    with Client(f"127.0.0.1:{server.port}", timeout=10.0) as client:
        veto = client.classify_exception(
            PermissionError("declined"), origin="interceptor", veto="policy"
        )
        stage = client.classify_exception(ValueError("bad"), origin="runtime", stage="validate")
    assert (veto.class_name, veto.effect.label) == ("ContentBlocked", "pause")
    assert stage.class_name == "CompilationFailed"
