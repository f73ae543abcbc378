"""clients/spec: regenerating it (and every language's rendered constants) gives what is
committed, and every vector file has the shape clients/spec/README.md gives it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tools.spec import files, generate
from tools.spec.facts import ROOT, SPEC
from tools.spec.vectors import KINDS

VECTORS = ROOT / SPEC / "vectors"


def test_regenerating_gives_the_committed_files(tmp_path: Path) -> None:
    """`make spec` was run after the last change to a source of truth or a renderer."""
    written = generate(tmp_path)
    assert written
    for path in written:
        relative = path.relative_to(tmp_path)
        committed = ROOT / relative
        assert committed.exists(), f"{relative} is generated but not committed (make spec)"
        assert path.read_bytes() == committed.read_bytes(), f"{relative} drifted: run make spec"


def vector_files() -> list[Path]:
    return sorted(VECTORS.glob("*.json"))


def test_every_kind_has_its_file_and_every_file_a_known_kind() -> None:
    """A file is named for its kind, `KIND.json`, or `KIND.PART.json` when a kind's vectors
    are split (the bundle vectors: ten thousand in one file would be hard to read)."""
    assert {p.name.split(".")[0] for p in vector_files()} == set(KINDS)


@pytest.mark.parametrize("path", vector_files(), ids=lambda p: p.name)
def test_a_vector_file_has_the_documented_shape(path: Path) -> None:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    assert data["kind"] == path.name.split(".")[0]
    vectors = data["vectors"]
    assert vectors, "a vector file holds vectors"
    names = [v["name"] for v in vectors]
    assert len(names) == len(set(names)), "names are unique in a file"
    for v in vectors:
        assert set(v) == {"name", "note", "input", "want"}, v["name"]
        assert v["note"].strip(), v["name"]
        assert isinstance(v["input"], dict), v["name"]
        assert isinstance(v["want"], dict), v["name"]


def test_generated_vector_files_say_so() -> None:
    generated = {p.parts[-1] for p in files() if p.parent == SPEC / "vectors"}
    for path in vector_files():
        comment = json.loads(path.read_text(encoding="utf-8"))["$comment"]
        assert comment.startswith("Generated") == (path.name in generated), path.name
