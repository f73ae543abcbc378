"""Where a served ruleset is, whatever the server's working directory: a folder's absolute
path in GetRuleset, the start log, the console and `ruleset --addr`; the library's files as
`library:default/...` in explanations sent to remote clients; a base edit still reloads (the
watcher keeps each layer's resolved folder, not a display string)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from classifier.cli import main
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from tests.conftest import StartApp
from tests.support import BUNDLED_RULES, wait_for, write_atomically, write_folder

DISABLE = "disable:\n  - rule: python.openai.timeout\n    reason: our client times out itself\n"
PROBE = "rules:\n  - id: probe\n    when: {type: test.Probe}\n    class: {}\n"


def test_a_folder_given_relative_is_served_by_its_absolute_path(
    tmp_path: Path,
    start_app: StartApp,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_folder(
        tmp_path / "platform",
        {
            "ruleset.yaml": "name: platform\nversion: 3.1.0\nbase:\n  - library: default\n",
            "probe.yaml": PROBE.replace("{}", "Timeout"),
        },
    )
    manifest = "name: acme\nversion: 1.0.0\nbase:\n  - path: ../platform\n" + DISABLE
    write_folder(tmp_path / "acme", {"ruleset.yaml": manifest})
    monkeypatch.chdir(tmp_path)
    running = start_app(Path("acme"), watch=True)
    logged = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line]
    assert [e["source"] for e in logged if e["event"] == "start"] == [str(tmp_path / "acme")]
    stub = running.stub
    info = stub.GetRuleset(pb.GetRulesetRequest())
    assert info.source == str(tmp_path / "acme")
    assert [k.source for k in info.layers] == [
        str(tmp_path / "acme"),
        str(tmp_path / "platform"),
        str(BUNDLED_RULES),
    ]
    status, page = running.http("/console")
    assert status == 200
    assert str(tmp_path / "acme") in page

    address = running.app.address
    assert main(["ruleset", "--addr", address]) == 0
    assert str(tmp_path / "acme") in capsys.readouterr().out
    descriptor = tmp_path / "d.json"
    descriptor.write_text(
        json.dumps({"type": "openai.RateLimitError", "supertypes": ["openai.APIError"]})
    )
    assert main(["explain", "--addr", address, str(descriptor)]) == 0
    assert "library:default/python/openai.yaml:28:5" in capsys.readouterr().out
    rule = ["--rule", "python.openai.timeout"]
    assert main(["explain", "--addr", address, *rule, str(descriptor)]) == 2
    err = capsys.readouterr().err
    assert "it is disabled (acme/ruleset.yaml:6:11): our client" in err  # cwd: tmp_path
    assert "our client times out itself" in err

    probe = pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type="test.Probe"))
    assert stub.Classify(probe).class_name == "Timeout"
    monkeypatch.chdir(tmp_path / "platform")  # the watcher does not read paths from cwd
    write_atomically(tmp_path / "platform" / "probe.yaml", PROBE.replace("{}", "ToolError"))
    wait_for(lambda: stub.Classify(probe).class_name == "ToolError")
