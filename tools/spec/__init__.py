"""The one generator of what the client packages share (`make spec`).

`clients/spec/facts.json` is written from the sources of truth (`classifier/limits.py`,
`classifier/taxonomy.py`, `classifier/contract.py`, the proto), the generated vector
files of `clients/spec/vectors/` from the service's own code (the service is the oracle),
and each language's rendered constants from facts.json by its renderer
(`tools/spec/render_<language>.py`). tests/clients/test_spec.py regenerates all of it
into a temporary folder and fails on any difference with what is committed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tools.spec import render_go, render_java, render_node, render_python
from tools.spec.bundle_vectors import bundle_files
from tools.spec.facts import SPEC, facts
from tools.spec.vectors import GENERATED

RENDERERS: tuple[Callable[[dict[str, Any]], dict[Path, str]], ...] = (
    render_python.render,
    render_node.render,
    render_java.render,
    render_go.render,
)
"""Each language's renderer: facts.json -> its files (relative to the repository) and text."""


def to_json(data: Any) -> str:
    """The spec's one JSON spelling: two-space indent, ASCII (lone surrogates escaped)."""
    return json.dumps(data, indent=2, ensure_ascii=True) + "\n"


def files() -> dict[Path, str]:
    """Every generated file, relative to the repository, with its text."""
    the_facts = facts()
    out: dict[Path, str] = {SPEC / "facts.json": to_json(the_facts)}
    for name, make in GENERATED.items():
        made = make()
        out[SPEC / "vectors" / name] = made if isinstance(made, str) else to_json(made)
    out.update(bundle_files())
    for render in RENDERERS:
        out.update(render(the_facts))
    return out


def generate(root: Path) -> list[Path]:
    """Write every generated file under root; return their paths."""
    written = []
    for relative, text in files().items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
