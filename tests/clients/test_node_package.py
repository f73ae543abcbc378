"""The Node client as a package (clients/node): what it ships is in step with the repository,
its own tests (every vector of clients/spec, the outage test, the Client against real servers)
pass, it refuses the descriptors the Python side refuses, in the same words, and its README's
commands work, packed and installed into an application with no repository next to it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from classifier import Ruleset, __version__
from classifier.errors import DescriptorError
from classifier.source.descriptor_file import descriptor_dict, descriptor_from_data
from classifier.taxonomy import GRPC_CODES
from tests.clients.test_node_client import answered, engine_answer, node
from tests.support import ROOT
from tools.spec import render_node
from tools.spec.facts import SPEC, facts
from tools.spec.vectors import KINDS

PACKAGE = ROOT / render_node.PACKAGE
GENERATED = ROOT / render_node.OUT
README = PACKAGE / "README.md"
README_ADDRESS = "127.0.0.1:50051"
SHELL_BLOCK = re.compile(r"```sh\n(.*?)```\n", re.DOTALL)
PACKAGE_JSON: dict[str, Any] = json.loads((PACKAGE / "package.json").read_text())
SHIPPED = (
    "package.json",
    "package-lock.json",
    "README.md",
    *(f for f in PACKAGE_JSON["files"] if not f.endswith("/")),
)
"""What `npm pack` puts in the tarball, but generated/ (package.json's `files`, and what npm
always adds)."""
NODE_TESTS_LIMIT_S = 300

LONG = "t" * 1025
BAD: list[Any] = [
    {"type": "x", "orign": "provider"},
    {"tpye": "openai.RateLimitError"},
    {"type": "x", "origin": "provder"},
    {"type": "x", "origin": "calr"},
    {"type": "x", "origin": "ORIGIN_TOOL"},
    {"type": "x", "origin": 5},
    {"type": "x", "grpc_status": "deadline_exceded"},
    {"type": "x", "grpc_status": 17},
    {"type": "x", "grpc_status": 4.5},
    {"type": "x", "http_status": 42},
    {"type": "x", "http_status": "abc"},
    {"type": "x", "http_status": True},
    {"type": "", "supertypes": ["A", " "], "code": "c" * 257},
    {"type": "x", "supertypes": "A"},
    {"type": "x", "message": ["it's", "a b", "yes", "1.5", ""]},
    {"type": "x", "code": {"a": [1, "b c"]}},
    {"type": "x", "causes": [{"type": "", "stauts": 1}, 1]},
    {"type": "x", "causes": [{"type": "a"}] * 33},
    {"type": "x", "supertypes": ["a"] * 65},
    {"type": "x", "attributes": {str(i): "v" for i in range(65)}},
    {"type": "x", "attributes": {"": "v", "k" * 300: "v", "it's": "v" * 5000, "n": None}},
    {"type": "x", "attributes": {"": "v", "k" * 300: "v", "it's": "v" * 5000}},
    {"type": LONG, "language": "l" * 129, "provider": "p" * 200},
    {"type": "\U0001f600" * 1025},
    {"type": "\u3000\x1c"},
    {"descriptor": {"type": "x", "orign": 1}},
    {"descriptor": {"type": "x"}, "other": 1},
    {},
    [],
    "text",
]
GOOD: list[Any] = [
    {
        "type": "openai.RateLimitError",
        "http_status": 429,
        "origin": "provider",
        "provider": "openai",
    },
    {
        "type": " System.OperationCanceledException ",
        "origin": "Caller",
        "grpc_status": " canceled ",
        "http_status": "499",
        "code": 7,
        "language": " DotNet ",
        "attributes": {"n": 1, "b": False, "s": "v", "f": 1.5},
        "causes": [{"type": "System.TimeoutException", "grpc_status": 4, "message": "m" * 5000}],
    },
    {"type": "\U0001f600" * 1024, "supertypes": ["a"] * 64, "causes": [{"type": "a"}] * 32},
    {"type": "x", "origin": "", "grpc_status": None, "http_status": None, "code": True},
    {"type": "x", "origin": "unspecified", "attributes": {str(i): "v" for i in range(64)}},
    {"descriptor": {"type": "io.grpc.StatusRuntimeException", "grpc_status": "UNAVAILABLE"}},
]


def python_verdict(data: Any) -> dict[str, Any]:
    """What the Python side makes of a descriptor file's data: the normalised descriptor
    (gRPC statuses by number, as the Node side returns them) or each refusal."""
    if isinstance(data, dict) and set(data) == {"descriptor"}:
        data = data["descriptor"]
    try:
        d = descriptor_dict(descriptor_from_data(data))
    except DescriptorError as exc:
        return {"refused": [str(v) for v in exc.violations]}
    for subject in [d, *d.get("causes", [])]:
        if "grpc_status" in subject:
            subject["grpc_status"] = GRPC_CODES[subject["grpc_status"]]
    return {"ok": d}


def node_verdicts(package: Path, cases: list[Any]) -> list[dict[str, Any]]:
    script = """
