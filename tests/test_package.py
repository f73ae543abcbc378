"""The package as a user gets it: an sdist and a wheel built with `python -m build`, with the
client's wheel (clients/python, its own distribution, which the server depends on), both
installed (not editable) into a fresh virtual environment outside the repository, and every
subcommand run there on the bundled library, with no checkout in sight."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tarfile
import time
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import BUNDLED_RULES, ROOT, committable_files

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CLIENT = ROOT / "clients" / "python"
CLIENT_PYPROJECT = tomllib.loads((CLIENT / "pyproject.toml").read_text())
BUILD_TIMEOUT = 600
CONSTRAINTS = str(ROOT / "constraints.txt")


def _folders(root: Path, package: str) -> set[str]:
    """root and every folder under it, as the packages setuptools makes of them."""
    return {package} | {
        ".".join((package, *p.relative_to(root).parts))
        for p in root.rglob("*")
        if p.is_dir() and "__pycache__" not in p.parts
    }


def test_every_package_of_the_tree_is_listed_and_the_library_is_mapped() -> None:
    """pyproject lists the packages (a search would miss the library): none may be left out,
    data folders included (the library's and the schemas': setuptools warns that a folder
    it ships files from but was not told of "would be ignored")."""
    setuptools = PYPROJECT["tool"]["setuptools"]
    found = _folders(ROOT / "classifier", "classifier") | _folders(
        BUNDLED_RULES, "classifier.library"
    )
    assert sorted(setuptools["packages"]) == sorted(found)
    assert setuptools["package-dir"] == {"classifier.library": "rules"}
    assert setuptools["package-data"]["classifier.library"] == ["**/*.yaml"]


def test_the_clients_packages_are_listed() -> None:
    """The client's pyproject lists its packages (the stubs' folders included)."""
    listed = CLIENT_PYPROJECT["tool"]["setuptools"]["packages"]
    assert sorted(listed) == sorted(_folders(CLIENT / "errorclass_client", "errorclass_client"))


def test_the_client_is_versioned_with_the_classifier() -> None:
    """One version: the classifier's (facts.json's), the client's, the server's pin of the
    client, and the tested constraint."""
    version = PYPROJECT["project"]["version"]
    facts = json.loads((ROOT / "clients" / "spec" / "facts.json").read_text())
    assert CLIENT_PYPROJECT["project"]["version"] == facts["version"] == version
    assert f"errorclass-client=={version}" in PYPROJECT["project"]["dependencies"]
    assert f"errorclass-client=={version}" in Path(CONSTRAINTS).read_text().splitlines()


def test_the_client_depends_on_grpcio_and_protobuf_only() -> None:
    names = sorted(
        re.split(r"[<>=!~ ;\[]", r)[0] for r in CLIENT_PYPROJECT["project"]["dependencies"]
    )
    assert names == ["grpcio", "protobuf"]


def _tracked_tree(dest: Path) -> Path:
    """The working tree's files that git would commit (tracked or not ignored), copied."""
    for name in committable_files():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((ROOT / name).read_bytes())
    return dest


