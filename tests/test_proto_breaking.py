"""The wire contract only grows: `buf breaking` against the last released proto.

`proto/released/errorclass-v1.binpb` is a buf image of the proto as last
released (`make proto-baseline` rewrites it, at a release and only then).
A renumbered or removed class, or a field whose number or type changes,
fails here before any client sees it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

PROTO = ROOT / "proto"
BASELINE = PROTO / "released" / "errorclass-v1.binpb"
CONTRACT = Path("errorclass") / "v1" / "classifier.proto"


def _buf() -> str:
    beside = Path(sys.executable).parent / "buf"
    found = str(beside) if beside.exists() else shutil.which("buf")
    assert found, "buf is a dev dependency (buf-bin); run `make setup`"
    return found


def _breaking(module: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_buf(), "breaking", str(module), "--against", str(BASELINE)],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture
def proto_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "proto"
    shutil.copytree(PROTO, copy, ignore=shutil.ignore_patterns("released"))
    return copy


def _edit(module: Path, old: str, new: str) -> None:
    path = module / CONTRACT
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_the_proto_is_compatible_with_the_last_release() -> None:
    run = _breaking(PROTO)
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_renumbered_or_removed_class_is_caught(proto_copy: Path) -> None:
    _edit(proto_copy, "RUN_ERROR_CLASS_TIMEOUT = 7;", "RUN_ERROR_CLASS_TIMEOUT = 70;")
    _edit(proto_copy, "RUN_ERROR_CLASS_TOOL_TIMEOUT = 13;", "")
    run = _breaking(proto_copy)
    assert run.returncode != 0
    assert 'enum value "7" on enum "RunErrorClass" was deleted' in run.stdout
    assert 'enum value "13" on enum "RunErrorClass" was deleted' in run.stdout


def test_a_removed_class_is_caught_even_when_reserved(proto_copy: Path) -> None:
    """Reserving the number does not make a class disappearing acceptable."""
    _edit(
        proto_copy,
        "RUN_ERROR_CLASS_TOOL_TIMEOUT = 13;",
        'reserved 13;\n  reserved "RUN_ERROR_CLASS_TOOL_TIMEOUT";',
    )
    run = _breaking(proto_copy)
    assert run.returncode != 0
    assert 'enum value "13" on enum "RunErrorClass" was deleted' in run.stdout


def test_a_changed_field_number_is_caught(proto_copy: Path) -> None:
    _edit(proto_copy, "RunErrorClass error_class = 1;", "RunErrorClass error_class = 21;")
    run = _breaking(proto_copy)
    assert run.returncode != 0
    assert (
        'field "1" with name "error_class" on message "ClassifyResponse" was deleted' in run.stdout
    )
