"""Hot reload: a whole, changed ruleset is swapped in; anything else leaves the old one serving."""

from __future__ import annotations

import gc
import json
import shutil
import time
from pathlib import Path

import grpc
import pytest

from classifier import load_ruleset
from classifier.answer import Classification
from classifier.codes import Code
from classifier.engine.ruleset import Ruleset
from classifier.errors import Diagnostic
from classifier.lint.checks import lint
from classifier.server import ReloadResult, ReloadStatus, RulesetHolder, create_server
from classifier.server.reload import Reloader, RulesWatcher, strict_check
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from tests.conftest import StartApp
from tests.support import (
    ConfigMapVolume,
    ruleset_files,
    wait_for,
    write_atomically,
    write_folder,
)

PROBE = pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type="test.Probe"))


def _reloader(root: Path) -> Reloader:
    return Reloader(root, RulesetHolder(load_ruleset(root)))


def test_a_changed_folder_is_compiled_in_full_then_swapped_in(tmp_path: Path) -> None:
    """The holder moves to the new ruleset in one step; the old object is left intact."""
    root = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    reloader = _reloader(root)
    old = reloader.holder.current
    write_folder(root, ruleset_files("2.0.0", "ToolError"))
    status = reloader.reload("test")
    assert (status.result, status.trigger, status.error) == (ReloadResult.reloaded, "test", "")
    new = reloader.holder.current
    assert (old.version, new.version) == ("1.0.0", "2.0.0")
    assert new.rule("probe") is not None
    assert old.rule("probe") is not None
    assert reloader.holder.last_reload == status


def test_an_unchanged_folder_is_not_swapped(tmp_path: Path) -> None:
    """Touching files without changing what loads keeps the very same ruleset object."""
    root = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    reloader = _reloader(root)
    before = reloader.holder.current
    (root / "README.txt").write_text("not a rule file")
    assert reloader.reload("test").result is ReloadResult.unchanged
    assert reloader.holder.current is before


def test_a_broken_change_keeps_the_old_rules_and_says_where(tmp_path: Path) -> None:
    """The failed status carries every diagnostic as file:line:col: code: message."""
    root = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    reloader = _reloader(root)
    before = reloader.holder.current
    write_folder(
        root,
        ruleset_files(
            "2.0.0",
            "Timeout",
            extra="  - id: bad\n    when: {message: '(unclosed'}\n    class: Timeout\n",
        ),
    )
    status = reloader.reload("test")
    assert status.result is ReloadResult.failed
    assert reloader.holder.current is before
    assert [d.code for d in status.diagnostics] == ["invalid_pattern"]
    assert status.error.startswith(f"{root}/checks/probe.yaml:9:21: invalid_pattern: ")
    assert '(rule "bad")' in status.error


def test_a_check_makes_its_findings_fatal(tmp_path: Path) -> None:
    """What --strict does with lint warnings: a ruleset with findings never replaces a clean one."""
    root = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))

    def no_drafts(ruleset: Ruleset) -> list[Diagnostic]:
        return [
            Diagnostic(Code.catch_all_rule, "drafts do not ship", r.location, rule_id=r.id)
            for r in ruleset.rules
            if r.id.startswith("draft.")
        ]

    reloader = Reloader(root, RulesetHolder(load_ruleset(root)), check=no_drafts)
    write_folder(
        root,
        ruleset_files(
            "2.0.0", "Timeout", extra="  - id: draft.x\n    when: {code: x}\n    class: ToolError\n"
        ),
    )
    status = reloader.reload("test")
    assert status.result is ReloadResult.failed
    assert "catch_all_rule: drafts do not ship" in status.error
    assert reloader.holder.current.version == "1.0.0"


def test_strict_uses_the_linter() -> None:
    """`--strict` resolves to classifier.lint.checks.lint."""
    assert strict_check() is lint


