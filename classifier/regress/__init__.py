"""Regression testing for rulesets: case files, the runner, reports, and rule-change diffs.

The runner is shared by `classifier test` and the pytest plugin
(`classifier.regress.pytest_plugin`), so both judge a case the same way.
"""
