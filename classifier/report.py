"""Diagnostics rendered for people (text), tools (JSON) and CI (GitHub annotations).

All three take the same sorted list, so a finding reads the same wherever it
shows up. The GitHub form follows the workflow-command syntax
(`::warning file=…,line=…,col=…,title=…::message`), which a pull request
shows inline on the line it names.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from classifier.errors import Diagnostic, Severity


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
    loc = d.location
    props = ",".join(
        f"{key}={_escape_property(str(value))}"
        for key, value in (
            ("file", loc.file),
            ("line", loc.line),
            ("col", loc.column),
            ("title", d.code),
        )
    )
    message = d.message + (f' (rule "{d.rule_id}")' if d.rule_id else "")
    if d.witness:
        message += f"\nwitness: {d.witness}"
    return f"::{kind} {props}::{_escape_data(message)}"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")
