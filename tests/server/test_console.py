"""The operator console (GET /console on the admin port), in a real browser against a real
`classifier serve` process: Debian's Chromium (`make setup` installs it) driven by
Playwright. One server and one browser per module; each test measures what it changed.

The page's screenshot is kept as a test artefact: artifacts/console.png (gitignored).
Below the browser tests, the rendering, escaping and paging are tested in process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from io import BytesIO
from pathlib import Path
from typing import Any

import grpc
import pytest
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, sync_playwright

from classifier import descriptor_from_data, load_ruleset
from classifier.codes import Code
from classifier.engine.evaluate import classify
from classifier.errors import Diagnostic
from classifier.location import Location
from classifier.server.explain import Explaining, ExplainingProcess, ExplainRefusedError, Why
from classifier.server.observers.activity import Activity, RuleHits
from classifier.server.observers.metrics import Metrics
from classifier.server.observers.shadow import Shadow
from classifier.server.observers.unknown_sample import UnknownSample
from classifier.server.shared.serving_ruleset import ReloadResult, ReloadStatus, RulesetHolder
from classifier.server.web.console import CSP, Console
from classifier.server.web.pages import environment, reload_section, share_chart
from classifier.server.web.queries import MAX_PER_PAGE, RuleQuery, Sources, select_rules
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from tests.conftest import StartApp
from tests.support import (
    ROOT,
    SERVING_RULES,
    MakeRuleset,
    ruleset_files,
    serving_files,
    wait_for,
    write_folder,
)

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
"""Debian's, as `make setup` installs it (the Makefile's CHROMIUM, which it exports)."""
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACT = ROOT / "artifacts" / "console.png"

HOSTILE = '<script>alert("x")</script>'
TEAM_RULES = """\
rules:
  - id: team.hostile
    description: '<script>alert("description")</script> & <b>not bold</b>'
    when: {origin: tool, message: '<script>alert\\("rule"\\)</script>'}
    class: ToolError
"""
BROKEN = """\
rules:
  - id: team.bad-one
    when: {http_status: 429}
    class: NoSuchClass
  - id: team.bad-two
    when: {http_status: 430}
    class: NorThisOne
