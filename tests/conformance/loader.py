"""The scenario files (tests/conformance/scenarios/*.yaml): read, checked, and typed.

A file reads as documentation (see docs/conformance.md):

    # which API, which documentation the bodies follow
    scenarios:
      - id: openai.429-rate-limit          # unique across all files; used in the URL
        note: why this answer is the right one
        api: openai                        # openai | azure | anthropic | gemini | bedrock
        response:                          # exactly what the real API answers
          status: 429
          headers: {retry-after: "2", x-request-id: req_abc, content-type: application/json}
          body: {error: {message: "...", type: requests, param: null, code: rate_limit_exceeded}}
        # or  fault: reset | hang | cut_body | truncated_body | refuse | connect_timeout
        # or  stream: {events: [{event: name, data: {...}}, ...], then: end | cut}
        want: {class: RateLimited, action: provider.backoff}   # action only where it matters
        # want may add retry_after: the seconds the answer must advise (what the provider
        # asked for, within the ruleset's cap), or `none`: no wait may be advised
        sdks: [python.openai, python.httpx]                   # the drivers that run it
        known: {python.aiohttp: "why this pair is still answered wrongly"}   # optional

The expected class comes from the taxonomy (shared/taxonomy.md), written before the
service's answer is looked at. `known` marks a pair the suite still gets wrong, with the
reason (precedence decided by the lead, evidence no SDK exposes); the runner runs such a
pair as a strict xfail, so it turns visible again the day it is fixed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from classifier.taxonomy import ErrorClass

SCENARIO_DIR = Path(__file__).with_name("scenarios")
APIS = ("openai", "azure", "anthropic", "gemini", "bedrock")
FAULTS = ("reset", "hang", "cut_body", "truncated_body", "refuse", "connect_timeout")
STREAM_ENDS = ("end", "cut")
KEYS = {"id", "note", "api", "response", "fault", "stream", "want", "sdks", "known", "request"}


@dataclass(frozen=True)
class Response:
    status: int
    headers: Mapping[str, str]
    body: object


@dataclass(frozen=True)
class Event:
    data: object
    event: str | None = None


@dataclass(frozen=True)
class Stream:
    events: tuple[Event, ...]
    then: str = "end"
    headers: Mapping[str, str] = field(default_factory=dict)


NO_WAIT = "none"


@dataclass(frozen=True)
class Want:
    error_class: str
    action: str | None = None
    retry_after: float | str | None = None
    """Seconds the answer's `retry_after` must be, NO_WAIT when it must advise no wait (an
    answer that is not retryable, whatever the provider's headers say), None when the
    scenario does not judge it."""

    @property
    def retry_after_wanted(self) -> bool:
        return self.retry_after is not None

    def retry_after_right(self, got: float | None) -> bool:
        """Whether the advised wait is the one wanted (to the millisecond: the waits are
        whole milliseconds on the wire); True when the scenario does not judge it."""
        if self.retry_after is None:
            return True
        if self.retry_after == NO_WAIT:
            return got is None
        return got is not None and abs(got - float(self.retry_after)) < 0.001


@dataclass(frozen=True)
class Scenario:
    id: str
    note: str
    api: str
    want: Want
    sdks: tuple[str, ...]
    response: Response | None = None
    fault: str | None = None
    stream: Stream | None = None
    known: Mapping[str, str] = field(default_factory=dict)
    request: Mapping[str, Any] = field(default_factory=dict)
    """Driver options (e.g. `{model: ...}`); drivers ignore what they do not know."""
    source: str = ""

    @property
    def provider(self) -> str:
        """The descriptor's `provider`: the API the call went to."""
        return self.api


class ScenarioError(ValueError):
    pass


