"""The package's layers: dependencies point one way, with no cycle, and the client stays light.

The client is its own distribution (clients/python, `errorclass_client`): it imports
nothing of `classifier`, and `classifier` imports it only where it must (the CLI's remote
commands and the `classifier.client` shim), besides the generated stubs it carries
(`errorclass_client.proto`), which the server reads and writes the wire with."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.support import ROOT

PACKAGE = ROOT / "classifier"
CLIENT = ROOT / "clients" / "python" / "errorclass_client"
KERNEL = {"errors", "codes", "location", "taxonomy", "limits", "descriptor", "answer", "text"}
KERNEL |= {"diagnostic_output", "redact", "_pem", "_signals", "_fork", "extras", "generic_types"}
KERNEL |= {"contract", "defaults", "durations", "field_kinds"}
LAYERS = [
    "kernel",
    "source",
    "engine",
    "lint",
    "bundle",
    "regress",
    "unknowns",
    "batch",
    "spark",
    "server",
    "cli",
]
"""Each layer may import its own and those before it, never one after it."""
MAY_ALSO = {
    "client": {"kernel", "_proto"},
    "server": {"_proto"},
    "cli": {"client", "_proto"},
}
"""The client sits beside the pipeline (`classifier.client`, the shim, and `errorclass_client`,
the client itself): only the CLI's remote commands call it. The stubs (`_proto`:
`errorclass_client.proto`) are the wire the server and the CLI speak."""


def _layer(module: str) -> str:
    part = module.split(".")[1] if "." in module else ""
    if part in KERNEL or module == "classifier":
        return "kernel"
    return part


def _imports() -> dict[str, set[str]]:
    """Each classifier module and the classifier modules it imports (at any level)."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if "_proto" in parts:
            continue
        if parts[-1] == "__init__":
            parts.pop()
        module = ".".join(parts)
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.update(_module_of(node.module, a.name) for a in node.names)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
        graph[module] = {
            m for m in found if m.startswith(("classifier", "errorclass_client")) and m != module
        }
    return graph


def _module_of(module: str, name: str) -> str:
    """`from a.b import c`: the module a.b.c when there is one, else a.b."""
    path = ROOT.joinpath(*module.split("."), name)
    if path.with_suffix(".py").is_file() or (path / "__init__.py").is_file():
        return f"{module}.{name}"
    return module


def _target_layer(module: str) -> str:
    if module.startswith("errorclass_client.proto"):
        return "_proto"
    if module.startswith("errorclass_client"):
        return "client"
    return _layer(module)


def _allowed(layer: str, target: str) -> bool:
    if target in MAY_ALSO.get(layer, set()) or target == layer:
        return True
    if layer in ("client", "_proto") or target in ("client", "_proto"):
        return False
    return LAYERS.index(target) <= LAYERS.index(layer)


EXPLICIT_ONLY = {"classifier.client.local": {"engine"}, "classifier.client.convert": set()}
"""Client modules that `import classifier.client` never loads, allowed more: the local
fallback, imported explicitly by runtimes that want it, classifies with the engine."""


FROM_THE_CLIENT = {
    "classifier.server.shared.serving_ruleset": {"errorclass_client.answer"},
    "classifier.durations": {"errorclass_client.retry_after"},
    "classifier.engine.retry_after": {"errorclass_client", "errorclass_client.retry_after"},
    "classifier.field_kinds": {"errorclass_client", "errorclass_client._text"},
    "classifier.answer": {"errorclass_client", "errorclass_client.retry_after"},
}
"""Modules that take one thing from the client, its one home: what a reload did
(`ReloadResult`, the wire's enum, written by the server and read by the client), and how
long a provider asks to wait (`retry_after`, its answer `RetryAfter` and its duration readers, which the client's
bundle evaluator runs too; importing them loads neither grpcio nor protobuf), and text
as every client counts it (`utf8_text`: a lone surrogate becomes U+FFFD)."""


def test_no_module_imports_a_later_layer() -> None:
    wrong = [
        f"{module} ({_layer(module)}) imports {other} ({_target_layer(other)})"
        for module, imported in _imports().items()
        if module not in ("classifier", "classifier.__main__")
        for other in imported
        if not _allowed(_layer(module), _target_layer(other))
        and _target_layer(other) not in EXPLICIT_ONLY.get(module, set())
        and other not in FROM_THE_CLIENT.get(module, set())
    ]
    assert wrong == []