"""


@dataclass
class Served:
    """A `classifier serve` process: a layered ruleset (team on serving), a candidate, the
    admin port with the reload endpoint."""

    proc: subprocess.Popen[bytes]
    log: Path
    team: Path
    start: dict[str, Any] = field(default_factory=dict)
    channel: grpc.Channel | None = None

    @property
    def admin(self) -> str:
        return str(self.start["metrics_address"])

    def url(self, path: str = "/console", **query: str) -> str:
        q = f"?{urllib.parse.urlencode(query)}" if query else ""
        return f"http://{self.admin}{path}{q}"

    def classify(self, **fields: Any) -> pb.ClassifyResponse:
        assert self.channel is not None
        stub = pb_grpc.ErrorClassifierStub(self.channel)
        reply: pb.ClassifyResponse = stub.Classify(
            pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(**fields)), timeout=10
        )
        return reply

    def reload(self) -> tuple[int, dict[str, Any]]:
        request = urllib.request.Request(self.url("/-/reload"), method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    def cli(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "classifier", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            input=stdin,
        )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("console")
    write_folder(root / "serving", serving_files())
    team = write_folder(
        root / "team",
        {
            "ruleset.yaml": "name: team\nversion: 2.0.0\nbase:\n  - path: ../serving\n",
            "team.yaml": TEAM_RULES,
        },
    )
    candidate = write_folder(
        root / "candidate",
        {
            **serving_files(),
            "ruleset.yaml": "name: next\nversion: 1.1.0\n",
            "rules.yaml": SERVING_RULES.replace(
                "http_status: 429}\n    class: RateLimited",
                "http_status: 429}\n    class: QuotaExceeded",
            ),
        },
    )
    log = root / "serve.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "classifier",
                "serve",
                "--rules",
                str(team),
                "--candidate",
                str(candidate),
                "--addr",
                "127.0.0.1:0",
                "--metrics-addr",
                "127.0.0.1:0",
                "--enable-reload-endpoint",
                "--no-watch",
            ],
            cwd=ROOT,
            stderr=err,
        )
    served = Served(proc, log, team)

    def started() -> bool:
        assert proc.poll() is None, log.read_text()
        lines = [json.loads(x) for x in log.read_text().splitlines() if x.startswith("{")]
        starts = [x for x in lines if x["event"] == "start"]
        if starts:
            served.start = starts[0]
        return bool(starts)

    try:
        wait_for(started, timeout=30)
        served.channel = grpc.insecure_channel(served.start["address"])
        yield served
    finally:
        if served.channel is not None:
            served.channel.close()
        proc.terminate()
        proc.wait(timeout=15)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        # `make setup` installs it where apt-get and root are at hand, and says so otherwise.
        pytest.skip(
            f"no Chromium at {CHROMIUM}: install Debian's chromium package "
            "(apt-get install chromium; `make setup` does where apt-get and root are at hand)"
        )
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@dataclass
class Watched:
    """A page, and what it did that a test may forbid: dialogs, console output, requests."""

    page: Page
    dialogs: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def scripts(self) -> int:
        """Elements that could run script: <script>, and any element with an on* handler."""
        found: int = self.page.evaluate(
            "() => document.querySelectorAll('script').length + [...document.querySelectorAll('*')]"
            ".filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length"
        )
        return found


def _watch(browser: Browser, **context: Any) -> Iterator[Watched]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, **context)
    page = ctx.new_page()
    watched = Watched(page)

    def on_dialog(d: Dialog) -> None:
        watched.dialogs.append(d.message)
        d.dismiss()

    def on_console(m: ConsoleMessage) -> None:
        watched.console.append(m.text)

    page.on("dialog", on_dialog)
    page.on("console", on_console)
    page.on("request", lambda r: watched.requests.append(r.url))
    yield watched
    ctx.close()


@pytest.fixture
def tab(browser: Browser) -> Iterator[Watched]:
    yield from _watch(browser)


@pytest.fixture
def unguarded(browser: Browser) -> Iterator[Watched]:
    """A tab that ignores the Content-Security-Policy: unescaped markup would run here."""
    yield from _watch(browser, bypass_csp=True)


def _hits(page: Page, rule_id: str) -> str:
    row = page.locator("table.rules tr").filter(
        has=page.get_by_role("link", name=rule_id, exact=True)
    )
    return row.locator("td.hits").inner_text()


def _reload_until(page: Page, url: str, selector: str, text: str, timeout: float = 10) -> str:
    """Load url until the element at selector holds text (the live sample is asynchronous)."""
    seen = [""]

    def holds() -> bool:
        page.wait_for_timeout(250)  # within the console's page budget (5 a second)
        page.goto(url)
        seen[0] = page.locator(selector).text_content() or ""
        return text in seen[0]

    wait_for(holds, timeout=timeout)
    return seen[0]


def test_the_page_shows_the_version_the_layers_and_the_candidate(
    served: Served, tab: Watched
) -> None:
    """Version, the serving stack (team on serving) with its digest, and the candidate; only
    the console's own URLs are loaded, under a CSP that forbids anything else."""
    page = tab.page
    reply = page.goto(served.url())
    assert reply is not None
    assert reply.status == 200
    headers = reply.headers
    assert headers["content-security-policy"] == CSP
    assert headers["x-content-type-options"] == "nosniff"
    serving = page.locator("section.ruleset[data-role=serving]")
    assert "team 2.0.0" in serving.locator("h2").inner_text()
    assert served.start["digest"] in serving.inner_text()
    layers = serving.locator("table.layers tr").all_inner_texts()[1:]
    assert [row.split("\t")[1] for row in layers] == ["team", "serving"]
    assert "next 1.1.0" in page.locator("section.ruleset[data-role=candidate] h2").inner_text()
    assert served.start["classifier_version"] in page.locator("header .version").inner_text()
    assert all(u.startswith(f"http://{served.admin}/console") for u in tab.requests), tab.requests
    assert tab.console == []
    assert tab.scripts() == 0


def test_a_rules_hit_count_moves_after_classify_calls(served: Served, tab: Watched) -> None:
    page = tab.page
    page.goto(served.url(q="provider.429"))
    before = int(_hits(page, "provider.429").replace(",", ""))
    for _ in range(3):
        assert served.classify(type="x.E", http_status=429, origin=pb.ORIGIN_PROVIDER).rule_id
    page.reload()
    assert int(_hits(page, "provider.429").replace(",", "")) == before + 3
    page.get_by_role("link", name="provider.429", exact=True).click()
    assert page.locator("#rule-id").inner_text() == "provider.429"
    assert int(page.locator("dd.hits").inner_text()) == before + 3
    assert "http_status: 429" in page.locator("ul.conditions").inner_text()
    # Never-hit filter and paging, one rule a page.
    page.goto(served.url(hits="never", per="1"))
    assert "page 1 of" in page.locator("p.pages").first.inner_text()
    assert page.locator("table.rules tr").count() == 2  # the header and one rule
    first = page.locator("a.rule").inner_text()
    page.locator("a[rel=next]").first.click()
    assert "page 2 of" in page.locator("p.pages").first.inner_text()
    assert page.locator("a.rule").inner_text() != first
    assert "provider.429" not in page.locator("table.rules").inner_text()


