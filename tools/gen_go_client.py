"""Write the Go client module's stubs (clients/go/gen) from proto/ (`make go-client`, `make proto`).

The module must build with no Python next to it, so the stubs are committed:
`gen/errorclass/v1/*.pb.go`, made by `buf generate` (the dev venv's buf) with
protoc-gen-go and protoc-gen-go-grpc at the versions pinned here, installed with
`go install` into `.gotools/` (buf.gen.yaml's M options map the file to the module's
package; the proto's go_package stays as released). The module's constants (facts.go,
version.go) are the spec generator's (`make spec`, tools/spec/render_go.py).

tests/clients/test_go_module.py regenerates the stubs into a temporary folder and fails
when a committed copy drifts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULE = ROOT / "clients" / "go"
TOOLS = ROOT / ".gotools"
PLUGINS = {
    "protoc-gen-go": "google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12",
    "protoc-gen-go-grpc": "google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2",
}


def plugins() -> Path:
    """The pinned protoc plugins in .gotools/, installed with `go install` when missing."""
    for name, spec in PLUGINS.items():
        stamp = TOOLS / f"{name}.version"
        if (TOOLS / name).exists() and stamp.exists() and stamp.read_text() == spec:
            continue
        env = {**os.environ, "GOBIN": str(TOOLS)}
        subprocess.run(["go", "install", spec], check=True, env=env, timeout=600)
        stamp.write_text(spec)
    return TOOLS


def buf() -> str:
    beside = Path(sys.executable).parent / "buf"
    found = str(beside) if beside.exists() else shutil.which("buf")
    if not found:
        raise SystemExit("buf is a dev dependency (buf-bin); run `make setup`")
    return found


def stubs(out_dir: Path) -> list[Path]:
    """`buf generate` of proto/ with the module's buf.gen.yaml, into out_dir/gen."""
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PATH": f"{plugins()}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run(
        [buf(), "generate", str(ROOT / "proto"), "--template", str(MODULE / "buf.gen.yaml")],
        cwd=out_dir,
        check=True,
        env=env,
        timeout=300,
    )
    return sorted((out_dir / "gen").rglob("*.go"))


def generate(out_dir: Path) -> list[Path]:
    """Write the module's stubs under out_dir and return their paths."""
    return stubs(out_dir)


if __name__ == "__main__":
    for path in generate(Path(sys.argv[1]) if len(sys.argv) > 1 else MODULE):
        print(f"generated {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