@dataclass(frozen=True)
class Installed:
    sdist: Path
    wheel: Path
    client_wheel: Path
    venv: Path
    work: Path
    """An empty folder outside the repository to run commands in."""

    @property
    def classifier(self) -> str:
        return str(self.venv / "bin" / "classifier")

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        return env

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            args, cwd=self.work, env=self.env(), capture_output=True, text=True, timeout=timeout
        )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("package")
    source = _tracked_tree(base / "src")
    dist = base / "dist"
    client_dist = base / "client-dist"
    for folder, out in ((source, dist), (source / "clients" / "python", client_dist)):
        build = subprocess.run(
            [sys.executable, "-m", "build", "--outdir", str(out), str(folder)],
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT,
        )
        assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    [sdist] = dist.glob("*.tar.gz")
    [wheel] = dist.glob("*.whl")
    [client_wheel] = client_dist.glob("*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run(
        [
            *(str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-c", CONSTRAINTS),
            *(str(client_wheel), str(wheel)),
        ],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
    )
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    work = base / "work"
    work.mkdir()
    return Installed(sdist, wheel, client_wheel, venv, work)


def _library_files() -> set[str]:
    return {p.relative_to(BUNDLED_RULES).as_posix() for p in BUNDLED_RULES.rglob("*.yaml")}


def test_the_wheel_carries_the_library_schemas_and_stubs(installed: Installed) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    library = {n.removeprefix("classifier/library/") for n in names if "/library/" in n}
    assert library == _library_files()
    assert "classifier/py.typed" in names
    assert not any(n.startswith("errorclass_client/") for n in names)  # the client's own wheel
    schemas = {p.name for p in (ROOT / "classifier" / "schemas").glob("*.json")}
    assert schemas
    assert {f"classifier/schemas/{s}" for s in schemas} <= names
    assert "classifier/server/web/console.css" in names  # the console's only asset
    templates = ROOT / "classifier" / "server" / "web" / "templates"
    assert {f"classifier/server/web/templates/{t.name}" for t in templates.glob("*.html")} <= names
    assert not any(n.startswith(("tests/", "rules/", "tools/")) for n in names)


def test_the_clients_wheel_carries_the_stubs_and_the_facts(installed: Installed) -> None:
    """The one copy of the generated stubs, typed, and the rendered facts are the client's."""
    names = set(zipfile.ZipFile(installed.client_wheel).namelist())
    stubs = "errorclass_client/proto/errorclass/v1/"
    assert {
        "errorclass_client/py.typed",
        "errorclass_client/facts.py",
        "errorclass_client/taxonomy.py",
        f"{stubs}classifier_pb2.py",
        f"{stubs}classifier_pb2.pyi",
        f"{stubs}classifier_pb2_grpc.py",
    } <= names
    assert not any(n.startswith(("classifier/", "tests/")) for n in names)


def test_the_installed_console_renders_its_templates(installed: Installed) -> None:
    """The console's templates load from the installed package (Jinja2 and MarkupSafe came
    with the serving install) and escape what is put into them."""
    out = installed.run(
        str(installed.venv / "bin" / "python"),
        "-c",
        "from classifier.server.web.pages import environment, refused_page; "
        "env = environment(); print(env.get_template('page.html').filename); "
        "print(refused_page('404 Not Found', '<script>x</script>'))",
    )
    assert out.returncode == 0, out.stderr
    filename, page = out.stdout.split("\n", 1)
    assert filename.startswith(str(installed.venv / "lib"))
    assert "<p>&lt;script&gt;x&lt;/script&gt;</p>" in page
    assert "<section class=refused><h2>404 Not Found</h2>" in page


def test_the_sdist_carries_the_library_as_rules(installed: Installed) -> None:
    with tarfile.open(installed.sdist) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    assert {f"rules/{f}" for f in _library_files()} <= names
    assert {"pyproject.toml", "README.md"} <= names


def test_the_install_is_the_wheel_not_the_checkout(installed: Installed) -> None:
    """The package and its library come from the venv; the version is the built one."""
    out = installed.run(
        str(installed.venv / "bin" / "python"),
        "-c",
        "import classifier; from classifier.source.library import bundled_library; "
        "print(classifier.__file__); print(bundled_library()); print(classifier.__version__)",
    )
    assert out.returncode == 0, out.stderr
    package, library, version = out.stdout.splitlines()
    site = str(installed.venv / "lib")
    assert package.startswith(site)
    assert library.startswith(site)
    assert library.endswith("classifier/library")
    assert version == PYPROJECT["project"]["version"]
    assert installed.run(installed.classifier, "--version").stdout == f"classifier {version}\n"


DESCRIPTOR = "type: openai.RateLimitError\nhttp_status: 429\norigin: provider\n"


def test_every_subcommand_runs_on_the_bundled_library(installed: Installed) -> None:
    """check --strict, test with full coverage, classify, explain and diff: the defaults are
    the library inside the install."""
    (installed.work / "d.yaml").write_text(DESCRIPTOR)
    check = installed.run(installed.classifier, "check", "--strict")
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.startswith("ok: default ")
    test = installed.run(installed.classifier, "test", "--coverage", "--min-coverage", "100")
    assert test.returncode == 0, test.stdout[-2000:] + test.stderr
    assert " 0 failed" in test.stdout
    classify = installed.run(installed.classifier, "classify", "d.yaml")
    assert classify.returncode == 0, classify.stderr
    assert "class:     RateLimited (3)" in classify.stdout
    explain = installed.run(installed.classifier, "explain", "d.yaml")
    assert explain.returncode == 0, explain.stderr
    # The winner's location names the library, not where the install put it.
    assert "library:default/python/openai.yaml:" in explain.stdout
    assert "site-packages" not in explain.stdout
    library = installed.run(
        str(installed.venv / "bin" / "python"),
        "-c",
        "from classifier.source.library import bundled_library; print(bundled_library())",
    ).stdout.strip()
    assert library.endswith("classifier/library"), library  # the library inside the install
    diff = installed.run(
        installed.classifier, "diff", "--base", library, "--head", library, library
    )
    assert diff.returncode == 0, diff.stdout + diff.stderr
    assert "\n0 of " in diff.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_serve_health_and_the_remote_commands(installed: Installed) -> None:
    """`classifier serve` with no flags but a port serves the library; health, ruleset and
    classify --addr reach it; SIGTERM stops it cleanly."""
    (installed.work / "d.yaml").write_text(DESCRIPTOR)
    address = f"127.0.0.1:{_free_port()}"
    server = subprocess.Popen(
        [installed.classifier, "serve", "--addr", address],
        cwd=installed.work,
        env=installed.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while installed.run(installed.classifier, "health", "--addr", address).returncode != 0:
            assert server.poll() is None, server.communicate()[1]
            assert time.monotonic() < deadline, "the server did not become healthy"
            time.sleep(0.2)
        ruleset = installed.run(installed.classifier, "ruleset", "--addr", address)
        assert ruleset.returncode == 0, ruleset.stderr
        assert "name:        default" in ruleset.stdout
        assert f"classifier:  {PYPROJECT['project']['version']}" in ruleset.stdout
        assert "classifier/library" in ruleset.stdout  # the source
        remote = installed.run(installed.classifier, "classify", "--addr", address, "d.yaml")
        local = installed.run(installed.classifier, "classify", "d.yaml")
        assert (remote.returncode, remote.stdout) == (0, local.stdout)
    finally:
        server.send_signal(signal.SIGTERM)
        _, err = server.communicate(timeout=30)
    assert server.returncode == 0, err
    assert '"event": "start"' in err


def test_a_git_url_builds_the_same_wheel(installed: Installed, tmp_path: Path) -> None:
    """The README's other path, `pip install git+file://...` of a clone: pip builds it from
    git into the same files the `python -m build` wheel has, the library included (the
    dependencies it would then install are the ones the wheel's install above brought)."""
    repo = _tracked_tree(tmp_path / "repo")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "snapshot"]):
        subprocess.run([*git, *args], check=True, capture_output=True, timeout=120)
    out = tmp_path / "wheels"
    pip = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "-w",
            str(out),
            f"git+file://{repo}",
        ],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        cwd=tmp_path,
    )
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    [wheel] = out.glob("*.whl")
    assert wheel.name == installed.wheel.name
    from_git = set(zipfile.ZipFile(wheel).namelist())
    assert from_git == set(zipfile.ZipFile(installed.wheel).namelist())
    assert "classifier/library/ruleset.yaml" in from_git
    # The client from the same URL, `#subdirectory=clients/python` (the README says so).
    client_out = tmp_path / "client-wheels"
    pip = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(client_out)),
            f"git+file://{repo}#subdirectory=clients/python",
        ],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        cwd=tmp_path,
    )
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    [client_wheel] = client_out.glob("*.whl")
    assert client_wheel.name == installed.client_wheel.name
    assert set(zipfile.ZipFile(client_wheel).namelist()) == set(
        zipfile.ZipFile(installed.client_wheel).namelist()
    )


