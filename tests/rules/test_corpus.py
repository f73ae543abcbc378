"""The real-descriptor corpus, sent to a real server over gRPC, gets the classes it expects."""

from __future__ import annotations

import pytest

from classifier import Ruleset
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from errorclass_client.wire import descriptor_to_proto
from tests.rules.corpus import CORPUS, FIGURES, SHARED_COPIES, CorpusCase, load_corpus

CASES = load_corpus()


@pytest.fixture(scope="module")
def answers(
    stub: pb_grpc.ErrorClassifierStub, bundled: Ruleset
) -> list[tuple[CorpusCase, pb.ClassifyResponse]]:
    request = pb.ClassifyBatchRequest(
        requests=[pb.ClassifyRequest(descriptor=descriptor_to_proto(c.descriptor)) for c in CASES]
    )
    responses = list(stub.ClassifyBatch(request, timeout=30).responses)
    assert len(responses) == len(CASES)
    assert {r.ruleset_version for r in responses} == {bundled.version}
    for case, response in zip(CASES, responses, strict=True):
        FIGURES.add(case, response.class_name)
    return list(zip(CASES, responses, strict=True))


def test_every_unambiguous_case_gets_its_expected_class(
    answers: list[tuple[CorpusCase, pb.ClassifyResponse]],
) -> None:
    """Zero wrong and zero Unknown answers on the cases the corpus does not mark ambiguous."""
    misses = [
        f"{case.id}: expected {case.expect}, got {r.class_name} ({r.rule_id or 'no rule'})"
        for case, r in answers
        if not case.ambiguous and r.class_name != case.expect
    ]
    assert not misses, "\n".join(misses)


def test_no_case_expected_unknown_gets_a_class(
    answers: list[tuple[CorpusCase, pb.ClassifyResponse]],
) -> None:
    """A descriptor the corpus leaves Unknown (ambiguous or not) gets no guess from the rules."""
    expected_unknown = [(c, r) for c, r in answers if c.expect == "Unknown"]
    assert expected_unknown
    guesses = [
        f"{c.id}: got {r.class_name} from {r.rule_id}" for c, r in expected_unknown if r.rule_id
    ]
    assert not guesses, "\n".join(guesses)


def test_no_answer_is_a_conflict(answers: list[tuple[CorpusCase, pb.ClassifyResponse]]) -> None:
    """Equally specific rules never disagree on a real descriptor (a conflict is a rules bug)."""
    conflicts = [c.id for c, r in answers if r.unknown_reason == pb.UNKNOWN_REASON_CONFLICT]
    assert not conflicts


def test_figures_cover_every_case(answers: list[tuple[CorpusCase, pb.ClassifyResponse]]) -> None:
    """The reported figures (printed in the summary) account for every corpus case."""
    assert sum(FIGURES.unambiguous.values()) == sum(not c.ambiguous for c, _ in answers)
    assert sum(FIGURES.ambiguous.values()) == sum(c.ambiguous for c, _ in answers)
    assert FIGURES.unambiguous["wrong"] == FIGURES.unambiguous["Unknown"] == 0


def test_the_copy_matches_the_shared_corpus() -> None:
    """The repository's copy is byte-identical to the team's shared corpus wherever that exists."""
    for shared in SHARED_COPIES:
        if shared.is_file():
            assert shared.read_bytes() == CORPUS.read_bytes(), f"{CORPUS} differs from {shared}"
    assert len(CASES) >= 100