def test_the_server_watches_its_folder_and_reports_reloads(
    tmp_path: Path, start_app: StartApp, capsys: pytest.CaptureFixture[str]
) -> None:
    """Edits reach GetRuleset, answers, metrics and the structured log; a broken edit is refused."""
    root = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    running = start_app(root)
    stub = running.stub
    assert stub.Classify(PROBE).class_name == "Timeout"
    assert not stub.GetRuleset(pb.GetRulesetRequest()).HasField("last_reload")

    write_folder(root, ruleset_files("2.0.0", "ToolError"))
    wait_for(lambda: stub.GetRuleset(pb.GetRulesetRequest()).version == "2.0.0")
    answer = stub.Classify(PROBE)
    assert (answer.class_name, answer.ruleset_version) == ("ToolError", "2.0.0")
    info = stub.GetRuleset(pb.GetRulesetRequest())
    assert info.last_reload.result == pb.RELOAD_RESULT_RELOADED
    assert info.last_reload.trigger == "watch"

    write_atomically(root / "checks" / "probe.yaml", "rules: [unclosed\n")
    wait_for(
        lambda: (
            stub.GetRuleset(pb.GetRulesetRequest()).last_reload.result == pb.RELOAD_RESULT_FAILED
        )
    )
    info = stub.GetRuleset(pb.GetRulesetRequest())
    assert info.version == "2.0.0"
    assert info.last_reload.error.startswith(f"{root}/checks/probe.yaml:2:1: yaml_syntax_error: ")
    assert stub.Classify(PROBE).class_name == "ToolError"
    assert running.metric("errorclass_reloads_total", role="active", result="reloaded") >= 1
    assert running.metric("errorclass_reloads_total", role="active", result="failed") >= 1
    assert running.metric("errorclass_reload_last_success", role="active") == 0
    assert (
        running.metric(
            "errorclass_ruleset_info",
            role="active",
            name="probe",
            version="2.0.0",
            digest=info.digest,
        )
        == 1
    )

    write_folder(root, ruleset_files("3.0.0", "Canceled"))
    wait_for(lambda: stub.GetRuleset(pb.GetRulesetRequest()).version == "3.0.0")
    assert running.metric("errorclass_reload_last_success", role="active") == 1
    reloads = [
        json.loads(line)
        for line in capsys.readouterr().err.splitlines()
        if '"event": "reload"' in line
    ]
    failed = [r for r in reloads if r["result"] == "failed"]
    assert failed
    assert failed[0]["level"] == "error"
    assert failed[0]["diagnostics"][0].startswith(f"{root}/checks/probe.yaml:2:1: ")
    assert reloads[-1]["version"] == "3.0.0"


def test_a_configmap_update_is_a_change(tmp_path: Path, start_app: StartApp) -> None:
    """kubelet's `..data` symlink swap is seen, and rules in linked subfolders are loaded."""
    volume = ConfigMapVolume(tmp_path / "mounted")
    volume.publish(ruleset_files("1.0.0", "Timeout"))
    running = start_app(volume.root)
    stub = running.stub
    assert stub.Classify(PROBE).class_name == "Timeout"
    first = stub.GetRuleset(pb.GetRulesetRequest())
    assert first.rule_count == 2

    volume.publish(ruleset_files("2.0.0", "Infrastructure"))
    wait_for(lambda: stub.GetRuleset(pb.GetRulesetRequest()).version == "2.0.0")
    assert stub.Classify(PROBE).class_name == "Infrastructure"
    plain = write_folder(tmp_path / "plain", ruleset_files("2.0.0", "Infrastructure"))
    assert stub.GetRuleset(pb.GetRulesetRequest()).digest == load_ruleset(plain).digest


HOSTILE: dict[str, tuple[str, str]] = {
    "huge file": ("big.yaml", "file_too_large"),
    "nesting past libyaml's limit": ("deep.yaml", "yaml_syntax_error"),
    "nesting past ours": ("deep.yaml", "yaml_too_deep"),
    "billion laughs": ("laughs.yaml", "yaml_alias_forbidden"),
    "object construction": ("tag.yaml", "yaml_unsafe_tag"),
    "regex too long": ("regex.yaml", "pattern_too_long"),
    "regex too big to compile": ("regex.yaml", "invalid_pattern"),
}