const lib = require('./classifier');
const cases = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
console.log(JSON.stringify(cases.map((c) => {
  try {
    return { ok: lib.descriptorFromFileData(c) };
  } catch (err) {
    if (!(err instanceof lib.DescriptorError)) throw err;
    return { refused: err.violations.map((v) => `${v.field}: ${v.message}`) };
  }
})));
"""
    verdicts: list[dict[str, Any]] = answered(node(package, [script], json.dumps(cases), "-e"))
    return verdicts


def test_generated_holds_what_make_spec_writes_and_nothing_else() -> None:
    """generated/ is render_node's output (the drift test, tests/clients/test_spec.py, compares
    the bytes): a copy of the spec's facts, the descriptor schema and the proto, and no
    stale file beside them."""
    rendered = render_node.render(facts())
    assert set(rendered) == {p.relative_to(ROOT) for p in GENERATED.rglob("*") if p.is_file()}
    assert (GENERATED / "facts.json").read_bytes() == (ROOT / SPEC / "facts.json").read_bytes()
    proto = GENERATED / "proto" / "errorclass" / "v1" / "classifier.proto"
    assert proto.read_bytes() == (ROOT / "proto/errorclass/v1/classifier.proto").read_bytes()
    schema = GENERATED / "descriptor.schema.json"
    assert schema.read_bytes() == (ROOT / "classifier/schemas/descriptor.schema.json").read_bytes()


def test_the_package_is_versioned_with_the_classifier_and_ships_every_module() -> None:
    """package.json (and its lock) carry the Python package's version, a bin, and every module
    of the package's top level in `files` (a module left out would be missing once packed)."""
    lock = json.loads((PACKAGE / "package-lock.json").read_text())
    python_version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert PACKAGE_JSON["version"] == python_version == lock["version"]
    assert __version__ in (python_version, "0+unknown")
    assert lock["packages"][""]["name"] == lock["name"] == PACKAGE_JSON["name"]
    assert "private" not in PACKAGE_JSON
    assert PACKAGE_JSON["bin"] == {"errorclass-classify": "classify.js"}
    assert (PACKAGE / "classify.js").read_text().startswith("#!/usr/bin/env node\n")
    assert {p.name for p in PACKAGE.glob("*.js")} == {
        f for f in PACKAGE_JSON["files"] if f.endswith(".js")
    }
    assert "tests/" not in PACKAGE_JSON["files"]
    name = PACKAGE_JSON["name"].lstrip("@").replace("/", "-")
    assert f"{name}-{PACKAGE_JSON['version']}.tgz" in README.read_text()


def run_node_tests(
    package: Path, *args: str, spec: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ}
    env.pop("ERRORCLASS_SPEC_DIR", None)
    if spec is not None:
        env["ERRORCLASS_SPEC_DIR"] = str(spec)
    return subprocess.run(
        ["node", "--test", "--test-reporter=spec", *args, "tests/"],
        cwd=package,
        env=env,
        capture_output=True,
        text=True,
        timeout=NODE_TESTS_LIMIT_S,
        check=False,
    )


