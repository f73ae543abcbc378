"""The Java client as a package (clients/java): versioned with the classifier, and its
README's commands working: a program in a folder outside the repository, depending only on
the built jar and its runtime dependencies, turns a real java.net.http.HttpTimeoutException
into a descriptor and gets Timeout from a running server (its first call from a fresh JVM,
which FIRST_CONNECT allows for), sees a refused descriptor's field violations, decoded
from the status's google.rpc.BadRequest detail, and classifies in process from a bundle that
`classifier bundle build` wrote and `classifier bundle sign` signed, verified with the
operators' public key (and refused with another). Its generated constants are checked with
every client's by tests/clients/test_spec.py."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from classifier import __version__
from classifier.server import GrpcServer
from tests.conformance.java_drivers import CLIENT_DIR, JAVA_DIR, java_available, maven_lock
from tests.support import ROOT

README = CLIENT_DIR / "README.md"
README_ADDRESS = "127.0.0.1:50051"
README_HANGING_URL = "http://127.0.0.1:8999/v1/chat/completions"
SHELL_BLOCK = re.compile(r"```sh\n(.*?)```\n", re.DOTALL)
JAVA_BLOCK = re.compile(r"```java\n(.*?)```\n", re.DOTALL)
ANSI = re.compile(r"\x1b\[[0-9;]*m")
POM = "{http://maven.apache.org/POM/4.0.0}"


def pom_version(pom: Path) -> str:
    root = ET.parse(pom).getroot()
    version = root.find(f"{POM}version")
    assert version is not None
    assert version.text
    return version.text


def test_the_package_is_versioned_with_the_classifier() -> None:
    assert pom_version(CLIENT_DIR / "pom.xml") == __version__
    worker = ET.parse(JAVA_DIR / "pom.xml").getroot()
    assert worker.findtext(f"{POM}properties/{POM}errorclass.version") == __version__
    assert f"<version>{__version__}</version>" in README.read_text()
    assert f"errorclass-client:{__version__}" in README.read_text()


@pytest.fixture
def hanging_url() -> Iterator[str]:
    """An HTTP endpoint on loopback that reads the request and never answers."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/v1/chat/completions"
    finally:
        stop.set()
        thread.join(timeout=5)
        for conn in held:
            conn.close()
        server.close()


def test_readme_commands_work_from_a_folder_outside_the_repository(
    server: GrpcServer, hanging_url: str, tmp_path: Path
) -> None:
    """Every shell block of the README, in order, as one script, with its Java programs
    written into a temporary folder outside the repository (the README's /tmp)."""
    if not java_available():
        pytest.skip("java and mvn are not on PATH: the Java client test needs JDK 17 and Maven")
    text = README.read_text(encoding="utf-8")
    blocks = SHELL_BLOCK.findall(text)
    assert len(blocks) == 1
    assert text.count("```sh") == 1
    app = tmp_path / "my-app"
    app.mkdir()
    programs = JAVA_BLOCK.findall(text)
    assert len(programs) == 3
    for program in programs:
        name = re.search(r"public class (\w+)", program)
        assert name is not None
        (app / f"{name.group(1)}.java").write_text(program)
    assert not app.is_relative_to(ROOT)
    script = "set -euo pipefail\n" + blocks[0]
    served_address = f"127.0.0.1:{server.port}"
    script = script.replace(README_ADDRESS, served_address).replace(README_HANGING_URL, hanging_url)
    script = re.sub(r"/tmp(?=[/\s])", str(tmp_path), script)
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    # The README's `classifier bundle ...` commands: the classifier installed beside this Python.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    with maven_lock():
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    lines = ANSI.sub("", done.stdout).strip().splitlines()  # Maven 3.8 colours even with -B
    assert lines[0] == "Timeout timeout.review RUN_EFFECT_FAIL", done.stdout
    assert lines[1].startswith("descriptor.type: "), done.stdout
    assert any(line.startswith("descriptor.code: ") for line in lines[1:]), done.stdout
    # Local.java: the signed bundle, verified with the key that signed it, answers locally as
    # the README says; a key that did not sign it is refused.
    assert "Timeout timeout.review local=true true" in lines, done.stdout
    assert lines[-1] == "refused: unknown_key", done.stdout
    assert "It prints `Timeout timeout.review local=true true` and `refused: unknown_key`." in text
    classpath = (tmp_path / "errorclass.classpath").read_text()
    assert "errorclass" not in classpath
    assert str(ROOT) not in classpath
    assert shutil.which("java") is not None
