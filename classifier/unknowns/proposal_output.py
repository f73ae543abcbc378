"""The proposals rendered: text and markdown for people, JSON for tools, files to review.

`write` puts each proposed draft in a folder (its rule file, case file and replay diff, and
the catalog entries the drafts need); nothing is applied to the ruleset.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from classifier.regress.diff import render_json, render_markdown
from classifier.text import plural
from classifier.unknowns.class_choice import ClassChoice, written_cases, written_rule
from classifier.unknowns.propose import Proposal


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
