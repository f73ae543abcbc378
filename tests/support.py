"""Paths and types the tests share (fixtures live in conftest.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc

ROOT = Path(__file__).resolve().parent.parent
BUNDLED_RULES = ROOT / "rules"
MANIFEST = "name: test\nversion: 1.0.0\n"

MakeRuleset = Callable[..., Path]
"""make_ruleset(files, *, manifest=..., name=...) -> the ruleset folder it wrote."""


def committable_files() -> list[str]:
    """The repository's files that git would commit (tracked, or untracked and not ignored)
    and that exist in the working tree, as paths relative to ROOT."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    names = [os.fsdecode(n) for n in listed if n]
    return [n for n in names if (ROOT / n).is_file()]


def write_atomically(path: Path, text: str) -> None:
    """Replace a file in one rename, as editors and deploy tools do: never half-written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def wait_for(predicate: Callable[[], object], timeout: float = 10.0, step: float = 0.02) -> None:
    """Poll until predicate() is true, every `step` s; fail the test when timeout passes first."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout}s: {predicate}")
        time.sleep(step)


def ruleset_files(version: str, probe_class: str, *, extra: str = "") -> dict[str, str]:
    """A small ruleset whose `test.Probe` rule (in a subfolder) answers probe_class."""
    return {
        "ruleset.yaml": f"name: probe\nversion: {version}\n",
        "actions.yaml": (BUNDLED_RULES / "actions.yaml").read_text(),
        "checks/probe.yaml": (
            "rules:\n"
            "  - id: probe\n"
            "    when: {type: test.Probe}\n"
            f"    class: {probe_class}\n"
            "  - id: probe.429\n"
            "    when: {http_status: 429}\n"
            "    class: RateLimited\n" + extra
        ),
    }


def write_folder(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        write_atomically(root / rel, text)
    return root


class ConfigMapVolume:
    """A folder laid out the way kubelet mounts a ConfigMap.

    Each visible entry is a link into `..data`, itself a link to a hidden,
    timestamped folder; an update writes a new timestamped folder and swaps
    `..data` to it in one rename, then removes the old one.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.generation = 0
        root.mkdir(parents=True, exist_ok=True)

    def publish(self, files: dict[str, str]) -> None:
        self.generation += 1
        new = self.root / f"..2026_11_29_12_00_00.{self.generation:06d}"
        for rel, text in files.items():
            (new / rel).parent.mkdir(parents=True, exist_ok=True)
            (new / rel).write_text(text)
        data = self.root / "..data"
        old = data.resolve() if data.is_symlink() else None
        tmp = self.root / "..data_tmp"
        tmp.symlink_to(new.name)
        os.replace(tmp, data)
        visible = {rel.split("/")[0] for rel in files}
        for entry in self.root.iterdir():
            if not entry.name.startswith("..") and entry.name not in visible:
                entry.unlink()
        for name in visible:
            link = self.root / name
            if not link.is_symlink():
                link.symlink_to(f"..data/{name}")
        if old is not None:
            shutil.rmtree(old)


SERVING_RULES = """
rules:
  - id: dotnet.timeout
    when:
      type: System.Threading.Tasks.TaskCanceledException
      cause: {type: System.TimeoutException}
    class: Timeout
  - id: dotnet.cancel
    when: {type: System.OperationCanceledException}
    class: Canceled
  - id: provider.429
    when: {origin: provider, http_status: 429}
    class: RateLimited
  - id: provider.5xx
    when: {origin: provider, http_status: 5xx}
    class: ProviderError
  - id: tool.timed-out
    when: {origin: tool, message: '(?i)timed out after \\d+ ?ms'}
    class: ToolTimeout
"""
"""A fixed ruleset for server tests, so their expectations do not move with rules/."""


def serving_files() -> dict[str, str]:
    return {
        "ruleset.yaml": "name: serving\nversion: 1.0.0\n",
        "actions.yaml": (BUNDLED_RULES / "actions.yaml").read_text(),
        "rules.yaml": SERVING_RULES,
    }


SMALL_FILES = {
    "rules.yaml": """\
rules:
  - id: http.429
    when: {origin: provider, http_status: 429}
    class: RateLimited
  - id: dotnet.timeout
    when:
      type: System.Threading.Tasks.TaskCanceledException
      cause: {type: System.TimeoutException}
    class: Timeout
  - id: tool.any
    when: {origin: tool}
    class: ToolError
""",
    "rules.cases.yaml": """\
cases:
  - note: a provider 429 is RateLimited
    descriptor: {type: openai.RateLimitError, http_status: 429, origin: provider}
    want: {class: RateLimited, rule: http.429, effect: fail, action: provider.backoff, retryable: true}
  - note: HttpClient timeout is a Timeout
    descriptor:
      type: System.Threading.Tasks.TaskCanceledException
      causes: [{type: System.TimeoutException}]
    want: {class: Timeout, rule: dotnet.timeout}
  - note: a teapot is not classified
    descriptor: {type: teapot.Error, http_status: 418, origin: provider}
    want: {class: Unknown, unknown_reason: no_match}
""",
}
"""A three-rule ruleset and a passing case file beside it (the `small` fixture)."""


def trailer(err: grpc.RpcError) -> dict[str, str]:
    """A failed call's trailing metadata as a dict (text values only)."""
    found = err.trailing_metadata() or ()
    return {m.key: str(m.value) for m in found if isinstance(m.value, str)}


TEAM_LAYER = {
    "ruleset.yaml": (
        "name: acme\nversion: 1.0.0\nbase:\n  - library: default\n"
        "disable:\n  - rule: python.requests.retries-exhausted\n"
        "    reason: our session retries and re-raises the last error itself\n"
    ),
    "acme.yaml": (
        "rules:\n"
        "  - id: acme.gateway-quota\n"
        "    description: Our gateway's own quota, above the provider's.\n"
        "    when: {type: acme.GatewayQuotaError}\n"
        "    class: QuotaExceeded\n"
        "  - id: acme.tool-broken\n"
        "    description: Our tools' own failure type.\n"
        "    when: {type: acme.ToolBroken, origin: tool}\n"
        "    class: ToolError\n"
    ),
}
"""A team's layer on the bundled library with no catalog of its own (it inherits the
library's): two rules of its own and a disabled library rule."""


def written_json_lines(path: Path) -> list[dict[str, Any]]:
    """The JSON lines a live writer (a decision log) has finished: a last line without its
    newline is still being written, and is left for the next read."""
    if not path.exists():
        return []
    text = path.read_text("utf-8")
    return [json.loads(line) for line in text[: text.rfind("\n") + 1].splitlines() if line]
