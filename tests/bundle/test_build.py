"""Building a bundle: a pure function of the ruleset, valid against its published schema,
naming the digest the service reports, holding every enabled rule after layering."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from classifier import Ruleset, load_ruleset
from classifier.bundle import BundleDoc, bundle_bytes, dump
from classifier.bundle.build import _condition
from classifier.contract import DECISIVE_FACT_NAMES
from classifier.engine.conditions import CauseMatches, TypeIs
from classifier.server import GrpcServer
from errorclass_client import Client
from tests.support import ROOT

SCHEMA = json.loads((ROOT / "classifier/schemas/bundle.schema.json").read_text())
SPEC_BUNDLES = sorted((ROOT / "clients/spec/bundles").glob("*.json"))


def test_the_same_ruleset_gives_the_same_bytes_from_any_folder(
    bundled: Ruleset, tmp_path: Path
) -> None:
    """No clock and no path of the building machine: a rebuild signs to the same signature."""
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        elsewhere = bundle_bytes(load_ruleset(ROOT / "rules"))
    finally:
        os.chdir(here)
    assert bundle_bytes(bundled) == elsewhere


def test_a_bundle_reads_back_to_the_same_bytes(bundled: Ruleset) -> None:
    data = bundle_bytes(bundled)
    assert dump(BundleDoc.model_validate_json(data)) == data
    assert data.isascii()


@pytest.mark.parametrize("path", SPEC_BUNDLES, ids=lambda p: p.name)
def test_every_bundle_is_valid_against_the_published_schema(path: Path) -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.validate(json.loads(path.read_text()), SCHEMA)


def test_the_bundle_names_the_digest_getruleset_reports(
    bundled: Ruleset, server: GrpcServer
) -> None:
    doc = json.loads(bundle_bytes(bundled))
    with Client(f"127.0.0.1:{server.port}") as client:
        info = client.get_ruleset()
    assert (doc["ruleset"]["name"], doc["ruleset"]["version"], doc["ruleset"]["digest"]) == (
        info.name,
        info.version,
        info.digest,
    )
    assert len(doc["rules"]) == info.rule_count


def test_layering_is_applied_before_the_bundle() -> None:
    """A disabled base rule is absent, an overridden one appears once, as the layer's."""
    doc = json.loads((ROOT / "clients/spec/bundles/layers.json").read_text())
    rules = {r["id"]: r for r in doc["rules"]}
    assert "base.disabled" not in rules
    assert (
        rules["base.overridden"]["layer"],
        rules["base.overridden"]["answer"]["class_name"],
    ) == (
        0,
        "Timeout",
    )
    assert rules["base.kept"]["layer"] == 1
    assert [r["order"] for r in doc["rules"]] == list(range(len(doc["rules"])))
    assert [layer["name"] for layer in doc["ruleset"]["layers"]] == [
        "spec-layers",
        "spec-layers-base",
    ]


def test_every_condition_kind_has_its_normalised_form() -> None:
    doc = json.loads((ROOT / "clients/spec/bundles/kinds.json").read_text())
    rules = {r["id"]: r for r in doc["rules"]}
    assert rules["http.mixed"]["conditions"][0]["ranges"] == [[100, 199], [300, 302], [404, 404]]
    grpc = rules["grpc.codes"]["conditions"][0]
    assert (grpc["field"], grpc["values"]) == ("grpc_status", [0, 4, 16])
    assert rules["origin.values"]["conditions"][0]["values"] == ["provider", "user"]
    assert rules["provider.label"]["conditions"][0]["values"] == ["azure", "openai"]
    kinds = {c["kind"] for r in doc["rules"] for c in r["conditions"]}
    assert kinds == {"field_in", "present", "message", "attribute", "cause"}
    assert "type" not in rules["cause.untyped"]
    assert rules["has.code"]["condition_count"] == 1  # `has` weighs nothing
    decisive = {  # a rule reading a fact the runtime states about the whole failure
        r["id"]
        for r in doc["rules"]
        if any(
            c["kind"] == "attribute" and c["name"] in DECISIVE_FACT_NAMES for c in r["conditions"]
        )
    }
    assert decisive  # the test ruleset has one
    assert {r["id"] for r in doc["rules"] if r["decisive"]} == decisive


def test_a_cause_inside_a_cause_has_no_bundle_form() -> None:
    inner = CauseMatches((TypeIs(frozenset({"x"}), "type: x"),), "cause: {type: x}")
    with pytest.raises(ValueError, match="inside a cause"):
        _condition(CauseMatches((inner,), "cause: {cause: ...}"), in_cause=False)