def test_the_teams_rules_come_first_and_the_layer_control_filters_the_table(
    served: Served, tab: Watched
) -> None:
    """The first row is the team's own rule, not the serving layer's; choosing a layer in
    the form keeps its rules only, and paging keeps the choice."""
    page = tab.page
    page.goto(served.url())
    assert page.locator("table.rules a.rule").first.inner_text() == "team.hostile"
    layers = page.locator("form.filter select[name=layer] option").all_inner_texts()
    assert layers == ["all", "team", "serving"]
    page.locator("form.filter select[name=layer]").select_option("serving")
    page.locator("form.filter input[name=per]").fill("2")
    page.locator("form.filter button").click()
    assert "layer=serving" in page.url
    shown = page.locator("table.rules tr td:last-child").all_inner_texts()
    assert shown == ["serving", "serving"]
    page.locator("a[rel=next]").first.click()
    assert "layer=serving" in page.url
    assert "team.hostile" not in page.locator("table.rules").inner_text()
    assert page.locator("form.filter select[name=layer]").input_value() == "serving"


def test_a_failed_reload_shows_a_red_banner_with_every_diagnostic_while_the_old_rules_serve(
    served: Served, tab: Watched
) -> None:
    broken = served.team / "broken.yaml"
    broken.write_text(BROKEN)
    try:
        code, statuses = served.reload()
        assert code == 500
        assert statuses["active"]["result"] == "failed"
        page = tab.page
        page.goto(served.url())
        banner = page.locator("section.failed[data-role=active]")
        assert banner.is_visible()
        assert "Reload failed" in banner.locator("h2").inner_text()
        shown = banner.locator("pre.diagnostics").text_content() or ""
        assert shown == statuses["active"]["error"]  # verbatim, every one
        lines = shown.splitlines()
        assert len(lines) >= 2
        assert all(re.match(r".*broken\.yaml:\d+:\d+: (warning: )?\w+: ", x) for x in lines)
        red = banner.evaluate("e => getComputedStyle(e).borderTopColor")
        assert red == "rgb(192, 57, 43)"  # the style sheet, served by the process, applied
        # The last good ruleset keeps serving.
        assert (
            served.classify(type="x.E", http_status=429, origin=pb.ORIGIN_PROVIDER).class_name
            == "RateLimited"
        )
        assert (
            served.start["digest"]
            in page.locator("section.ruleset[data-role=serving]").inner_text()
        )
    finally:
        broken.unlink()
        assert served.reload()[0] == 200
    tab.page.reload()
    assert tab.page.locator("section.failed").count() == 0


def test_unknowns_appear_grouped_as_classifier_unknowns_groups_them(
    served: Served, tab: Watched
) -> None:
    for i in range(4):
        served.classify(type="acme.QueueFull", origin=pb.ORIGIN_TOOL, message=f"queue {i} is full")
    for i in range(2):
        served.classify(
            type="acme.SlowTool", origin=pb.ORIGIN_TOOL, message=f"timed out after a while ({i})"
        )
    text = _reload_until(tab.page, served.url(), "#unknowns", "acme.SlowTool")
    assert "acme.QueueFull" in text
    cli = served.cli(
        "unknowns", "--admin-addr", served.admin, "--rules", str(served.team), "--format", "json"
    )
    assert cli.returncode == 0, cli.stderr
    ranked = json.loads(cli.stdout)["ranked"]
    ours = {c["id"]: c for c in ranked if c["key"]["type"] in ("acme.QueueFull", "acme.SlowTool")}
    assert len(ours) == 2
    for cid, c in ours.items():
        article = tab.page.locator(f"article.cluster[id='{cid}']")
        assert f"{c['count']:,} (" in article.locator("h3").inner_text()
        assert c["template"] in article.inner_text()
    slow = next(cid for cid, c in ours.items() if c["key"]["type"] == "acme.SlowTool")
    near = tab.page.locator(f"article.cluster[id='{slow}'] pre.near").inner_text()
    # tool.timed-out held only on `origin: tool`, which says nothing about which failure it
    # was: no near miss (the one ranking, engine/nearness)
    assert "tool.timed-out" not in near
    assert "near misses: none (no rule held on a type, status, code, message or cause)" in near


def test_the_explain_form_shows_exactly_what_classifier_explain_prints(
    served: Served, tab: Watched, tmp_path: Path
) -> None:
    descriptor = "type: acme.Gateway\norigin: provider\nhttp_status: 503\nmessage: upstream gone\n"
    file = tmp_path / "d.yaml"
    file.write_text(descriptor)
    page = tab.page
    for rule in ("", "provider.429"):
        page.goto(served.url())
        page.locator("#descriptor").fill(descriptor)
        page.locator("form.explain input[name=rule]").fill(rule)
        page.get_by_role("button", name="explain").click()
        shown = page.locator("#explanation").text_content()
        args = ["explain", "--rules", str(served.team), str(file)]
        cli = served.cli(*args, *(["--rule", rule] if rule else []))
        assert cli.returncode == 0, cli.stderr
        assert shown == cli.stdout.removesuffix("\n")
        assert "provider.5xx" in (shown or "")
    # JSON too, and the form comes back filled in.
    page.goto(served.url())
    page.locator("#descriptor").fill(
        json.dumps({"type": "acme.Gateway", "http_status": 429, "origin": "provider"})
    )
    page.get_by_role("button", name="explain").click()
    assert "rule:      provider.429" in (page.locator("#explanation").text_content() or "")
    assert "acme.Gateway" in page.locator("#descriptor").input_value()


