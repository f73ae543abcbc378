"""The Python client's constants and taxonomy enums, rendered from clients/spec/facts.json.

Two modules of `clients/python/errorclass_client`: `facts.py` (limits, origins, gRPC
codes, the whitespace set, the defaults, the service config, the runtime facts'
vocabulary, the response failures) and `taxonomy.py` (the enums a runtime reads an
answer with). Rendered as source, not read from JSON at import, so a type checker knows
every name and member. The text is what `ruff format` leaves alone (collections one item a
line with a trailing comma, double quotes), so the drift test and the formatter agree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

PACKAGE = Path("clients") / "python" / "errorclass_client"
LINE_LENGTH = 100
"""pyproject's ruff line-length."""
HEADER = (
    '"""{what}\n\n'
    "Rendered from clients/spec/facts.json by `make spec` (tools/spec/render_python.py):\n"
    "do not edit; tests/clients/test_spec.py fails when it drifts.\n"
    '"""\n\n'
    "{noqa}"
    "from __future__ import annotations\n\n"
)
NOQA = "# ruff: noqa: E501  (rendered values are kept whole on their lines)\n\n"


def render(facts: dict[str, Any]) -> dict[Path, str]:
    """The Python client's generated files (relative to the repository) and their text."""
    return {
        PACKAGE / "facts.py": _facts(facts),
        PACKAGE / "taxonomy.py": _taxonomy(facts),
    }


def _str(text: str) -> str:
    """A Python string literal in double quotes: printable ASCII as is, the rest escaped."""
    out = []
    for c in text:
        code = ord(c)
        if c in '"\\':
            out.append("\\" + c)
        elif 0x20 <= code < 0x7F:
            out.append(c)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def _literal(value: Any, indent: int = 0) -> str:
    """A Python literal: mappings as dicts, lists as tuples, one item a line."""
    pad = "    " * (indent + 1)
    end = "    " * indent
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return _str(value)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{pad}{_str(k)}: {_literal(v, indent + 1)},\n" for k, v in value.items()]
        return "{\n" + "".join(items) + end + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "()"
        if len(value) == 1:  # the comma a one-item tuple needs is no "magic" one to ruff
            return f"({_literal(value[0], indent)},)"
        items = [f"{pad}{_literal(v, indent + 1)},\n" for v in value]
        return "(\n" + "".join(items) + end + ")"
    raise TypeError(f"no literal for {type(value).__name__}")


def _json_literal(value: Any, indent: int = 0) -> str:
    """A literal that keeps JSON's lists as lists (the service config is JSON for gRPC)."""
    pad = "    " * (indent + 1)
    end = "    " * indent
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{pad}{_str(k)}: {_json_literal(v, indent + 1)},\n" for k, v in value.items()]
        return "{\n" + "".join(items) + end + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        items = [f"{pad}{_json_literal(v, indent + 1)},\n" for v in value]
        return "[\n" + "".join(items) + end + "]"
    return _literal(value, indent)


def _const(name: str, text: str) -> str:
    """`NAME: Final = "text"`, in parentheses on its own line where ruff puts it there (the
    line is too long, and the string alone fits)."""
    literal = _str(text)
    line = f"{name}: Final = {literal}\n"
    if len(line) > LINE_LENGTH + 1 and len(literal) + 4 <= LINE_LENGTH:
        return f"{name}: Final = (\n    {literal}\n)\n"
    return line