SERVER_ROOMS: list[set[str]] = [
    {"shared"},
    {"explain", "observers"},
    {"rpc", "web"},
    {"top"},
]
"""Inside `server/`, each tier may import its own room and the tiers before it, never a
room beside it nor a tier after it: what every room shares (`server/shared/`: the log,
the serving ruleset's home and its bundle, the token bucket, grpcio's internals), then
explanations and the observers, then the two ports (gRPC and the side port), then the
owner that assembles them (`runtime`, with `reload` and `workers`), which nothing below
imports. Each room is a folder of `server/`; the owner is its top."""
SERVER_TOP = {"", "runtime", "reload", "workers"}
"""The modules at the top of `server/` (and the package itself): the owner. Every other
module is in a room, the folder it sits in (`server/shared/` among them)."""


def _server_room(module: str) -> str:
    part = module.split(".")[2] if module.count(".") >= 2 else ""
    return "top" if part in SERVER_TOP else part


def _server_tier(room: str) -> int:
    return next(i for i, rooms in enumerate(SERVER_ROOMS) if room in rooms)


def test_the_rooms_of_the_server_import_only_down() -> None:
    graph = _imports()
    rooms = {_server_room(m) for m in graph if m.startswith("classifier.server")}
    assert rooms <= set().union(*SERVER_ROOMS), "every module of server/ is in a room"
    wrong = [
        f"{module} ({_server_room(module)}) imports {other} ({_server_room(other)})"
        for module, imported in graph.items()
        if module.startswith("classifier.server.")
        for other in imported
        if other.startswith("classifier.server")
        and _server_room(other) != _server_room(module)
        and _server_tier(_server_room(other)) >= _server_tier(_server_room(module))
    ]
    assert wrong == []


def test_there_is_no_import_cycle() -> None:
    graph = _imports()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, set())):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == []


def test_the_client_imports_nothing_of_the_server() -> None:
    """errorclass_client depends on the contract and the spec only: no module of it imports
    `classifier` (the server's package), at any level."""
    modules = sorted(CLIENT.rglob("*.py"))
    assert modules, f"no client modules under {CLIENT}"
    wrong = []
    for path in modules:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            wrong += [
                f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] == "classifier"
            ]
    assert wrong == []


def test_importing_the_client_alone_loads_nothing_of_the_server() -> None:
    """`import errorclass_client` (what a runtime does) loads no `classifier` module and
    neither pydantic, yaml nor re2; and the generated stubs are registered once."""
    code = (
        "import sys, errorclass_client\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('classifier', 'pydantic', 'yaml', 're2', 'jinja2', 'grpc_status') "
        "or m.startswith('google.rpc')))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert run.stdout.strip() == "[]"


def test_importing_the_client_loads_no_compiler() -> None:
    """A runtime that only calls the service pays for neither pydantic, yaml, re2 nor the engine."""
    code = (
        "import sys, classifier.client\n"
        "heavy = ('pydantic', 'yaml', 're2', 'classifier.engine', 'classifier.source')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy[:3] "
        "or m.startswith(heavy[3:])))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert run.stdout.strip() == "[]"


def test_the_lazy_names_resolve() -> None:
    """Every name `classifier` promises is importable from it."""
    code = "import classifier\nfor n in classifier.__all__: getattr(classifier, n)\nprint('ok')"
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert run.stdout.strip() == "ok"
    assert Path(PACKAGE / "__init__.py").is_file()


def test_the_engine_takes_the_wait_from_the_client_without_grpc() -> None:
    """The engine's retry_after is the client's algorithm (one copy); importing the engine
    loads neither grpcio nor protobuf (errorclass_client loads its names on first use)."""
    code = (
        "import sys, classifier.engine.evaluate, classifier.durations\n"
        "from classifier.engine import retry_after\n"
        "import errorclass_client.retry_after as algorithm\n"
        "assert classifier.durations.go_duration is algorithm.go_duration\n"
        "assert retry_after.SOURCES is algorithm.SOURCES\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'grpc' "
        "or m.startswith(('google.protobuf', 'errorclass_client.client'))))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert run.stdout.strip() == "[]"
