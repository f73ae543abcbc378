"""Honest figures: the Unknown share against all answers or not at all, and no trend word
over a span too short for one.

A server's live sample holds only Unknowns, so its lines are 100 % Unknown by construction:
the console and `classifier unknowns --admin-addr` show how many Unknowns it holds, never a
share of its own lines; the console's share is the server's own count of all answers. A
decision log holds every answer, so its share is shown. A trend needs buckets of at least a
minute: a log of seconds gets none (it used to say `gone`).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from classifier.cli import main
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from tests.conftest import StartApp
from tests.support import wait_for
from tests.unknowns.test_propose import write_log


def _section(page: str, name: str) -> str:
    [body] = re.findall(rf"<section id={name}>(.*?)</section>", page, re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", body))


def test_the_live_share_is_the_servers_and_the_sample_shows_none(
    serving_rules: Path, start_app: StartApp, capsys: pytest.CaptureFixture[str]
) -> None:
    running = start_app(serving_rules, watch=False, unknown_sample_bytes=64 * 1024)
    odd = pb.ExceptionDescriptor(type="acme.Odd", language="python", message="odd 1")
    limited = pb.ExceptionDescriptor(type="T", http_status=429, origin=pb.ORIGIN_PROVIDER)
    for d in (odd, odd, odd, limited, limited, limited, limited, limited):
        running.stub.Classify(pb.ClassifyRequest(descriptor=d), timeout=10)
    wait_for(lambda: '"seen":3' in running.http("/-/unknowns")[1])
    status, page = running.http("/console")
    assert status == 200
    assert "3 Unknown of 8 answers (37.5%)" in _section(page, "share")  # the server's counts
    unknowns = _section(page, "unknowns")
    assert "The live sample holds 3 Unknown in 1 cluster, " in unknowns
    assert "% of" not in unknowns  # no "(100.0% of 3 answers)"

    assert running.app.admin is not None
    admin = running.app.admin.address
    capsys.readouterr()
    assert main(["unknowns", "--admin-addr", admin, "--rules", str(serving_rules)]) == 0
    headline = capsys.readouterr().out.splitlines()[0]
    assert headline.startswith("classifier unknowns: 3 Unknown in 1 cluster, ")
    assert "%" not in headline
    argv = ["unknowns", "--admin-addr", admin, "--format", "json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["unknowns"], report["answers"]) == (3, None)


def _log(path: Path, rules: Path, step_s: int) -> Path:
    classified: dict[str, Any] = {"type": "T", "http_status": 429, "origin": "provider"}
    unknown: dict[str, Any] = {"type": "acme.Odd", "language": "python", "message": "odd"}
    return write_log(path, rules, [unknown] * 12 + [classified] * 4, step_s=step_s)


def test_a_log_shows_its_share_and_a_trend_only_over_minutes(
    serving_rules: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seconds = _log(tmp_path / "seconds.jsonl", serving_rules, step_s=1)  # 15 s
    minutes = _log(tmp_path / "minutes.jsonl", serving_rules, step_s=60)  # 15 min
    capsys.readouterr()
    assert main(["unknowns", "--format", "json", str(seconds)]) == 0
    short = json.loads(capsys.readouterr().out)
    assert (short["unknowns"], short["answers"]) == (12, 16)
    assert short["ranked"][0]["trend"] == {"buckets": [], "label": "-"}
    assert main(["unknowns", str(seconds)]) == 0
    text = capsys.readouterr().out
    assert "12 Unknown (75.0% of 16 answers)" in text.splitlines()[0]
    [head] = [line for line in text.splitlines() if "no_match" in line]
    assert head.rstrip().endswith("no_match")  # no trend word, no sparkline
    assert main(["unknowns", "--format", "json", str(minutes)]) == 0
    long = json.loads(capsys.readouterr().out)["ranked"][0]["trend"]
    assert long["label"] == "gone"  # the last quarter of 15 minutes held only 429s
    assert sum(long["buckets"]) == 12
