"""A drafted rule for each cluster, shown only once it is proven on the whole corpus.

For a cluster the ruleset does not cover yet, drafts are tried from the least to the most
specific text they read:

    structure               the structural conditions every member shares: its own type,
                            language, origin, statuses, code, provider, its first cause
    structure, fallback     the same, deciding only when no other rule matches (what an
                            SDK's base type gets, docs/rules.md step 1)
    structure and words     plus the template's longest run of literal words as the message
    structure and template  plus the whole template as an anchored pattern

A message pattern is therefore added only when structure cannot separate the cluster from
what is already classified (or from other Unknowns). Each draft is checked against the
target ruleset, and the first that passes every check is the proposal:

    loads         the ruleset with the draft (and any drafted catalog entry) compiles
    lint          `check --strict` finds nothing it did not find without the draft (no
                  conflict, no shadowing, nothing message-only)
    replay        `classifier diff` of the whole corpus, target against target+draft,
                  changes exactly this cluster's Unknowns, each to the draft's class and
                  rule, and no other answer (the diff is part of the proposal)
    cases         the case file drafted from the cluster's examples passes

A cluster no draft passes for is refused, with each draft's reasons; one whose every draft
would change an answer that was already classified says which answers. The class is the
person's to choose when the evidence does not settle it (`class_choice`): the draft is
written with a placeholder that fails `check`, naming the candidate classes and why, and is
checked with the first candidate standing in. Nothing is applied: `write` puts the
drafts in a folder to review.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from classifier.answer import NearMiss
from classifier.descriptor import Descriptor
from classifier.engine.compiler import compile_stack
from classifier.engine.evaluate import classify
from classifier.engine.ruleset import Ruleset
from classifier.errors import Diagnostic, RulesetError
from classifier.generic_types import is_generic
from classifier.lint.checks import lint_report
from classifier.redact import DEFAULT as REDACTOR
from classifier.regress.cases import CaseFile, parse_case_file
from classifier.regress.corpus import Entry
from classifier.regress.diff import RuleDiff, diff_rulesets, render_json, render_markdown
from classifier.regress.runner import check_case
from classifier.source.descriptor_file import descriptor_dict
from classifier.source.loader import CATALOG, LayerFiles, layer_files, load_stack
from classifier.taxonomy import ErrorClass
from classifier.text import plural
from classifier.unknowns.class_choice import (
    ClassChoice,
    choose_class,
    distinct,
    rule_id_for,
    written_cases,
    written_rule,
)
from classifier.unknowns.cluster import Cluster, Clusters
from classifier.unknowns.mask import PLACEHOLDER_PATTERNS, PLACEHOLDERS
from classifier.unknowns.report import Report

DRAFTS_FOLDER = "unknowns-drafts"
"""The name of the in-memory layer the drafts are checked in (it joins the target's own)."""
DRAFTS_FILE = "drafts.yaml"
DRAFTS_CASES = "drafts.cases.yaml"
MIN_WORDS = 2
"""A message condition needs a run of at least this many literal words."""
MAX_CASES = 3


# the action ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ActionChoice:
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
        text = f"{c.key.type} {c.template}"
        for pattern, action_id, summary, why in _KINDS:
            if pattern.search(text):
                found = ruleset.actions.get(action_id)
                if found is not None:
                    return ActionChoice(found.id, found.summary, False, f"catalog: {why}")
                return ActionChoice(action_id, summary, True, why)
    return ActionChoice(default.id, default.summary, False, f"{choice.proposed.name}'s default")


# drafts ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Draft:
    label: str
    when: dict[str, Any]
    fallback: bool = False


def _escape(text: str) -> str:
    """RE2 metacharacters escaped, the rest left as written (readable in review)."""
    return re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", text)


_PLACEHOLDER_IN_TOKEN = re.compile(r"<(?:[A-Z]+|\*)>")


def _literal(token: str) -> bool:
    return token not in PLACEHOLDERS and not _PLACEHOLDER_IN_TOKEN.search(token)


def words_pattern(template: str) -> str | None:
    """The template's longest run of literal words, escaped; None when it has none long enough."""
    best: list[str] = []
    run: list[str] = []
    for token in [*template.split(), "<*>"]:
        if _literal(token):
            run.append(token)
            continue
        if len(run) > len(best) or (
            len(run) == len(best) and len(" ".join(run)) > len(" ".join(best))
        ):
            best = run
        run = []
    if len(best) < MIN_WORDS:
        return None
    return _escape(" ".join(best))


def template_pattern(template: str) -> str | None:
    """The whole template as an anchored pattern, each placeholder loose."""
    tokens = template.split()
    if not any(_literal(t) for t in tokens):
        return None
    parts = []
    for token in tokens:
        pieces, last = [], 0
        for m in _PLACEHOLDER_IN_TOKEN.finditer(token):
            pieces.append(_escape(token[last : m.start()]))
            pieces.append(PLACEHOLDER_PATTERNS.get(m.group(), ".*?"))
            last = m.end()
        pieces.append(_escape(token[last:]))
        parts.append("".join(pieces))
    return "^" + r"\s+".join(parts)


def structure_when(c: Cluster) -> dict[str, Any]:
    """Every structural condition the cluster's members share (they share their whole key);
    of the causes, the first whose type is not generic."""
    k = c.key
    when: dict[str, Any] = {"type": k.type}
    for name in ("language", "origin", "http_status", "grpc_status", "code", "provider"):
        value = getattr(k, name)
        if value not in (None, ""):
            when[name] = value
    causes = [c for c in k.causes if not is_generic(c[0])] or list(k.causes)
    if causes:
        cause_type, http, grpc, code = causes[0]
        cause: dict[str, Any] = {"type": cause_type}
        if http is not None:
            cause["http_status"] = http
        if grpc is not None:
            cause["grpc_status"] = grpc
        if code:
            cause["code"] = code
        when["cause"] = cause
    return when


def scoped_by_structure(c: Cluster) -> bool:
    """Whether structure alone scopes a draft: a type that is not generic, or beside a
    generic one a cause that is not, a code or a status (`TypeError` alone would match
    every TypeError of every library)."""
    k = c.key
    if not is_generic(k.type):
        return True
    return bool(
        k.code
        or k.http_status is not None
        or k.grpc_status is not None
        or any(not is_generic(cause[0]) or cause[1:] != (None, None, "") for cause in k.causes)
    )


def drafts(c: Cluster) -> list[Draft]:
    base = structure_when(c)
    out = []
    if scoped_by_structure(c):
        out += [Draft("structure", base), Draft("structure, as a fallback", base, fallback=True)]
    if (words := words_pattern(c.template)) is not None:
        out.append(Draft("structure and the template's words", {**base, "message": words}))
    full = template_pattern(c.template)
    if full is not None and full != words:
        out.append(Draft("structure and the whole template", {**base, "message": full}))
    return out


# checks ----------------------------------------------------------------------------------


@dataclass
class Attempt:
    draft: Draft
    problems: list[str] = field(default_factory=list)
    diff: RuleDiff | None = None

    @property
    def passed(self) -> bool:
        return not self.problems


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


def _rule(rule_id: str, c: Cluster, draft: Draft, klass: ClassChoice, action: ActionChoice,
          ruleset: Ruleset) -> dict[str, Any]:  # fmt: skip
    rule: dict[str, Any] = {
        "id": rule_id,
        "description": (
            f"Drafted by `classifier unknowns --propose` for cluster {c.id} "
            f"({c.count:,} Unknowns): {c.key.label()}"
        ),
        "when": draft.when,
        "class": klass.proposed.name,
    }
    if action.id != ruleset.defaults[klass.proposed].action.id:
        rule["action"] = action.id
    if draft.fallback:
        rule["fallback"] = True
    return rule


def _cases(c: Cluster, rule_id: str, klass: ClassChoice) -> list[dict[str, Any]]:
    """Up to MAX_CASES cases, each a distinct descriptor (as redacted): the examples first,
    then the cluster's sample of distinct members."""
    found = [(e.where, _redacted(e.descriptor)) for e in c.examples]
    found += [("the cluster's sample", _redacted(d)) for d in c.sample]
    unique = distinct(
        ({"where": w, "descriptor": d} for w, d in found),
        key=lambda x: json.dumps(x["descriptor"], sort_keys=True),
    )
    shown = klass.proposed.name if klass.settled else "its class to choose"
    return [
        {
            "note": f"cluster {c.id}, example {i} ({x['where']}) is {shown}",
            "descriptor": x["descriptor"],
            "want": {"class": klass.proposed.name, "rule": rule_id},
        }
        for i, x in enumerate(unique[:MAX_CASES], 1)
    ]


def _redacted(data: dict[str, Any]) -> dict[str, Any]:
    """A descriptor fit for a case file in a repository: secrets in its free text replaced by
    the same masks the server applies (the case must still pass, which the checks confirm)."""
    return REDACTOR.descriptor(data)[0]


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
        cases = _cases(c, rule_id, klass)
        for draft in drafts(c):
            rule = _rule(rule_id, c, draft, klass, action, ruleset)
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


# output ----------------------------------------------------------------------------------


def rule_file(p: Proposal) -> str:
    """The draft as a rule file, with what a reviewer must decide in comments on top."""
    assert p.rule is not None
    assert p.klass is not None
    assert p.action is not None
    c = p.cluster
    lines = [
        f"# Drafted by `classifier unknowns --propose` for cluster {c.id}:",
        f"#   {c.count:,} Unknowns ({c.share:.1%}), {c.key.label()}",
        f"#   template: {c.template}",
    ]
    lines += _class_comment(p.klass)
    if p.klass.settled or "action" in p.rule:
        lines.append(f"# action: {p.action.id} ({p.action.why})")
    else:
        lines.append(
            f"# action: the default of the class you choose ({p.klass.proposed.name}'s is "
            f"{p.action.id})"
        )
    if p.action.new:
        lines.append("#   a new catalog entry: add it to actions.yaml (see actions.yaml here)")
    accepted = p.accepted
    if accepted is not None:
        lines.append(f"# checked: loads, check --strict, replay, cases ({accepted.draft.label})")
    rule = written_rule(p.rule, p.klass)
    body = yaml.safe_dump({"rules": [rule]}, sort_keys=False, allow_unicode=True, width=100)
    return "\n".join(lines) + "\n" + body


def _class_comment(k: ClassChoice) -> list[str]:
    if k.settled:
        return [f"# class: {k.proposed.name} ({k.plausible[0][1]})"]
    return [
        "# class: TO CHOOSE; the evidence does not settle it, so `class` below is a placeholder",
        "#   that fails `classifier check` until you write one class (the draft was checked",
        f"#   with {k.proposed.name} standing in). The candidates:",
        *(f"#   {cls.name}: {why}" for cls, why in k.plausible),
        "#   If none fits, delete the draft: the failure stays Unknown.",
    ]


def render_text(proposals: Sequence[Proposal], together: Sequence[str]) -> str:
    lines = []
    counts = {
        s: sum(1 for p in proposals if p.status == s) for s in ("proposed", "refused", "covered")
    }
    lines.append(
        f"classifier unknowns --propose: {counts['proposed']} proposed, "
        f"{counts['refused']} refused, {counts['covered']} covered already"
    )
    for i, p in enumerate(proposals, 1):
        c = p.cluster
        lines += ["", f"{i:>2}. {c.id}  {c.count:,} ({c.share:.1%})  {c.key.label()}"]
        lines.append(f"    template: {c.template}")
        if p.status == "covered":
            lines.append(f"    covered: {p.reason}")
            continue
        assert p.klass is not None
        assert p.action is not None
        if p.status == "refused":
            lines.append(f"    REFUSED: {p.reason}")
            for a in p.attempts:
                lines.append(f"      tried {a.draft.label}:")
                lines += [f"        {problem}" for problem in a.problems]
            continue
        accepted = p.accepted
        assert accepted is not None
        assert accepted.diff is not None
        assert p.rule is not None
        klass = p.klass.proposed.name if p.klass.settled else "TO CHOOSE (a placeholder)"
        lines.append(f"    proposed rule {p.rule_id}: {klass}, action {p.action.id}")
        if p.klass.settled:
            lines += [f"      evidence: {why}" for _, why in p.klass.plausible]
        else:
            lines += [f"      candidate: {cls.name}: {why}" for cls, why in p.klass.plausible]
        if p.action.new:
            lines.append(f"      new catalog entry {p.action.id}: {p.action.summary}")
        lines += [f"      near miss: {n.rule_id} -> {n.class_name}" for n in p.near_misses]
        lines.append(f"      draft: {accepted.draft.label}")
        for skipped in p.attempts[:-1]:
            lines.append(f"      not {skipped.draft.label}: {skipped.problems[0]}")
        when = yaml.safe_dump(p.rule["when"], sort_keys=False, allow_unicode=True, width=100)
        lines += ["      " + line for line in when.splitlines()]
        lines.append(
            f"    checks: loads; check --strict: no new warning; cases: {len(p.cases)} pass; "
            f"replay: {accepted.diff.changed} of {accepted.diff.total} lines change, all of "
            f"them this cluster's {plural(p.members, 'distinct Unknown')}, Unknown -> "
            f"{p.klass.proposed.name}" + ("" if p.klass.settled else " (standing in)")
        )
        for group in accepted.diff.groups():
            lines.append(f"      replay: {group.old} -> {group.new}: {group.count} lines")
    if together:
        lines += ["", "the proposals added together interfere:", *(f"  {x}" for x in together)]
    elif counts["proposed"] > 1:
        lines += [
            "",
            f"the {counts['proposed']} proposals added together: checked, they do not interfere",
        ]
    return "\n".join(lines) + "\n"


def write(proposals: Sequence[Proposal], folder: Path) -> list[Path]:
    """Each proposal's rule file, case file and replay diff, and the drafted catalog entries."""
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    new_actions: dict[str, str] = {}
    for p in proposals:
        if p.status != "proposed" or p.rule is None or p.action is None:
            continue
        accepted = p.accepted
        assert accepted is not None
        assert accepted.diff is not None
        path = folder / f"{p.rule_id}.yaml"
        path.write_text(rule_file(p), encoding="utf-8")
        cases = folder / f"{p.rule_id}.cases.yaml"
        cases.write_text(
            yaml.safe_dump(
                {"cases": written_cases(p.cases, p.klass)} if p.klass is not None else {},
                sort_keys=False,
                allow_unicode=True,
                width=100,
            ),
            encoding="utf-8",
        )
        diff = folder / f"{p.rule_id}.diff.md"
        diff.write_text(render_markdown(accepted.diff) + "\n", encoding="utf-8")
        written += [path, cases, diff]
        if p.action.new:
            new_actions[p.action.id] = p.action.summary
    if new_actions:
        path = folder / "actions.yaml"
        path.write_text(
            "# New catalog entries the drafts name: add them under `actions:` in the ruleset's\n"
            "# actions.yaml (and to docs/actions.md).\n"
            + yaml.safe_dump(
                {"actions": [{"id": k, "summary": v} for k, v in new_actions.items()]},
                sort_keys=False,
                width=100,
            ),
            encoding="utf-8",
        )
        written.append(path)
    return written


def proposal_dict(p: Proposal) -> dict[str, Any]:
    c = p.cluster
    out: dict[str, Any] = {"cluster": c.id, "count": c.count, "status": p.status}
    if p.status == "covered":
        out["reason"] = p.reason
        return out
    assert p.klass is not None
    assert p.action is not None
    out |= {
        "rule_id": p.rule_id,
        "members": p.members,
        "class": {
            "proposed": p.klass.proposed.name if p.klass.settled else None,
            "settled": p.klass.settled,
            "written": p.klass.written,
            "checked_with": p.klass.proposed.name,
            "plausible": [{"class": cls.name, "why": why} for cls, why in p.klass.plausible],
        },
        "action": {"id": p.action.id, "summary": p.action.summary, "new": p.action.new},
        "near_misses": [
            {"rule": n.rule_id, "class": n.class_name, "held": list(n.held_conditions)}
            for n in p.near_misses
        ],
        "attempts": [
            {"draft": a.draft.label, "when": a.draft.when, "fallback": a.draft.fallback,
             "problems": a.problems}
            for a in p.attempts
        ],
    }  # fmt: skip
    if p.rule is not None:
        accepted = p.accepted
        assert accepted is not None
        assert accepted.diff is not None
        out["rule"] = written_rule(p.rule, p.klass)
        out["cases"] = written_cases(p.cases, p.klass)
        out["replay"] = json.loads(render_json(accepted.diff))
    else:
        out["reason"] = p.reason
    return out


def render_json_report(proposals: Sequence[Proposal], together: Sequence[str]) -> str:
    data = {"proposals": [proposal_dict(p) for p in proposals], "together": list(together)}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def render_markdown_report(proposals: Sequence[Proposal], together: Sequence[str]) -> str:
    lines = ["### Drafted rules for the Unknown clusters", ""]
    for p in proposals:
        c = p.cluster
        lines.append(f"#### {c.id}: {p.status} ({c.count:,} Unknowns, `{c.key.label()}`)")
        lines.append("")
        if p.rule is not None:
            accepted = p.accepted
            assert accepted is not None
            assert accepted.diff is not None
            lines += ["```yaml", rule_file(p).rstrip(), "```", "", render_markdown(accepted.diff)]
        else:
            lines.append(p.reason)
        lines.append("")
    if together:
        lines += ["The proposals added together interfere:", *(f"- {x}" for x in together)]
    return "\n".join(lines) + "\n"


RENDERERS = {"text": render_text, "markdown": render_markdown_report, "json": render_json_report}
