"""`python -m classifier`: the same as the `classifier` command."""

from classifier.cli import entry

entry()
