"""`classifier unknowns`: the Unknown answers grouped into failures, ranked, with drafted rules.

Reads decision logs (a folder of rotated files included), JSON Lines and case files, or a
running server's live sample (`--admin-addr`, its `--metrics-addr`), and prints every cluster of
Unknowns: count, share, first and last seen, ruleset versions, trend, examples, reason,
and, given `--rules`, the near misses of its typical member and whether that ruleset
covers it now. With `--admin-addr` and no `--rules`, the ruleset is what the server
serves (its folder, when readable here; else the bundled library, saying which).
`--propose` drafts a rule per cluster and shows it only once it has passed its checks;
`--write DIR` writes the drafts as files to review. Nothing is applied.

Exit status: 0 when the report was made (Unknowns and refused drafts are information);
2 when it could not be: a path or the ruleset is missing or invalid, the corpus has bad
lines, the server cannot be reached (or the address is not its admin port), or nothing was
read. `--addr` is the gRPC port in every command; this one reads the admin port, so
`--addr` is refused with a pointer to `--admin-addr`.
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from classifier.cli.options import Exit, add_command
from classifier.errors import RulesetError
from classifier.source.library import bundled_library
from classifier.text import plural

if TYPE_CHECKING:
    from classifier.engine.ruleset import Ruleset
    from classifier.unknowns.inbox_report import Report
    from classifier.unknowns.read import Classified, Record

EXIT_OK, EXIT_INVALID = 0, 2
FORMATS = ("text", "markdown", "json")
"""`--format`'s choices: the keys of the report's and the proposals' RENDERERS
(classifier.unknowns.inbox_report, proposal_output; a test checks), named here so that
parsing the command line does not import the engine."""
LIVE_PATH = "/-/unknowns"
RULESET_PATH = "/-/ruleset"


def add_parser(sub: Any) -> None:
    p = add_command(
        sub,
        "unknowns",
        help="group Unknown answers into failures, and draft rules for them",
        description="Cluster the Unknown answers of decision logs, JSON Lines or case files "
        "(or of a running server's live sample, --admin-addr) by structure (language, type, "
        "supertypes, origin, statuses, code, provider, causes) and then by message template, "
        "and rank the clusters by count. With --rules (with --admin-addr, by default what the "
        "server serves), each cluster's typical member is "
        "explained (near misses) and the ruleset's coverage of it is checked; --propose "
        "drafts a rule per cluster, proven on the whole corpus before it is shown.",
        exits={
            Exit.ok: "the report was made (Unknowns and refused drafts are information)",
            Exit.invalid: "a path or the ruleset is missing or invalid, the corpus has bad "
            "lines, the server cannot be reached or the address is not its admin port, or "
            "nothing was read",
        },
    )
    p.add_argument(
        "--rules",
        metavar="DIR",
        help="the ruleset in force: classifies lines without an answer, gives near misses, "
        "says which clusters it covers now, and is what --propose drafts against (default "
        "with --admin-addr: the folder the server serves, when readable here, else the "
        "bundled library)",
    )
    p.add_argument("--format", choices=FORMATS, default="text")
    p.add_argument("--top", type=int, metavar="N", help="show the N largest clusters only")
    p.add_argument(
        "--admin-addr",
        metavar="HOST:PORT",
        help=f"also read a running server's live sample (GET {LIVE_PATH} on its admin port, "
        "serve --metrics-addr)",
    )
    p.add_argument("--addr", help=argparse.SUPPRESS)  # refused: the gRPC port elsewhere
    p.add_argument(
        "--id-prefix",
        metavar="PREFIX",
        default="",
        help="with --propose: drafted rule ids begin PREFIX. (default: the type's namespace, "
        "acme.vector.IndexNotReady -> acme.vector.index-not-ready)",
    )
    p.add_argument(
        "--propose",
        action="store_true",
        help="draft a rule, an action and a case file per cluster; show each only once it "
        "loads, passes check --strict and replays to exactly that cluster (needs --rules)",
    )
    p.add_argument(
        "--write",
        metavar="DIR",
        type=Path,
        help="with --propose: write each checked draft under DIR for review (applies nothing)",
    )
    p.add_argument(
        "corpus",
        nargs="*",
        metavar="CORPUS",
        help="decision logs, JSON Lines files (.jsonl, .ndjson, .json; - for stdin), case "
        "files, or folders of them",
    )
    p.set_defaults(run=run, parser=p)


class NotAdminPortError(Exception):
    """The address answered, but not as a server's admin port does."""


