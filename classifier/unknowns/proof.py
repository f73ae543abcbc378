"""The proof of a draft: compiled over the target as a layer held in memory, then checked.

    loads         the ruleset with the draft (and any drafted catalog entry) compiles
    lint          `check --strict` finds nothing it did not find without the draft (no
                  conflict, no shadowing, nothing message-only)
    replay        `classifier diff` of the whole corpus, target against target+draft,
                  changes exactly this cluster's Unknowns, each to the draft's class and
                  rule, and no other answer (the diff is part of the proposal)
    cases         the case file drafted from the cluster's examples passes

Nothing is copied or written to disk: the drafts join the target's own layer in memory.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from classifier.descriptor import Descriptor
from classifier.engine.compiler import compile_stack
from classifier.engine.evaluate import classify
from classifier.engine.ruleset import Ruleset
from classifier.errors import Diagnostic, RulesetError
from classifier.lint.checks import lint_report
from classifier.regress.cases import CaseFile, parse_case_file
from classifier.regress.corpus import Entry
from classifier.regress.diff import RuleDiff, diff_rulesets
from classifier.regress.runner import check_case
from classifier.source.descriptor_file import descriptor_dict
from classifier.source.loader import CATALOG, LayerFiles, layer_files, load_stack
from classifier.taxonomy import ErrorClass
from classifier.text import plural
from classifier.unknowns.action_choice import ActionChoice
from classifier.unknowns.cluster import Cluster, Clusters
from classifier.unknowns.drafts import Draft

DRAFTS_FOLDER = "unknowns-drafts"
"""The name of the in-memory layer the drafts are checked in (it joins the target's own)."""
DRAFTS_FILE = "drafts.yaml"
DRAFTS_CASES = "drafts.cases.yaml"


@dataclass
class Attempt:
    """One draft tried: what its checks found (nothing: it passed) and its replay."""

    draft: Draft
    problems: list[str] = field(default_factory=list)
    diff: RuleDiff | None = None

    @property
    def passed(self) -> bool:
        return not self.problems


def _key(d: Descriptor) -> str:
    return json.dumps(descriptor_dict(d), sort_keys=True)


class Checker:
    """Replays a corpus under the target ruleset once, then checks drafts against it."""

    def __init__(self, rules_dir: Path, ruleset: Ruleset, entries: list[Entry], clusters: Clusters):
        self.rules_dir = rules_dir
        self.ruleset = ruleset
        self.entries = entries
        self.clusters = clusters
        self.baseline = {_warning_key(d) for d in lint_report(ruleset).warnings}
        self.target = load_stack(rules_dir)
        """The target as the source stage read it: drafts are compiled over it, in memory."""
        self.members: dict[str, set[str]] = {}
        """cluster id -> distinct descriptors Unknown under the target, by descriptor key."""
        seen: set[str] = set()
        for entry in entries:
            k = _key(entry.descriptor)
            if k in seen:
                continue
            seen.add(k)
            result = classify(ruleset, entry.descriptor)
            if result.error_class is not ErrorClass.Unknown:
                continue
            data = descriptor_dict(entry.descriptor)
            reason = result.unknown_reason.name
            other = "conflict" if reason == "no_match" else "no_match"
            cid = clusters.cluster_of(data, reason) or clusters.cluster_of(data, other)
            if cid is not None:
                self.members.setdefault(cid, set()).add(k)

    def check(
        self,
        rules: Sequence[tuple[Cluster, dict[str, Any]]],
        actions: Iterable[ActionChoice],
        cases: Sequence[dict[str, Any]] = (),
    ) -> tuple[list[str], RuleDiff | None]:
        """Problems with adding `rules` (each the draft for its cluster), and the replay."""
        layer = drafts_layer([r for _, r in rules], [a for a in actions if a.new])
        try:
            head = compile_stack(self.target.over(layer))
        except RulesetError as exc:
            return [f"does not load: {d.render()}" for d in exc.diagnostics[:3]], None
        problems = [
            f"check --strict: {d.render()}"
            for d in lint_report(head).warnings
            if _warning_key(d) not in self.baseline
        ]
        diff = diff_rulesets(
            self.ruleset, head, self.entries, base_label="target", head_label="with the draft"
        )
        problems += self._replay_problems(rules, diff)
        if cases and not problems:
            problems += _case_problems(head, drafted_cases(cases))
        return problems, diff

    def _replay_problems(
        self, rules: Sequence[tuple[Cluster, dict[str, Any]]], diff: RuleDiff
    ) -> list[str]:
        wanted: dict[str, tuple[str, str]] = {}
        for cluster, rule in rules:
            for k in self.members.get(cluster.id, set()):
                wanted[k] = (rule["id"], rule["class"])
        changed_classified: list[str] = []
        other_unknowns: list[str] = []
        wrong: list[str] = []
        reached: set[str] = set()
        for change in diff.changes:
            k = _key(change.descriptor)
            where = f"{change.where} ({change.descriptor.type})"
            if change.base.error_class is not ErrorClass.Unknown:
                changed_classified.append(
                    f"{where}: {change.base.error_class.name} by {change.base.rule_id} -> "
                    f"{change.head.error_class.name} by {change.head.rule_id or '-'}"
                )
            elif k not in wanted:
                other_unknowns.append(where)
            elif (change.head.rule_id, change.head.error_class.name) != wanted[k]:
                wrong.append(
                    f"{where}: {change.head.error_class.name} by {change.head.rule_id or '-'}"
                )
            else:
                reached.add(k)
        problems = []
        if changed_classified:
            problems.append(
                f"would change {plural(len(changed_classified), 'already classified answer')} "
                f"(refused): {'; '.join(changed_classified[:3])}"
                + (" ..." if len(changed_classified) > 3 else "")
            )
        if other_unknowns:
            problems.append(
                f"would also reclassify {plural(len(other_unknowns), 'Unknown')} outside "
                f"{'this cluster' if len(rules) == 1 else 'these clusters'}: "
                f"{'; '.join(other_unknowns[:3])}" + (" ..." if len(other_unknowns) > 3 else "")
            )
        if wrong:
            problems.append(f"members answered otherwise: {'; '.join(wrong[:3])}")
        missed = len(wanted) - len(reached) - len(wrong)
        if missed:
            problems.append(
                f"would leave {missed} of {plural(len(wanted), 'distinct member')} Unknown"
            )
        return problems


def drafts_layer(rules: Sequence[dict[str, Any]], actions: Sequence[ActionChoice]) -> LayerFiles:
    """The drafts, and the catalog entries they need, as a layer held in memory that joins the
    target's own (as if written into its folder): nothing is copied or written to disk."""
    files = {
        DRAFTS_FILE: yaml.safe_dump({"rules": list(rules)}, sort_keys=False, allow_unicode=True)
    }
    entries = {a.id: {"id": a.id, "summary": a.summary} for a in actions}
    if entries:
        files[CATALOG] = yaml.safe_dump(
            {"actions": list(entries.values())}, sort_keys=False, allow_unicode=True
        )
    return layer_files(DRAFTS_FOLDER, files, joins=True)


def drafted_cases(cases: Sequence[dict[str, Any]]) -> CaseFile:
    """The drafted case file, read (from memory) as `classifier test` reads one."""
    text = yaml.safe_dump({"cases": list(cases)}, sort_keys=False, allow_unicode=True)
    path = Path(DRAFTS_FOLDER) / DRAFTS_CASES
    return parse_case_file(text, path, path.as_posix())


def _case_problems(head: Ruleset, case_file: CaseFile) -> list[str]:
    """The drafted case file judged under `head`, as `classifier test` judges it."""
    problems = [f"cases: {d.render()}" for d in case_file.diagnostics]
    problems += [f"cases: {d.render()}" for bad in case_file.bad_cases for d in bad.diagnostics]
    for case in case_file.cases:
        result = check_case(head, case)
        if not result.status.ok:
            problems.append(f"case {case.note!r}: {result.status.value}")
    return problems


_AT = re.compile(r"\S+\.yaml:\d+:\d+")


def _warning_key(d: Diagnostic) -> tuple[str, str, str]:
    """A lint warning apart from where it is (a draft's rules sit in another file than the
    target's, and its lines move the target's warnings about them)."""
    return (str(d.code), d.rule_id, _AT.sub("<at>", d.message))
