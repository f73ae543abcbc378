"""YAML read with positions kept, safely.

PyYAML's composer gives us nodes with marks; we build plain Python values
from them ourselves so that (a) every value and key keeps its `Location`,
(b) duplicate keys are errors instead of silently last-one-wins, (c) aliases
are refused (rule files never need them, and they are how a billion-laughs
file explodes), and (d) only the safe scalar tags exist: nothing can
construct an object.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from classifier.codes import Code, info
from classifier.errors import Diagnostic
from classifier.location import Location
from classifier.text import doc_pointer

Path_ = tuple[str | int, ...]

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SAFE_SCALAR_TAGS = frozenset(
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "timestamp")
)
_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
MAX_DEPTH = 64
_RECOVERABLE = frozenset({Code.duplicate_key})
"""Problems after which the rest of the document is still worth validating."""


@dataclass
class Positions:
    """Where each value (and each mapping key) of a document sits in its file.

    Kept as (line, column) pairs and turned into a `Location` only when a
    diagnostic asks: a large ruleset has tens of thousands of positions and
    needs a handful.
    """

    file: str
    values: dict[Path_, tuple[int, int]] = field(default_factory=dict)
    keys: dict[Path_, tuple[int, int]] = field(default_factory=dict)

    def value(self, path: Path_) -> Location:
        """The value at path, or the nearest enclosing value that has a position."""
        for end in range(len(path), -1, -1):
            if (at := self.values.get(path[:end])) is not None:
                return Location(self.file, *at)
        return Location(self.file)

    def key(self, path: Path_) -> Location:
        """The key that introduces path, falling back to the value's position."""
        at = self.keys.get(path)
        return Location(self.file, *at) if at is not None else self.value(path)

    def within(self, prefix: Path_) -> Positions:
        """The positions of the value at prefix, with paths relative to it."""
        n = len(prefix)
        return Positions(
            self.file,
            {p[n:]: at for p, at in self.values.items() if p[:n] == prefix},
            {p[n:]: at for p, at in self.keys.items() if p[:n] == prefix},
        )


@dataclass
class YamlDocument:
    """A parsed file: its value, where everything is, and the problems found."""

    value: Any
    positions: Positions
    diagnostics: list[Diagnostic]


_Dumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
"""libyaml's emitter writes the same text as PyYAML's, five times faster (start-up time)."""
_PLAIN_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.$/@*+-]*\Z")
_RESOLVER = yaml.resolver.Resolver()


def flow(value: Any) -> str:
    """A value as one line of YAML flow style, quoted only where YAML needs it.

    The one YAML writer: canonical rule text, explain's descriptor lines and
    the linter's messages all use it, so a value reads the same everywhere.
    """
    if (plain := _plain(value)) is not None:
        return plain
    text = yaml.dump(
        value,
        Dumper=_Dumper if _ascii(value) else yaml.SafeDumper,
        default_flow_style=True,
        width=10**9,
        allow_unicode=True,
        sort_keys=False,
    )
    return text.strip().removesuffix("...").strip()


def _ascii(value: Any) -> bool:
    """Whether every string in value is ASCII: libyaml escapes some characters PyYAML's
    emitter writes as they are, and PyYAML's is the reference."""
    if isinstance(value, str):
        return value.isascii()
    if isinstance(value, list):
        return all(_ascii(v) for v in value)
    if isinstance(value, dict):
        return all(_ascii(k) and _ascii(v) for k, v in value.items())
    return True


def _plain(value: Any) -> str | None:
    """A scalar or a list of scalars that YAML writes as is, written the same way; else None.

    Type names, codes and statuses are nearly every condition, and the
    emitter costs tens of microseconds a call; anything that might need
    quoting is left to it.
    """
    if isinstance(value, list):
        items = [_plain(v) for v in value]
        if not items or None in items:
            return None
        return "[" + ", ".join(items) + "]"  # type: ignore[arg-type]
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if (
        isinstance(value, str)
        and _PLAIN_WORD.match(value)
        and _RESOLVER.resolve(yaml.ScalarNode, value, (True, False)) == _STR_TAG  # type: ignore[no-untyped-call]
    ):
        return value
    return None


def _loc(file: str, mark: Any) -> Location:
    return Location(file, mark.line + 1, mark.column + 1)


