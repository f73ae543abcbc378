"""`classifier bundle build|sign|verify|keygen`, run as processes: exit statuses, stable
codes, rotation with two keys, a changed byte refused, and keys every client language's
standard library reads (Go, Java, Node verify a signature `bundle sign` wrote)."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

CLASSIFIER = [sys.executable, "-m", "classifier", "bundle"]


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLASSIFIER, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120
    )


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the library's bundle signed by keys old and new, and a third key."""
    d = tmp_path_factory.mktemp("bundle")
    assert (
        run(
            "build", "--rules", ROOT / "clients/spec/rulesets/kinds", "-o", "b.json", cwd=d
        ).returncode
        == 0
    )
    for key in ("old", "new", "other"):
        made = run("keygen", "-o", key, cwd=d)
        assert made.returncode == 0, made.stderr
    for key in ("old", "new"):
        assert run("sign", "--key", f"{key}.key", "b.json", cwd=d).returncode == 0
    return d


def test_build_reports_what_it_wrote(tmp_path: Path) -> None:
    done = run("build", "-o", "lib.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("lib.json: default ")
    assert "442 rules" in done.stdout or " rules, " in done.stdout
    assert json.loads((tmp_path / "lib.json").read_text())["format"] == "errorclass-bundle"


def test_build_of_a_broken_ruleset_prints_its_diagnostics(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "clients/spec/rulesets/kinds", rules)
    (rules / "bad.yaml").write_text(
        "rules:\n  - {id: bad, when: {type: x, message: '\\pL+'}, class: ToolError}\n"
    )
    done = run("build", "--rules", rules, "-o", "b.json", cwd=tmp_path)
    assert done.returncode == 1
    assert "non_portable_pattern" in done.stderr
    assert not (tmp_path / "b.json").exists()


def test_a_key_is_never_overwritten(signed: Path) -> None:
    done = run("keygen", "-o", "old", cwd=signed)
    assert done.returncode == 2
    assert done.stderr.startswith("classifier bundle keygen: old.key: file_exists: ")
    assert (signed / "old.key").stat().st_mode & 0o077 == 0


@pytest.mark.parametrize("trusted", [["old"], ["new"], ["old", "new"], ["other", "new"]])
def test_a_bundle_signed_by_two_keys_verifies_with_either(signed: Path, trusted: list[str]) -> None:
    keys = [a for k in trusted for a in ("--public-key", f"{k}.pub")]
    done = run("verify", *keys, "b.json", cwd=signed)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("b.json: accepted, signed by ")


def test_signatures_by_unknown_keys_only_are_refused(signed: Path) -> None:
    done = run("verify", "--public-key", "other.pub", "b.json", cwd=signed)
    assert done.returncode == 1
    assert done.stderr.startswith("classifier bundle verify: b.json: unknown_key: ")


def test_a_changed_byte_is_refused(signed: Path, tmp_path: Path) -> None:
    data = bytearray((signed / "b.json").read_bytes())
    data[len(data) // 2] ^= 0x20
    (tmp_path / "b.json").write_bytes(bytes(data))
    shutil.copy(signed / "b.json.sig.json", tmp_path)
    done = run("verify", "--public-key", signed / "old.pub", "b.json", cwd=tmp_path)
    assert done.returncode == 1
    assert "b.json: bad_signature: " in done.stderr


def test_without_signatures_the_files_are_named(signed: Path, tmp_path: Path) -> None:
    shutil.copy(signed / "b.json", tmp_path)
    done = run("verify", "--public-key", signed / "old.pub", "b.json", cwd=tmp_path)
    assert done.returncode == 2
    assert "unreadable_file" in done.stderr
    assert "b.json.sig.json" in done.stderr
    empty = tmp_path / "empty.json"
    empty.write_text(
        '{"format": "errorclass-bundle-signatures", "format_version": 1, "signatures": []}'
    )
    done = run("verify", "--public-key", signed / "old.pub", "b.json", empty, cwd=tmp_path)
    assert (done.returncode, "unsigned" in done.stderr) == (1, True)


def test_a_private_key_is_not_a_public_key(signed: Path) -> None:
    done = run("verify", "--public-key", "old.key", "b.json", cwd=signed)
    assert done.returncode == 2
    assert done.stderr.startswith("classifier bundle verify: old.key: invalid_key: ")


def test_help_ends_with_the_exit_table() -> None:
    for command in ("build", "sign", "verify", "keygen"):
        done = subprocess.run([*CLASSIFIER, command, "--help"], capture_output=True, text=True)
        assert done.returncode == 0
        assert "exit status:\n  0  success: " in done.stdout


# every language's standard library reads the keys and checks the signature -----------------

GO = """package main

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
)

func main() {
	block, _ := pem.Decode(must(os.ReadFile(os.Args[1])))
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		panic(err)
	}
	sig, _ := base64.StdEncoding.DecodeString(os.Args[3])
	fmt.Println(ed25519.Verify(key.(ed25519.PublicKey), must(os.ReadFile(os.Args[2])), sig))
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
"""
JAVA = """import java.nio.file.*;
import java.security.*;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;

public class Verify {
  public static void main(String[] a) throws Exception {
    String pem = Files.readString(Path.of(a[0])).replaceAll("-----[A-Z ]+-----|\\\\s", "");
    PublicKey key = KeyFactory.getInstance("Ed25519")
        .generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(pem)));
    Signature s = Signature.getInstance("Ed25519");
    s.initVerify(key);
    s.update(Files.readAllBytes(Path.of(a[1])));
    System.out.println(s.verify(Base64.getDecoder().decode(a[2])));
  }
}
"""
NODE = """const crypto = require('node:crypto'); const fs = require('node:fs');
const [pub, file, sig] = process.argv.slice(2);
console.log(crypto.verify(null, fs.readFileSync(file), crypto.createPublicKey(fs.readFileSync(pub)),
  Buffer.from(sig, 'base64')));
"""


def _verifier(language: str, folder: Path) -> list[str]:
    if language == "go":
        (folder / "go.mod").write_text("module verify\n\ngo 1.21\n")
        (folder / "main.go").write_text(GO)
        return ["go", "run", "."]
    if language == "java":
        (folder / "Verify.java").write_text(JAVA)
        return ["java", "Verify.java"]
    (folder / "verify.js").write_text(NODE)
    return ["node", "verify.js"]


@pytest.mark.parametrize("language", ["go", "java", "node"])
def test_each_language_verifies_what_bundle_sign_wrote(
    signed: Path, tmp_path: Path, language: str
) -> None:
    tool = {"go": "go", "java": "java", "node": "node"}[language]
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    signature = json.loads((signed / "b.json.sig.json").read_text())["signatures"][1]
    assert len(base64.b64decode(signature["signature"])) == 64
    command = _verifier(language, tmp_path)
    args = [str(signed / "new.pub"), str(signed / "b.json"), signature["signature"]]
    done = subprocess.run(
        [*command, *args], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert done.stdout.strip() == "true", done.stderr
    (tmp_path / "changed.json").write_bytes((signed / "b.json").read_bytes() + b" ")
    args[1] = str(tmp_path / "changed.json")
    done = subprocess.run(
        [*command, *args], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert done.stdout.strip() == "false", done.stderr
