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


def _alone(spec: str) -> bool:
    """A revision alone: neither a folder nor REV:PATH, so it borrows the other side's path."""
    return not Path(spec).is_dir() and ":" not in spec


def resolve_pair(base: str, head: str, workdir: Path) -> tuple[RulesetSpec, RulesetSpec]:
    """Both sides; a revision alone on either side takes the other side's path."""
    if _alone(head) and not _alone(base):
        base_spec = resolve_spec(base, None, workdir)
        return base_spec, resolve_spec(head, base_spec.folder, workdir)
    head_spec = resolve_spec(head, None, workdir)
    return resolve_spec(base, head_spec.folder, workdir), head_spec


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
        # The "data" filter (Python 3.11.4+) refuses links and paths that leave target.
        if hasattr(tarfile, "data_filter"):
            tar.extractall(target, filter="data")
        else:  # pragma: no cover - Python 3.11.0-3.11.3; git archive writes no such entries
            tar.extractall(target)
    return RulesetSpec(target, treeish if ":" in spec else f"{rev}:{path}")