def _at(node: yaml.Node) -> tuple[int, int]:
    mark = node.start_mark
    return (mark.line + 1, mark.column + 1)


def read_yaml_file(path: Path, shown: str, max_bytes: int) -> tuple[bytes | None, YamlDocument]:
    """Read and parse a file, refusing one over max_bytes before parsing it.

    Returns the raw bytes (None when the file could not be read: the
    document then holds the `file_too_large` or `unreadable_file` diagnostic)
    so a caller can digest exactly what it parsed.
    """
    where = Location(shown)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            message = f"{size} bytes exceed the limit of {max_bytes} bytes"
            problem = Diagnostic(Code.file_too_large, message, where)
            return None, YamlDocument(None, Positions(shown), [problem])
        data = path.read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problem = Diagnostic(Code.unreadable_file, str(exc), where)
        return None, YamlDocument(None, Positions(shown), [problem])
    return data, parse_yaml(text, shown)


_SYNTAX_HINTS = (
    (
        "expected ',' or '}'",
        "a flow mapping `{{...}}`{opened} is missing a `,` between entries or its `}}`",
    ),
    (
        "expected ',' or ']'",
        "a flow list `[...]`{opened} is missing a `,` between items or its `]`",
    ),
    ("quoted scalar found unexpected end of stream", "a quoted text{opened} is never closed"),
    ("end of stream", "a quoted text or a bracket{opened} is never closed"),
    (
        "mapping values are not allowed",
        "a `: ` where YAML expected a plain value: quote a value that holds `: `, "
        "or check the indentation",
    ),
    (
        "expected key",
        "this line's indentation does not line up with the keys around it (or a key lacks its `:`)",
    ),
    (
        "cannot start any token",
        "a value starts with a character YAML reserves (`@`, `` ` ``, `%`): quote the value",
    ),
)
"""libyaml's problems in words, tried in order; the parser's own wording follows. `{opened}`
is where what is not closed opened, when the parser says."""
_OPENERS = (
    "while parsing a flow sequence",
    "while parsing a flow mapping",
    "while scanning a quoted scalar",
)
"""The parser's contexts whose mark is where a `[`, a `{` or a quote opened."""


def opened_at(exc: yaml.MarkedYAMLError, file: str) -> Location | None:
    """Where the flow list, flow mapping or quoted text the parser was reading opened: the
    parser notices a missing `]` only at the next line's key, often lines below."""
    if exc.context not in _OPENERS or exc.context_mark is None:
        return None
    return _loc(file, exc.context_mark)


def syntax_message(exc: yaml.MarkedYAMLError, text: str, file: str = "") -> str:
    """A YAML syntax error as a sentence first (with where an unclosed `[`, `{` or quote
    opened), then the parser's words and where the diagnostic is documented; a tab in the
    indentation is named as a tab."""
    raw = " ".join(p for p in (exc.context, exc.problem) if p)
    mark = exc.problem_mark or exc.context_mark
    lines = text.splitlines()
    line = lines[mark.line] if mark is not None and mark.line < len(lines) else ""
    at = line[mark.column : mark.column + 1] if mark is not None else ""
    indent = line[: len(line) - len(line.lstrip(" \t"))]
    if at == "\t" or "\t" in indent or "tab" in raw:
        plain = "a tab character: YAML indents with spaces only; replace the tab with spaces"
    else:
        opened = opened_at(exc, file)
        shown = f" that opens at {opened}" if opened is not None else ""
        hint = next((h for k, h in _SYNTAX_HINTS if k in raw), "this is not valid YAML")
        plain = hint.format(opened=shown)
    return f"{plain} (the YAML parser: {raw}); {doc_pointer(info(Code.yaml_syntax_error).anchor)}"