ACME = {
    "ruleset.yaml": "name: acme\nversion: 1.0.0\nbase:\n  - library: default\n",
    "actions.yaml": "actions:\n  - id: acme.call-payments\n    summary: Page the payments team.\n",
    "rules.yaml": "rules:\n  - id: acme.declined\n    when: {type: acme.PaymentDeclined}\n"
    "    class: ToolError\n    action: acme.call-payments\n",
    "rules.cases.yaml": "cases:\n  - note: a declined payment pages the payments team\n"
    "    descriptor: {type: acme.PaymentDeclined}\n"
    "    want: {class: ToolError, rule: acme.declined, action: acme.call-payments}\n",
}


def test_a_team_ruleset_builds_on_the_installed_library(installed: Installed) -> None:
    """One rule, one action, one case on `library: default`: the library inside the install
    is the base, check --strict and full coverage pass, and both layers answer."""
    acme = installed.work / "acme"
    for name, text in ACME.items():
        (acme / name).parent.mkdir(parents=True, exist_ok=True)
        (acme / name).write_text(text)
    check = installed.run(installed.classifier, "check", "--strict", "--rules", "acme")
    assert check.returncode == 0, check.stdout + check.stderr
    test = installed.run(installed.classifier, "test", "--coverage", "--min-coverage", "100")
    assert test.returncode == 0  # the library's own cases, from the install
    test = installed.run(
        installed.classifier, "test", "--coverage", "--min-coverage", "100", "--rules", "acme"
    )
    assert test.returncode == 0, test.stdout + test.stderr
    (installed.work / "own.yaml").write_text("type: acme.PaymentDeclined\n")
    (installed.work / "bundled.yaml").write_text(DESCRIPTOR)
    own = installed.run(installed.classifier, "classify", "--rules", "acme", "own.yaml")
    assert "rule:      acme.declined" in own.stdout, own.stderr
    bundled = installed.run(installed.classifier, "classify", "--rules", "acme", "bundled.yaml")
    assert "rule:      python.openai.rate-limited" in bundled.stdout, bundled.stderr


