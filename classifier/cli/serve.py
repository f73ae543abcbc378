"""`classifier serve`: run the gRPC service on a ruleset, reloading it as it changes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from classifier import limits
from classifier.cli.options import Exit, add_command, add_rules
from classifier.defaults import (
    DEFAULT_ADDRESS,
    DEFAULT_DECISION_LOG_BACKUPS,
    DEFAULT_DECISION_LOG_MAX_BYTES,
    DEFAULT_DECISION_LOG_QUEUE_BYTES,
    DEFAULT_GRACE_SECONDS,
    DEFAULT_MAX_CONCURRENT_RPCS,
    DEFAULT_MAX_STREAMS,
    DEFAULT_MAX_STREAMS_PER_CONNECTION,
    DEFAULT_SHADOW_EXAMPLES,
    DEFAULT_STREAM_IDLE_SECONDS,
    DEFAULT_STREAM_MAX_AGE_SECONDS,
    DEFAULT_THREADS,
    DEFAULT_UNKNOWN_SAMPLE_BYTES,
)

if TYPE_CHECKING:
    from classifier.server import ServeConfig

EXITS = {
    Exit.ok: "stopped by SIGTERM or SIGINT after in-flight calls finished",
    Exit.failed: "cannot serve: the rules (or the candidate) do not load, a port or "
    "file cannot be opened, or the bundle cannot be signed as told (a bad --bundle-key, "
    "a --bundle-signatures file made for another bundle)",
}


def add_parser(sub: Any) -> None:
    p = add_command(
        sub,
        "serve",
        help="serve the classifier over gRPC",
        description="Serve the classifier over gRPC. The rules folder is watched and "
        "reloaded when it changes (also on SIGHUP); a change that does not load keeps "
        "the old rules serving. SIGTERM stops after in-flight calls finish.",
        exits=EXITS,
    )
    add_rules(p, what="the ruleset folder to serve")
    p.add_argument(
        "--addr", default=DEFAULT_ADDRESS, help=f"listen address (default: {DEFAULT_ADDRESS})"
    )
    p.add_argument(
        "--threads",
        type=int,
        default=DEFAULT_THREADS,
        help="worker threads for unary calls; streams, health checks and reflection have "
        f"threads of their own (default: {DEFAULT_THREADS})",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="server processes sharing the port (SO_REUSEPORT), one per core; "
        "needs a fixed port (default: 1)",
    )
    p.add_argument(
        "--grace",
        type=float,
        default=DEFAULT_GRACE_SECONDS,
        help=f"seconds in-flight calls get on shutdown (default: {DEFAULT_GRACE_SECONDS:g})",
    )

    reload = p.add_argument_group("reload")
    reload.add_argument(
        "--no-watch",
        dest="watch",
        action="store_false",
        help="do not watch the rules folders (reload on SIGHUP or the endpoint only)",
    )
    reload.add_argument(
        "--strict",
        action="store_true",
        help="lint warnings are errors: such rules neither start nor reload",
    )
    reload.add_argument(
        "--candidate",
        type=Path,
        metavar="DIR",
        help="shadow ruleset: classify every request under it too, answer with --rules "
        "only, and count where they disagree",
    )
    reload.add_argument(
        "--shadow-examples",
        type=int,
        default=DEFAULT_SHADOW_EXAMPLES,
        metavar="N",
        help="log at most N examples of each kind of disagreement "
        f"(default: {DEFAULT_SHADOW_EXAMPLES})",
    )

    observe = p.add_argument_group("observability")
    observe.add_argument(
        "--metrics-addr",
        metavar="HOST:PORT",
        help="serve /metrics, /-/healthy, /-/ready, /-/unknowns and the operator console "
        "(/console) over HTTP here (default: off)",
    )
    observe.add_argument(
        "--no-console",
        dest="console",
        action="store_false",
        help="do not serve the operator console (GET /console) on --metrics-addr",
    )
    observe.add_argument(
        "--enable-reload-endpoint",
        action="store_true",
        help="also accept POST /-/reload on --metrics-addr",
    )
    observe.add_argument(
        "--decision-log",
        type=Path,
        metavar="FILE",
        help="write one JSON line per answer here, for `classifier diff` (default: off)",
    )
    observe.add_argument(
        "--decision-log-unknown-only",
        action="store_true",
        help="log only Unknown answers: what no rule covers yet",
    )
    observe.add_argument(
        "--decision-log-max-bytes",
        type=int,
        default=DEFAULT_DECISION_LOG_MAX_BYTES,
        metavar="N",
        help=f"rotate the decision log at N bytes (default: {DEFAULT_DECISION_LOG_MAX_BYTES})",
    )
    observe.add_argument(
        "--decision-log-backups",
        type=int,
        default=DEFAULT_DECISION_LOG_BACKUPS,
        metavar="N",
        help="rotated files kept, d.1.jsonl .. d.N.jsonl for d.jsonl "
        f"(default: {DEFAULT_DECISION_LOG_BACKUPS})",
    )

    observe.add_argument(
        "--unknown-sample-bytes",
        type=int,
        default=DEFAULT_UNKNOWN_SAMPLE_BYTES,
        metavar="N",
        help="keep the newest redacted Unknown per failure in at most N bytes, served as "
        "GET /-/unknowns on --metrics-addr; 0 turns it off "
        f"(default: {DEFAULT_UNKNOWN_SAMPLE_BYTES})",
    )
    observe.add_argument(
        "--decision-log-queue-bytes",
        type=int,
        default=DEFAULT_DECISION_LOG_QUEUE_BYTES,
        metavar="N",
        help="bytes of lines waiting for a slow disk; past it lines are dropped and counted "
        f"(default: {DEFAULT_DECISION_LOG_QUEUE_BYTES})",
    )
    observe.add_argument(
        "--redact-pattern",
        action="append",
        default=[],
        metavar="NAME=RE2",
        help="also mask matches of this RE2 pattern in what is written (decision log, shadow "
        "examples), after the built-in masks; repeatable",
    )

    bundle = p.add_argument_group(
        "bundle",
        "GetBundle serves the ruleset as a bundle (docs/bundles.md) that clients\n"
        "evaluate in process, built and signed each time a ruleset starts serving.\n"
        "Say how it is signed with one of --bundle-key, --bundle-signatures or\n"
        "--unsigned-bundle; with none, GetBundle answers FAILED_PRECONDITION.",
    )
    bundle.add_argument(
        "--bundle-key",
        type=Path,
        action="append",
        default=[],
        metavar="PEM",
        help="sign each bundle with this Ed25519 private key (PKCS#8 PEM, `classifier bundle "
        "keygen`); repeat to sign with several, for a rotation",
    )
    bundle.add_argument(
        "--bundle-signatures",
        type=Path,
        metavar="FILE",
        help="serve the signatures a CI step made (`classifier bundle build` + `sign`) for "
        "the bundle of these rules; re-read at each reload, and every signature must verify "
        "over the bundle the server builds, else it does not start (or reload)",
    )
    bundle.add_argument(
        "--bundle-public-key",
        type=Path,
        action="append",
        default=[],
        metavar="PEM",
        help="with --bundle-signatures: a public key its signatures are checked with; repeatable",
    )
    bundle.add_argument(
        "--unsigned-bundle",
        action="store_true",
        help="serve the bundle unsigned, marked so (GetBundle's `signed` is false)",
    )

    edge = p.add_argument_group("TLS and limits")
    edge.add_argument("--tls-cert", type=Path, metavar="PEM", help="server certificate chain")
    edge.add_argument("--tls-key", type=Path, metavar="PEM", help="server private key")
    edge.add_argument(
        "--tls-client-ca",
        type=Path,
        metavar="PEM",
        help="require client certificates signed by this CA (mutual TLS)",
    )
    edge.add_argument(
        "--max-request-bytes",
        type=int,
        default=limits.MAX_REQUEST_BYTES,
        metavar="N",
        help=f"largest request message (default: {limits.MAX_REQUEST_BYTES})",
    )
    edge.add_argument(
        "--max-concurrent-rpcs",
        type=int,
        default=DEFAULT_MAX_CONCURRENT_RPCS,
        metavar="N",
        help="unary calls served or queued at once (streams are bounded by --max-streams); "
        "0 for no limit "
        f"(default: {DEFAULT_MAX_CONCURRENT_RPCS})",
    )
    edge.add_argument(
        "--max-streams",
        type=int,
        default=DEFAULT_MAX_STREAMS,
        metavar="N",
        help="ClassifyStream calls open at once; each holds a thread of its own, never a "
        f"--threads worker (default: {DEFAULT_MAX_STREAMS})",
    )
    edge.add_argument(
        "--max-streams-per-connection",
        type=int,
        default=DEFAULT_MAX_STREAMS_PER_CONNECTION,
        metavar="N",
        help="calls open at once on one connection, the HTTP/2 SETTINGS limit "
        f"(default: {DEFAULT_MAX_STREAMS_PER_CONNECTION})",
    )
    edge.add_argument(
        "--stream-idle-timeout",
        type=float,
        default=DEFAULT_STREAM_IDLE_SECONDS,
        metavar="SECONDS",
        help="close a stream that sends no message for this long, DEADLINE_EXCEEDED; 0 never "
        f"(default: {DEFAULT_STREAM_IDLE_SECONDS:g})",
    )
    edge.add_argument(
        "--stream-max-age",
        type=float,
        default=DEFAULT_STREAM_MAX_AGE_SECONDS,
        metavar="SECONDS",
        help="close a stream open this long, DEADLINE_EXCEEDED; 0 never "
        f"(default: {DEFAULT_STREAM_MAX_AGE_SECONDS:g})",
    )
    edge.add_argument(
        "--max-connection-age",
        type=float,
        default=0,
        metavar="SECONDS",
        help="ask clients to reconnect after this long, to spread over new replicas "
        "(default: 0, never)",
    )
    p.set_defaults(run=run, parser=p)


def config_from_args(args: argparse.Namespace) -> ServeConfig:
    """The flags as a ServeConfig; the parser's error (exit 2) for flags that need others."""
    from classifier.server import ServeConfig, ServerLimits, TlsFiles
    from classifier.server.shared.serving_bundle import BundleConfig

    parser: argparse.ArgumentParser = args.parser
    bundle = BundleConfig(
        keys=tuple(args.bundle_key),
        signatures=args.bundle_signatures,
        public_keys=tuple(args.bundle_public_key),
        unsigned=args.unsigned_bundle,
    )
    if problem := bundle.problem():
        parser.error(problem)
    if (args.tls_cert is None) != (args.tls_key is None):
        parser.error("--tls-cert and --tls-key go together")
    if args.tls_client_ca and not args.tls_cert:
        parser.error("--tls-client-ca needs --tls-cert and --tls-key")
    if args.enable_reload_endpoint and not args.metrics_addr:
        parser.error("--enable-reload-endpoint needs --metrics-addr")
    if args.decision_log_unknown_only and not args.decision_log:
        parser.error("--decision-log-unknown-only needs --decision-log")
    return ServeConfig(
        rules=args.rules,
        address=args.addr,
        candidate=args.candidate,
        threads=args.threads,
        grace=args.grace,
        watch=args.watch,
        strict=args.strict,
        metrics_address=args.metrics_addr,
        reload_endpoint=args.enable_reload_endpoint,
        console=args.console,
        decision_log=args.decision_log,
        decision_log_unknown_only=args.decision_log_unknown_only,
        decision_log_max_bytes=args.decision_log_max_bytes,
        decision_log_backups=args.decision_log_backups,
        decision_log_queue_bytes=args.decision_log_queue_bytes,
        redact_patterns=tuple(args.redact_pattern),
        shadow_examples=args.shadow_examples,
        unknown_sample_bytes=args.unknown_sample_bytes,
        tls=TlsFiles(args.tls_cert, args.tls_key, args.tls_client_ca) if args.tls_cert else None,
        bundle=bundle,
        limits=ServerLimits(
            max_request_bytes=args.max_request_bytes,
            max_concurrent_rpcs=args.max_concurrent_rpcs or None,
            max_connection_age=args.max_connection_age or None,
            max_streams=args.max_streams,
            max_streams_per_connection=args.max_streams_per_connection,
            stream_idle_timeout=args.stream_idle_timeout or None,
            stream_max_age=args.stream_max_age or None,
        ),
    )


def run(args: argparse.Namespace) -> int:
    # The server stack is imported here, when it serves: building the parser (every
    # command's, --help included) never pays for it (tests/cli/test_start_up.py).
    from classifier.errors import RulesetError
    from classifier.server import serve
    from classifier.server.runtime import load_rulesets, serving_bundle
    from classifier.server.workers import check_workers, serve_workers

    config = config_from_args(args)
    if args.workers != 1 and (problem := check_workers(config, args.workers)):
        args.parser.error(problem)
    try:
        rulesets = load_rulesets(config)  # once: bad rules are refused before any worker forks
        bundle = serving_bundle(config, rulesets)  # and so is a bundle that cannot serve
        if args.workers > 1:
            return serve_workers(config, args.workers, rulesets, bundle)
        serve(config, rulesets, bundle)
    except RulesetError as exc:
        print(exc.render(), file=sys.stderr)
        print(
            f"classifier: cannot serve: {len(exc.diagnostics)} error(s) in the rules",
            file=sys.stderr,
        )
        return Exit.failed
    except (OSError, ValueError, RuntimeError) as exc:  # RedactionError, BundleError: ValueError
        print(f"classifier: cannot serve: {exc}", file=sys.stderr)
        return Exit.failed
    return Exit.ok
