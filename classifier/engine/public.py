"""The engine as `classifier` exports it: the entry points a user calls by name.

They take any descriptor with the descriptor's fields (the client's
`errorclass_client.Descriptor` too) and validate it through the service's own validation
(`classifier.descriptor.as_descriptor`) at this boundary; the engine's own `classify`,
which the server, the batch readers and the tools call with descriptors they have
validated already, stays free of the check.
"""

from __future__ import annotations

from classifier.answer import Classification
from classifier.descriptor import Descriptor, as_descriptor
from classifier.engine import evaluate
from classifier.engine import explain as explaining
from classifier.engine.retry_after import Clock, utc_now
from classifier.engine.ruleset import Ruleset
from classifier.engine.trace import Tracer


def classify(
    ruleset: Ruleset,
    descriptor: Descriptor | object,
    tracer: Tracer | None = None,
    now: Clock = utc_now,
) -> Classification:
    """Classify one descriptor (a Descriptor, or any object with its fields); `now` is the
    clock an HTTP date in a retry header is read against (the service's)."""
    return evaluate.classify(ruleset, as_descriptor(descriptor), tracer, now)


def explain(ruleset: Ruleset, descriptor: Descriptor | object) -> Classification:
    """Classify with the explanation attached (see `classifier.engine.explain`)."""
    return explaining.explain(ruleset, as_descriptor(descriptor))
