"""`classifier explain`: why a descriptor gets its class, for a rule author at a terminal.

The same explanation the gRPC `explain` flag returns: the engine run with a
tracer. `--rule ID` adds why that rule did or did not decide the descriptor:
which of its conditions held and failed (with the descriptor's values), or the
precedence step it lost and to whom, whatever the answer was. `--addr` asks a
running server instead of loading rules (its `Classify` with `explain`, and
`explain_rule`), which prints the same text for the rules it serves.

Exit status: 0 with an answer (Unknown included), 1 when the ruleset is
invalid or the server cannot answer, 2 when the descriptor is invalid or the
rule does not exist.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format

from classifier._proto.errorclass.v1 import classifier_pb2 as pb
from classifier._proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from classifier.answer import classification_dict
from classifier.cli import health
from classifier.cli.inputs import EXIT_BAD_DESCRIPTOR, EXIT_BAD_RULESET, ruleset_and_descriptor
from classifier.client.wire import descriptor_to_proto
from classifier.engine.explain import explain, explain_rule, render_explanation, render_verdict
from classifier.errors import DescriptorError
from classifier.source.descriptor_file import descriptor_dict, read_descriptor


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "explain",
        help="show which rules matched a descriptor and why the winner won",
        description="Classify one descriptor (YAML or JSON) and explain the answer: the "
        "normalised descriptor, every rule that matched with the conditions that held, the "
        "precedence step that decided, and for Unknown the rules that came closest. With "
        "--rule, also why that rule did not decide it (or did).",
    )
    p.add_argument("--rules", default="rules", help="ruleset folder (default: rules)")
    p.add_argument(
        "--rule",
        metavar="ID",
        help="say why this rule did or did not decide the descriptor: the conditions that "
        "held and failed, or the precedence step it lost and to whom",
    )
    p.add_argument(
        "--addr",
        metavar="HOST:PORT",
        help="ask the server at HOST:PORT (its serving rules) instead of loading --rules",
    )
    p.add_argument("--tls-ca", type=Path, metavar="PEM", help="with --addr: TLS, trusting this CA")
    p.add_argument("--tls-cert", type=Path, metavar="PEM", help="with --addr: client certificate")
    p.add_argument("--tls-key", type=Path, metavar="PEM", help="with --addr: client key")
    p.add_argument("--timeout", type=float, default=10.0, help=argparse.SUPPRESS)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("descriptor", metavar="FILE", help="descriptor file, or - for stdin")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.addr:
        return _remote(args)
    loaded = ruleset_and_descriptor(args.rules, args.descriptor)
    if isinstance(loaded, int):
        return loaded
    ruleset, descriptor = loaded
    verdict = None
    if args.rule:
        try:
            result, verdict = explain_rule(ruleset, descriptor, args.rule)
        except KeyError:
            print(
                f"classifier explain: {ruleset.name} {ruleset.version} has no rule {args.rule!r}",
                file=sys.stderr,
            )
            return EXIT_BAD_DESCRIPTOR
    else:
        result = explain(ruleset, descriptor)
    if args.format == "json":
        out = {"descriptor": descriptor_dict(descriptor), **classification_dict(result)}
        if verdict is not None:
            out["rule_verdict"] = dataclasses.asdict(verdict)
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    text = render_explanation(descriptor, result)
    if verdict is not None:
        text += "\n\n" + "\n".join(render_verdict(verdict))
    print(text)
    return 0


def _remote(args: argparse.Namespace) -> int:
    """The server's own explanation text (and verdict), for the rules it serves."""
    try:
        descriptor = read_descriptor(args.descriptor)
    except DescriptorError as exc:
        for violation in exc.violations:
            print(violation, file=sys.stderr)
        return EXIT_BAD_DESCRIPTOR
    except OSError as exc:
        print(f"classifier: {exc}", file=sys.stderr)
        return EXIT_BAD_DESCRIPTOR
    request = pb.ClassifyRequest(
        descriptor=descriptor_to_proto(descriptor), explain=True, explain_rule=args.rule or ""
    )
    try:
        with health.channel(args) as ch:
            reply = pb_grpc.ErrorClassifierStub(ch).Classify(request, timeout=args.timeout)
    except grpc.RpcError as exc:
        print(f"{args.addr}: {exc.code().name}: {exc.details()}", file=sys.stderr)
        bad = exc.code() is grpc.StatusCode.INVALID_ARGUMENT
        return EXIT_BAD_DESCRIPTOR if bad else EXIT_BAD_RULESET
    except (OSError, ValueError) as exc:
        print(f"classifier: {exc}", file=sys.stderr)
        return EXIT_BAD_RULESET
    if args.format == "json":
        print(json.dumps(json_format.MessageToDict(reply), indent=2, ensure_ascii=False))
        return 0
    print(reply.explanation.text)
    return 0