def test_the_pytest_extra_runs_a_rulesets_cases_with_pytest(installed: Installed) -> None:
    """`classifier init` writes a ruleset whose case pytest runs: the package alone brings the
    plugin, not pytest; the `[pytest]` extra brings it, pinned by constraints.txt as every
    other dependency, into the same environment, where pytest finds the plugin."""
    assert not (installed.venv / "bin" / "pytest").exists()
    pip = installed.run(
        str(installed.venv / "bin" / "python"),
        "-m",
        "pip",
        "install",
        "-q",
        "-c",
        CONSTRAINTS,
        f"{installed.wheel}[pytest]",
        timeout=BUILD_TIMEOUT,
    )
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    init = installed.run(installed.classifier, "init", "team")
    assert init.returncode == 0, init.stdout + init.stderr
    pytest_ = installed.run(
        str(installed.venv / "bin" / "pytest"), "-p", "no:cacheprovider", "team"
    )
    assert pytest_.returncode == 0, pytest_.stdout[-3000:] + pytest_.stderr
    assert "1 passed" in pytest_.stdout
    version = installed.run(str(installed.venv / "bin" / "pytest"), "--version")
    pinned = next(
        line.split("==")[1]
        for line in Path(CONSTRAINTS).read_text().splitlines()
        if line.startswith("pytest==")
    )
    assert version.stdout.strip() == f"pytest {pinned}"
