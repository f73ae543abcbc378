"""`classifier unknowns` on a decision log written by a real server, with known true clusters.

A server on loopback serves the bundled rules with a rotating decision log; the traffic
is the real corpus's descriptors (tests/unknowns/traffic.py): thirteen families the rules
leave Unknown, their messages varied the way they really vary, mixed with the corpus's
classified descriptors, every one with fresh ids. Then, over the rotated folder:

- the clusters recover the families exactly (each family in one cluster, no cluster
  holding two), measured and printed in the terminal summary;
- `--propose` drafts a rule for every cluster, each passing its own checks, and the
  drafts written with `--write` and added to a copy of the rules turn exactly those
  Unknowns into the proposed classes, a `classifier diff` touching nothing else, with
  `check --strict` and `classifier test` clean;
- under the new rules, the same cluster ids are reported as now covered by those rules.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml

from classifier import load_ruleset
from classifier.cli import main
from classifier.generic_types import is_generic
from classifier.server import App, ServeConfig
from classifier.source.descriptor_file import descriptor_from_data
from classifier.unknowns.cluster import Clusterer
from classifier.unknowns.read import Record, read
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from errorclass_client.wire import descriptor_to_proto
from tests.support import BUNDLED_RULES
from tests.unknowns.families import pick
from tests.unknowns.traffic import FAMILIES, RECOVERY, Traffic, measure

UNKNOWNS, CLASSIFIED = 1300, 1100


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The folder of rotated decision logs, and each Unknown's family by its run id."""
    logs = tmp_path_factory.mktemp("served") / "logs"
    logs.mkdir()
    app = App(
        ServeConfig(
            rules=BUNDLED_RULES,
            address="127.0.0.1:0",
            watch=False,
            decision_log=logs / "decisions.jsonl",
            decision_log_max_bytes=400_000,
            decision_log_backups=50,
        )
    )
    app.start()
    truth: dict[str, str] = {}
    try:
        with grpc.insecure_channel(app.address) as channel:
            stub = pb_grpc.ErrorClassifierStub(channel)
            batch: list[pb.ClassifyRequest] = []
            for g in Traffic(seed=13).mixed(UNKNOWNS, CLASSIFIED):
                if g.family:
                    truth[g.descriptor["attributes"]["run_id"]] = g.family
                d = descriptor_to_proto(descriptor_from_data(g.descriptor))
                batch.append(pb.ClassifyRequest(descriptor=d))
                if len(batch) == 500:
                    stub.ClassifyBatch(pb.ClassifyBatchRequest(requests=batch), timeout=30)
                    batch = []
            stub.ClassifyBatch(pb.ClassifyBatchRequest(requests=batch), timeout=30)
    finally:
        app.stop(grace=1)
    assert len(list(logs.iterdir())) > 3, "the log rotated"
    return logs, truth


