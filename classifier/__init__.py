"""A declarative, rule-based error classifier.

Load a ruleset folder, classify exception descriptors, explain the answer:

    >>> from classifier import load_ruleset, build_descriptor, classify
    >>> rules = load_ruleset("rules")
    >>> classify(rules, build_descriptor(type="openai.RateLimitError", http_status=429)).error_class
    <ErrorClass.RateLimited: 3>

The package is laid out as the pipeline runs: the kernel, then source/ (the file
formats), engine/, lint/, regress/, unknowns/ (the Unknown inbox), batch/ (table scale),
server/ and cli/, with client/ beside them. The README's layout table says what each
package and module holds and what it may import (tests/test_docs.py keeps it complete,
tests/test_layers.py keeps the arrows pointing one way).

The names below are loaded on first use, so `import classifier.client` never pays for
the rule compiler. `classify` and `explain` also take the client's descriptor
(`errorclass_client.Descriptor`), validated as the service validates one.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from classifier.answer import Action, Classification, Explanation
    from classifier.descriptor import Cause, CauseInput, Descriptor, build_descriptor
    from classifier.engine.compiler import compile_ruleset, load_ruleset
    from classifier.engine.evaluate import classify_unindexed
    from classifier.engine.public import classify, explain
    from classifier.engine.ruleset import CompiledRule, Outcome, Ruleset
    from classifier.errors import (
        ClassifierError,
        DescriptorError,
        Diagnostic,
        FieldViolation,
        RulesetError,
    )
    from classifier.location import Location
    from classifier.source.descriptor_file import descriptor_from_data, read_descriptor
    from classifier.source.loader import load_source
    from classifier.taxonomy import Effect, ErrorClass, Origin, UnknownReason

    __version__: str

DISTRIBUTION = "errorclass-classifier"
"""The name the package is installed under (pip, importlib.metadata)."""

_HOMES = {
    "classifier.answer": ("Action", "Classification", "Explanation"),
    "classifier.descriptor": ("Cause", "CauseInput", "Descriptor", "build_descriptor"),
    "classifier.engine.compiler": ("compile_ruleset", "load_ruleset"),
    "classifier.engine.evaluate": ("classify_unindexed",),
    "classifier.engine.public": ("classify", "explain"),
    "classifier.engine.ruleset": ("CompiledRule", "Outcome", "Ruleset"),
    "classifier.errors": (
        "ClassifierError",
        "DescriptorError",
        "Diagnostic",
        "FieldViolation",
        "RulesetError",
    ),
    "classifier.location": ("Location",),
    "classifier.source.descriptor_file": ("descriptor_from_data", "read_descriptor"),
    "classifier.source.loader": ("load_source",),
    "classifier.taxonomy": ("Effect", "ErrorClass", "Origin", "UnknownReason"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "Action",
    "Cause",
    "CauseInput",
    "Classification",
    "ClassifierError",
    "CompiledRule",
    "Descriptor",
    "DescriptorError",
    "Diagnostic",
    "Effect",
    "ErrorClass",
    "Explanation",
    "FieldViolation",
    "Location",
    "Origin",
    "Outcome",
    "Ruleset",
    "RulesetError",
    "UnknownReason",
    "__version__",
    "build_descriptor",
    "classify",
    "classify_unindexed",
    "compile_ruleset",
    "descriptor_from_data",
    "explain",
    "load_ruleset",
    "load_source",
    "read_descriptor",
]


def version() -> str:
    """The installed package's version (`0+unknown` when run from a tree never installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed(DISTRIBUTION)
    except PackageNotFoundError:
        return "0+unknown"


def __getattr__(name: str) -> Any:
    """Import a public name's home module the first time the name is asked for
    (`__version__` too: reading the installed metadata costs a few milliseconds)."""
    if name == "__version__":
        value = globals()["__version__"] = version()
        return value
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'classifier' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
