"""The runnable snippets of docs/clients.md, run against a real server, printing what the page says they print."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from classifier.server import GrpcServer
from tests.support import ROOT

DOC = ROOT / "docs" / "clients.md"
DOC_ADDRESS = "127.0.0.1:50051"
SNIPPET = re.compile(
    r"<!-- run: (?P<lang>python|node) -->\n```\w+\n(?P<code>.*?)```\n"
    r"(?:<!-- output -->\n```text\n(?P<output>.*?)```\n)?",
    re.DOTALL,
)


@dataclass(frozen=True)
class Snippet:
    lang: str
    code: str
    output: str | None
    line: int


def snippets() -> list[Snippet]:
    text = DOC.read_text(encoding="utf-8")
    return [
        Snippet(m["lang"], m["code"], m["output"], text.count("\n", 0, m.start()) + 1)
        for m in SNIPPET.finditer(text)
    ]


def test_the_page_has_runnable_snippets() -> None:
    """The marker syntax matches: a typo would silently stop snippets from being run."""
    found = snippets()
    assert {s.lang for s in found} == {"python", "node"}
    assert DOC.read_text(encoding="utf-8").count("<!-- run:") == len(found)
    assert all(DOC_ADDRESS in s.code for s in found)


@pytest.mark.parametrize("snippet", snippets(), ids=lambda s: f"{s.lang}-line{s.line}")
def test_snippet_runs_as_documented(
    snippet: Snippet, server: GrpcServer, request: pytest.FixtureRequest
) -> None:
    """The snippet runs against a real server and prints exactly the output shown under it."""
    code = snippet.code.replace(DOC_ADDRESS, f"127.0.0.1:{server.port}")
    if snippet.lang == "python":
        command, cwd = [sys.executable, "-c", code], ROOT
    else:
        example: Path = request.getfixturevalue("node_package")
        command, cwd = ["node", "-e", code], example
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"docs/clients.md:{snippet.line}\n{done.stderr}"
    if snippet.output is not None:
        assert done.stdout == snippet.output


README = ROOT / "README.md"
README_SAMPLE = re.compile(
    r"\n## Calling it\n.*?```python\n(?P<code>.*?\nprint\(.*?\)\n)# (?P<output>.+?)\n```\n",
    re.DOTALL,
)
"""The README's first sample: the stubs called by hand, with what it prints as its last
line's comment."""


def test_the_readmes_calling_it_sample_prints_the_line_it_shows(server: GrpcServer) -> None:
    """Run as a user pastes it, against a real server on the bundled library: the line it
    prints (class, action, rule, ruleset version) is the comment under it, word for word."""
    found = README_SAMPLE.search(README.read_text(encoding="utf-8"))
    assert found is not None, "README.md: no Python sample under `## Calling it`"
    assert DOC_ADDRESS in found["code"]
    code = found["code"].replace(DOC_ADDRESS, f"127.0.0.1:{server.port}")
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == found["output"] + "\n"
