"""Add the Go drivers to the scenarios whose call fails in Go (rerunnable).

    python -m tests.conformance.add_go_sdks

Each Go driver (tests/conformance/go_drivers.py GO_SDKS) is appended, at the end of the
`sdks: [...]` line, to every scenario of an API it calls where the call fails: an error
status, a transport fault, a stream that is cut or carries an error event; and, for the
drivers that describe what returned with errorclass.DescribeResponseJSON (RESPONSES), a
2xx answer (a finish reason or refusal, the convention's pairs), streamed too for those
that read an SDK's stream (STREAMS). Left out: langchaingo on a 2xx (it keeps no finish
reason to describe), the raw net/http client on a stream that returns (like the other
raw clients), and, for both (which hand an error event over as data, or skip it), a
stream whose only failure is an error event inside it. A driver already listed is not
added twice.
"""

from __future__ import annotations

import re

from tests.conformance.go_drivers import GO_SDKS
from tests.conformance.loader import SCENARIO_DIR, Scenario, load_scenarios

EVENTS_AS_DATA = ("go.http", "go.langchaingo-openai")
STREAMS = ("go.openai", "go.gobreaker", "go.anthropic", "go.genai", "go.bedrock")
RESPONSES = (*STREAMS, "go.http")
SDKS = re.compile(r"^(\s*sdks:\s*\[)([^\]]*)(\].*)$")
BLOCK = re.compile(r"^\s*sdks:\s*$")
ITEM = re.compile(r"^(\s*-\s+)(\S+)\s*$")
ID = re.compile(r"^\s*-\s*id:\s*(\S+)")


def error_event(scenario: Scenario) -> bool:
    """The stream carries the API's error event (OpenAI, Anthropic, Gemini, Bedrock)."""
    assert scenario.stream is not None
    for event in scenario.stream.events:
        name = event.event or ""
        if name == "error" or name.endswith("Exception"):
            return True
        if isinstance(event.data, dict) and "error" in event.data:
            return True
    return False


def runs(sdk: str, scenario: Scenario) -> bool:
    if scenario.api not in GO_SDKS[sdk]:
        return False
    if scenario.response is not None:
        return scenario.response.status >= 400 or sdk in RESPONSES
    if scenario.stream is not None:
        if scenario.stream.then == "cut":
            return True
        if error_event(scenario):
            return sdk not in EVENTS_AS_DATA
        return sdk in STREAMS  # it returns, ending with a finish reason
    return True  # a fault


def extend(text: str, scenarios: dict[str, Scenario]) -> str:
    """Each `sdks: [...]` line, or `sdks:` block list, with the Go drivers appended."""
    out: list[str] = []
    current: Scenario | None = None
    block: list[str] | None = None  # the items of the block list being read
    indent = ""
    for line in text.splitlines(keepends=True):
        item = ITEM.match(line.rstrip("\n"))
        if block is not None and item:
            block.append(item.group(2))
            indent = item.group(1)
            out.append(line)
            continue
        if block is not None and current is not None:
            out += [f"{indent}{s}\n" for s in GO_SDKS if runs(s, current) and s not in block]
            block = None
        if m := ID.match(line):
            current = scenarios.get(m.group(1))
        if BLOCK.match(line.rstrip("\n")):
            block = []
        m = SDKS.match(line.rstrip("\n"))
        if m and current is not None:
            listed = [s.strip() for s in m.group(2).split(",") if s.strip()]
            listed += [s for s in GO_SDKS if runs(s, current) and s not in listed]
            line = f"{m.group(1)}{', '.join(listed)}{m.group(3)}\n"
        out.append(line)
    if block is not None and current is not None:
        out += [f"{indent}{s}\n" for s in GO_SDKS if runs(s, current) and s not in block]
    return "".join(out)


def main() -> None:
    scenarios = load_scenarios()
    for path in sorted(SCENARIO_DIR.glob("*.yaml")):
        text = path.read_text()
        new = extend(text, scenarios)
        if new != text:
            path.write_text(new)
            print(f"extended {path.name}")


if __name__ == "__main__":
    main()
