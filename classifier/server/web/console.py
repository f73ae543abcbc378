"""The operator console: read-only pages on the admin port about what the service does.

    GET  /console          the page: version, the serving ruleset and its layers, the
                           candidate, the last reload (a red banner with every diagnostic
                           when it failed), every rule with its hits (the top layer's
                           first; filtered by text and layer, paged), the Unknown share
                           over the last hour, the live Unknowns grouped as `classifier
                           unknowns` groups them, the shadow's disagreements, and the
                           explain form
    GET  /console/rule     one rule: its outcome, conditions, location and hits, and a form
                           to explain a descriptor against it (`classifier explain --rule`)
    POST /console/explain  a descriptor (YAML or JSON) explained, the text exactly as
                           `classifier explain` prints it; changes nothing. A malformed
                           descriptor (or an unknown rule) is 400, each bad field named
    GET  /console/console.css

This module is the WSGI application: its route table, form parsing and throttling. What
the pages read is in `queries`, how they are made in `pages` (Jinja2 templates, every
value escaped). No script and nothing from elsewhere: the chart is SVG drawn by the server,
the style sheet comes from the package, and the Content-Security-Policy forbids any other
load.

Bounded work: at most CONSOLE_AT_ONCE pages are made at once (more is 503), and
PAGES_PER_SECOND on average (more is 429); rules are paged (at most MAX_PER_PAGE a page);
the Unknown groups, of the UNKNOWN_CLUSTERS_SHOWN largest failures, are remade within a
duty cycle (UNKNOWNS_DUTY) and shown with the time they were made; an explain request is
size-limited like a gRPC request (`--max-request-bytes`) and is made as gRPC's are
(`server.explain.Explaining`: one of the server's explain slots, its CPU share, the
explaining process), or is refused (429 by the budget, at once; 503 when the explaining
process failed). The page budget is the server's one
token bucket (`server.shared.token_bucket`).
"""

from __future__ import annotations

import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable
from importlib import resources

from classifier import limits
from classifier.engine.explain import explained_text
from classifier.engine.ruleset import Ruleset
from classifier.errors import DescriptorError
from classifier.server.explain import ExplainRefusedError
from classifier.server.shared.token_bucket import TokenBucket
from classifier.server.web import pages
from classifier.server.web.queries import RuleQuery, Sources, UnknownGroups
from classifier.server.web.routes import (
    Environ,
    RefusedError,
    Reply,
    Route,
    Router,
    StartResponse,
    WsgiApp,
    replying,
)
from classifier.source.descriptor_file import parse_descriptor

CONSOLE_AT_ONCE = 2
"""Console requests served at once; another meanwhile is 503 (it never queues)."""
PAGES_PER_SECOND = 5.0
PAGES_BURST = 20
"""Pages made per second on average, and at most at once after a quiet spell; more is 429
at once (a page of 9,000 rules costs about 15 ms of the interpreter, which the gRPC threads
share: benchmarks/bench_console.py)."""
FORM_TYPE = "application/x-www-form-urlencoded"
PERCENT_ENCODING = 3
"""A byte of a form field takes at most three in the url-encoded body (`%XX`)."""
HTML = "text/html; charset=utf-8"

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    ("Content-Security-Policy", CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
    ("Cache-Control", "no-store"),
)

FAVICON = (
    b"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'>"
    b"<rect width='16' height='16' rx='3' fill='#233'/></svg>"
)


def console_explanation(ruleset: Ruleset, text: str, rule_id: str) -> tuple[str, str]:
    """The form's descriptor explained as `classifier explain` prints it (what the explaining
    process runs): ("explained", text), ("invalid", the violations) or ("no_rule", "")."""
    try:
        descriptor = parse_descriptor(text, "<form>")
        _, _, explanation = explained_text(ruleset, descriptor, rule_id)
    except DescriptorError as exc:
        return "invalid", "\n".join(str(v) for v in exc.violations)
    except KeyError:
        return "no_rule", ""
    return "explained", explanation


def _explain_refused(refused: ExplainRefusedError) -> RefusedError:
    """The console's answer to a refused explanation: 429 when the budget refused (as gRPC's
    RESOURCE_EXHAUSTED), 503 when the explaining process failed (as gRPC's UNAVAILABLE)."""
    if refused.why.by_budget:
        return RefusedError("429 Too Many Requests", refused.reason)
    return RefusedError("503 Service Unavailable", f"no explanation: {refused.reason}")


def _reply(status: str, data: bytes, kind: str) -> Reply:
    return Reply(status, data, kind, SECURITY_HEADERS)


def _refused(refused: RefusedError) -> Reply:
    return _reply(
        refused.status, pages.refused_page(refused.status, refused.message).encode(), HTML
    )


Made = str | tuple[str, str]
"""A page as its maker returns it: the page (200), or its status and the page."""


def _page(make: Callable[[Environ], Made]) -> WsgiApp:
    """A handler that makes a page, as a WSGI application: its status (200 unless the maker
    says otherwise), and how long it took."""

    def handler(environ: Environ) -> Reply:
        started = time.perf_counter()
        made = make(environ)
        status, body = made if isinstance(made, tuple) else ("200 OK", made)
        took = (time.perf_counter() - started) * 1000
        return _reply(status, (body + f"<!-- made in {took:.1f} ms -->\n").encode(), HTML)

    return replying(handler)


