"""`classifier ruleset`: what a running server serves, as GetRuleset says it.

The serving ruleset (name, version, digest, rule count, load time, source,
description), the classifier version serving it, its bundle's digest and
whether it is signed, its layers when it builds on others, the last reload
(and why it failed), and the candidate shadowing it with its own last reload.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import TYPE_CHECKING, Any

from classifier.cli.options import Exit, add_command, add_server, client_from, server_failure

if TYPE_CHECKING:
    from errorclass_client import RulesetInfo

EXITS = {
    Exit.ok: "the server described its ruleset",
    Exit.invalid: "the server cannot be reached or refused the call, or unusable TLS files",
}


def add_parser(sub: Any) -> None:
    p = add_command(
        sub,
        "ruleset",
        help="show the ruleset a running server serves, its last reload and its candidate",
        description="Ask a running server (GetRuleset) which ruleset answers: name, version, "
        "digest, rule count, when and where it was loaded, the classifier version serving "
        "it, its bundle (GetBundle's digest, signed or not), the last reload and, with "
        "`serve --candidate`, the shadow ruleset.",
        exits=EXITS,
    )
    add_server(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from errorclass_client import ServiceError  # gRPC when it calls, not to parse

    try:
        with client_from(args) as client:
            info = client.get_ruleset()
    except ServiceError as exc:
        print(server_failure(args.addr, str(exc)), file=sys.stderr)
        return Exit.invalid
    except (OSError, ValueError) as exc:
        print(f"classifier: {exc}", file=sys.stderr)
        return Exit.invalid
    if args.format == "json":
        print(json.dumps(dataclasses.asdict(info), indent=2, ensure_ascii=False))
    else:
        print(render(info))
    return Exit.ok


def render(info: RulesetInfo, indent: str = "") -> str:
    """Every field, one a line; the last reload's errors and the candidate indented below."""
    rows = [
        ("name", info.name),
        ("version", info.version),
        ("digest", info.digest),
        ("rules", str(info.rule_count)),
        ("loaded at", info.loaded_at),
        ("source", info.source),
        ("description", info.description or "-"),
        ("classifier", info.classifier_version or "-"),
        ("bundle", _bundle(info)),
    ]
    reload = info.last_reload
    if reload is None:
        rows.append(("last reload", "none since the server started"))
    else:
        rows.append(("last reload", f"{reload.result.value} at {reload.at} ({reload.trigger})"))
    lines = [f"{indent}{label + ':':<13}{value}" for label, value in rows]
    if reload is not None and reload.error:  # under `last reload:`, the row just above
        lines += [f"{indent}  {line}" for line in reload.error.splitlines()]
    if len(info.layers) > 1:  # a ruleset of its own is its one layer, said above
        lines.append(f"{indent}layers:")
        lines += [
            f"{indent}  {layer.name} {layer.version} ({layer.digest[:19]}) {layer.source}"
            for layer in info.layers
        ]
    if info.candidate is None:
        lines.append(f"{indent}{'candidate:':<13}none")
    else:
        lines.append(f"{indent}candidate:")
        lines.append(render(info.candidate, indent + "  "))
    return "\n".join(lines)


def _bundle(info: RulesetInfo) -> str:
    """The bundle's digest and whether it is signed ("-" where none is built: a candidate,
    or a server older than bundles)."""
    if not info.bundle_digest:
        return "-"
    return f"{info.bundle_digest} ({'signed' if info.bundle_signed else 'unsigned'})"