def _hostile(kind: str) -> str:
    if kind == "huge file":
        return "# " + "x" * (5 * 1024 * 1024) + "\nrules: []\n"
    if kind == "nesting past libyaml's limit":
        return "rules: " + "[" * 100_000 + "]" * 100_000 + "\n"
    if kind == "nesting past ours":
        return "rules: " + "[" * 100 + "]" * 100 + "\n"
    if kind == "billion laughs":
        lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
        for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
            lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
        return "\n".join(lines) + "\nrules: []\n"
    if kind == "object construction":
        return "rules: !!python/object/apply:os.system ['true']\n"
    pattern = "a" * 3000 if kind == "regex too long" else r"\\pL{1000}" * 20
    return f'rules:\n  - id: re\n    when: {{message: "{pattern}"}}\n    class: Timeout\n'


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_hostile_rules_folder_is_refused_with_a_clear_error(tmp_path: Path, kind: str) -> None:
    """Huge, deep, self-referencing or regex-bomb rule files fail the reload quickly and precisely."""
    root = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    reloader = _reloader(root)
    file, code = HOSTILE[kind]
    write_atomically(root / file, _hostile(kind))
    started = time.monotonic()
    status = reloader.reload("test")
    assert time.monotonic() - started < 5
    assert status.result is ReloadResult.failed
    assert code in {d.code for d in status.diagnostics}, status.error
    where = next(d.location for d in status.diagnostics if d.code == code)
    assert where.file == f"{root}/{file}"
    assert reloader.holder.current.version == "1.0.0"


def test_the_reload_endpoint_reloads_and_reports(tmp_path: Path, start_app: StartApp) -> None:
    """POST /-/reload answers each ruleset's status: 200 when whole, 500 when refused."""
    root = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    running = start_app(root, watch=False, reload_endpoint=True)
    write_folder(root, ruleset_files("2.0.0", "ToolError"))
    status, body = running.http("/-/reload", "POST")
    assert status == 200
    assert json.loads(body)["active"]["result"] == "reloaded"
    assert running.stub.Classify(PROBE).ruleset_version == "2.0.0"
    assert running.http("/-/reload")[0] == 405
    write_atomically(root / "checks" / "probe.yaml", "rules: 3\n")
    status, body = running.http("/-/reload", "POST")
    assert status == 500
    active = json.loads(body)["active"]
    assert (active["result"], active["trigger"]) == ("failed", "admin")
    assert "checks/probe.yaml:1:8: invalid_value: rules: " in active["error"]


def test_the_reload_endpoint_is_off_unless_enabled(tmp_path: Path, start_app: StartApp) -> None:
    """Without --enable-reload-endpoint, POST /-/reload is forbidden and nothing reloads."""
    root = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    running = start_app(root, watch=False)
    write_folder(root, ruleset_files("2.0.0", "ToolError"))
    status, body = running.http("/-/reload", "POST")
    assert status == 403
    assert "--enable-reload-endpoint" in body
    assert running.stub.Classify(PROBE).ruleset_version == "1.0.0"


@pytest.mark.parametrize("how", ["renamed over", "link switched"])
def test_a_replaced_folder_is_loaded_and_watched(
    tmp_path: Path, start_app: StartApp, how: str
) -> None:
    """Replacing the whole folder (mv, or a `current` link moved to a new release) is a change."""
    releases = tmp_path / "releases"
    first = write_folder(releases / "1", ruleset_files("1.0.0", "Timeout"))
    second = write_folder(releases / "2", ruleset_files("2.0.0", "ToolError"))
    rules = tmp_path / "rules"
    if how == "renamed over":
        first.rename(rules)
    else:
        rules.symlink_to(first)
    running = start_app(rules)
    stub = running.stub
    assert stub.Classify(PROBE).ruleset_version == "1.0.0"
    if how == "renamed over":
        rules.rename(tmp_path / "old")
        second.rename(rules)
    else:
        (tmp_path / "next").symlink_to(second)
        (tmp_path / "next").replace(rules)
    wait_for(lambda: stub.Classify(PROBE).ruleset_version == "2.0.0")
    write_folder(rules, ruleset_files("3.0.0", "Canceled"))
    wait_for(lambda: stub.Classify(PROBE).class_name == "Canceled")


