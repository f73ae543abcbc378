"""What the bundle subcommands share: how a failure is printed, and its stable codes."""

from __future__ import annotations

import sys
from enum import StrEnum


class Failure(StrEnum):
    """What a bundle command could not do, beside a refused bundle (whose codes are
    `classifier.bundle.Refusal`'s): stable codes."""

    unreadable_file = "unreadable_file"
    """A file named on the command line cannot be read (or written)."""
    invalid_key = "invalid_key"
    """A key file holds no Ed25519 key of the kind the flag asks for."""
    invalid_bundle = "invalid_bundle"
    """The file is not a bundle of a format this classifier reads."""
    file_exists = "file_exists"
    """keygen would overwrite a key."""


def fail(command: str, where: str, code: str, message: str) -> None:
    """Print one failure as every bundle command does (`classifier bundle CMD: WHERE: CODE:
    message`): greppable by its code, which never changes meaning."""
    print(f"classifier bundle {command}: {where}: {code}: {message}", file=sys.stderr)
