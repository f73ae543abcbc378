"""A declarative, rule-based error classifier.

Load a ruleset folder, classify exception descriptors, explain the answer:

    >>> from classifier import load_ruleset, build_descriptor, classify
    >>> rules = load_ruleset("rules")
    >>> classify(rules, build_descriptor(type="openai.RateLimitError", http_status=429)).error_class
    <ErrorClass.RateLimited: 3>
"""

from classifier.compiler import compile_ruleset, load_ruleset
from classifier.descriptor import Cause, CauseInput, Descriptor, build_descriptor
from classifier.descriptor_io import descriptor_from_data, read_descriptor
from classifier.engine import Classification, classify, classify_unindexed
from classifier.errors import (
    ClassifierError,
    DescriptorError,
    Diagnostic,
    FieldViolation,
    RulesetError,
)
from classifier.explain import explain
from classifier.loader import load_source
from classifier.location import Location
from classifier.ruleset import Action, CompiledRule, Outcome, Ruleset
from classifier.taxonomy import Effect, ErrorClass, Origin, UnknownReason
from classifier.trace import Explanation

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
