"""Add the Java drivers to the scenarios each can make (rerunnable).

    python -m tests.conformance.add_java_sdks

Which Java driver makes which scenario (tests/conformance/java_drivers.py JAVA_SDKS has the
APIs): every error response and transport fault of its APIs; a stream only for the drivers
that stream (openai-java, anthropic-java); a 2xx answer (a normal return whose finish
reason is the failure) only for the drivers that read the finish reason (openai-java,
anthropic-java, Bedrock's Converse: `Descriptors.fromFinishReason`); for Bedrock, the
Converse and InvokeModel operations of the synchronous client (the streaming operations
need the asynchronous one). Each `sdks:` list is extended at its end, in place (comments
and layout kept), the flow form `sdks: [...]` and the block form alike; a driver already
listed is not added twice.
"""

from __future__ import annotations

import re

import yaml

from tests.conformance.java_drivers import JAVA_SDKS
from tests.conformance.loader import SCENARIO_DIR, Scenario, load_scenarios

STREAMING = ("java.openai", "java.anthropic")
FINISHING = ("java.openai", "java.anthropic", "java.bedrock")
"""The drivers that hand back the finish or stop reason of a call that returned."""
BEDROCK_OPERATIONS = ("converse", "invoke_model")


def drivers_for(scenario: Scenario) -> list[str]:
    """The Java drivers that can make this scenario's call, in JAVA_SDKS order."""
    returned = scenario.response is not None and scenario.response.status < 300
    if scenario.api == "bedrock" and (
        scenario.stream is not None
        or scenario.request.get("operation", "converse") not in BEDROCK_OPERATIONS
    ):
        return []
    return [
        sdk
        for sdk, apis in JAVA_SDKS.items()
        if scenario.api in apis
        and (scenario.stream is None or sdk in STREAMING)
        and (not returned or sdk in FINISHING)
    ]


def extend(text: str, wanted: dict[str, list[str]]) -> str:
    """The file's text with each scenario's `sdks:` list extended by its wanted drivers."""
    lines = text.split("\n")
    current = ""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        found = re.match(r"^\s*- id:\s*(\S+)\s*$", line)
        if found:
            current = found.group(1)
        flow = re.match(r"^(\s*sdks:\s*\[)(.*)\]\s*$", line)
        block = re.match(r"^(\s*)sdks:\s*$", line)
        add = wanted.get(current, [])
        if flow and add:
            have = [s.strip() for s in flow.group(2).split(",") if s.strip()]
            out.append(flow.group(1) + ", ".join(have + [s for s in add if s not in have]) + "]")
            i += 1
            continue
        if block and add:
            out.append(line)
            i += 1
            items: list[str] = []
            indent = ""
            while (
                i < len(lines)
                and re.match(r"^\s*- \S", lines[i])
                and not lines[i].lstrip().startswith("- id:")
            ):
                indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
                items.append(lines[i].strip()[2:].strip())
                out.append(lines[i])
                i += 1
            out += [f"{indent}- {s}" for s in add if s not in items]
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def main() -> None:
    scenarios = load_scenarios()
    for path in sorted(SCENARIO_DIR.glob("*.yaml")):
        ids = [s["id"] for s in yaml.safe_load(path.read_text())["scenarios"]]
        wanted = {sid: drivers_for(scenarios[sid]) for sid in ids}
        path.write_text(extend(path.read_text(), wanted))
    after = load_scenarios()
    for sid, scenario in after.items():
        assert scenario.sdks[: len(scenarios[sid].sdks)] == scenarios[sid].sdks, sid


if __name__ == "__main__":
    main()
