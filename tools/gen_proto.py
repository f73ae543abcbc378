"""Generate the Python protobuf and gRPC modules from proto/, into the client package.

The one copy lives in the client's distribution (`errorclass_client.proto`, under
clients/python), and the server imports it from there: two copies would register
`errorclass/v1/classifier.proto` twice in protobuf's default pool, which fails in a
process that loads both (the server loads the client for its remote commands).

The generated modules are committed so that a plain `pip install` works
without grpcio-tools; `tests/test_proto_stubs.py` regenerates them into a
temporary folder and fails when the committed copies drift from the proto.
grpcio-tools writes absolute imports (`from errorclass.v1 import ...`), so
the gRPC module's import is rewritten to point inside the package.
"""

from __future__ import annotations

import sys
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PROTO_FILES = ("errorclass/v1/classifier.proto",)
OUT = ROOT / "clients" / "python" / "errorclass_client" / "proto"
PACKAGE = "errorclass_client.proto"


def generate(out_dir: Path) -> list[Path]:
    """Write the generated modules under out_dir and return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    include = str(Path(protoc.__file__).parent / "_proto")
    args = [
        "grpc_tools.protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        *PROTO_FILES,
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    written: list[Path] = []
    for proto in PROTO_FILES:
        pkg_dir = out_dir / Path(proto).parent
        for parent in [
            out_dir,
            *[out_dir / p for p in Path(proto).parent.parents if str(p) != "."],
        ]:
            (parent / "__init__.py").touch()
        (pkg_dir / "__init__.py").touch()
        stem = Path(proto).stem
        grpc_file = pkg_dir / f"{stem}_pb2_grpc.py"
        module = str(Path(proto).parent).replace("/", ".")
        text = grpc_file.read_text()
        text = text.replace(f"from {module} import", f"from {PACKAGE}.{module} import")
        grpc_file.write_text(text)
        written += [pkg_dir / f"{stem}_pb2.py", pkg_dir / f"{stem}_pb2.pyi", grpc_file]
    return written


if __name__ == "__main__":
    for path in generate(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT):
        print(f"generated {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
