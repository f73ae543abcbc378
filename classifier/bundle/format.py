"""The bundle's document: the compiled ruleset as language-neutral JSON.

These models are the format's one definition: the builder fills them, the
JSON Schema (`classifier/schemas/bundle.schema.json`, `make schemas`) is
generated from them, and `classifier bundle verify` reads a bundle back
through them. An evaluator in another language reads the same document
(docs/bundles.md walks through it); nothing in it needs this package.

Format 1, in short: `rules` are every enabled rule after layering, in
ruleset order; a rule matches a descriptor when its `type` (if any) names
the descriptor's type or a supertype and every one of its `conditions`
holds; among the matches the precedence key `PRECEDENCE` decides; a tie
that disagrees on class or effect is the `unknown.conflict` answer, no
match the `unknown.no_match` one. `descriptor` says what a descriptor
goes through before matching.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

FORMAT: Literal["errorclass-bundle"] = "errorclass-bundle"
FORMAT_VERSION: Literal[1] = 1
"""Raised when an evaluator written for this version could read the new one wrongly;
an evaluator refuses a version it does not know."""

PRECEDENCE = (
    "decisive",
    "fallback",
    "type_depth",
    "condition_count",
    "priority",
    "layer",
    "order",
)
"""The precedence key, most significant first (the smaller key wins):

    decisive         a decisive rule beats every rule that is not (none is, in format 1 rulesets
                     built today; the key is there so that evaluators rank it first already)
    fallback         a fallback rule loses to every rule that is not
    type_depth       the position in the descriptor's chain (type, then supertypes) of the
                     nearest name the rule's `type` lists; a rule without `type` comes after
                     every typed one
    condition_count  more conditions win
    priority         a higher priority wins
    layer            the upper layer (0, the ruleset asked for) wins
    order            still tied: if the tied rules agree on class and effect, the first in
                     ruleset order answers; if not, the answer is Unknown `conflict`
"""

PlainField = Literal["http_status", "grpc_status", "code", "origin", "provider", "language"]
PresentField = Literal["http_status", "grpc_status", "code", "message", "provider", "language"]


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ActionDoc(_Doc):
    """The operator action an answer recommends."""

    id: str
    summary: str
    runbook_url: str = ""


class AnswerDoc(_Doc):
    """What a rule (or an Unknown) answers; `class_` is the class number."""

    class_: int = Field(alias="class")
    """The class number (taxonomy.md; 0 is Unknown)."""
    class_name: str
    action: ActionDoc
    effect: Literal["fail", "pause", "continue", "unspecified"]
    retryable: bool
    retry_after_cap_seconds: float | None = None
    """Only on a retryable rule's answer: the longest wait it advises (the rule's own
    `retry_after_cap`, else the ruleset's). The wait is read from the descriptor's retry
    evidence as `classifier/engine/retry_after.py` reads it (docs/bundles.md)."""


class TypeCondition(_Doc):
    """Inside a cause: the cause's type, or one of its supertypes, is one of `names`."""

    kind: Literal["type"] = "type"
    names: list[str]
    text: str
    """The condition as the rule file spells it, for people."""


class FieldInCondition(_Doc):
    """A plain field (of the descriptor, or inside a cause of the cause) is one of the values.

    `http_status` gives `ranges` (inclusive, sorted, merged: `5xx` is `[[500, 599]]`), every
    other field `values`: gRPC statuses by number, origins by name, codes as text, labels
    (provider, language) lower-cased. An absent field is in no set.
    """

    kind: Literal["field_in"] = "field_in"
    field: PlainField
    values: list[str | int] | None = None
    ranges: list[tuple[int, int]] | None = None
    text: str


class PresentCondition(_Doc):
    """The field is set (`present` true) or not (false), whatever it holds. Set means: not
    absent and, after normalisation, not empty; `origin` is never asked."""

    kind: Literal["present"] = "present"
    field: PresentField
    present: bool
    text: str


class MessageCondition(_Doc):
    """The message holds a match of an RE2 `pattern` (unanchored search, RE2 syntax, the
    portable subset `classifier check` enforces: docs/rules.md#non_portable_pattern)."""

    kind: Literal["message"] = "message"
    pattern: str
    text: str


class AttributeCondition(_Doc):
    """The attribute `name` is present with one of `values` (compared exactly)."""

    kind: Literal["attribute"] = "attribute"
    name: str
    values: list[str]
    text: str


