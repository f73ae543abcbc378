"""What `classify` and `explain` share: one descriptor file, answered in process under
`--rules` or by a running server at `--addr`, the same answer either way."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from classifier.answer import Classification, RuleVerdict
from classifier.cli.options import Exit, add_rules, add_server, client_from, server_failure
from classifier.descriptor import Descriptor
from classifier.errors import DescriptorError, RulesetError

EXITS = {
    Exit.ok: "an answer, Unknown included",
    Exit.failed: "the --rules folder has errors",
    Exit.invalid: "the descriptor is malformed or unreadable, or the server at --addr "
    "cannot be reached or refused the call",
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`--rules DIR` or `--addr HOST:PORT` (with TLS), and the descriptor FILE."""
    where = p.add_mutually_exclusive_group()
    add_rules(where, what="answer in process with this ruleset folder")
    add_server(
        p,
        address=None,
        timeout=None,
        addr_help="ask the server at this address instead",
        addr_group=where,
    )
    p.add_argument(
        "descriptor", metavar="FILE", help="descriptor file (YAML or JSON), or - for stdin"
    )


@dataclass(frozen=True)
class Answered:
    descriptor: Descriptor
    result: Classification
    explanation_text: str = ""
    """With an explanation: its text (the server's own rendering when it came from one)."""
    verdict: RuleVerdict | None = None
    """With `--rule`, in process: why that rule did or did not decide."""


def answer(args: argparse.Namespace, *, explained: bool, rule: str | None = None) -> Answered | int:
    """The answer for the descriptor file, or the exit status after printing to stderr why
    there is none (a ruleset that does not load is reported before the descriptor is read)."""
    from classifier.engine.compiler import load_ruleset  # when it runs: parsing needs none
    from classifier.engine.evaluate import classify
    from classifier.engine.explain import explained_text
    from classifier.source.descriptor_file import read_descriptor

    ruleset = None
    if args.addr is None:
        try:
            ruleset = load_ruleset(args.rules)
        except RulesetError as exc:
            print(exc.render(), file=sys.stderr)
            return Exit.failed
    try:
        descriptor = read_descriptor(args.descriptor)
    except DescriptorError as exc:
        for violation in exc.violations:
            where = "" if violation.location is not None else f"{args.descriptor}: "
            print(f"{where}{violation}", file=sys.stderr)
        return Exit.invalid
    except OSError as exc:
        print(f"classifier: {exc}", file=sys.stderr)
        return Exit.invalid
    if ruleset is None:
        return _remote(args, descriptor, explained, rule)
    if not explained:
        return Answered(descriptor, classify(ruleset, descriptor))
    try:
        result, verdict, text = explained_text(ruleset, descriptor, rule or "")
    except KeyError:
        print(f"classifier explain: {ruleset.no_rule(rule or '')}", file=sys.stderr)
        return Exit.invalid
    return Answered(descriptor, result, text, verdict)


def _remote(
    args: argparse.Namespace, descriptor: Descriptor, explained: bool, rule: str | None = None
) -> Answered | int:
    from classifier.client.convert import classification_of  # when it runs: parsing needs none
    from errorclass_client import DescriptorError as RefusedError
    from errorclass_client import ServiceError

    try:
        with client_from(args, explained=explained) as client:
            reply = client.classify(descriptor, explain=explained, explain_rule=rule or "")
    except RefusedError as exc:
        for violation in exc.violations:
            print(f"{args.addr}: refused: {violation}", file=sys.stderr)
        return Exit.invalid
    except ServiceError as exc:
        print(server_failure(args.addr, str(exc)), file=sys.stderr)
        return Exit.invalid
    except (OSError, ValueError) as exc:
        print(f"classifier: {exc}", file=sys.stderr)
        return Exit.invalid
    result = classification_of(reply)
    if result is None:
        print(
            f"{args.addr}: answered class {reply.class_name} ({reply.class_number}), which this "
            "classifier does not know: the server runs a newer taxonomy; upgrade this one",
            file=sys.stderr,
        )
        return Exit.invalid
    return Answered(descriptor, result, reply.explanation_text)
