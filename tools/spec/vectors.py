"""The generated vector files of clients/spec/vectors/: the service's own answers as the oracle.

`validate.json`: descriptors at and past every limit of classifier/limits.py, with the
normalised descriptor the service accepts or the fields it refuses, as the service's own
validation of a descriptor off the wire (`build_descriptor`) gives them. The other vector files are
written by hand (each vector's note says where its input comes from) and only checked
here: every file has a known kind and unique names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from classifier import limits
from classifier.descriptor import Cause, CauseInput, Descriptor, build_descriptor
from classifier.errors import DescriptorError
from classifier.source.documents import parse_origin

KINDS = (
    "error_body",
    "stream_error",
    "finish_reason",
    "response",
    "runtime_facts",
    "validate",
    "fit",
    "breaker",
    "outage",
    "bundle",
    "bundle_verify",
    "retry_after",
)
"""Every kind of vector file; a runner fails on a file of a kind it does not know."""

EMOJI = "\U0001f600"
"""Outside the Basic Multilingual Plane: one character, two UTF-16 units, four UTF-8 bytes."""
T = "openai.RateLimitError"


def _inputs() -> list[tuple[str, str, dict[str, Any]]]:
    """(name, note, descriptor) for every validate vector."""
    n_type, n_code, n_label = (
        limits.MAX_TYPE_NAME_CHARS,
        limits.MAX_CODE_CHARS,
        limits.MAX_LABEL_CHARS,
    )
    n_msg, n_key, n_value = (
        limits.MAX_MESSAGE_CHARS,
        limits.MAX_ATTRIBUTE_KEY_CHARS,
        limits.MAX_ATTRIBUTE_VALUE_CHARS,
    )
    return [
        ("minimal", "a type alone is a descriptor", {"type": T}),
        (
            "full",
            "every field, as a runtime sends them",
            {
                "type": T,
                "supertypes": ["openai.APIStatusError", "openai.APIError", "Exception"],
                "http_status": 429,
                "grpc_status": 8,
                "origin": "provider",
                "code": "rate_limit_exceeded",
                "message": "Rate limit reached for gpt-4o.",
                "causes": [{"type": "httpx.HTTPStatusError", "http_status": 429}],
                "language": "python",
                "provider": "openai",
                "attributes": {"model": "gpt-4o"},
            },
        ),
        (
            "strips-names",
            "type names, codes and labels are stripped; labels lower-cased; messages and "
            "attribute values kept as they are",
            {
                "type": "  openai.RateLimitError\t",
                "supertypes": [" openai.APIStatusError ", "Exception\n"],
                "code": " rate_limit_exceeded ",
                "message": "  kept as sent  ",
                "language": " Python ",
                "provider": "OpenAI ",
                "attributes": {"model": " gpt-4o "},
            },
        ),
        (
            "strips-unicode-whitespace",
            "the stripped characters are the spec's whitespace: U+3000 and U+001C are stripped "
            "(a language's own trim may keep them)",
            {"type": "\u3000TimeoutError\u001c", "causes": [{"type": "\u0085OSError\u2028"}]},
        ),
        (
            "lower-cases-labels",
            "language and provider are lower-cased",
            {"type": T, "language": "DotNet", "provider": "\u00d6penAI"},
        ),
        ("empty-type", "a type is required", {"type": ""}),
        ("blank-type", "a type of whitespace alone is empty", {"type": "\u3000\u001c "}),
        ("type-at-limit", "a type name of MAX_TYPE_NAME_CHARS", {"type": "t" * n_type}),
        ("type-over-limit", "one character more is refused", {"type": "t" * (n_type + 1)}),
        (
            "type-at-limit-astral",
            "the limit counts characters (code points): MAX_TYPE_NAME_CHARS characters outside "
            "the BMP are twice as many UTF-16 units and four times as many bytes",
            {"type": EMOJI * n_type},
        ),
        ("type-over-limit-astral", "one more is refused", {"type": EMOJI * (n_type + 1)}),
        (
            "supertypes-at-limit",
            "MAX_SUPERTYPES supertypes",
            {"type": T, "supertypes": [f"S{i}" for i in range(limits.MAX_SUPERTYPES)]},
        ),
        (
            "supertypes-over-limit",
            "one more is refused, naming the list",
            {"type": T, "supertypes": [f"S{i}" for i in range(limits.MAX_SUPERTYPES + 1)]},
        ),
        (
            "empty-supertype",
            "an empty supertype is refused, naming its index",
            {"type": T, "supertypes": ["A", " ", "B"]},
        ),
        (
            "causes-at-limit",
            "MAX_CAUSES causes",
            {"type": T, "causes": [{"type": f"C{i}"} for i in range(limits.MAX_CAUSES)]},
        ),
        (
            "causes-over-limit",
            "one more is refused, naming the list",
            {"type": T, "causes": [{"type": f"C{i}"} for i in range(limits.MAX_CAUSES + 1)]},
        ),
        (
            "bad-causes",
            "each cause's fields are checked and named by index",
            {
                "type": T,
                "causes": [
                    {"type": "ok"},
                    {"type": " ", "http_status": 42, "grpc_status": 17, "code": "c" * (n_code + 1)},
                    {"type": "x", "supertypes": ["", "y"]},
                ],
            },
        ),
        ("http-status-low", "99 is not an HTTP status", {"type": T, "http_status": 99}),
        ("http-status-bounds", "100 is", {"type": T, "http_status": 100}),
        ("http-status-top", "599 is", {"type": T, "http_status": 599}),
        ("http-status-high", "600 is not", {"type": T, "http_status": 600}),
        ("grpc-status-ok", "0 (OK) is a gRPC status, and kept", {"type": T, "grpc_status": 0}),
        ("grpc-status-top", "16 is the last gRPC status", {"type": T, "grpc_status": 16}),
        ("grpc-status-over", "17 is not a gRPC status", {"type": T, "grpc_status": 17}),
        ("code-at-limit", "a code of MAX_CODE_CHARS", {"type": T, "code": "c" * n_code}),
        ("code-over-limit", "one more is refused", {"type": T, "code": "c" * (n_code + 1)}),
        (
            "message-at-limit",
            "a message of MAX_MESSAGE_CHARS is kept whole",
            {"type": T, "message": "m" * n_msg},
        ),
        (
            "message-over-limit",
            "a longer message is never refused: it is cut to MAX_MESSAGE_CHARS",
            {"type": T, "message": "m" * (n_msg + 10)},
        ),
        (
            "message-cut-astral",
            "the cut counts characters, so it never splits a surrogate pair",
            {"type": T, "message": "m" * (n_msg - 1) + EMOJI * 3},
        ),
        (
            "message-lone-surrogate",
            "a lone surrogate (a JSON escape, a Java or JavaScript string) becomes U+FFFD",
            {
                "type": T,
                "message": "bad \ud800 text",
                "causes": [{"type": "C", "message": "\udfff"}],
            },
        ),
        (
            "labels-at-limit",
            "language and provider of MAX_LABEL_CHARS",
            {"type": T, "language": "l" * n_label, "provider": "p" * n_label},
        ),
        (
            "labels-over-limit",
            "one more is refused",
            {"type": T, "language": "l" * (n_label + 1), "provider": "p" * (n_label + 1)},
        ),
        ("origin-name", "an origin by name", {"type": T, "origin": "tool"}),
        ("origin-alias", "caller is user", {"type": T, "origin": "caller"}),
        (
            "attributes-at-limit",
            "MAX_ATTRIBUTES attributes, keys of MAX_ATTRIBUTE_KEY_CHARS, values of "
            "MAX_ATTRIBUTE_VALUE_CHARS",
            {
                "type": T,
                "attributes": {
                    **{f"k{i}": "v" for i in range(limits.MAX_ATTRIBUTES - 2)},
                    "K" * n_key: "v",
                    "long": "v" * n_value,
                },
            },
        ),
        (
            "attributes-over-limit",
            "one attribute more is refused, naming the map",
            {"type": T, "attributes": {f"k{i}": "v" for i in range(limits.MAX_ATTRIBUTES + 1)}},
        ),
        (
            "bad-attributes",
            "an empty key, a key over the limit (named by its first 40 characters) and a "
            "value over the limit are each refused",
            {
                "type": T,
                "attributes": {"": "v", "K" * (n_key + 1): "v", "long": "v" * (n_value + 1)},
            },
        ),
        (
            "every-problem-at-once",
            "every violation is reported in one answer",
            {"type": "", "grpc_status": 17, "http_status": 42, "code": "c" * (n_code + 1)},
        ),
    ]


def vector_fields(d: Descriptor | Cause) -> dict[str, Any]:
    """A descriptor as the vectors spell it: the proto's names, empty fields left out,
    origin by name, gRPC status by number."""
    out: dict[str, Any] = {"type": d.type}
    if d.supertypes:
        out["supertypes"] = list(d.supertypes)
    if d.http_status is not None:
        out["http_status"] = d.http_status
    if d.grpc_status is not None:
        out["grpc_status"] = d.grpc_status
    if isinstance(d, Descriptor) and d.origin:
        out["origin"] = d.origin.name
    if d.code:
        out["code"] = d.code
    if d.message:
        out["message"] = d.message
    if isinstance(d, Descriptor):
        if d.causes:
            out["causes"] = [vector_fields(c) for c in d.causes]
        if d.language:
            out["language"] = d.language
        if d.provider:
            out["provider"] = d.provider
        if d.attributes:
            out["attributes"] = dict(d.attributes)
    return out


def _accepted(data: dict[str, Any]) -> Descriptor:
    """What the service makes of a descriptor sent over gRPC (origin resolved by name)."""
    fields = dict(data)
    if "origin" in fields:
        fields["origin"] = parse_origin(fields["origin"])
    fields["causes"] = [CauseInput(**c) for c in fields.get("causes", ())]
    return build_descriptor(**fields)


def validate_vectors() -> dict[str, Any]:
    vectors = []
    for name, note, data in _inputs():
        try:
            want: dict[str, Any] = {"descriptor": vector_fields(_accepted(data))}
        except DescriptorError as exc:
            want = {
                "violations": [{"field": v.field, "description": v.message} for v in exc.violations]
            }
        vectors.append({"name": name, "note": note, "input": {"descriptor": data}, "want": want})
    return {
        "$comment": "Generated by `make spec` (tools/spec/vectors.py): the service's own "
        "validation is the oracle; do not edit.",
        "kind": "validate",
        "vectors": vectors,
    }


def _retry_after_file() -> dict[str, Any]:
    from tools.spec.retry_after_vectors import retry_after_vectors  # it builds on the engine

    return retry_after_vectors()


def _bundle_file(name: str) -> Callable[[], str]:
    def make() -> str:
        from tools.spec.bundle_vectors import vector_files  # it builds on this module

        return vector_files()[name]

    return make


BUNDLE_FILES = ("bundle.json", "bundle.library.json", "bundle.library-rules.json")
GENERATED: dict[str, Callable[[], Any]] = {
    "validate.json": validate_vectors,
    "retry_after.json": _retry_after_file,
    **{name: _bundle_file(name) for name in (*BUNDLE_FILES, "bundle_verify.json")},
}
"""The vector files the generator writes, by file name: the data, or (bundle vectors, one a
line) the text itself."""
