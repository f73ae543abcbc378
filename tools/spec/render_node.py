"""The node client's constants, rendered from clients/spec/facts.json.

The Node package (clients/node) must work once packed and installed, with no repository
next to it, so it ships in clients/node/generated/ everything it reads at run time:

- `facts.json`: clients/spec/facts.json as it is (limits, origins, gRPC names, the
  whitespace set, the runtime facts, the finish reasons and their messages, the defaults
  and the service config). The JavaScript spells none of these by hand.
- `descriptor.schema.json`: classifier/schemas/descriptor.schema.json (the keys and value
  types of a descriptor file, from the model the Python side validates with), so the
  package refuses a misspelt key as `classifier classify` does.
- `proto/errorclass/v1/classifier.proto`: the contract, loaded at run time by
  @grpc/proto-loader (no generated stubs).
- `proto/google/rpc/status.proto` and `error_details.proto`: google.rpc.Status and
  BadRequest, with which the client reads the fields a server's INVALID_ARGUMENT names
  (the `grpc-status-details-bin` trailer). Copied from the googleapis-common-protos
  package pinned in constraints.txt (the one the service's grpcio-status uses, in the dev
  venv), so the copy changes only when that pin does.

Every file is committed (packing needs no Python); the drift test regenerates them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google.rpc import status_pb2

from classifier.cli.schema import FOLDER as SCHEMA_FOLDER
from classifier.cli.schema import file_name
from tools.spec.facts import ROOT

PACKAGE = Path("clients") / "node"
"""The package's folder, relative to the repository."""
OUT = PACKAGE / "generated"
PROTO = Path("proto") / "errorclass" / "v1" / "classifier.proto"
SCHEMA = file_name("descriptor")
GOOGLE_RPC = Path("google") / "rpc"
GOOGLE_RPC_PROTOS = ("status.proto", "error_details.proto")
"""google.rpc's protos the package reads a refusal's details with."""


def render(facts: dict[str, Any]) -> dict[Path, str]:
    """The node client's generated files (relative to the repository) and their text."""
    from tools.spec import to_json  # the spec's one JSON spelling (tools.spec imports us)

    return {
        OUT / "facts.json": to_json(facts),
        OUT / SCHEMA: (SCHEMA_FOLDER / SCHEMA).read_text(encoding="utf-8"),
        OUT / PROTO: (ROOT / PROTO).read_text(encoding="utf-8"),
        **{OUT / "proto" / GOOGLE_RPC / name: _google_rpc(name) for name in GOOGLE_RPC_PROTOS},
    }


def _google_rpc(name: str) -> str:
    """A google/rpc proto as the installed googleapis-common-protos ships it."""
    return (Path(status_pb2.__file__).parent / name).read_text(encoding="utf-8")