def test_the_shadow_disagreements_by_rule_pair_with_examples(served: Served, tab: Watched) -> None:
    for _ in range(2):
        served.classify(type="acme.Throttled", http_status=429, origin=pb.ORIGIN_PROVIDER)
    page = tab.page
    page.goto(served.url())
    row = page.locator("#shadow tr.disagreement").filter(has_text="QuotaExceeded")
    cells = row.locator("td").all_inner_texts()
    assert cells[:4] == ["provider.429", "RateLimited", "provider.429", "QuotaExceeded"]
    assert int(cells[4]) >= 2
    assert "acme.Throttled" in cells[5] or int(cells[4]) > 5  # examples are the first few


def test_hostile_input_is_shown_as_text_and_never_runs(served: Served, unguarded: Watched) -> None:
    """With the CSP bypassed, only escaping stands between the input and the page. A rule id
    cannot hold markup (the schema's id pattern), so hostile ids come from requests."""
    served.classify(type=HOSTILE, origin=pb.ORIGIN_TOOL, message='<img src=x onerror=alert("m")>')
    page = unguarded.page
    text = _reload_until(page, served.url(q=HOSTILE), "#unknowns", HOSTILE)
    assert '<img src=x onerror=alert("m")>' in text
    assert page.locator("form.filter input[name=q]").input_value() == HOSTILE
    page.goto(served.url("/console/rule", id="team.hostile"))
    assert '<script>alert("description")</script> & <b>not bold</b>' in page.inner_text(
        "section.rule"
    )
    assert r'message: <script>alert\("rule"\)</script>' in page.inner_text("ul.conditions")
    missing = page.goto(served.url("/console/rule", id=HOSTILE))
    assert missing is not None
    assert missing.status == 404
    assert HOSTILE in page.inner_text("section.refused")
    page.goto(served.url())
    page.locator("#descriptor").fill(json.dumps({"type": HOSTILE, "message": "<b>hi</b>"}))
    page.locator("form.explain input[name=rule]").fill(HOSTILE)
    page.get_by_role("button", name="explain").click()
    assert f"has no rule '{HOSTILE}'" in page.inner_text("#explanation")
    page.locator("form.explain input[name=rule]").fill("")
    page.get_by_role("button", name="explain").click()
    assert f"type: {HOSTILE}" in page.inner_text("#explanation")
    assert unguarded.dialogs == []
    assert unguarded.scripts() == 0
    assert page.locator("b, img").count() == 0


def test_a_screenshot_of_the_page_is_kept(served: Served, tab: Watched) -> None:
    """artifacts/console.png: a failed reload's banner, hits, Unknowns and the shadow."""
    for i in range(5):
        served.classify(type="x.E", http_status=429, origin=pb.ORIGIN_PROVIDER)
        served.classify(type="acme.QueueFull", origin=pb.ORIGIN_TOOL, message=f"queue {i} is full")
    broken = served.team / "broken.yaml"
    broken.write_text(BROKEN)
    try:
        assert served.reload()[0] == 500
        _reload_until(tab.page, served.url(per="10"), "#unknowns", "acme.QueueFull")
        ARTIFACT.parent.mkdir(exist_ok=True)
        tab.page.screenshot(path=str(ARTIFACT), full_page=True)
    finally:
        broken.unlink()
        served.reload()
    print(f"\nconsole screenshot: {ARTIFACT}")
    assert ARTIFACT.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert ARTIFACT.stat().st_size > 20_000


# in process: rendering, escaping, paging, limits ------------------------------------------


WEB = ROOT / "classifier" / "server" / "web"


