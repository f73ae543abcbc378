"""The taxonomy's numbers are permanent: these tests pin them in code and in the proto."""

from __future__ import annotations

from classifier.taxonomy import CLASS_DESCRIPTIONS, Effect, ErrorClass, Origin, UnknownReason
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb

PERMANENT = {
    "Unknown": 0,
    "ProviderError": 1,
    "ProviderUnavailable": 2,
    "RateLimited": 3,
    "QuotaExceeded": 4,
    "ContentFiltered": 5,
    "ToolError": 6,
    "Timeout": 7,
    "CompilationFailed": 8,
    "BudgetExceeded": 9,
    "Canceled": 10,
    "ContentBlocked": 11,
    "Infrastructure": 12,
    "ToolTimeout": 13,
}


def _proto_name(name: str) -> str:
    snake = "".join(f"_{ch}" if ch.isupper() else ch for ch in name).lstrip("_").upper()
    return f"RUN_ERROR_CLASS_{snake}"


def test_class_numbers_are_the_permanent_table() -> None:
    """No class is renumbered, removed, or inserted before the end."""
    assert {c.name: c.value for c in ErrorClass if c.name in PERMANENT} == PERMANENT
    extra = [c for c in ErrorClass if c.name not in PERMANENT]
    assert all(c.value > max(PERMANENT.values()) for c in extra), "new classes are appended"


def test_proto_enum_matches_the_table() -> None:
    """The wire enum carries the same names and numbers as the taxonomy."""
    for name, number in PERMANENT.items():
        assert pb.RunErrorClass.Value(_proto_name(name)) == number


def test_every_class_has_a_description() -> None:
    assert set(CLASS_DESCRIPTIONS) == set(ErrorClass)


def test_origin_effect_and_reason_match_the_proto() -> None:
    assert {f"ORIGIN_{o.name.upper()}": o.value for o in Origin} == dict(pb.Origin.items())
    assert {f"RUN_EFFECT_{e.label.upper()}": e.value for e in Effect} == dict(pb.RunEffect.items())
    assert {f"UNKNOWN_REASON_{r.name.upper()}": r.value for r in UnknownReason if r.value} == {
        k: v for k, v in pb.UnknownReason.items() if v
    }
