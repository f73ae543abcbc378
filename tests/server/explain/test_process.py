"""The explaining process: explanations are made outside the server's interpreter, in a
process forked with the serving ruleset, replaced when the ruleset changes or the process
dies, gone with a killed server, and, when no process can be started, made in the calling
thread."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.attacks import PROBE, channel, serve
from classifier import load_ruleset
from classifier.engine.ruleset import Ruleset
from classifier.server.explain import ExplainingProcess, ExplainRefusedError, Why
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from tests.support import BUNDLED_RULES, ROOT, MakeRuleset, wait_for

OTHER_RULES = """\
    rules:
      - id: only.timeout
        class: Timeout
        action: provider.backoff
        when: {type: x.Timeout}
"""


def where(ruleset: Ruleset) -> tuple[int, int, str]:
    """Run in the explaining process: its pid, its niceness, the ruleset it was given."""
    return os.getpid(), os.nice(0), ruleset.digest


def spin(_ruleset: Ruleset, seconds: float) -> float:
    until = time.process_time() + seconds
    while time.process_time() < until:
        pass
    return seconds


def missing(_ruleset: Ruleset, rule_id: str) -> None:
    raise KeyError(rule_id)


def die_at_start(_server: int) -> None:
    os._exit(3)


@pytest.fixture
def explainer() -> Iterator[ExplainingProcess]:
    made = ExplainingProcess()
    yield made
    made.close()


@pytest.fixture(scope="module")
def bundled() -> Ruleset:
    return load_ruleset(BUNDLED_RULES)


def test_work_runs_in_a_process_of_its_own_at_nice_19(
    explainer: ExplainingProcess, bundled: Ruleset
) -> None:
    (pid, nice, digest), cpu = explainer.run(bundled, where, (), timeout=30)
    assert pid != os.getpid()
    assert nice == 19
    assert digest == bundled.digest
    (again, _, _), _ = explainer.run(bundled, where, (), timeout=30)
    assert again == pid  # one process per ruleset, kept
    assert explainer.forks == 1
    assert cpu >= 0


def test_the_process_outlives_the_thread_that_first_asked(
    explainer: ExplainingProcess, bundled: Ruleset
) -> None:
    """The console asks from a thread that ends with its request; the process stays."""
    seen: list[int] = []
    asker = threading.Thread(
        target=lambda: seen.append(explainer.run(bundled, where, (), 30)[0][0])
    )
    asker.start()
    asker.join(timeout=30)
    [pid] = seen
    time.sleep(0.3)
    assert not _zombie(pid)
    assert explainer.run(bundled, where, (), timeout=30)[0][0] == pid


def test_the_cpu_it_took_there_is_returned_for_the_budget(
    explainer: ExplainingProcess, bundled: Ruleset
) -> None:
    before = time.thread_time()
    _, cpu = explainer.run(bundled, spin, (0.2,), timeout=30)
    assert cpu >= 0.19
    assert time.thread_time() - before < 0.1  # this thread waited, it did not spin


def test_a_new_ruleset_gets_a_new_process(
    explainer: ExplainingProcess, bundled: Ruleset, make_ruleset: MakeRuleset
) -> None:
    other = load_ruleset(make_ruleset(OTHER_RULES))
    (first, _, digest), _ = explainer.run(bundled, where, (), timeout=30)
    assert digest == bundled.digest
    (second, _, digest), _ = explainer.run(other, where, (), timeout=30)
    assert digest == other.digest
    assert second != first
    assert explainer.forks == 2
    wait_for(lambda: not Path(f"/proc/{first}").exists() or _zombie(first), timeout=10)


def test_what_the_work_raises_is_raised_here(
    explainer: ExplainingProcess, bundled: Ruleset
) -> None:
    with pytest.raises(KeyError, match=r"no\.such"):
        explainer.run(bundled, missing, ("no.such",), timeout=30)
    assert explainer.run(bundled, where, (), timeout=30)[0][2] == bundled.digest


def test_a_process_that_dies_is_replaced(explainer: ExplainingProcess, bundled: Ruleset) -> None:
    (pid, _, _), _ = explainer.run(bundled, where, (), timeout=30)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: _zombie(pid) or not Path(f"/proc/{pid}").exists(), timeout=10)
    with pytest.raises(ExplainRefusedError, match="died") as info:
        explainer.run(bundled, where, (), timeout=30)
    assert info.value.why is Why.DIED
    (new, _, _), _ = explainer.run(bundled, where, (), timeout=30)
    assert new != pid
    assert explainer.forks == 2


def test_work_past_its_timeout_is_stopped_and_the_process_replaced(
    explainer: ExplainingProcess, bundled: Ruleset
) -> None:
    (pid, _, _), _ = explainer.run(bundled, where, (), timeout=30)
    started = time.monotonic()
    with pytest.raises(ExplainRefusedError, match="deadline") as info:
        explainer.run(bundled, spin, (30.0,), timeout=0.3)
    assert info.value.why is Why.LATE
    assert time.monotonic() - started < 5
    wait_for(lambda: _zombie(pid) or not Path(f"/proc/{pid}").exists(), timeout=10)
    assert explainer.run(bundled, where, (), timeout=30)[0][0] != pid


def test_when_no_process_starts_the_work_runs_in_this_thread(
    bundled: Ruleset, capsys: pytest.CaptureFixture[str]
) -> None:
    explainer = ExplainingProcess(attempts=2, start=die_at_start)
    try:
        (pid, _, digest), cpu = explainer.run(bundled, where, (), timeout=30)
        assert pid == os.getpid()
        assert digest == bundled.digest
        assert cpu == 0.0  # the budget measures this thread itself
        assert explainer.in_process
        assert explainer.forks == 2
        assert explainer.run(bundled, where, (), timeout=30)[0][0] == os.getpid()
        assert explainer.forks == 2  # not tried again
    finally:
        explainer.close()
    assert capsys.readouterr().err.count('"event": "explainer_in_process"') == 1


def test_close_stops_the_process(bundled: Ruleset) -> None:
    explainer = ExplainingProcess()
    (pid, _, _), _ = explainer.run(bundled, where, (), timeout=30)
    explainer.close()
    wait_for(lambda: _zombie(pid) or not Path(f"/proc/{pid}").exists(), timeout=10)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] == "Z"
    except OSError:
        return True


def test_a_killed_servers_explaining_process_dies_with_it_and_holds_no_socket(
    tmp_path: Path,
) -> None:
    """`classifier serve` explains once (its explaining process starts), then is killed
    with SIGKILL: the explaining process, which held none of its sockets, is gone too."""
    served = serve(ROOT, tmp_path / "serve.log")
    try:
        with channel(served.address) as ch:
            stub = pb_grpc.ErrorClassifierStub(ch)
            answer = stub.Classify(pb.ClassifyRequest(descriptor=PROBE.descriptor, explain=True))
            assert answer.explanation.winner_rule_id
        [child] = _children(served.proc.pid)
        assert _nice(child) == 19
        assert _sockets(child) == 0
        assert _sockets(served.proc.pid) > 0
        os.kill(served.proc.pid, signal.SIGKILL)
        served.proc.wait()
        wait_for(lambda: _zombie(child) or not Path(f"/proc/{child}").exists(), timeout=10)
    finally:
        served.kill()


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().split(")")[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _nice(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[16])


def _sockets(pid: int) -> int:
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            count += os.readlink(fd).startswith("socket:")
        except OSError:
            continue
    return count