def test_the_clusters_are_the_true_families(served: tuple[Path, dict[str, str]]) -> None:
    logs, truth = served
    ruleset = load_ruleset(BUNDLED_RULES)
    errors: list[str] = []
    clusters = Clusterer(ruleset, keep_assignments=True).feed(read([str(logs)], errors)).result()
    assert errors == []
    assert (clusters.unknowns, clusters.lines) == (UNKNOWNS, UNKNOWNS + CLASSIFIED)
    members = []
    for record in read([str(logs)], errors):
        if isinstance(record, Record):
            family = truth[record.descriptor["attributes"]["run_id"]]
            cid = clusters.cluster_of(record.descriptor, record.reason)
            assert cid is not None
            members.append((family, cid))
    recovery = measure(members)
    RECOVERY.append(recovery)
    assert len(recovery.rows) == len(FAMILIES)
    assert recovery.exact, "\n".join(recovery.lines())
    # never across runtimes: every cluster's members share their language and type
    for c in clusters.clusters:
        assert {e.descriptor.get("language") for e in c.examples} == {c.key.language}
        assert {e.descriptor["type"] for e in c.examples} == {c.key.type}


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(argv) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_every_proposal_is_proven_and_written_drafts_reclassify_exactly_the_unknowns(
    served: tuple[Path, dict[str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs, _truth = served
    drafts = tmp_path / "drafts"
    report = _json(
        capsys,
        ["unknowns", "--rules", str(BUNDLED_RULES), "--format", "json", str(logs)],
    )
    proposed = _json(
        capsys,
        [
            "unknowns", "--rules", str(BUNDLED_RULES), "--propose", "--format", "json",
            "--write", str(drafts), str(logs),
        ],
    )  # fmt: skip
    by_cluster = {p["cluster"]: p for p in proposed["proposals"]}
    assert len(by_cluster) == len(FAMILIES) == len(report["ranked"])
    assert proposed["together"] == []
    for p in by_cluster.values():
        assert p["status"] == "proposed", p
        accepted = [a for a in p["attempts"] if not a["problems"]]
        assert accepted == [p["attempts"][-1]]
        replay = p["replay"]
        [group] = replay["groups"]
        assert (group["from"], group["to"]) == ("Unknown", p["class"]["checked_with"])
        assert group["count"] == next(
            c["count"] for c in report["ranked"] if c["id"] == p["cluster"]
        )
        assert {c["head"]["rule"] for c in group["changes"]} == {p["rule_id"]}
    # AttributeError is generic: a draft for it always reads the message, never structure
    # alone. The two AttributeError families share every structural field, and the words of
    # one template would take the other's Unknowns: that one reads its whole template.
    attribute = [p for p in by_cluster.values() if p["rule"]["when"]["type"] == "AttributeError"]
    assert len(attribute) == 2
    for p in attribute:
        assert all("message" in a["when"] for a in p["attempts"])
    assert any(
        "outside this cluster" in a["problems"][0]
        for p in attribute
        for a in p["attempts"]
        if a["problems"]
    )
    # A generic type (ArgumentNullException) never scopes a draft alone: it reads the message.
    for p in by_cluster.values():
        when = p["rule"]["when"]
        assert ("message" in when) == (p in attribute or is_generic(when["type"])), when

    # Written and added to a copy of the rules: exactly those Unknowns move, nothing else.
    head = tmp_path / "rules"
    shutil.copytree(BUNDLED_RULES, head)
    target = head / "unknowns"
    target.mkdir()
    for path in drafts.glob("*.yaml"):
        if path.name != "actions.yaml":
            shutil.copy(path, target / path.name)
    catalog = yaml.safe_load((head / "actions.yaml").read_text())
    catalog["actions"] += yaml.safe_load((drafts / "actions.yaml").read_text())["actions"]
    (head / "actions.yaml").write_text(yaml.safe_dump(catalog, sort_keys=False))
    # The classes the evidence does not settle are placeholders: check refuses them until a
    # person picks (here, the candidate each draft was checked with).
    unsettled = {p["rule_id"]: p for p in by_cluster.values() if not p["class"]["settled"]}
    assert unsettled
    capsys.readouterr()
    assert main(["check", "--strict", str(head)]) == 1
    assert capsys.readouterr().out.count(": class_to_choose: ") == len(unsettled)
    pick(target, {rule_id: p["class"]["checked_with"] for rule_id, p in unsettled.items()})
    diff = _json(
        capsys,
        ["diff", "--base", str(BUNDLED_RULES), "--head", str(head), "--format", "json", str(logs)],
    )
    assert diff["changed"] == UNKNOWNS
    wanted = {p["rule_id"]: p["class"]["checked_with"] for p in by_cluster.values()}
    for group in diff["groups"]:
        assert group["from"] == "Unknown"
        for change in group["changes"]:
            assert change["base"]["class"] == "Unknown"
            assert wanted[change["head"]["rule"]] == change["head"]["class"] == group["to"]
    capsys.readouterr()
    assert main(["check", "--strict", str(head)]) == 0
    assert main(["test", str(target)]) == 0

    # A later run, under the rules with the drafts in: the same ids, each now covered.
    later = _json(capsys, ["unknowns", "--rules", str(head), "--format", "json", str(logs)])
    assert [c["id"] for c in later["ranked"]] == [c["id"] for c in report["ranked"]]
    for c in later["ranked"]:
        assert c["now"]["covered"], c["now"]
        [decided] = c["now"]["decided"]
        assert decided["rule"] == by_cluster[c["id"]]["rule_id"]
        assert c["now"]["summary"].startswith(f"covered by rule {decided['rule']} (")
    proposed_again = _json(
        capsys, ["unknowns", "--rules", str(head), "--propose", "--format", "json", str(logs)]
    )
    assert {p["status"] for p in proposed_again["proposals"]} == {"covered"}