def _query(environ: Environ) -> dict[str, list[str]]:
    return urllib.parse.parse_qs(
        environ.get("QUERY_STRING", ""), keep_blank_values=True, max_num_fields=20
    )


class Console:
    """The console's WSGI application; the admin port hands it every /console request."""

    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self._slots = threading.BoundedSemaphore(CONSOLE_AT_ONCE)
        self.budget = TokenBucket(PAGES_PER_SECOND, PAGES_BURST)
        self._unknowns = UnknownGroups(sources.sample)
        css = resources.files("classifier.server.web").joinpath("console.css").read_bytes()
        self._assets = {
            "/console/console.css": _reply("200 OK", css, "text/css; charset=utf-8"),
            "/console/favicon.svg": _reply("200 OK", FAVICON, "image/svg+xml"),
        }
        get, post = frozenset({"GET"}), frozenset({"POST"})
        self._pages = Router(
            [
                Route("/console", _page(self.overview), get),
                Route("/console/", _page(self.overview), get),
                Route("/console/rule", _page(self.rule), get),
                Route("/console/explain", _page(self.explain), post),
            ],
            _refused,
        )

    def __call__(self, environ: Environ, start: StartResponse) -> Iterable[bytes]:
        """The assets at once; a page within the page budget and CONSOLE_AT_ONCE."""
        asset = self._assets.get(environ.get("PATH_INFO", ""))
        if asset is not None:
            return asset.send(start)
        if not self.budget.take():
            message = f"the console makes at most {PAGES_PER_SECOND:g} pages a second; retry"
            return _refused(RefusedError("429 Too Many Requests", message)).send(start)
        if not self._slots.acquire(blocking=False):
            busy = RefusedError("503 Service Unavailable", "the console is busy; retry")
            return _refused(busy).send(start)
        try:
            return self._pages(environ, start)
        finally:
            self._slots.release()

    def overview(self, environ: Environ) -> str:
        s = self.sources
        return pages.overview_page(
            s.active,
            s.candidate,
            s.activity.started,
            s.activity.last_hour(),
            s.activity.hits(),
            RuleQuery.parse(_query(environ)),
            self._unknowns.get(s.active.current),
            s.shadow,
        )

    def rule(self, environ: Environ) -> str:
        rule_id = (_query(environ).get("id") or [""])[0]
        ruleset = self.sources.active.current
        rule = ruleset.rule(rule_id)
        if rule is None:
            raise RefusedError(
                "404 Not Found",
                f"the serving ruleset ({ruleset.name} {ruleset.version}) has no rule {rule_id!r}",
            )
        return pages.rule_page(ruleset, rule, self.sources.activity.hit(rule.id))

    def explain(self, environ: Environ) -> tuple[str, str]:
        """The explanation's page; a descriptor that is not one, or a rule the ruleset lacks,
        is 400 (as gRPC's INVALID_ARGUMENT), its page naming each bad field (or the rule)
        and giving the form back filled in."""
        form = self._form(environ)
        text = (form.get("descriptor") or [""])[0]
        rule_id = (form.get("rule") or [""])[0].strip()
        if len(text.encode()) > self.sources.max_request_bytes:
            raise RefusedError(
                "413 Content Too Large",
                f"the descriptor is larger than the request limit "
                f"({self.sources.max_request_bytes} bytes, --max-request-bytes)",
            )
        ruleset = self.sources.active.current
        try:
            kind, explanation = self.sources.explaining.explain(
                ruleset, console_explanation, (text, rule_id), limits.EXPLAIN_TIMEOUT_SECONDS
            )
        except ExplainRefusedError as refused:
            raise _explain_refused(refused) from None
        status = "200 OK" if kind == "explained" else "400 Bad Request"
        return status, pages.explained_page(ruleset, kind, explanation, text, rule_id)

    def _form(self, environ: Environ) -> dict[str, list[str]]:
        """The url-encoded form of a POST, refused unread when larger than a request may be."""
        limit = self.sources.max_request_bytes * PERCENT_ENCODING + 4096
        try:
            length = int(environ.get("CONTENT_LENGTH") or "")
        except ValueError:
            raise RefusedError("411 Length Required", "send Content-Length") from None
        if length > limit:
            raise RefusedError("413 Content Too Large", f"the form is larger than {limit} bytes")
        kind = environ.get("CONTENT_TYPE", "").split(";")[0].strip()
        if kind != FORM_TYPE:
            raise RefusedError(
                "415 Unsupported Media Type", "send application/x-www-form-urlencoded"
            )
        raw = environ["wsgi.input"].read(length)
        try:
            return urllib.parse.parse_qs(
                raw.decode("utf-8"), keep_blank_values=True, max_num_fields=4, errors="strict"
            )
        except (UnicodeDecodeError, ValueError):
            raise RefusedError("400 Bad Request", "the form is not url-encoded UTF-8") from None
