"""A position in a source file: what every diagnostic points at."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True, slots=True)
class Location:
    """A 1-based line and column in a file; renders as `file:line:col`, clickable in editors."""

    file: str
    line: int = 1
    column: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"