class CauseCondition(_Doc):
    """Some cause of the descriptor satisfies every one of `conditions` (which never hold a
    cause condition themselves: causes are a flat list)."""

    kind: Literal["cause"] = "cause"
    conditions: list[CauseInner]
    text: str


CauseInner = Annotated[
    TypeCondition | FieldInCondition | PresentCondition | MessageCondition,
    Field(discriminator="kind"),
]
Condition = Annotated[
    FieldInCondition | PresentCondition | MessageCondition | AttributeCondition | CauseCondition,
    Field(discriminator="kind"),
]


class RuleDoc(_Doc):
    """One enabled rule, after layering."""

    id: str
    location: str
    """Where it is written, `file:line:col` as the engine prints it."""
    order: int
    """Its position in ruleset order (0 first): the last precedence step."""
    layer: int
    """0 for a rule of the ruleset asked for, 1 for its base's, and so on."""
    fallback: bool
    decisive: bool
    priority: int
    condition_count: int
    """How many conditions it counts as for precedence: `type` and every condition but
    `present` count one, a cause as many as it holds (its own `present` ones excepted)."""
    type: list[str] | None = None
    """The type names it matches (the descriptor's type or a supertype); absent: no type
    condition (the rule comes after every typed rule in precedence)."""
    conditions: list[Condition]
    """Every condition but the type; all must hold."""
    answer: AnswerDoc


class LayerDoc(_Doc):
    name: str
    version: str
    digest: str


class RulesetDoc(_Doc):
    """The ruleset, as GetRuleset names it: every answer echoes `version` and `digest`."""

    name: str
    version: str
    digest: str
    description: str
    layers: list[LayerDoc]
    """The stack, the ruleset asked for first (one layer for a ruleset of its own)."""


class ClassDefaultDoc(_Doc):
    """A class's default action, effect and retryable (rules' answers already include them)."""

    number: int
    name: str
    action: ActionDoc
    effect: Literal["fail", "pause", "continue", "unspecified"]
    retryable: bool


class UnknownDoc(_Doc):
    """The answer when no rule matches, and when tied rules disagree."""

    no_match: AnswerDoc
    conflict: AnswerDoc


class DescriptorRulesDoc(_Doc):
    """What a descriptor goes through before matching, as the service does it.

    The names in `stripped` (and, inside causes, `type`, `supertypes`, `code`) lose the
    characters of `whitespace` at both ends; `lower_cased` are then lower-cased (Unicode's
    full lower-case mapping, final sigma included: Python's `str.lower`). A message is cut
    to `message_max_chars` characters (code points), after each lone surrogate becomes
    U+FFFD. `origin_aliases` maps an origin name to the one it stands for. `limits` are the
    hard limits past which the service refuses a descriptor instead of classifying it.
    """

    whitespace: str
    stripped: list[str]
    lower_cased: list[str]
    message_max_chars: int
    origin_aliases: dict[str, str]
    limits: dict[str, int]


class BundleDoc(_Doc):
    """A ruleset bundle: the compiled ruleset for in-process evaluation (docs/bundles.md)."""

    model_config = ConfigDict(title="ruleset bundle (classifier bundle build)")

    format: Literal["errorclass-bundle"]
    format_version: Literal[1]
    classifier_version: str
    ruleset: RulesetDoc
    precedence: list[str]
    """The precedence key, most significant first; an evaluator refuses a bundle whose key
    is not the one it implements."""
    descriptor: DescriptorRulesDoc
    classes: list[ClassDefaultDoc]
    unknown: UnknownDoc
    rules: list[RuleDoc]


class SignatureDoc(_Doc):
    """One detached signature over the bundle file's exact bytes."""

    key_id: str
    """The first 16 hex digits of SHA-256 over the public key's DER SubjectPublicKeyInfo."""
    algorithm: str
    """`ed25519`; a verifier skips an entry of an algorithm it does not know (so a later
    algorithm can sign beside this one)."""
    signature: str
    """The 64-byte Ed25519 signature, standard base64."""


class SignaturesDoc(_Doc):
    """The signatures beside a bundle (`BUNDLE.sig.json`); any one by a trusted key will do."""

    model_config = ConfigDict(title="bundle signatures (classifier bundle sign)")

    format: Literal["errorclass-bundle-signatures"]
    format_version: Literal[1]
    signatures: list[SignatureDoc]
