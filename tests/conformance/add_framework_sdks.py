"""Add the framework drivers to the openai, azure and anthropic scenarios (rerunnable).

    python -m tests.conformance.add_framework_sdks

litellm, langchain-openai / langchain-anthropic, pydantic-ai and openai-agents call the same
APIs through the openai and anthropic SDKs (or their own HTTP clients), so every scenario of
those APIs runs through them too. The `sdks: [...]` line of each scenario is extended in
place (comments and layout kept); a driver already listed is not added twice.
"""

from __future__ import annotations

import re

from tests.conformance.loader import SCENARIO_DIR

FRAMEWORKS = {
    "openai": [
        "python.litellm",
        "python.langchain-openai",
        "python.pydantic-ai",
        "python.openai-agents",
    ],
    "azure": [
        "python.litellm",
        "python.langchain-openai",
        "python.pydantic-ai",
        "python.openai-agents",
    ],
    "anthropic": ["python.litellm", "python.langchain-anthropic", "python.pydantic-ai"],
}
SDKS = re.compile(r"^(\s*sdks:\s*\[)([^\]]*)(\].*)$")
API = re.compile(r"^\s*api:\s*(\w+)")


def extend(text: str) -> str:
    out, api = [], None
    for line in text.splitlines(keepends=True):
        if m := API.match(line):
            api = m.group(1)
        m = SDKS.match(line.rstrip("\n"))
        if m and api in FRAMEWORKS:
            listed = [s.strip() for s in m.group(2).split(",") if s.strip()]
            listed += [s for s in FRAMEWORKS[api] if s not in listed]
            line = f"{m.group(1)}{', '.join(listed)}{m.group(3)}\n"
        out.append(line)
    return "".join(out)


def main() -> None:
    for path in sorted(SCENARIO_DIR.glob("*.yaml")):
        text = path.read_text()
        new = extend(text)
        if new != text:
            path.write_text(new)
            print(f"extended {path.name}")


if __name__ == "__main__":
    main()
