"""Where the bundled rule library is: inside the installed package, or the checkout's `rules/`.

A wheel carries the library as `classifier/library/` (pyproject maps the
repository's `rules/` there); a source checkout (an editable install, a
test run) reads `rules/` itself, so there is one copy to edit.
"""

from __future__ import annotations

from pathlib import Path

LIBRARY_NAME = "default"
"""The bundled library's ruleset name, as a manifest names it in `base:`."""

_PACKAGE = Path(__file__).resolve().parent.parent


def bundled_library() -> Path:
    """The folder of the bundled ruleset."""
    installed = _PACKAGE / "library"
    if (installed / "ruleset.yaml").is_file():
        return installed
    return _PACKAGE.parent / "rules"