def test_the_serving_ruleset_shows_its_bundle_and_how_it_is_signed(
    tmp_path: Path, start_app: StartApp
) -> None:
    """The bundle digest (GetBundle's) beside the ruleset's, signed by which keys, unsigned,
    or not served, as `serve` was told."""
    from classifier.bundle.signing import generate_key, key_id, private_pem
    from classifier.server.shared.serving_bundle import BundleConfig

    rules = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    signer = generate_key()
    key = tmp_path / "ops.key"
    key.write_bytes(private_pem(signer))
    for config, said in (
        (
            BundleConfig(keys=(key,)),
            f"signed by {key_id(signer.public_key())} (--bundle-key: this server signs)",
        ),
        (BundleConfig(unsigned=True), "unsigned (--unsigned-bundle)"),
        (
            BundleConfig(),
            "not served: GetBundle needs --bundle-key, --bundle-signatures or --unsigned-bundle",
        ),
    ):
        running = start_app(rules, watch=False, bundle=config)
        status, page = running.http("/console")
        assert status == 200
        serving = page[page.index("<section class=ruleset data-role=serving>") :]
        serving = serving[: serving.index("</section>")]
        shown = serving[serving.index("<dt>bundle</dt>") :]
        text = " ".join("".join(_parsed(shown[: shown.index("</dd>")]).text).split())
        bundle = running.app.active.serving.bundle
        assert bundle is not None
        assert text == f"bundle{bundle.digest}, {len(bundle.data):,} bytes: {said}"
        running.close()


def test_markup_comes_only_from_the_templates_and_every_value_is_escaped() -> None:
    """The guard rests on autoescape: on for every template, never switched off in one, and
    no markup made in Python (a Markup() call would mark a string safe unescaped)."""
    env = environment()
    assert env.autoescape is True
    hostile = "x' onclick='alert(1)"
    made = env.from_string("<a href='{{ v }}'>{{ v }}</a>{{ m }}").render(v=HOSTILE, m=hostile)
    assert made == (
        "<a href='&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;'>"
        "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;</a>x&#39; onclick=&#39;alert(1)"
    )
    templates = sorted((WEB / "templates").glob("*.html"))
    assert {t.name for t in templates} == set(env.list_templates())
    for template in templates:
        source = template.read_text()
        assert "|safe" not in source.replace(" ", ""), template
        assert "autoescape" not in source, template
    for module in WEB.glob("*.py"):
        assert "Markup(" not in module.read_text(), module


class _Tags(HTMLParser):
    """Every element and attribute of a page, and its text as a reader sees it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [(name, value or "") for name, value in attrs]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parsed(page: str) -> _Tags:
    tags = _Tags()
    tags.feed(page)
    tags.close()
    return tags


ATTRIBUTE = "x' onclick='alert(1)' a='"
"""A value that would leave a single-quoted attribute, were it not escaped."""
MARKUP_FOLDER = "<img src=x onerror=alert(9)>"
"""A folder name may hold markup (no slash): a layer's source shows it."""


def test_hostile_strings_are_escaped_in_every_page_that_shows_one(tmp_path: Path) -> None:
    """Each page with a hostile rule description and condition, diagnostic, layer source,
    Unknown type and message, shadow example, filter, rule id and descriptor: none of them
    becomes an element or an attribute, and each is shown as text."""
    serving = write_folder(tmp_path / MARKUP_FOLDER / "serving", serving_files())
    team = write_folder(
        tmp_path / "team",
        {"ruleset.yaml": f"name: team\nversion: 2.0.0\nbase:\n  - path: {serving}\n"}
        | {"team.yaml": TEAM_RULES},
    )
    candidate = write_folder(
        tmp_path / "candidate",
        {
            **serving_files(),
            "ruleset.yaml": "name: next\nversion: 1.1.0\n",
            "team.yaml": TEAM_RULES.replace("ToolError", "Timeout"),
        },
    )
    active, shadowed = RulesetHolder(load_ruleset(team)), RulesetHolder(load_ruleset(candidate))
    where = Location(f"/r/{MARKUP_FOLDER}.yaml", 3, 5)
    active.last_reload = ReloadStatus(
        ReloadResult.failed,
        "2026-12-01T00:00:00Z",
        "signal",
        (Diagnostic(Code.duplicate_rule_id, f"id {HOSTILE} twice", where),),
        "x",
    )
    metrics, activity = Metrics(), Activity()
    sample, shadow = UnknownSample(metrics), Shadow(shadowed, metrics)
    message = '<script>alert("rule")</script>'
    for descriptor in (
        descriptor_from_data({"type": HOSTILE, "origin": "tool", "message": MARKUP_FOLDER}),
        descriptor_from_data({"type": "a.B", "origin": "tool", "message": message}),
    ):
        answer = classify(active.current, descriptor)
        activity.classified(descriptor, answer)
        shadow.classified(descriptor, answer)
        sample.add(0.0, descriptor, answer)
    explaining = Explaining()
    console = Console(Sources(active, activity, explaining, 10_000, shadowed, sample, shadow))
    console.budget.rate = 1e9  # every page at once
    query = urllib.parse.urlencode({"q": ATTRIBUTE + HOSTILE})
    forms = [{"descriptor": json.dumps({"type": HOSTILE}), "rule": ATTRIBUTE + HOSTILE}]
    forms.append({"descriptor": f"type: a.B\norigin: tool\nmessage: '{HOSTILE}'"})
    forms.append({"descriptor": HOSTILE})  # not a descriptor: the violations, and the form
    try:
        shown = {
            "overview": _call(console, "GET", "/console"),
            "filtered": _call(console, "GET", "/console", env={"QUERY_STRING": query}),
            "rule": _call(console, "GET", "/console/rule", env={"QUERY_STRING": "id=team.hostile"}),
            "no such rule": _call(
                console, "GET", "/console/rule", env={"QUERY_STRING": f"id={HOSTILE}"}
            ),
            **{
                f"explain {i}": _call(
                    console, "POST", "/console/explain", urllib.parse.urlencode(form).encode()
                )
                for i, form in enumerate(forms)
            },
        }
    finally:
        explaining.close()
    expected = {
        "overview": [HOSTILE, MARKUP_FOLDER, json.dumps(message)],  # the shadow's example
        "filtered": [],
        "rule": [
            '<script>alert("description")</script> & <b>not bold</b>',
            r'message: <script>alert\("rule"\)</script>',
        ],
        "no such rule": [HOSTILE],
        "explain 0": [f"has no rule {ATTRIBUTE + HOSTILE!r}", json.dumps({"type": HOSTILE})],
        "explain 1": ["Explained under team 2.0.0", HOSTILE],
        "explain 2": ["Not a valid descriptor", HOSTILE],
    }
    for name, (status, _, page) in shown.items():
        tags = _parsed(page)
        assert not {"script", "img"} & set(tags.tags), name
        assert not [a for a, _ in tags.attributes if a.startswith("on") or a == "a"], name
        text = "".join(tags.text)
        for value in expected[name]:
            assert value in text, (name, value)
        refused = {"no such rule": "404", "explain 0": "400", "explain 2": "400"}
        assert status.startswith(refused.get(name, "200")), (name, status)
    filtered = _parsed(shown["filtered"][2]).attributes
    assert ("value", ATTRIBUTE + HOSTILE) in filtered  # the filter, whole, in its own field
    rule_field = _parsed(shown["explain 0"][2]).attributes
    assert ("value", ATTRIBUTE + HOSTILE) in rule_field