def parse_yaml(text: str, file: str, *, json_escapes: bool = False) -> YamlDocument:
    """Parse one YAML document, keeping positions; problems come back as diagnostics.

    With json_escapes, the pure-Python reader reads the text: unlike libyaml it
    accepts the `\\ud800` escape of half a surrogate pair, which JSON written
    from real exception messages carries (descriptor files, not rule files).
    """
    positions = Positions(file)
    try:
        loader = yaml.SafeLoader(text) if json_escapes else _Loader(text)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = _loc(file, mark) if mark is not None else Location(file)
        problem = syntax_message(exc, text, file)
        opened = opened_at(exc, file)
        related = (opened,) if opened is not None else ()
        diagnostic = Diagnostic(Code.yaml_syntax_error, problem, loc, related=related)
        return YamlDocument(None, positions, [diagnostic])
    except yaml.YAMLError as exc:
        return YamlDocument(
            None, positions, [Diagnostic(Code.yaml_syntax_error, str(exc), Location(file))]
        )
    except RecursionError:
        # libyaml's scanner refuses nesting past 1,000 levels itself; PyYAML's
        # pure-Python composer (used without libyaml) recurses instead.
        problem = f"nesting deeper than {MAX_DEPTH} levels"
        return YamlDocument(
            None, positions, [Diagnostic(Code.yaml_too_deep, problem, Location(file))]
        )
    if node is None:
        return YamlDocument(None, positions, [])
    builder = _Builder(file, positions)
    value = builder.build(node, (), 0)
    if any(d.code not in _RECOVERABLE for d in builder.diagnostics):
        value = None
    return YamlDocument(value, positions, builder.diagnostics)


class _Builder:
    def __init__(self, file: str, positions: Positions) -> None:
        self.file = file
        self.positions = positions
        self.diagnostics: list[Diagnostic] = []
        self.seen: set[int] = set()
        self.constructor = yaml.constructor.SafeConstructor()

    def error(self, code: Code, message: str, node: yaml.Node) -> None:
        self.diagnostics.append(Diagnostic(code, message, _loc(self.file, node.start_mark)))

    def build(self, node: yaml.Node, path: Path_, depth: int) -> Any:
        if id(node) in self.seen:
            self.error(
                Code.yaml_alias_forbidden,
                "this value is reused through an alias (*name); "
                "aliases are not allowed in rule files",
                node,
            )
            return None
        self.seen.add(id(node))
        self.positions.values[path] = _at(node)
        if depth > MAX_DEPTH:
            self.error(Code.yaml_too_deep, f"nesting deeper than {MAX_DEPTH} levels", node)
            return None
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node)
        if isinstance(node, yaml.SequenceNode):
            if node.tag != _SEQ_TAG:
                self.error(Code.yaml_unsafe_tag, f"tag {node.tag!r} is not allowed", node)
                return None
            return [self.build(item, (*path, i), depth + 1) for i, item in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode):
            if node.tag != _MAP_TAG:
                self.error(Code.yaml_unsafe_tag, f"tag {node.tag!r} is not allowed", node)
                return None
            return self.mapping(node, path, depth)
        self.error(Code.yaml_syntax_error, "unexpected node", node)
        return None

    def scalar(self, node: yaml.ScalarNode) -> Any:
        if node.tag == _STR_TAG:
            return node.value
        if node.tag not in _SAFE_SCALAR_TAGS:
            self.error(Code.yaml_unsafe_tag, f"tag {node.tag!r} is not allowed", node)
            return None
        try:
            return self.constructor.construct_object(node)
        except yaml.YAMLError as exc:
            self.error(Code.yaml_syntax_error, str(exc).splitlines()[0], node)
            return None

    def mapping(self, node: yaml.MappingNode, path: Path_, depth: int) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        first_seen: dict[Any, tuple[int, int]] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                self.error(
                    Code.yaml_merge_forbidden,
                    "merge keys (<<) are not allowed in rule files",
                    key_node,
                )
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self.error(Code.yaml_syntax_error, "a mapping key must be a plain scalar", key_node)
                continue
            reported = len(self.diagnostics)
            key = self.scalar(key_node)
            if len(self.diagnostics) > reported:
                continue
            key_at = _at(key_node)
            if key in first_seen:
                self.diagnostics.append(
                    Diagnostic(
                        Code.duplicate_key,
                        f"key {key!r} is already set at line {first_seen[key][0]}",
                        Location(self.file, *key_at),
                        related=(Location(self.file, *first_seen[key]),),
                    )
                )
                continue
            first_seen[key] = key_at
            self.positions.keys[(*path, key)] = key_at
            out[key] = self.build(value_node, (*path, key), depth + 1)
        return out
