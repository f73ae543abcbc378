"""The CLI against a running server: `classify --addr`, `explain --addr`, `ruleset --addr`,
answering as the same commands do in process; the version everywhere it is reported."""

from __future__ import annotations

import argparse
import json
import socket
from importlib.metadata import version
from pathlib import Path

import pytest

import classifier
from classifier.cli import build_parser, main
from classifier.cli.options import EXIT_MEANINGS, Exit, client_from
from classifier.client.convert import classification_of
from errorclass_client import Action, Answer, Client, Effect, ReloadResult
from tests.conftest import StartApp
from tests.support import ruleset_files, serving_files, write_folder

DESCRIPTOR = """\
type: System.Threading.Tasks.TaskCanceledException
supertypes: [System.OperationCanceledException, System.Exception]
causes: [{type: System.TimeoutException}]
"""
NO_MATCH = "type: acme.Weird\norigin: provider\nhttp_status: 418\n"


def _out(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def served(tmp_path: Path, start_app: StartApp) -> tuple[Path, str]:
    rules = write_folder(tmp_path / "rules", serving_files())
    running = start_app(rules, watch=False)
    return rules, running.app.address


@pytest.mark.parametrize("command", ["classify", "explain"])
@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("text", [DESCRIPTOR, NO_MATCH], ids=["timeout", "unknown"])
def test_a_server_answers_as_the_command_does_in_process(
    command: str,
    fmt: str,
    text: str,
    served: tuple[Path, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Same ruleset, same descriptor: `--addr` prints exactly what `--rules` prints."""
    rules, address = served
    descriptor = tmp_path / "d.yaml"
    descriptor.write_text(text)
    local = _out(capsys, [command, "--rules", str(rules), "--format", fmt, str(descriptor)])
    remote = _out(capsys, [command, "--addr", address, "--format", fmt, str(descriptor)])
    assert local[0] == 0
    assert remote == local
    assert "Timeout" in local[1] or "Unknown" in local[1]


def test_classify_explain_by_a_server(
    served: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`classify --explain --addr` prints the server's explanation: the same text as locally."""
    rules, address = served
    descriptor = tmp_path / "d.yaml"
    descriptor.write_text(DESCRIPTOR)
    local = _out(capsys, ["classify", "--explain", "--rules", str(rules), str(descriptor)])
    remote = _out(capsys, ["classify", "--explain", "--addr", address, str(descriptor)])
    assert remote == local
    assert "matched (best first):" in remote[1] or "dotnet.timeout" in remote[1]


def test_a_malformed_descriptor_is_refused_before_any_call(
    served: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The file is validated as in process: a misspelt key, with its line, exit 2."""
    _, address = served
    descriptor = tmp_path / "d.yaml"
    descriptor.write_text("type: a.B\nhttp_stauts: 429\n")
    code, out, err = _out(capsys, ["classify", "--addr", address, str(descriptor)])
    assert (code, out) == (2, "")
    assert "d.yaml:2:1" in err
    assert "http_stauts" in err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.mark.parametrize("command", ["classify", "explain", "ruleset"])
def test_an_unreachable_server_is_exit_2_with_the_address(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    address = f"127.0.0.1:{_free_port()}"
    descriptor = tmp_path / "d.yaml"
    descriptor.write_text(DESCRIPTOR)
    argv = [command, "--addr", address, "--timeout", "2"]
    code, out, err = _out(capsys, argv if command == "ruleset" else [*argv, str(descriptor)])
    assert (code, out) == (2, "")
    assert err.startswith(f"{address}: UNAVAILABLE") or f"{address}: DEADLINE_EXCEEDED" in err


def test_rules_and_addr_exclude_each_other(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["classify", "--rules", str(tmp_path), "--addr", "127.0.0.1:1", "d.yaml"])
    assert exit_info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_ruleset_prints_everything_get_ruleset_returns(
    tmp_path: Path, start_app: StartApp, capsys: pytest.CaptureFixture[str]
) -> None:
    """Identity, classifier version, a failed last reload with its error, and the candidate."""
    active = write_folder(tmp_path / "active", ruleset_files("1.0.0", "Timeout"))
    candidate = write_folder(tmp_path / "next", ruleset_files("1.1.0", "ToolTimeout"))
    running = start_app(active, candidate=candidate, watch=False)
    address = running.app.address
    capsys.readouterr()  # the start log line

    code, out, err = _out(capsys, ["ruleset", "--addr", address])
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "name:        probe"
    assert "version:     1.0.0" in lines
    assert f"classifier:  {classifier.__version__}" in lines
    assert "last reload: none since the server started" in lines
    assert lines[lines.index("candidate:") + 2] == "  version:     1.1.0"
    bundle = running.app.active.serving.bundle
    assert bundle is not None
    assert f"bundle:      {bundle.digest} (unsigned)" in lines  # built, not served: no flag
    assert "  bundle:      -" in lines  # a candidate has none

    (active / "broken.yaml").write_text("rules:\n  - id: x\n    when: {type: a.B\n")
    running.app.reload("signal")
    code, out, _ = _out(capsys, ["ruleset", "--addr", address])
    assert code == 0
    [reload_line] = [line for line in out.splitlines() if line.startswith("last reload:")]
    assert reload_line.startswith("last reload: failed at ")
    assert reload_line.endswith("(signal)")
    assert any("broken.yaml:4:1: yaml_syntax_error" in line for line in out.splitlines())
    assert "  last reload: unchanged at " in out  # the candidate's own reload

    code, out, _ = _out(capsys, ["ruleset", "--addr", address, "--format", "json"])
    data = json.loads(out)
    assert data["version"] == "1.0.0"
    assert data["classifier_version"] == classifier.__version__
    assert data["last_reload"]["result"] == "failed"
    assert "yaml_syntax_error" in data["last_reload"]["error"]
    assert data["candidate"]["version"] == "1.1.0"
    assert data["candidate"]["candidate"] is None
    assert (data["bundle_digest"], data["bundle_signed"]) == (bundle.digest, False)
    assert data["candidate"]["bundle_digest"] == ""


def test_the_client_returns_the_last_reload_and_the_candidate(
    tmp_path: Path, start_app: StartApp
) -> None:
    active = write_folder(tmp_path / "active", ruleset_files("1.0.0", "Timeout"))
    candidate = write_folder(tmp_path / "next", ruleset_files("1.1.0", "ToolTimeout"))
    running = start_app(active, candidate=candidate, watch=False)
    with Client(running.app.address) as client:
        before = client.get_ruleset()
        write_folder(candidate, ruleset_files("1.2.0", "Timeout"))
        running.app.reload("admin")
        after = client.get_ruleset()
    assert before.last_reload is None
    assert before.candidate is not None
    assert before.candidate.version == "1.1.0"
    assert after.candidate is not None
    assert after.candidate.version == "1.2.0"
    assert after.candidate.last_reload is not None
    assert after.candidate.last_reload.result is ReloadResult.reloaded
    assert after.candidate.last_reload.trigger == "admin"
    assert after.last_reload is not None
    assert after.last_reload.result is ReloadResult.unchanged
    assert (
        after.classifier_version
        == after.candidate.classifier_version
        == version(classifier.DISTRIBUTION)
    )


def test_a_class_this_classifier_does_not_know_is_not_guessed() -> None:
    """A newer server's class number has no ErrorClass here: the CLI says so (exit 2)."""
    newer = Answer(
        error_class=99,
        class_name="FromTheFuture",
        action=Action("x", "y"),
        effect=Effect.fail,
        retryable=False,
        rule_id="r",
        ruleset_version="1",
        ruleset_digest="sha256:0",
    )
    assert classification_of(newer) is None


def test_the_version_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    """`classifier --version`, `classifier.__version__`: the installed distribution's version."""
    installed = version(classifier.DISTRIBUTION)
    assert classifier.__version__ == installed
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"classifier {installed}\n"


def test_the_start_log_line_names_the_classifier_version(
    tmp_path: Path, start_app: StartApp, capsys: pytest.CaptureFixture[str]
) -> None:
    start_app(write_folder(tmp_path / "r", ruleset_files("1.0.0", "Timeout")), watch=False)
    [start] = [
        json.loads(line)
        for line in capsys.readouterr().err.splitlines()
        if line.startswith("{") and json.loads(line).get("event") == "start"
    ]
    assert start["classifier_version"] == classifier.__version__


def _subcommands() -> dict[str, str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: p.format_help() for name, p in sub.choices.items()}


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_every_help_ends_with_the_exit_status_table(name: str) -> None:
    """One table layout, one meaning per number: `N  <shared meaning>: <what it is here>`."""
    text = _subcommands()[name]
    table = text[text.index("\nexit status:\n") :].strip().splitlines()[1:]
    rows = [line for line in table if not line.startswith("     ")]
    statuses = [Exit(int(row.split()[0])) for row in rows]
    assert statuses == sorted(statuses)
    assert Exit.ok in statuses
    assert Exit.invalid in statuses  # argparse's usage error, in every command
    for status, row in zip(statuses, rows, strict=True):
        assert row.startswith(f"  {int(status)}  {EXIT_MEANINGS[status]}: ")
    entries: list[str] = []
    for line in table:
        if line.startswith("     "):
            entries[-1] += " " + line.strip()
        else:
            entries.append(line.strip())
    assert entries[statuses.index(Exit.invalid)].endswith("bad arguments")


def test_the_top_level_help_has_the_shared_table() -> None:
    text = build_parser().format_help()
    for status, meaning in EXIT_MEANINGS.items():
        assert f"  {int(status)}  {meaning}" in text


def test_ruleset_lists_the_layers_of_a_stack(
    tmp_path: Path, start_app: StartApp, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ruleset on the bundled library: both layers, top first, with their digests."""
    top = write_folder(
        tmp_path / "acme",
        {
            "ruleset.yaml": "name: acme\nversion: 2.0.0\nbase:\n  - library: default\n",
            "rules.yaml": "rules:\n  - id: acme.declined\n    when: {type: acme.Declined}\n"
            "    class: ToolError\n",
        },
    )
    running = start_app(top, watch=False)
    capsys.readouterr()
    assert main(["ruleset", "--addr", running.app.address]) == 0
    out = capsys.readouterr().out.splitlines()
    layers = out[out.index("layers:") + 1 : out.index("layers:") + 3]
    assert layers[0].startswith("  acme 2.0.0 (sha256:")
    assert layers[1].startswith("  default ")
    assert layers[1].endswith("rules")  # the library's folder
    assert main(["ruleset", "--addr", running.app.address, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [layer["name"] for layer in data["layers"]] == ["acme", "default"]


def test_a_failed_reloads_diagnostics_are_under_last_reload_not_under_layers(
    tmp_path: Path, start_app: StartApp, capsys: pytest.CaptureFixture[str]
) -> None:
    top = write_folder(
        tmp_path / "acme",
        {
            "ruleset.yaml": "name: acme\nversion: 2.0.0\nbase:\n  - library: default\n",
            "rules.yaml": "rules:\n  - id: acme.declined\n    when: {type: acme.Declined}\n"
            "    class: ToolError\n",
        },
    )
    running = start_app(top, watch=False)
    (top / "broken.yaml").write_text("rules:\n  - id: x\n    when: {type: a.B\n")
    running.app.reload("signal")
    capsys.readouterr()
    code, out, _ = _out(capsys, ["ruleset", "--addr", running.app.address])
    assert code == 0
    lines = out.splitlines()
    reload_at = next(i for i, line in enumerate(lines) if line.startswith("last reload: failed"))
    layers_at = lines.index("layers:")
    diagnostic = next(i for i, line in enumerate(lines) if "yaml_syntax_error" in line)
    assert reload_at < diagnostic < layers_at
    assert all(line.startswith("  ") for line in lines[reload_at + 1 : layers_at])


def test_given_the_wrong_kind_of_port_a_command_says_which_it_expected(
    tmp_path: Path, start_app: StartApp, capsys: pytest.CaptureFixture[str]
) -> None:
    """--addr is the gRPC port in every command; unknowns reads the admin port with
    --admin-addr. Each wrong port is exit 2 and one line naming the port expected."""
    running = start_app(write_folder(tmp_path / "rules", serving_files()), watch=False)
    assert running.app.admin is not None
    grpc_port, admin_port = running.app.address, running.app.admin.address
    descriptor = tmp_path / "d.json"
    descriptor.write_text('{"type": "x.Y"}')
    capsys.readouterr()
    expects_grpc = "not a gRPC port (it answered HTTP/1.1): --addr is the server's gRPC port"
    for argv in (
        ["ruleset", "--addr", admin_port],
        ["health", "--addr", admin_port],
        ["explain", "--addr", admin_port, str(descriptor)],
        ["classify", "--addr", admin_port, str(descriptor)],
    ):
        code, _, err = _out(capsys, argv)
        assert (code, err.strip()) == (2, f"{admin_port}: {expects_grpc} (serve --addr), not "
                                          "its admin port (serve --metrics-addr)"), argv  # fmt: skip
    code, _, err = _out(capsys, ["unknowns", "--admin-addr", grpc_port])
    assert code == 2
    assert "Traceback" not in err
    assert err.strip().endswith(
        "--admin-addr is the server's admin port (serve --metrics-addr), not its gRPC port "
        "(serve --addr)"
    )
    code, _, err = _out(capsys, ["unknowns", "--addr", admin_port])
    assert code == 2
    assert "--admin-addr HOST:PORT" in err


@pytest.mark.parametrize(
    ("argv", "explained", "want"),
    [
        (["classify", "--addr", "h:1", "d.yaml"], False, 0.25),
        (["classify", "--explain", "--addr", "h:1", "d.yaml"], True, 10.0),
        (["explain", "--addr", "h:1", "d.yaml"], True, 10.0),
        (["explain", "--addr", "h:1", "--timeout", "0.5", "d.yaml"], True, 0.5),
    ],
)
def test_an_explanation_waits_longer_than_an_answer_unless_told(
    argv: list[str], explained: bool, want: float
) -> None:
    """Without --timeout an explanation (a hundred answers' work, perhaps starting the
    explaining process) waits 10 s, an answer 0.25 s; --timeout rules either."""
    args = build_parser().parse_args(argv)
    with client_from(args, explained=explained) as client:
        assert client.timeout == want


def test_the_client_returns_the_bundle_digest_and_whether_it_is_signed(
    tmp_path: Path, start_app: StartApp
) -> None:
    from classifier.bundle.signing import generate_key, private_pem
    from classifier.server.shared.serving_bundle import BundleConfig

    rules = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    key = tmp_path / "ops.key"
    key.write_bytes(private_pem(generate_key()))
    running = start_app(rules, watch=False, bundle=BundleConfig(keys=(key,)))
    with Client(running.app.address) as client:
        info = client.get_ruleset()
    bundle = running.app.active.serving.bundle
    assert bundle is not None
    assert (info.bundle_digest, info.bundle_signed) == (bundle.digest, True)
