"""Judge one runtime pair: its descriptor, classified over gRPC, against its situation's want.

Verdicts: right; wrong class (a class other than the one wanted); wrong effect (the right
class with another effect than the situation fixes, or another action than it names);
Unknown (no rule matched where a class is wanted). The same function serves the pytest
items (test_runtime.py) and the report (report.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from errorclass_client import Client, Descriptor
from tests.conformance.runner import descriptor_data
from tests.conformance.runtime.drivers import Described
from tests.conformance.runtime.situations import Situation

RIGHT, WRONG_CLASS, WRONG_EFFECT, UNKNOWN = "right", "wrong class", "wrong effect", "Unknown"
VERDICTS = (RIGHT, WRONG_CLASS, WRONG_EFFECT, UNKNOWN)


@dataclass(frozen=True)
class Result:
    pair: str
    situation: Situation
    verdict: str
    got_class: str
    got_effect: str
    got_action: str
    rule_id: str
    descriptor: Descriptor | None
    chain: Sequence[Mapping[str, Any]] = field(default_factory=tuple)

    @property
    def language(self) -> str:
        return self.pair.split(".", 1)[0]

    @property
    def class_right(self) -> bool:
        return self.got_class == self.situation.want.error_class

    @property
    def action_wanted(self) -> bool:
        return self.situation.want.action is not None

    @property
    def action_right(self) -> bool:
        """The class and the action wanted (an action is only right with its class)."""
        return self.class_right and self.got_action == self.situation.want.action

    @property
    def retry_after_wanted(self) -> bool:
        """No situation names a wait (the runtime's own failures are not the provider's
        retry evidence): the reports' retry_after columns count none here."""
        return False

    @property
    def retry_after_right(self) -> bool:
        return False

    def explain(self) -> str:
        want = self.situation.want
        lines = [
            f"{self.pair}: {self.verdict}",
            f"  want  {want.error_class} / effect {want.effect or '(any)'}"
            + (f" / {want.action}" if want.action else ""),
            f"  got   {self.got_class} / effect {self.got_effect} / {self.got_action}"
            f" (rule {self.rule_id or '-'})",
        ]
        if self.chain:
            lines.append("  raised " + " <- ".join(str(c.get("type")) for c in self.chain))
        if self.descriptor is not None:
            lines.append(f"  descriptor {descriptor_data(self.descriptor)}")
        return "\n".join(lines)


def verdict(situation: Situation, got_class: str, got_effect: str, got_action: str) -> str:
    want = situation.want
    if got_class != want.error_class:
        return UNKNOWN if got_class == "Unknown" else WRONG_CLASS
    if want.effect is not None and got_effect != want.effect:
        return WRONG_EFFECT
    if want.action is not None and got_action != want.action:
        return WRONG_EFFECT
    return RIGHT


def judge(described: Described, situation: Situation, client: Client) -> Result:
    d = described.descriptor
    if d is None:  # a runtime that describes nothing leaves the failure unclassified
        return Result(described.pair, situation, UNKNOWN, "", "", "", "", None, described.chain)
    answer = client.classify(d)
    got_effect = answer.effect.label
    return Result(
        pair=described.pair,
        situation=situation,
        verdict=verdict(situation, answer.class_name, got_effect, answer.action.id),
        got_class=answer.class_name,
        got_effect=got_effect,
        got_action=answer.action.id,
        rule_id=answer.rule_id,
        descriptor=d,
        chain=described.chain,
    )
