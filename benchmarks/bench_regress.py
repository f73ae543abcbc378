"""How fast `classifier test` judges cases and `classifier diff` replays a corpus.

Run: `.venv/bin/python benchmarks/bench_regress.py [N]`. Builds N cases
(the bundled cases' descriptors, each made distinct by an attribute no rule
reads, so nothing is deduplicated) against the bundled rules and prints
cases per second for the test runner (reading the YAML included) and
descriptors per second for a diff of the bundled rules against themselves
over N JSON Lines.
"""

from __future__ import annotations

import copy
import json
import sys
import tempfile
import time
from pathlib import Path

import yaml

from classifier import load_ruleset
from classifier.regress.cases import find_case_files, read_case_file
from classifier.regress.corpus import read_corpus
from classifier.regress.diff import diff_rulesets
from classifier.regress.runner import check_case, run_cases

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"


def main(n: int) -> None:
    seeds = [
        {k: c[k] for k in ("descriptor", "want", "todo") if k in c}
        for f in find_case_files([RULES])
        for c in yaml.safe_load(f.read_text())["cases"]
    ]
    with tempfile.TemporaryDirectory() as tmp:
        cases = []
        lines = []
        for i in range(n):
            seed = seeds[i % len(seeds)]
            # Distinct (nothing deduplicated) by an attribute no rule reads; the message
            # stays, since the library's rules read it.
            descriptor = copy.deepcopy(seed["descriptor"])
            descriptor["attributes"] = {**descriptor.get("attributes", {}), "bench.n": str(i)}
            cases.append({**copy.deepcopy(seed), "note": f"case {i}", "descriptor": descriptor})
            lines.append(json.dumps({"descriptor": descriptor}))
        case_file = Path(tmp) / "bench.cases.yaml"
        case_file.write_text(yaml.safe_dump({"rules": str(RULES), "cases": cases}))
        log = Path(tmp) / "log.jsonl"
        log.write_text("\n".join(lines) + "\n")

        report = run_cases([case_file])
        assert report.ok, "the benchmark's cases must pass"
        print(
            f"classifier test: {n} cases in {report.seconds:.2f}s "
            f"({n / report.seconds:,.0f} cases/s end to end, YAML with positions included)"
        )
        parsed = read_case_file(case_file)
        rules = load_ruleset(RULES)
        start = time.perf_counter()
        for case in parsed.cases:
            check_case(rules, case)
        judged = time.perf_counter() - start
        print(f"  judging alone: {n / judged:,.0f} cases/s (classify and compare)")

        start = time.perf_counter()
        corpus = read_corpus([str(log)])
        result = diff_rulesets(rules, rules, corpus.entries, base_label="a", head_label="b")
        seconds = time.perf_counter() - start
        assert result.distinct == n
        assert not result.changes
        print(
            f"classifier diff: {n} JSON Lines descriptors in {seconds:.2f}s "
            f"({n / seconds:,.0f} descriptors/s, both rulesets)"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
