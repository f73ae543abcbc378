"""Name a ruleset by folder or by git revision, and get a folder for it either way.

    rules            a folder
    main:rules       the tree `rules` at revision `main` (git's REV:PATH; PATH from the
                     repository root, or ./PATH from the current folder)
    origin/main      a revision alone: the same path as the other side's folder

A revision's tree is extracted with `git archive` into a temporary folder,
so the ruleset at that revision is loaded by the normal loader.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from classifier.errors import ClassifierError


class RevisionError(ClassifierError):
    """A ruleset spec names neither a folder nor a git tree."""


@dataclass(frozen=True, slots=True)
class RulesetSpec:
    """Where a ruleset was found: its folder on disk and the name to show for it."""

    folder: Path
    label: str


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except OSError as exc:
        raise RevisionError(f"cannot run git: {exc}") from None


def _repo_path(folder: Path) -> tuple[Path, str]:
    """The repository root holding folder, and folder's path inside it."""
    folder = folder.resolve()
    top = _git(["rev-parse", "--show-toplevel"], folder)
    if top.returncode != 0:
        raise RevisionError(f"{folder} is not inside a git repository")
    root = Path(top.stdout.decode().strip()).resolve()
    return root, folder.relative_to(root).as_posix()


def resolve_spec(spec: str, other: Path | None, workdir: Path) -> RulesetSpec:
    """A folder as is; `REV:PATH` or `REV` (with other's path) extracted under workdir."""
    if Path(spec).is_dir():
        return RulesetSpec(Path(spec), spec)
    if ":" in spec:
        rev, path = spec.split(":", 1)
        cwd = Path.cwd()
        treeish = spec
    else:
        if other is None:
            raise RevisionError(
                f"{spec!r} is not a folder; a revision alone needs the other side to be a "
                "folder in a git work tree (or write REV:PATH)"
            )
        cwd, path = _repo_path(other)
        rev = spec
        treeish = f"{rev}:{path}"
    kind = _git(["cat-file", "-t", treeish], cwd)
    if kind.returncode != 0 or kind.stdout.strip() != b"tree":
        detail = kind.stderr.decode().strip().splitlines()
        raise RevisionError(
            f"{spec!r} is neither a folder nor a git tree ({treeish}"
            f"{': ' + detail[-1] if detail else ''})"
        )
    archive = _git(["archive", "--format=tar", treeish], cwd)
    if archive.returncode != 0:
        raise RevisionError(f"git archive {treeish} failed: {archive.stderr.decode().strip()}")
    target = Path(tempfile.mkdtemp(prefix="ruleset-", dir=workdir))
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(target, filter="data")
    return RulesetSpec(target, treeish if ":" in spec else f"{rev}:{path}")