def test_a_failed_reload_lists_every_diagnostic_escaped() -> None:
    where = Location("/r/<x>.yaml", 3, 5)
    diagnostics = tuple(
        Diagnostic(Code.duplicate_rule_id, f"id <b>{i}</b> twice", where) for i in range(60)
    )
    status = ReloadStatus(ReloadResult.failed, "2026-12-01T00:00:00Z", "signal", diagnostics, "x")
    shown = reload_section("active", status)
    assert shown.count("/r/&lt;x&gt;.yaml:3:5: duplicate_rule_id: id &lt;b&gt;59&lt;/b&gt;") == 1
    assert shown.count("duplicate_rule_id") == 60  # every one, not the log's first 50
    ok = reload_section("active", ReloadStatus(ReloadResult.reloaded, "t", "watch"))
    assert "failed" not in ok


def _many_rules(make_ruleset: MakeRuleset, n: int) -> Any:
    rules = "rules:\n" + "".join(
        f"  - id: r{i:04d}\n    when: {{http_status: {400 + i % 100}, code: c{i}}}\n"
        f"    class: {'ProviderError' if i % 2 else 'ToolError'}\n"
        for i in range(n)
    )
    return load_ruleset(make_ruleset(rules))


def test_rules_are_filtered_sorted_and_paged(make_ruleset: MakeRuleset) -> None:
    ruleset = _many_rules(make_ruleset, 2500)
    hits = {"r0007": RuleHits(5, 100.0), "r2400": RuleHits(9, 50.0)}
    first = select_rules(ruleset, hits, RuleQuery())
    assert (first.matched, first.pages, len(first.rows)) == (2500, 50, 50)
    last = select_rules(ruleset, hits, RuleQuery(page=999))
    assert last.page == 50
    assert last.rows[-1][0].id == "r2499"
    assert [r.id for r, _ in select_rules(ruleset, hits, RuleQuery(sort="hits")).rows[:2]] == [
        "r2400",
        "r0007",
    ]
    assert select_rules(ruleset, hits, RuleQuery(sort="last")).rows[0][0].id == "r0007"
    never = select_rules(ruleset, hits, RuleQuery(hits="never", per=500))
    assert never.matched == 2498
    assert len(never.rows) == 500
    assert [r.id for r, _ in select_rules(ruleset, hits, RuleQuery(hits="hit")).rows] == [
        "r0007",
        "r2400",
    ]
    assert select_rules(ruleset, hits, RuleQuery(text="TOOLERROR")).matched == 1250
    assert select_rules(ruleset, hits, RuleQuery(text="r24")).matched == 100
    q = RuleQuery.parse({"per": ["100000"], "page": ["-3"], "sort": ["<x>"], "q": ["a" * 999]})
    assert (q.per, q.page, q.sort, len(q.text)) == (MAX_PER_PAGE, 1, "order", 200)
    assert RuleQuery.parse({"per": ["many"]}).per == RuleQuery().per