def load_scenarios(folder: Path = SCENARIO_DIR) -> dict[str, Scenario]:
    """Every scenario of every `*.yaml` in the folder, by id, in file then file order."""
    out: dict[str, Scenario] = {}
    for path in sorted(folder.glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        if not isinstance(data, dict) or not isinstance(data.get("scenarios"), list):
            raise ScenarioError(f"{path.name}: expected a mapping with a `scenarios:` list")
        for i, raw in enumerate(data["scenarios"]):
            where = f"{path.name}: scenarios[{i}]"
            scenario = _scenario(raw, where, path.name)
            if scenario.id in out:
                raise ScenarioError(f"{where}: duplicate id {scenario.id!r}")
            out[scenario.id] = scenario
    return out


def _scenario(raw: object, where: str, source: str) -> Scenario:
    if not isinstance(raw, dict):
        raise ScenarioError(f"{where}: a scenario is a mapping")
    unknown = set(raw) - KEYS
    if unknown:
        raise ScenarioError(f"{where}: unknown keys {sorted(unknown)}")
    for key in ("id", "note", "api", "want", "sdks"):
        if key not in raw:
            raise ScenarioError(f"{where}: missing {key!r}")
    sid = str(raw["id"])
    where = f"{where} ({sid})"
    if not sid or "/" in sid or " " in sid:
        raise ScenarioError(f"{where}: an id is one URL segment")
    if raw["api"] not in APIS:
        raise ScenarioError(f"{where}: api must be one of {APIS}")
    kinds = [k for k in ("response", "fault", "stream") if k in raw]
    if len(kinds) != 1:
        raise ScenarioError(f"{where}: exactly one of response, fault, stream")
    want = raw["want"]
    if (
        not isinstance(want, dict)
        or "class" not in want
        or set(want) - {"class", "action", "retry_after"}
    ):
        raise ScenarioError(f"{where}: want is {{class: ..., action: ..., retry_after: ...}}")
    if want["class"] not in ErrorClass.__members__:
        raise ScenarioError(f"{where}: unknown class {want['class']!r}")
    sdks = raw["sdks"]
    if not isinstance(sdks, list) or not sdks or not all(isinstance(s, str) for s in sdks):
        raise ScenarioError(f"{where}: sdks is a non-empty list of driver names")
    known = raw.get("known") or {}
    if not isinstance(known, dict) or not set(known) <= set(sdks):
        raise ScenarioError(f"{where}: known maps some of the scenario's sdks to a reason")
    return Scenario(
        id=sid,
        note=str(raw["note"]),
        api=raw["api"],
        want=Want(
            error_class=want["class"],
            action=want.get("action"),
            retry_after=_retry_after(want.get("retry_after"), where),
        ),
        sdks=tuple(sdks),
        response=_response(raw["response"], where) if "response" in raw else None,
        fault=_fault(raw["fault"], where) if "fault" in raw else None,
        stream=_stream(raw["stream"], where) if "stream" in raw else None,
        known={str(k): str(v) for k, v in known.items()},
        request=dict(raw.get("request") or {}),
        source=source,
    )


def _retry_after(raw: object, where: str) -> float | str | None:
    if raw is None or raw == NO_WAIT:
        return raw
    if isinstance(raw, bool) or not isinstance(raw, int | float) or raw < 0:
        raise ScenarioError(
            f"{where}: want.retry_after is seconds (a number >= 0) or {NO_WAIT!r}, not {raw!r}"
        )
    return float(raw)


def _response(raw: object, where: str) -> Response:
    if not isinstance(raw, dict) or not isinstance(raw.get("status"), int):
        raise ScenarioError(f"{where}: response needs a status")
    if set(raw) - {"status", "headers", "body"}:
        raise ScenarioError(f"{where}: response has status, headers, body")
    return Response(
        status=raw["status"],
        headers={str(k): str(v) for k, v in (raw.get("headers") or {}).items()},
        body=raw.get("body"),
    )


def _fault(raw: object, where: str) -> str:
    if raw not in FAULTS:
        raise ScenarioError(f"{where}: fault must be one of {FAULTS}")
    return str(raw)


def _stream(raw: object, where: str) -> Stream:
    if not isinstance(raw, dict) or not isinstance(raw.get("events"), list):
        raise ScenarioError(f"{where}: stream needs an events list")
    if set(raw) - {"events", "then", "headers"}:
        raise ScenarioError(f"{where}: stream has events, then, headers")
    then = raw.get("then", "end")
    if then not in STREAM_ENDS:
        raise ScenarioError(f"{where}: stream.then must be one of {STREAM_ENDS}")
    events = []
    for e in raw["events"]:
        if not isinstance(e, dict) or "data" not in e or set(e) - {"event", "data"}:
            raise ScenarioError(f"{where}: an event is {{event: name, data: ...}}")
        events.append(Event(data=e["data"], event=e.get("event")))
    return Stream(
        events=tuple(events),
        then=then,
        headers={str(k): str(v) for k, v in (raw.get("headers") or {}).items()},
    )