def _get(address: str, path: str, timeout: float) -> str:
    """GET path on the admin port at `address`, the body as text.

    Raises NotAdminPortError when something other than HTTP answers there (a gRPC port
    speaks HTTP/2 only and drops an HTTP/1.1 request), OSError when nothing does.
    """
    url = f"http://{address}{path}"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:
            body: bytes = reply.read()
    except (http.client.HTTPException, ConnectionResetError) as exc:
        raise NotAdminPortError(
            f"{address} did not answer HTTP ({type(exc).__name__}): --admin-addr is the "
            "server's admin port (serve --metrics-addr), not its gRPC port (serve --addr)"
        ) from None
    return body.decode("utf-8")


def fetch_live(address: str, timeout: float = 10.0) -> str:
    """The live sample of the server whose admin port is `address`, as JSON Lines."""
    return _get(address, LIVE_PATH, timeout)


def fetch_served(address: str, timeout: float = 10.0) -> dict[str, Any] | None:
    """What the server whose admin port is `address` serves (GetRuleset's answer: name,
    version, digest, source, layers), or None from a server that does not say (404)."""
    try:
        described: dict[str, Any] = json.loads(_get(address, RULESET_PATH, timeout))
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise
    return described


def served_ruleset(address: str) -> tuple[Ruleset, str]:
    """The ruleset to explain a server's live sample under when no --rules is given, and a
    line saying which it is: the folder the server serves from when it is readable here
    (what the server answers with), else the bundled library, as other commands default
    to. Raises OSError (and NotAdminPortError) when the server cannot be asked."""
    from classifier.engine.compiler import load_ruleset

    info = fetch_served(address)
    if info is None:
        served, source, digest = "its rules", "", ""
        why = f"it does not say what it serves (no {RULESET_PATH}: an older server)"
    else:
        served = f"{info.get('name', '')} {info.get('version', '')}"
        source, digest = info.get("source", ""), info.get("digest", "")
        why = f"{source} is not a folder readable here"
        if source and Path(source).is_dir():
            try:
                ruleset = load_ruleset(source)
            except RulesetError as exc:
                why = f"{source} does not load here ({plural(len(exc.diagnostics), 'error')})"
            else:
                if ruleset.digest == digest:
                    return ruleset, f"no --rules: {served} from {source}, what {address} serves"
                return ruleset, (
                    f"no --rules: {source}, the folder {address} serves {served} from; here "
                    f"it is {ruleset.name} {ruleset.version} ({ruleset.digest[:19]}), not what "
                    f"is served ({digest[:19]}): changed since its last reload, or another "
                    "machine's folder"
                )
    library = load_ruleset(bundled_library())
    same = ", the same rules" if library.digest == digest else ""
    return library, (
        f"no --rules: {address} serves {served}{f' from {source}' if source else ''}, but "
        f"{why}: the bundled library instead ({library.name} {library.version}{same}); "
        "--rules DIR names the served rules"
    )


def _live_records(
    args: argparse.Namespace, live: str, errors: list[str]
) -> Iterator[Record | Classified]:
    from classifier.unknowns.read import read_lines

    if args.admin_addr:
        yield from read_lines(io.StringIO(live), f"{args.admin_addr}{LIVE_PATH}", errors)


def _records(args: argparse.Namespace, errors: list[str]) -> Iterator[Record | Classified]:
    from classifier.unknowns.read import read

    if args.corpus:
        yield from read(args.corpus, errors)


