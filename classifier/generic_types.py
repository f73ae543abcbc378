"""The generic exception types: the ones any code raises for any reason.

A type on this list says nothing about which failure it was: `TypeError`, .NET's
`InvalidOperationException`, Java's `RuntimeException` or Go's `*fmt.wrapError` (what
`fmt.Errorf("...: %w", err)` makes) is raised for a bug, a timeout and a refusal alike. So
a condition that held on one of them does not make a rule a near miss (explain ranks near
misses by the conditions that decide classes, `classifier.engine.nearness`), and a drafted
rule is never scoped by one alone (`classifier.unknowns.class_choice`): it needs a cause,
a code, a status or a message pattern beside it.

The list is per runtime, as descriptors name types: Python's builtins by their bare name,
Java and .NET by their full name, Go by `%T`, Node by the constructor's name, Rust by its
path. A library's one catch-all error (`reqwest::Error`, `anyhow::Error`, a type named
just `Error` or `Exception` in its package) is generic the same way.
"""

from __future__ import annotations

import re

GENERIC_TYPES: frozenset[str] = frozenset(
    {
        # Python: builtins any code raises
        "BaseException",
        "Exception",
        "RuntimeError",
        "ValueError",
        "TypeError",
        "KeyError",
        "IndexError",
        "LookupError",
        "AttributeError",
        "AssertionError",
        "NotImplementedError",
        "OSError",
        "IOError",
        "builtins.Exception",
        "builtins.RuntimeError",
        "builtins.ValueError",
        "builtins.TypeError",
        "builtins.KeyError",
        "builtins.AttributeError",
        # Java
        "java.lang.Throwable",
        "java.lang.Exception",
        "java.lang.Error",
        "java.lang.RuntimeException",
        "java.lang.IllegalStateException",
        "java.lang.IllegalArgumentException",
        "java.lang.NullPointerException",
        "java.lang.UnsupportedOperationException",
        "java.util.concurrent.ExecutionException",
        "java.util.concurrent.CompletionException",
        "java.io.IOException",
        "java.io.UncheckedIOException",
        # .NET
        "System.Exception",
        "System.SystemException",
        "System.ApplicationException",
        "System.InvalidOperationException",
        "System.ArgumentException",
        "System.ArgumentNullException",
        "System.ArgumentOutOfRangeException",
        "System.NullReferenceException",
        "System.NotSupportedException",
        "System.NotImplementedException",
        "System.AggregateException",
        "System.IO.IOException",
        # Go (%T)
        "*errors.errorString",
        "*errors.joinError",
        "*fmt.wrapError",
        "*fmt.wrapErrors",
        # Node (and browsers)
        "Error",
        "RangeError",
        "AggregateError",
        # Rust
        "anyhow::Error",
        "Box<dyn std::error::Error>",
        "Box<dyn std::error::Error + Send + Sync>",
        "std::io::Error",
        "String",
    }
)

_CATCH_ALL_TAIL = re.compile(r"(?:^|[.:/*])(?:Error|Exception|error)$")
"""A type named just Error or Exception in its package (`reqwest::Error`, `*apierror.Error`):
the package's one type for all of its failures; what scopes it is a status or code beside it."""


def is_generic(type_name: str) -> bool:
    """Whether a type says nothing about which failure it was (see the module docstring)."""
    return type_name in GENERIC_TYPES or bool(_CATCH_ALL_TAIL.search(type_name))
