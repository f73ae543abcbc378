"""The product as a user meets it: `classifier serve` as a real process, called by a client
that knows only the proto, then stopped with SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from grpc_tools import protoc

from tests.support import ROOT

CLIENT = textwrap.dedent(
    """
    import json, sys
    import grpc
    from errorclass.v1 import classifier_pb2 as pb, classifier_pb2_grpc as rpc

    stub = rpc.ErrorClassifierStub(grpc.insecure_channel(sys.argv[1]))
    requests = [
        pb.ExceptionDescriptor(type="openai.RateLimitError", http_status=429, origin=pb.ORIGIN_PROVIDER),
        pb.ExceptionDescriptor(
            type="System.Threading.Tasks.TaskCanceledException",
            supertypes=["System.OperationCanceledException", "System.SystemException", "System.Exception"],
            causes=[pb.Cause(type="System.TimeoutException")],
        ),
        pb.ExceptionDescriptor(type="com.example.Weird"),
    ]
    out = []
    for d in requests:
        r = stub.Classify(pb.ClassifyRequest(descriptor=d), timeout=10)
        out.append([r.error_class, r.class_name, pb.UnknownReason.Name(r.unknown_reason), r.ruleset_version])
    print(json.dumps(out))
    """
)


@pytest.fixture
def served() -> Iterator[tuple[subprocess.Popen[str], str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "classifier", "serve", "--rules", "rules", "--addr", "127.0.0.1:0"],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    start = json.loads(proc.stderr.readline())
    assert start["event"] == "start", start
    try:
        yield proc, start["address"]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()


def test_a_proto_only_client_gets_the_answers_and_sigterm_stops_cleanly(
    served: tuple[subprocess.Popen[str], str], tmp_path: Path
) -> None:
    proc, address = served
    include = str(Path(protoc.__file__).parent / "_proto")
    assert (
        protoc.main(
            [
                "protoc",
                f"-I{ROOT / 'proto'}",
                f"-I{include}",
                f"--python_out={tmp_path}",
                f"--grpc_python_out={tmp_path}",
                "errorclass/v1/classifier.proto",
            ]
        )
        == 0
    )
    (tmp_path / "client.py").write_text(CLIENT)
    out = subprocess.run(
        [sys.executable, "client.py", address],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    answers = json.loads(out.stdout)
    assert [a[:3] for a in answers] == [
        [3, "RateLimited", "UNKNOWN_REASON_UNSPECIFIED"],
        [7, "Timeout", "UNKNOWN_REASON_UNSPECIFIED"],
        [0, "Unknown", "UNKNOWN_REASON_NO_MATCH"],
    ]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=15) == 0
    assert proc.stderr is not None
    events = [
        json.loads(line)["event"]
        for line in proc.stderr.read().splitlines()
        if line.startswith("{")
    ]
    assert events == ["shutdown", "stopped"]
