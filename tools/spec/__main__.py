"""`python -m tools.spec [ROOT]`: write clients/spec and every language's rendered constants.

With ROOT (a temporary folder, in the drift test) everything is written under it instead
of the repository, at the same relative paths.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tools.spec import generate
from tools.spec.facts import ROOT

if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    for path in generate(out):
        print(f"generated {path.relative_to(out)}")