def test_a_teams_own_rules_come_first_and_a_layer_filter_keeps_one_layer(
    tmp_path: Path,
) -> None:
    """A team's two rules on a base of 120: in ruleset order they are the first rows of the
    first page (they were the last page's), `layer=` keeps one layer's rules, the page has
    the control, and every link of the table keeps the filter."""
    base_rules = "rules:\n" + "".join(
        f"  - id: base.r{i:03d}\n    when: {{http_status: {400 + i % 100}, code: c{i}}}\n"
        "    class: ProviderError\n"
        for i in range(120)
    )
    write_folder(
        tmp_path / "base",
        {
            **serving_files(),
            "ruleset.yaml": "name: base\nversion: 1.0.0\n",
            "rules.yaml": base_rules,
        },
    )
    team = write_folder(
        tmp_path / "team",
        {
            "ruleset.yaml": "name: team\nversion: 2.0.0\nbase:\n  - path: ../base\n",
            "team.yaml": TEAM_RULES
            + "  - id: team.quota\n    when: {type: acme.QuotaGone}\n    class: QuotaExceeded\n",
        },
    )
    ruleset = load_ruleset(team)
    team_ids = ["team.hostile", "team.quota"]
    assert [r.id for r in ruleset.rules if r.layer == 0] == team_ids
    assert ruleset.rules[0].layer != 0  # the engine's order puts the base first ...
    first = select_rules(ruleset, {}, RuleQuery())
    assert [r.id for r, _ in first.rows[:2]] == team_ids  # ... the table, the team's rules
    assert [r.id for r, _ in first.rows[2:5]] == ["base.r000", "base.r001", "base.r002"]
    assert first.matched == len(ruleset.rules)
    only_team = select_rules(ruleset, {}, RuleQuery(layer="team"))
    assert ([r.id for r, _ in only_team.rows], only_team.pages) == (team_ids, 1)
    only_base = select_rules(ruleset, {}, RuleQuery(layer="base", per=500))
    assert only_base.matched == 120
    assert {ruleset.layers[r.layer].name for r, _ in only_base.rows} == {"base"}
    assert select_rules(ruleset, {}, RuleQuery(layer="elsewhere")).matched == 0
    assert select_rules(ruleset, {}, RuleQuery(layer="team", text="quota")).matched == 1
    parsed = RuleQuery.parse({"layer": [" base "], "page": ["2"]})
    assert parsed.layer == "base"
    assert "layer=base" in parsed.link(page=3)
    # The page: the control lists each layer once, the chosen one selected.
    with Explaining() as explaining:
        console = Console(Sources(RulesetHolder(ruleset), Activity(), explaining, 10_000))
        status, _, page = _call(console, "GET", "/console", env={"QUERY_STRING": "layer=team"})
    assert status == "200 OK"
    tags = _parsed(page)
    assert [v for a, v in tags.attributes if a == "name"].count("layer") == 1
    assert ("value", "team") in tags.attributes
    assert "<option value='team' selected>team</option>" in page
    assert "<option value='base'>base</option>" in page
    assert "(2 rules)" in page


def test_the_chart_has_a_bar_per_minute_of_the_last_hour() -> None:
    clock = [3_600_000.0]
    activity = Activity(clock=lambda: clock[0])
    ruleset_answer = _answer(unknown=False)
    for minute in range(70):
        clock[0] = 3_600_000.0 + minute * 60
        for _ in range(3):
            activity.classified(None, ruleset_answer)  # type: ignore[arg-type]
        activity.classified(None, _answer(unknown=True))  # type: ignore[arg-type]
    hour = activity.last_hour()
    assert len(hour) == 60
    assert all(m.answers == 4 and m.unknown == 1 for m in hour)
    assert activity.hits() == {"probe": RuleHits(210, clock[0])}
    svg = share_chart(hour)
    assert svg.count("<rect") == 60
    assert svg.count("1 of 4 Unknown (25.0%)") == 60


def _answer(*, unknown: bool) -> Any:
    from classifier.answer import Action, Classification
    from classifier.taxonomy import Effect, ErrorClass

    return Classification(
        ErrorClass.Unknown if unknown else ErrorClass.Timeout,
        Action("a", "b"),
        Effect.fail,
        False,
        "" if unknown else "probe",
        "1",
        "d",
    )