def _propose(
    args: argparse.Namespace, report: Report, ruleset: Ruleset, live: str, errors: list[str]
) -> int:
    """Check a draft per cluster against the whole corpus, print them, and write them."""
    from classifier.regress.corpus import read_corpus
    from classifier.unknowns import proposal_output, propose
    from classifier.unknowns.proof import Checker

    if args.admin_addr:  # the live sample is read as a corpus file
        with tempfile.TemporaryDirectory(prefix="classifier-unknowns-") as tmp:
            sample = Path(tmp) / "live.jsonl"
            sample.write_text(live, encoding="utf-8")
            corpus = read_corpus([*args.corpus, str(sample)])
    else:
        corpus = read_corpus(list(args.corpus))
    errors += [e for e in corpus.errors if e not in errors]
    checker = Checker(Path(args.rules), ruleset, corpus.entries, report.clusters)
    proposals = propose.propose(report, checker, args.id_prefix)
    together = propose.check_together(proposals, checker)
    sys.stdout.write(proposal_output.RENDERERS[args.format](proposals, together))
    if args.write:
        for path in proposal_output.write(proposals, args.write):
            print(f"wrote {path}", file=sys.stderr)
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    from classifier.engine.compiler import load_ruleset  # when it runs: parsing needs none
    from classifier.unknowns.cluster import Clusterer
    from classifier.unknowns.inbox_report import RENDERERS, assess

    parser: argparse.ArgumentParser = args.parser
    if args.addr:
        print(
            "classifier unknowns: --addr is a server's gRPC port in every command; the live "
            "sample is read from its admin port: --admin-addr HOST:PORT (serve --metrics-addr)",
            file=sys.stderr,
        )
        return EXIT_INVALID
    if not args.corpus and not args.admin_addr:
        parser.error("give a corpus (files or folders) or --admin-addr HOST:PORT")
    if args.propose and not args.rules:
        parser.error("--propose needs --rules (the ruleset the drafts are checked against)")
    if args.write and not args.propose:
        parser.error("--write needs --propose")
    ruleset: Ruleset | None = None
    if args.rules:
        try:
            ruleset = load_ruleset(args.rules)
        except RulesetError as exc:
            print(f"classifier unknowns: {args.rules} is invalid:", file=sys.stderr)
            print(exc.render(), file=sys.stderr)
            return EXIT_INVALID
    elif args.admin_addr:
        try:
            ruleset, which = served_ruleset(args.admin_addr)
        except (OSError, ValueError, urllib.error.URLError, NotAdminPortError) as exc:
            print(f"classifier unknowns: {exc}", file=sys.stderr)
            return EXIT_INVALID
        print(f"classifier unknowns: {which}", file=sys.stderr)
    errors: list[str] = []
    clusterer = Clusterer(ruleset, keep_assignments=args.propose)
    try:
        live = fetch_live(args.admin_addr) if args.admin_addr else ""
        if args.admin_addr:
            clusterer.feed_sample(_live_records(args, live, errors))
        clusterer.feed(_records(args, errors))
    except (OSError, UnicodeDecodeError, urllib.error.URLError, NotAdminPortError) as exc:
        print(f"classifier unknowns: {exc}", file=sys.stderr)
        return EXIT_INVALID
    clusters = clusterer.result()
    errors += clusters.errors
    sources = [*([f"{args.admin_addr}{LIVE_PATH}"] if args.admin_addr else []), *args.corpus]
    report = assess(clusters, ruleset, sources, args.top)
    if args.propose:
        assert ruleset is not None
        code = _propose(args, report, ruleset, live, errors)
    else:
        sys.stdout.write(RENDERERS[args.format](report))
        code = EXIT_OK
    for error in errors:
        print(error, file=sys.stderr)
    if errors:
        print(f"classifier unknowns: {len(errors)} bad corpus entries", file=sys.stderr)
        return EXIT_INVALID
    if clusters.lines == 0:
        print("classifier unknowns: nothing was read", file=sys.stderr)
        return EXIT_INVALID
    return code
