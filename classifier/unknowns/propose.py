"""A drafted rule for each cluster, shown only once it is proven on the whole corpus.

For a cluster the ruleset does not cover yet, drafts are tried from the least to the most
specific text they read (`drafts`): structure, structure as a fallback, structure and the
template's words, structure and the whole template. A message pattern is therefore added
only when structure cannot separate the cluster from what is already classified (or from
other Unknowns). Each draft is checked against the target ruleset (`proof`: it loads,
lints clean, replays the corpus to exactly this cluster's Unknowns, and its cases pass),
and the first that passes every check is the proposal.

A cluster no draft passes for is refused, with each draft's reasons; one whose every draft
would change an answer that was already classified says which answers. The class is the
person's to choose when the evidence does not settle it (`class_choice`): the draft is
written with a placeholder that fails `check`, naming the candidate classes and why, and is
checked with the first candidate standing in. Nothing is applied: `proposal_output.write`
puts the drafts in a folder to review.

    class_choice     the class, the action and the id a draft carries
    drafts           the `when`s to try, and the rule and cases each makes
    proof            a draft compiled in memory over the target and checked
    propose          this module: the three in order, one proposal per cluster
    proposal_output  the proposals as text, markdown, JSON and files to review
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from classifier.answer import NearMiss
from classifier.unknowns.action_choice import ActionChoice, choose_action
from classifier.unknowns.class_choice import ClassChoice, choose_class
from classifier.unknowns.cluster import Cluster
from classifier.unknowns.drafts import cases_for, drafts_for, rule_for
from classifier.unknowns.inbox_report import Report
from classifier.unknowns.proof import Attempt, Checker
from classifier.unknowns.rule_ids import rule_id_for


@dataclass
class Proposal:
    """What --propose says about one cluster: a checked draft, a refusal, or that it is covered."""

    cluster: Cluster
    status: str
    """`proposed`, `refused` or `covered`."""
    rule_id: str = ""
    klass: ClassChoice | None = None
    action: ActionChoice | None = None
    rule: dict[str, Any] | None = None
    cases: list[dict[str, Any]] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    members: int = 0
    """Distinct descriptors of the corpus in this cluster and Unknown under the target."""
    reason: str = ""
    near_misses: tuple[NearMiss, ...] = ()
    """The typical member's near misses, as explain ranks them (`engine.nearness`)."""

    @property
    def accepted(self) -> Attempt | None:
        return next((a for a in self.attempts if a.passed), None)


def propose(report: Report, checker: Checker, id_prefix: str = "") -> list[Proposal]:
    """A proposal (or a refusal, or `covered`) for each cluster of the report; drafted ids
    begin with `id_prefix` when given (else with the type's namespace)."""
    ruleset = checker.ruleset
    taken = {r.id for r in ruleset.rules}
    out: list[Proposal] = []
    for a in report.assessed:
        c = a.cluster
        members = len(checker.members.get(c.id, ()))
        if members == 0:
            why = a.coverage.line(ruleset) if a.coverage is not None else "no member is Unknown"
            out.append(Proposal(c, "covered", reason=why))
            continue
        rule_id = rule_id_for(c, taken, id_prefix)
        klass = choose_class(c, a.tied, ruleset)
        action = choose_action(c, klass, ruleset)
        proposal = Proposal(
            c, "refused", rule_id, klass, action, members=members, near_misses=a.near_misses
        )
        cases = cases_for(c, rule_id, klass)
        for draft in drafts_for(c):
            rule = rule_for(rule_id, c, draft, klass, action, ruleset)
            problems, diff = checker.check([(c, rule)], [action], cases)
            proposal.attempts.append(Attempt(draft, problems, diff))
            if not problems:
                proposal.status, proposal.rule, proposal.cases = "proposed", rule, cases
                taken.add(rule_id)
                break
        if proposal.status == "refused":
            proposal.reason = _refusal(proposal)
        out.append(proposal)
    return out


def _refusal(p: Proposal) -> str:
    changing = [a for a in p.attempts if any("already classified" in x for x in a.problems)]
    if len(changing) == len(p.attempts):
        return (
            "every draft would change an answer that is already classified: "
            + p.attempts[-1].problems[0]
        )
    return "no draft passed its checks: " + "; ".join(
        f"{a.draft.label}: {a.problems[0]}" for a in p.attempts
    )


def check_together(proposals: Sequence[Proposal], checker: Checker) -> list[str]:
    """The accepted drafts added at once: problems (none when they do not interfere)."""
    accepted = [p for p in proposals if p.rule is not None and p.action is not None]
    if len(accepted) < 2:
        return []
    problems, _ = checker.check(
        [(p.cluster, p.rule) for p in accepted if p.rule is not None],
        [p.action for p in accepted if p.action is not None],
    )
    return problems
