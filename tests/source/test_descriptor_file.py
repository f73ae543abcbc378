"""Descriptor files: bad fields are named the way the server names them, under one prefix."""

from __future__ import annotations

from typing import Any

import pytest

from classifier.errors import DescriptorError
from classifier.source.descriptor_file import descriptor_from_data


def _fields(data: Any, **kw: str) -> list[str]:
    with pytest.raises(DescriptorError) as caught:
        descriptor_from_data(data, **kw)
    return [v.field for v in caught.value.violations]


def test_a_bad_shape_names_list_items_and_attributes_as_the_server_does() -> None:
    """pydantic's `causes.0.code` reads `causes[0].code`, as build_descriptor's paths do."""
    data = {
        "type": "a.B",
        "supertypes": ["x.Y", 3],
        "causes": [{"type": "c.D", "code": [1]}],
        "attributes": {"k": [1]},
    }
    assert sorted(set(_fields(data))) == [
        "descriptor.attributes['k']",
        "descriptor.causes[0].code",
        "descriptor.supertypes[1]",
    ]


def test_the_prefix_names_shape_and_range_errors_alike() -> None:
    """field_prefix reaches the range checks too, not only the shape checks."""
    assert _fields({"type": "a.B", "http_status": "x"}, field_prefix="line 3") == [
        "line 3.http_status"
    ]
    assert _fields(
        {"type": "a.B", "causes": [{"type": "c.D", "http_status": 999}]}, field_prefix="line 3"
    ) == ["line 3.causes[0].http_status"]
    assert _fields([], field_prefix="line 3") == ["line 3"]


def test_the_file_shape_has_the_field_tables_fields_in_its_order() -> None:
    """A descriptor file's fields, and a cause's, are the field table's."""
    from classifier.descriptor import CAUSE_FIELD_NAMES, FIELD_NAMES
    from classifier.source.descriptor_file import CauseDoc, DescriptorDoc

    assert tuple(DescriptorDoc.model_fields) == FIELD_NAMES
    assert tuple(CauseDoc.model_fields) == CAUSE_FIELD_NAMES
