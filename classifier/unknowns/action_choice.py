"""The action a drafted rule names: the class's default, unless an unsettled failure is of
a kind the default does not describe (output that did not parse, a bug in our own code):
then the catalog's entry for that kind, or a drafted catalog entry when the catalog has
none. Chosen after the class (`class_choice`), whose choice and evidence text it reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from classifier.engine.ruleset import Ruleset
from classifier.unknowns.class_choice import ClassChoice, evidence_text
from classifier.unknowns.cluster import Cluster


@dataclass(frozen=True, slots=True)
class ActionChoice:
    """The action a draft names (its class's default, or one for the kind of failure)."""

    id: str
    summary: str
    new: bool
    """A drafted catalog entry: no action in the catalog fits."""
    why: str


_KINDS: tuple[tuple[re.Pattern[str], str, str, str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), action_id, summary, why)
    for p, action_id, summary, why in (
        (
            r"pars|json|decod|validat|output|invalid start",
            "app.fix-output-handling",
            "The model's output did not parse or validate against the shape we expected; "
            "tighten the prompt or the output schema, or add a repair-and-retry step.",
            "the model's output did not parse or validate, and no catalog action says "
            "what to do about that",
        ),
        (
            r"attributeerror|keynotfound|argumentnull|nullreference|keyerror|typeerror|"
            r"indexerror|recursion",
            "app.fix-bug",
            "Our own code failed on a value it did not expect (a bug); read the stack trace "
            "and fix the code, then rerun.",
            "it is a bug in our own code, and no catalog action says to fix code",
        ),
    )
)


def choose_action(c: Cluster, choice: ClassChoice, ruleset: Ruleset) -> ActionChoice:
    """The class's default action, unless the failure is of a kind it does not describe."""
    default = ruleset.defaults[choice.proposed].action
    if not choice.settled:
        text = evidence_text(c)
        for pattern, action_id, summary, why in _KINDS:
            if pattern.search(text):
                found = ruleset.actions.get(action_id)
                if found is not None:
                    return ActionChoice(found.id, found.summary, False, f"catalog: {why}")
                return ActionChoice(action_id, summary, True, why)
    return ActionChoice(default.id, default.summary, False, f"{choice.proposed.name}'s default")


__all__ = ["ActionChoice", "choose_action"]
