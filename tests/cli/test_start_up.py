"""What the `classifier` command loads before it does anything: `--version`, `--help`, every
subcommand's `--help` and its argument parsing import neither the server stack nor gRPC, nor
the compiler's pydantic models. Measured as the modules a fresh interpreter holds (its
`sys.modules`), never as time, so the test cannot be flaky: each command imports what it
needs when it runs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from classifier.cli import COMMANDS, bundle
from tests.support import ROOT

NEVER = (
    "classifier.server",
    "classifier._proto",
    "classifier.client",
    "grpc",
    "grpc_health",
    "grpc_status",
    "grpc_reflection",
    "google.protobuf",
    "prometheus_client",
    "jinja2",
)
"""The server stack and the wire: what only serving, or calling a server, needs."""
NOT_FOR_PARSING = (
    "classifier.engine",
    "classifier.source.documents",
    "classifier.lint",
    "classifier.unknowns",
    "classifier.batch",
    "pydantic",
    "yaml",
    "re2",
)
"""The compiler and its models: what checking, testing and classifying need, not parsing."""

NAMES = [command.__name__.rsplit(".", 1)[1] for command in COMMANDS]
PROBE = """\
import json, sys
sys.argv = ["classifier", *json.loads(sys.argv[1])]
from classifier.__main__ import entry
try:
    entry()
except SystemExit:
    pass
sys.stdout.flush()
print("\\n" + json.dumps(sorted(sys.modules)))
"""
PARSE_ONLY = """\
import json, sys
from classifier.cli import build_parser
args = build_parser().parse_args(json.loads(sys.argv[1]))
assert callable(args.run)
print(json.dumps(sorted(sys.modules)))
"""


def _loaded(script: str, argv: list[str]) -> tuple[str, list[str]]:
    """What the script printed before the module list, and the modules a fresh interpreter
    held after it ran with argv."""
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(argv)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    printed, _, modules = done.stdout.rstrip("\n").rpartition("\n")
    return printed, json.loads(modules)


def _heavy(modules: list[str], packages: tuple[str, ...]) -> list[str]:
    """The modules that are one of the packages or inside one."""
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)]


BUNDLE_SUBCOMMANDS = [command.__name__.rsplit(".", 1)[1] for command in bundle.SUBCOMMANDS]


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["--help"],
        *([name, "--help"] for name in NAMES),
        *(["bundle", name, "--help"] for name in BUNDLE_SUBCOMMANDS),
    ],
    ids=" ".join,
)
def test_version_and_help_load_no_server_grpc_or_compiler(argv: list[str]) -> None:
    printed, modules = _loaded(PROBE, argv)
    assert printed.strip(), "the command printed its version or help"
    assert "classifier.cli" in modules  # the probe ran the command
    assert _heavy(modules, NEVER) == []
    assert _heavy(modules, NOT_FOR_PARSING) == []


COMMAND_LINES = [
    ["serve", "--rules", "rules", "--threads", "2", "--metrics-addr", "127.0.0.1:9464"],
    ["check", "--strict", "rules"],
    ["classify", "--addr", "127.0.0.1:1", "-"],
    ["explain", "--rules", "rules", "--rule", "x", "-"],
    ["test", "--junit", "out.xml", "rules"],
    ["diff", "--base", "HEAD", "corpus"],
    ["reclassify", "in.parquet", "-o", "out.parquet"],
    ["unknowns", "--admin-addr", "127.0.0.1:9464"],
    ["health", "--addr", "127.0.0.1:1"],
    ["ruleset", "--format", "json"],
    ["schema"],
    ["init", "acme"],
    ["bundle", "verify", "--public-key", "key.pem", "b.json"],
]


@pytest.mark.parametrize("argv", COMMAND_LINES, ids=lambda argv: str(argv[0]))
def test_parsing_a_command_line_loads_no_server_grpc_or_compiler(argv: list[str]) -> None:
    """Every subcommand's arguments parsed (the run not started): the same light start."""
    _, modules = _loaded(PARSE_ONLY, argv)
    assert _heavy(modules, NEVER) == []
    assert _heavy(modules, NOT_FOR_PARSING) == []


def test_every_subcommand_is_measured() -> None:
    """A new subcommand is measured by its --help (NAMES) and needs a command line here."""
    assert {argv[0] for argv in COMMAND_LINES} == set(NAMES)


def test_the_format_choices_named_for_parsing_are_the_renderers_names() -> None:
    """`--format`'s choices are named in the command's module, so that parsing imports no
    renderer: they are the renderers' names, each one."""
    from classifier.cli import diff, test, unknowns
    from classifier.regress import diff as replay
    from classifier.regress import report
    from classifier.unknowns import inbox_report, proposal_output

    assert tuple(replay.RENDERERS) == diff.FORMATS
    assert tuple(report.RENDERERS) == test.FORMATS
    assert unknowns.FORMATS == tuple(inbox_report.RENDERERS) == tuple(proposal_output.RENDERERS)
