"""How to install what an optional feature needs (an extra: `arrow`, `spark`), said so it works.

The package is on no index, so `pip install 'errorclass-classifier[arrow]'`
fails for every user (pip asks the index for a project it does not have).
What works anywhere is installing the extra's own requirements, which are on
PyPI; the hint reads them from the installed package's metadata, so it
cannot drift from pyproject.toml, and adds the form for a checkout.
"""

from __future__ import annotations

import re
import shlex
from importlib.metadata import PackageNotFoundError, requires

from classifier import DISTRIBUTION

_IN_EXTRA = re.compile(
    r"""^(?P<requirement>[^;]+?)\s*;\s*extra\s*==\s*["'](?P<extra>[^"']+)["']\s*$"""
)
_SELF = re.compile(rf"^{re.escape(DISTRIBUTION)}\s*\[(?P<extras>[^\]]+)\]", re.I)
"""An extra that names other extras of this package (`spark` needs `arrow`)."""


def extra_requirements(
    extra: str, declared: list[str] | None = None, _seen: frozenset[str] = frozenset()
) -> list[str]:
    """The requirements `pip install .[extra]` would add, other extras of this package
    expanded; declared is the metadata's Requires-Dist (the installed package's if None)."""
    if extra in _seen:
        return []
    if declared is None:
        try:
            declared = requires(DISTRIBUTION) or []
        except PackageNotFoundError:
            declared = []
    found: list[str] = []
    for line in declared:
        match = _IN_EXTRA.match(line)
        if match is None or match["extra"] != extra:
            continue
        own = _SELF.match(match["requirement"])
        if own is None:
            found.append(match["requirement"])
            continue
        for inner in own["extras"].split(","):
            inner_found = extra_requirements(inner.strip(), declared, _seen | {extra})
            found += [r for r in inner_found if r not in found]
    return found


def install_hint(extra: str) -> str:
    """A command that installs what the extra adds, from PyPI, and the checkout's form."""
    checkout = f"from a checkout, pip install -e '.[{extra}]'"
    needed = extra_requirements(extra)
    if not needed:
        return checkout.capitalize()
    return f"pip install {' '.join(map(shlex.quote, needed))} (the [{extra}] extra; {checkout})"