def vector_counts() -> dict[str, int]:
    counts: dict[str, int] = {}
    for path in sorted((ROOT / SPEC / "vectors").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        counts[data["kind"]] = counts.get(data["kind"], 0) + len(data["vectors"])
    return counts


def test_the_node_tests_pass_and_read_every_vector(node_package: Path) -> None:
    """`node --test clients/node/tests/` (what `make node-test` runs): every vector of every
    kind read by the package's own functions, the outage test against a stopped port and a
    grpc-js server answering UNAVAILABLE, the Client against real servers; it prints how many
    vectors of each kind it ran, and that is every vector of clients/spec."""
    done = run_node_tests(node_package)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    printed = dict(re.findall(r"^vectors: (\w+) (\d+)$", done.stdout, re.M))
    assert set(printed) == set(KINDS)
    assert {kind: int(n) for kind, n in printed.items()} == vector_counts()


def test_a_changed_expectation_fails_the_node_tests_naming_it(
    node_package: Path, tmp_path: Path
) -> None:
    """With ERRORCLASS_SPEC_DIR naming a copy of the spec whose first error_body vector expects
    another code, the runner fails and names the file, the vector and the field."""
    spec = tmp_path / "spec"
    shutil.copytree(ROOT / SPEC, spec)
    path = spec / "vectors" / "error_body.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    vector = data["vectors"][0]
    vector["want"]["code"] = "changed"
    path.write_text(json.dumps(data), encoding="utf-8")
    done = run_node_tests(
        node_package, f"--test-name-pattern=^{re.escape(vector['name'])}$", spec=spec
    )
    assert done.returncode == 1, done.stdout[-4000:]
    assert f"error_body.json {vector['name']}: code: got " in done.stdout
    assert 'want "changed"' in done.stdout


def test_node_refuses_and_accepts_what_python_does(node_package: Path) -> None:
    """Every bad descriptor is refused with the same field paths and words as Python's
    descriptor-file reader, and every good one normalised to the same descriptor."""
    cases = BAD + GOOD
    got = node_verdicts(node_package, cases)
    for case, verdict in zip(cases, got, strict=True):
        assert verdict == python_verdict(case), json.dumps(case)[:200]
    assert all("refused" in v for v in got[: len(BAD)])
    assert all("ok" in v for v in got[len(BAD) :])


PYTHON_CLASSIFY = (sys.executable, "-m", "classifier", "classify", "--format", "json", "--addr")
CLI_CASES = [BAD[0], BAD[2], BAD[6], BAD[12], BAD[16], BAD[20], GOOD[1], GOOD[5]]
"""A few of each kind as processes (a Python start costs most of a second); the table above
checks every case in one Node process."""


def test_both_commands_refuse_the_same_descriptors(
    node_package: Path, served_address: str, tmp_path: Path
) -> None:
    """`classifier classify --addr` and `node classify.js --addr`, as processes against one real
    server: the same exit status, the same bad fields on stderr, the same answers."""

    def run(i: int, case: Any) -> tuple[Any, ...]:
        path = tmp_path / f"case{i}.json"
        path.write_text(json.dumps(case))
        python = subprocess.run(
            [*PYTHON_CLASSIFY, served_address, str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        return case, python, node(node_package, ["--addr", served_address, str(path)])

    def fields(stderr: str, path: str) -> list[str]:
        # Python says where (file:line:col) when it knows; both then name the field
        return [
            re.sub(rf"^{re.escape(path)}(:\d+:\d+)?: ", "", line) for line in stderr.splitlines()
        ]

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, range(len(CLI_CASES)), CLI_CASES))
    for i, (case, python, js) in enumerate(results):
        path = str(tmp_path / f"case{i}.json")
        assert (python.returncode, js.returncode) in ((0, 0), (2, 2)), (case, python, js)
        if python.returncode == 0:
            assert json.loads(js.stdout) == json.loads(python.stdout), case
        else:
            assert fields(js.stderr, path) == fields(python.stderr, path), case
            assert all(line.startswith("descriptor") for line in fields(js.stderr, path))
    assert sum(p.returncode == 2 for _, p, _ in results) == len(CLI_CASES) - 2


def test_a_batch_names_each_bad_descriptor_and_sends_nothing(
    node_package: Path, served_address: str
) -> None:
    """--batch and --stream refuse the whole call, naming each item as the server would."""
    many = [GOOD[0], {"type": "x", "orign": 1}, {"type": ""}]
    for mode in ("--batch", "--stream"):
        done = node(node_package, ["--addr", served_address, mode, "-"], json.dumps(many))
        assert done.returncode == 2, done.stderr
        assert [line.split(":")[1] for line in done.stderr.splitlines()] == [
            " requests[1].descriptor.orign",
            " requests[2].descriptor.type",
        ]
        assert done.stdout == ""


APP_FAILURE: dict[str, Any] = {
    "type": "RateLimitError",
    "supertypes": ["Error"],
    "http_status": 429,
    "code": "rate_limit_exceeded",
    "message": "429 Rate limit reached",
    "origin": "provider",
    "provider": "openai",
    "language": "node",
}
"""The descriptor the README's app.js builds from its RateLimitError."""


def test_readme_commands_work_packed_and_installed(
    served_address: str, bundled: Ruleset, tmp_path: Path
) -> None:
    """Every shell block of the package README, run in order as one script against a real
    server: from a copy of the package folder, then packed and installed into an application
    folder with no repository (and no proto) anywhere near it."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not on PATH")
    blocks = SHELL_BLOCK.findall(README.read_text(encoding="utf-8"))
    assert len(blocks) == 2
    assert README.read_text().count("```sh") == len(blocks)
    copy = tmp_path / "repo" / render_node.PACKAGE
    copy.mkdir(parents=True)
    for name in SHIPPED:
        shutil.copy(PACKAGE / name, copy / name)
    shutil.copytree(GENERATED, copy / "generated")
    script = "set -euo pipefail\n" + "\n".join(blocks)
    script = re.sub(r"/tmp(?=[/\s])", str(tmp_path), script.replace(README_ADDRESS, served_address))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("npm_")},
        "npm_config_prefer_offline": "true",
        "npm_config_audit": "false",
        "npm_config_fund": "false",
        "npm_config_update_notifier": "false",
        "npm_config_loglevel": "error",
    }
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path / "repo",
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    out = done.stdout
    assert (
        out.count('"class": "RateLimited"') == 4
    )  # file, --explain, and first of --batch, --stream
    assert '"explanation"' in out
    assert "exit 2" in out
    assert "descriptor.orign: unknown key (did you mean 'origin'?)" in done.stderr
    assert f"errorclass-classify {__version__}" in out or "errorclass-classify 0.1.0" in out
    assert '"class": "Timeout"' in out
    # what the engine answers for the descriptor app.js builds from its RateLimitError
    answer = engine_answer(bundled, APP_FAILURE)
    assert out.rstrip().splitlines()[-3:] == [
        f"{answer['class']} {answer['action']['id']} {answer['rule']} {answer['ruleset_version']}",
        "kept 1 RateLimitError",
        "DescriptorError descriptor.origin",
    ]
    installed = tmp_path / "my-app" / "node_modules" / "@errorclass" / "classifier-client"
    assert (installed / "generated" / "proto" / "errorclass" / "v1" / "classifier.proto").is_file()
    assert not (installed.parent.parent.parent.parent / "proto").exists()
    assert not installed.is_symlink()


def test_the_library_refuses_before_sending(node_package: Path) -> None:
    """classify, classifyBatch and classifyStream reject a malformed descriptor with a
    DescriptorError without a call (no server listens at the address); a known key left
    undefined is absent, as in JSON."""
    script = """
const lib = require('./classifier');
const client = lib.connect('127.0.0.1:1');
const bad = { type: 'x', orign: 'tool' };
const calls = [
  lib.classify(client, bad, { deadlineMs: 20000 }),
  lib.classifyBatch(client, [{ type: 'x' }, bad], { deadlineMs: 20000 }),
  lib.classifyStream(client, [bad], { deadlineMs: 20000 }),
];
Promise.allSettled(calls).then((results) => {
  client.close();
  console.log(JSON.stringify({
    refused: results.map((r) => r.status === 'rejected' && r.reason instanceof lib.DescriptorError
      ? r.reason.violations.map((v) => v.field) : String(r.reason)),
    undefinedIsAbsent: lib.toWire({ type: 'x', code: undefined, origin: undefined }),
  }));
});
"""
    got = answered(node(node_package, [script], script="-e"))
    assert got["refused"] == [
        ["descriptor.orign"],
        ["requests[1].descriptor.orign"],
        ["requests[0].descriptor.orign"],
    ]
    assert got["undefinedIsAbsent"] == {"type": "x"}