def test_a_folder_switched_again_during_the_catch_up_reload_is_still_loaded(
    tmp_path: Path,
) -> None:
    """The watcher notes which folder it watches before loading it, so a switch in between counts."""
    releases = tmp_path / "releases"
    for n, probe_class in (("1", "Timeout"), ("2", "ToolError"), ("3", "Canceled")):
        write_folder(releases / n, ruleset_files(f"{n}.0.0", probe_class))
    rules = tmp_path / "rules"
    rules.symlink_to(releases / "1")

    def switch(release: str) -> None:
        (tmp_path / "next").symlink_to(releases / release)
        (tmp_path / "next").replace(rules)

    attempts: list[ReloadStatus] = []

    def switch_again_once_2_loads(_role: str, status: ReloadStatus, serving: Ruleset) -> None:
        attempts.append(status)
        if serving.version == "2.0.0" and rules.resolve() == (releases / "2").resolve():
            switch("3")

    def touched_and_seen() -> bool:
        (releases / "1" / "README.txt").write_text(str(time.monotonic()))
        return bool(attempts)

    def settled() -> bool:
        seen = len(attempts)
        time.sleep(0.3)
        return len(attempts) == seen

    reloader = Reloader(
        rules, RulesetHolder(load_ruleset(rules)), listeners=[switch_again_once_2_loads]
    )
    watcher = RulesWatcher(reloader, debounce_ms=50)
    watcher.start()
    try:
        wait_for(touched_and_seen)  # the watch is on release 1
        wait_for(settled)  # and has no change pending: release 2 loads by the catch-up reload
        switch("2")
        wait_for(lambda: reloader.holder.current.version == "3.0.0")
    finally:
        watcher.stop()


def test_a_missing_folder_is_waited_for_without_failed_reloads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """While the folder is gone the old rules serve, one error is logged, and nothing is counted
    as a failed reload; when it comes back it is loaded."""
    root = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    statuses: list[ReloadStatus] = []
    reloader = Reloader(
        root,
        RulesetHolder(load_ruleset(root)),
        listeners=[lambda _role, status, _serving: statuses.append(status)],
    )
    watcher = RulesWatcher(reloader, debounce_ms=50)
    watcher.start()
    try:
        shutil.rmtree(root)
        wait_for(lambda: "watch_error" in capsys.readouterr().err)
        time.sleep(2.5)  # a few of the watcher's one-second retries
        assert [s.result for s in statuses] == []
        assert "watch_error" not in capsys.readouterr().err
        write_folder(root, ruleset_files("2.0.0", "ToolError"))
        wait_for(lambda: reloader.holder.current.version == "2.0.0")
    finally:
        watcher.stop()
    assert [s.result for s in statuses] == [ReloadResult.reloaded]


def test_a_reload_lets_the_old_rulesets_answers_go(tmp_path: Path) -> None:
    """The server's prebuilt answers belong to the serving ruleset: after a reload and a call
    on the new rules, no answer of the old ruleset is left in memory."""
    root = write_folder(tmp_path / "rules", ruleset_files("1.0.0-let-go", "Timeout"))
    reloader = _reloader(root)
    old_digest = reloader.holder.current.digest
    server = create_server(reloader.holder, "127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            stub = pb_grpc.ErrorClassifierStub(channel)
            assert stub.Classify(PROBE, timeout=10).ruleset_digest == old_digest
            assert stub.ClassifyBatch(pb.ClassifyBatchRequest(requests=[PROBE]), timeout=10)
            write_folder(root, ruleset_files("2.0.0-let-go", "ToolError"))
            assert reloader.reload("test").result is ReloadResult.reloaded
            assert stub.Classify(PROBE, timeout=10).class_name == "ToolError"
    finally:
        server.stop(grace=0)
    gc.collect()
    left = [
        o
        for o in gc.get_objects()
        if isinstance(o, Classification) and o.ruleset_digest == old_digest
    ]
    assert left == []


def test_unreadable_entries_of_a_rules_folder_are_warned_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dangling link, a link loop and a FIFO are skipped, each named in a rules_warning."""
    import os

    from classifier.server.reload import load_checked

    root = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    (root / "gone.yaml").symlink_to(tmp_path / "nowhere.yaml")
    (root / "loop").symlink_to(root)
    os.mkfifo(root / "pipe.yaml")
    capsys.readouterr()
    assert load_checked(root, None).version == "1.0.0"
    [line] = [json.loads(x) for x in capsys.readouterr().err.splitlines()]
    assert line["event"] == "rules_warning"
    skipped = "\n".join(line["skipped"])
    assert "gone.yaml: a dangling link" in skipped
    assert "loop: a link loop" in skipped
    assert "pipe.yaml: not a file" in skipped


def test_a_dropped_ruleset_is_freed_by_reference_counting() -> None:
    """What lets a reload freeze the new rules out of the collector without leaking the
    old: a compiled ruleset holds no reference cycles."""
    import gc

    from classifier import load_ruleset
    from tests.support import BUNDLED_RULES

    gc.collect()
    ruleset = load_ruleset(BUNDLED_RULES)
    gc.collect()
    del ruleset
    assert gc.collect() == 0