def test_hits_counted_from_many_threads_add_up() -> None:
    """The hot path takes no lock; on CPython's GIL no increment is lost (8 threads)."""
    activity = Activity()
    answer = _answer(unknown=False)

    def work() -> None:
        for _ in range(50_000):
            activity.classified(None, answer)  # type: ignore[arg-type]

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert activity.hits()["probe"].count == 400_000
    assert sum(m.answers for m in activity.last_hour()) == 400_000


def _call(
    console: Console, method: str, path: str, body: bytes = b"", env: dict[str, Any] | None = None
) -> tuple[str, dict[str, str], str]:
    got: dict[str, Any] = {}

    def start(status: str, headers: list[tuple[str, str]]) -> None:
        got["status"], got["headers"] = status, dict(headers)

    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "CONTENT_LENGTH": str(len(body)),
        "CONTENT_TYPE": "application/x-www-form-urlencoded",
        "wsgi.input": BytesIO(body),
        **(env or {}),
    }
    data = b"".join(console(environ, start))
    return got["status"], got["headers"], data.decode()


def test_an_explain_whose_process_failed_is_503(make_ruleset: MakeRuleset) -> None:
    """The explaining process failing is 503 (gRPC's UNAVAILABLE), saying why."""

    class Died(ExplainingProcess):
        def run(self, *_: object, **__: object) -> Any:
            raise ExplainRefusedError(Why.DIED, "the explaining process died; it is restarted")

    ruleset = load_ruleset(make_ruleset(SERVING_RULES))
    with Explaining(process=Died()) as explaining:
        console = Console(Sources(RulesetHolder(ruleset), Activity(), explaining, 10_000))
        form = urllib.parse.urlencode({"descriptor": "type: a.B\norigin: provider"}).encode()
        status, _, page = _call(console, "POST", "/console/explain", form)
        assert status == "503 Service Unavailable"
        assert "no explanation: the explaining process died; it is restarted" in page
        explaining.budget.take()  # the slot was given back
        explaining.budget.give()


def test_the_explain_form_is_size_limited_and_shares_the_servers_explain_budget(
    make_ruleset: MakeRuleset,
) -> None:
    ruleset = load_ruleset(make_ruleset(SERVING_RULES))
    explaining = Explaining()
    budget = explaining.budget
    console = Console(
        Sources(RulesetHolder(ruleset), Activity(), explaining, max_request_bytes=1000)
    )
    form = urllib.parse.urlencode({"descriptor": "type: a.B\nhttp_status: 429\norigin: provider"})
    status, headers, page = _call(console, "POST", "/console/explain", form.encode())
    assert status == "200 OK"
    assert "rule:      provider.429" in page
    assert headers["Content-Security-Policy"] == CSP
    big = urllib.parse.urlencode({"descriptor": "x" * 1001}).encode()
    assert _call(console, "POST", "/console/explain", big)[0] == "413 Content Too Large"
    unread = {"CONTENT_LENGTH": "10000000", "wsgi.input": BytesIO(b"")}  # never read
    status, _, _ = _call(console, "POST", "/console/explain", env=unread)
    assert status == "413 Content Too Large"
    budget.take()  # a gRPC explain call holds the server's one explain slot
    try:
        assert (
            _call(console, "POST", "/console/explain", form.encode())[0] == "429 Too Many Requests"
        )
    finally:
        budget.give()
    assert _call(console, "GET", "/console/explain")[0] == "405 Method Not Allowed"
    assert _call(console, "POST", "/console")[0] == "405 Method Not Allowed"
    bad = urllib.parse.urlencode({"descriptor": "type: [unclosed"}).encode()
    status, _, page = _call(console, "POST", "/console/explain", bad)
    assert status == "400 Bad Request"
    assert "Not a valid descriptor" in page
    assert "&lt;form&gt;:1:16: descriptor: yaml_syntax_error:" in page
    # Each malformed field is named, where it is in the form's text, and the form comes back.
    wrong = '{"type": "a.B", "http_status": "abc", "origin": "nowhere", "colour": 1}'
    status, headers, page = _call(
        console, "POST", "/console/explain", urllib.parse.urlencode({"descriptor": wrong}).encode()
    )
    assert status == "400 Bad Request"
    assert headers["Content-Security-Policy"] == CSP
    shown = "".join(_parsed(page).text)
    for named in ("descriptor.http_status", "descriptor.origin", "descriptor.colour"):
        assert f": {named}: " in shown, named
    assert wrong in shown  # the form, filled in again
    no_rule = urllib.parse.urlencode({"descriptor": "type: a.B", "rule": "no.such-rule"})
    status, _, page = _call(console, "POST", "/console/explain", no_rule.encode())
    assert status == "400 Bad Request"
    assert "has no rule &#39;no.such-rule&#39;" in page
    assert explaining.process.forks == 1  # explained in the explaining process, forked once
    explaining.close()