def _facts(facts: dict[str, Any]) -> str:
    limits = facts["limits"]
    defaults = facts["defaults"]
    breaker = defaults["breaker"]
    failures = facts["response_failures"]
    runtime = {
        name: {
            "values": fact["values"],
            "open": fact["open"],
            "count": fact["count"],
            "decisive": fact.get("decisive", False),
        }
        for name, fact in facts["runtime_facts"].items()
    }
    evidence = facts["evidence"]
    lines = [
        HEADER.format(
            what="The facts every errorclass client shares, as Python constants.", noqa=NOQA
        ),
        "from typing import Any, Final\n\n",
        _const("VERSION", facts["version"]),
        '"""The classifier\'s version; this package carries it."""\n\n',
        *[f"{name}: Final = {value!r}\n" for name, value in limits.items()],
        '"""The limits the service enforces; characters are code points, bytes UTF-8 bytes."""\n\n',
        _const("WHITESPACE", facts["whitespace"]),
        '"""What "stripped" strips from both ends of a name (Python\'s `str.isspace`)."""\n\n',
        f"ORIGIN_NAMES: Final = {_literal(facts['origins']['names'])}\n",
        f"ORIGIN_ALIASES: Final = {_literal(facts['origins']['aliases'])}\n",
        f"GRPC_CODES: Final = {_literal(facts['grpc_codes'])}\n",
        '"""gRPC status names to numbers, as Google error bodies spell them."""\n',
        "GRPC_CODE_NAMES: Final = {number: name for name, number in GRPC_CODES.items()}\n\n",
        _const("SERVICE_PACKAGE", facts["service"]["package"]),
        f"SERVICE_NAME: Final = {_str(facts['service']['name'])}\n\n",
        f"DEADLINE_MS: Final = {defaults['deadline_ms']!r}\n",
        '"""How long a call may take unless the caller says otherwise."""\n',
        f"ATTEMPTS: Final = {defaults['attempts']!r}\n",
        '"""Tries per call while the server answers UNAVAILABLE (gRPC\'s retry policy)."""\n',
        f"BREAKER_FAILURES: Final = {breaker['failures']!r}\n",
        f"BREAKER_RESET_MS: Final = {breaker['reset_ms']!r}\n",
        f"BREAKER_MAX_RESET_MS: Final = {breaker['max_reset_ms']!r}\n",
        f"BREAKER_TRIPPING: Final = {_literal(breaker['tripping'])}\n",
        f"BREAKER_OPENS_AT_ONCE: Final = {_literal(breaker['opens_at_once'])}\n\n",
        f"SERVICE_CONFIG: Final[dict[str, Any]] = {_json_literal(facts['service_config'])}\n",
        '"""The gRPC service config every client sets: retries of UNAVAILABLE, throttled."""\n\n',
        f"RUNTIME_FACTS: Final = {_literal(runtime)}\n",
        '"""What only the runtime knows: each attribute, its values, whether it takes another\n'
        "word (`open`, matching OPEN_FACT_PATTERN) or a whole number (`count`), and whether it\n"
        'decides the class whatever the exception (`decisive`)."""\n',
        f"OPEN_FACT_PATTERN: Final = {_str(facts['open_fact_pattern'])}\n\n",
        _const("FINISH_REASON_TYPE", failures["finish_reason_type"]),
        _const("PROMPT_BLOCKED_TYPE", failures["prompt_blocked_type"]),
        _const("RESPONSE_FAILURE_TYPE", failures["supertype"]),
        f"FAILURE_REASONS: Final = {_literal(failures['failure_reasons'])}\n",
        '"""Reasons that are the provider refusing, by the API that spells them."""\n',
        f"CUTOFF_REASONS: Final = {_literal(failures['cutoff_reasons'])}\n",
        f"NOT_BLOCKED: Final = {_literal(failures['not_blocked'])}\n",
        _const("FINISH_REASON_MESSAGE", failures["finish_reason_message"]),
        _const("PROMPT_BLOCKED_MESSAGE", failures["prompt_blocked_message"]),
        "\n",
        _const("EVIDENCE_HEADER_ATTRIBUTE_PREFIX", evidence["header_attribute_prefix"]),
        f"EVIDENCE_HEADERS: Final = {_literal(evidence['headers'])}\n",
        '"""Response headers a client keeps, as attributes: the prefix, the lower-cased name."""\n',
        f"EVIDENCE_GOOGLE_DETAILS: Final = {_literal(evidence['google_details'])}\n",
        '"""Attributes from a Google error\'s `details`: the item of `type_url`, its `field`."""\n',
        f"EVIDENCE_MAX_CHARS: Final = {evidence['max_chars']!r}\n",
    ]
    return "".join(lines)


def _members(names: list[str]) -> str:
    return "".join(f"    {name} = {i}\n" for i, name in enumerate(names))


def _taxonomy(facts: dict[str, Any]) -> str:
    effects = "".join(
        f"    {name}_ = {i}\n" if name == "continue" else f"    {name} = {i}\n"
        for i, name in enumerate(facts["effects"])
    )
    return "".join(
        [
            HEADER.format(
                what="The taxonomy as a runtime reads an answer: classes, origins, effects and\n"
                "the reasons of an Unknown, numbered as the proto numbers them (permanent).",
                noqa="",
            ),
            "from enum import IntEnum\n\n\n",
            "class ErrorClass(IntEnum):\n",
            '    """A run error class; its value is the permanent number runtimes store."""\n\n',
            _members(facts["classes"]),
            "\n\nclass Origin(IntEnum):\n",
            '    """Where the exception was raised (`caller` is another name for `user`)."""\n\n',
            _members(facts["origins"]["names"]),
            "\n\nclass Effect(IntEnum):\n",
            '    """What the failure does to the run (`continue_`: a keyword)."""\n\n',
            effects,
            "\n    @property\n",
            "    def label(self) -> str:\n",
            '        """The name as rules and text write it (`continue`, not `continue_`)."""\n',
            '        return self.name.rstrip("_")\n\n',
            "    @classmethod\n",
            "    def from_label(cls, label: str) -> Effect:\n",
            '        return cls["continue_" if label == "continue" else label]\n',
            "\n\nclass UnknownReason(IntEnum):\n",
            '    """Why an answer is Unknown (`none` for every other answer)."""\n\n',
            _members(facts["unknown_reasons"]),
        ]
    )
