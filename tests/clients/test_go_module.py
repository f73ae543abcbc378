"""The Go client module (clients/go): generated files, its README's commands, a real program.

- Regenerating the buf-generated stubs (tools/gen_go_client.py) into a temporary folder
  gives the committed files byte for byte, so the module carries the proto as it is; its
  constants (facts.go, version.go) are rendered from clients/spec/facts.json by
  tools/spec/render_go.py, whose drift test is tests/clients/test_spec.py, and the
  rendered text is as gofmt writes it.
- The README's blocks run as written in a new module outside the repository (a
  `replace` to clients/go, then `go get` of the version): the program times a real
  `http.Client` out against a loopback server that never answers, describes the error
  with errorclass.Describe, and a running server answers Timeout; a second program's
  descriptor without a type comes back as a DescriptorError naming `descriptor.type`;
  the bundle evaluator's program loads the bundle that `classifier bundle build` and
  `sign` made, verified with the operator's public key, and answers the same failure
  in process as the server did, and refuses the bundle once a byte of it changed.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from classifier.server import GrpcServer
from tests.conformance.go_drivers import go_environment
from tests.support import ROOT
from tools import gen_go_client
from tools.spec import render_go
from tools.spec.facts import facts, version

MODULE = ROOT / "clients" / "go"
README = MODULE / "README.md"
GO_LIMIT_S = 600

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="go is not on PATH")


def blocks(kind: str) -> list[str]:
    """The README's code blocks marked `<!-- run: kind -->`."""
    return re.findall(rf"<!-- run: {kind} -->\n```\w+\n(.*?)```", README.read_text(), re.S)


def test_regenerating_the_stubs_gives_the_committed_files(tmp_path: Path) -> None:
    written = gen_go_client.generate(tmp_path)
    assert written
    for path in written:
        relative = path.relative_to(tmp_path)
        committed = MODULE / relative
        assert committed.exists(), f"{relative} is generated but not committed (make go-client)"
        assert path.read_bytes() == committed.read_bytes(), (
            f"{relative} drifted: run make go-client"
        )
    generated = {p.relative_to(tmp_path) for p in written}
    committed_stubs = {p.relative_to(MODULE) for p in (MODULE / "gen").rglob("*.go")}
    assert committed_stubs <= generated, committed_stubs - generated


def test_the_rendered_constants_are_as_gofmt_writes_them(tmp_path: Path) -> None:
    """`make spec` needs no Go, so render_go writes gofmt's layout itself: gofmt keeps it."""
    rendered = render_go.render(facts())
    assert {p.name for p in rendered} == {"facts.go", "version.go"}
    for path, text in rendered.items():
        (tmp_path / path.name).write_text(text, encoding="utf-8")
    done = subprocess.run(
        ["gofmt", "-l", str(tmp_path)], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == "", f"gofmt would change {done.stdout}"


def test_the_module_is_versioned_with_the_python_package() -> None:
    assert f'const Version = "{version()}"' in (MODULE / "version.go").read_text()
    assert f"clients/go@v{version()}" in README.read_text()


@pytest.fixture
def never_answers() -> Iterator[str]:
    """A loopback URL whose server accepts the connection and never answers."""
    with socket.create_server(("127.0.0.1", 0), backlog=8) as listener:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1/chat/completions"


def run(command: str, cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        command,
        shell=True,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=GO_LIMIT_S,
        env=env,
        check=False,
    )
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_a_program_outside_the_repository_gets_timeout_from_the_server(
    tmp_path: Path, server: GrpcServer, never_answers: str
) -> None:
    (shell,) = blocks("sh")
    (program,) = blocks("go")
    app = tmp_path / "app"
    app.mkdir()
    env = {**go_environment(), "GOFLAGS": "-mod=mod"}  # the new module writes its own go.sum
    run("go mod init example.com/app", app, env)
    for line in shell.strip().splitlines():
        run(line.replace("../classifier/clients/go", str(MODULE)), app, env)
    (app / "main.go").write_text(program)
    env.update(CLASSIFIER_ADDR=f"127.0.0.1:{server.port}", SLOW_URL=never_answers)
    served = run("go run .", app, env).strip()
    assert served == "Timeout 7 RUN_EFFECT_FAIL", served
    (app / "refused").mkdir()
    (app / "refused" / "main.go").write_text(REFUSED)
    out = run("go run ./refused", app, env)
    assert out.strip() == "descriptor.type: must not be empty", out

    (bundle_program,) = blocks("go-bundle")
    keys = tmp_path / "keys"
    keys.mkdir()
    bundle = tmp_path / "rules.bundle.json"
    for command in (
        ["build", "-o", str(bundle)],
        ["keygen", "-o", str(keys / "ops")],
        ["sign", "--key", str(keys / "ops.key"), str(bundle)],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "classifier", "bundle", *command],
            capture_output=True,
            text=True,
            timeout=GO_LIMIT_S,
            check=False,
        )
        assert done.returncode == 0, f"{command}: {done.stderr}"
    (app / "bundle").mkdir()
    (app / "bundle" / "main.go").write_text(bundle_program)
    env.update(BUNDLE=str(bundle), BUNDLE_KEY=str(keys / "ops.pub"))
    out = run("go run ./bundle", app, env)
    assert out.strip() == f"{served} true true", out  # the server's answer, local, same digest
    data = bytearray(bundle.read_bytes())
    data[len(data) // 2] ^= 1
    bundle.write_bytes(bytes(data))
    out = run("go run ./bundle", app, env)
    assert out.strip() == "refused bad_signature", out


REFUSED = """package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	errorclass "github.com/errorclass/classifier/clients/go"
	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// A descriptor with no type: the real server answers INVALID_ARGUMENT naming the field.
func main() {
	client, err := errorclass.NewClient(os.Getenv("CLASSIFIER_ADDR"), errorclass.WithTimeout(10*time.Second))
	if err != nil {
		panic(err)
	}
	defer client.Close()
	_, err = client.ClassifyDescriptor(context.Background(), &errorclassv1.ExceptionDescriptor{Language: "go"})
	var refused *errorclass.DescriptorError
	if !errors.As(err, &refused) {
		panic(fmt.Sprint("not a DescriptorError: ", err))
	}
	for _, v := range refused.Violations {
		fmt.Printf("%s: %s\\n", v.Field, v.Description)
	}
}
"""
