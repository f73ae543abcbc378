"""Diagnostics rendered for people (text), tools (JSON) and CI (GitHub annotations).

What `classifier check` prints about a ruleset's findings. All three take the same
sorted list, so a finding reads the same wherever it shows up. The GitHub form follows
the workflow-command syntax (`::warning file=…,line=…,col=…,title=…::message`), which a
pull request shows inline on the line it names.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from classifier.errors import Diagnostic, Severity
from classifier.text import github_annotation


def diagnostic_dict(d: Diagnostic) -> dict[str, Any]:
    """One diagnostic as plain data; the witness is a descriptor in the descriptor-file shape."""
    out: dict[str, Any] = {
        "file": d.location.file,
        "line": d.location.line,
        "column": d.location.column,
        "severity": d.severity.value,
        "code": d.code,
        "message": d.message,
        "rule": d.rule_id,
        "related": [str(loc) for loc in d.related],
    }
    if d.witness:
        out["witness"] = json.loads(d.witness)
    return out


def render_text(diagnostics: Sequence[Diagnostic]) -> str:
    return "\n".join(d.render() for d in diagnostics)


def render_json(diagnostics: Sequence[Diagnostic], summary: dict[str, Any]) -> str:
    return json.dumps(
        {**summary, "diagnostics": [diagnostic_dict(d) for d in diagnostics]},
        indent=2,
        ensure_ascii=False,
    )


def render_github(diagnostics: Sequence[Diagnostic]) -> str:
    return "\n".join(_annotation(d) for d in diagnostics)


def _annotation(d: Diagnostic) -> str:
    kind = "error" if d.severity is Severity.error else "warning"
    message = d.message + (f' (rule "{d.rule_id}")' if d.rule_id else "")
    if d.witness:
        message += f"\nwitness: {d.witness}"
    return github_annotation(kind, d.location, d.code, message)
