"""How files and folders are named where a person reads them: in diagnostics' locations and
in a command's reports.

A path relative to the working directory when it is under it, the bundled library as
`library:default` wherever the package is installed, and a layer's files under its name.
One home, so a location a diagnostic gives and the path a report prints agree.
"""

from __future__ import annotations

import os
from pathlib import Path

from classifier.source.library import LIBRARY_NAME, bundled_library

LIBRARY_PREFIX = "library:"
"""How locations and sources name a bundled library: `library:default/python/openai.yaml`."""


def shown_file(name: str, rel: str) -> str:
    """How a location names the file rel of the layer called name (`.`: the working
    directory itself, whose files are named as they are)."""
    return rel if name in ("", ".") else f"{name.rstrip('/')}/{rel}"


def display_path(path: Path) -> str:
    """A path as diagnostics show it: relative to the working directory when possible."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def layer_name(folder: Path) -> str:
    """How a folder's files are named in locations: the bundled library as
    `library:default` (wherever the package is installed and whatever the working
    directory), any other folder as `display_path` shows it."""
    if folder.resolve() == bundled_library().resolve():
        return f"{LIBRARY_PREFIX}{LIBRARY_NAME}"
    return display_path(folder)


def shown_source(source: str) -> str:
    """A ruleset's or layer's `source` as a command's report shows it: a folder relative to the
    working directory when it is under it (`library:default` and labels as they are)."""
    return display_path(Path(source)) if os.path.isabs(source) else source
