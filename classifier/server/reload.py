"""Hot reload: a changed rules folder replaces the serving ruleset only when it is whole.

A reload loads and compiles the folder in full (and, under `--strict`, lints
it) before one atomic swap, so in-flight calls finish on the ruleset they
started with and a broken change never serves: the old ruleset stays, the
error is logged with `file:line:col`, and the holder's `last_reload` says why.
Reloads start from a file watcher, SIGHUP, or the admin endpoint; they are
serialised, so two triggers never race to swap.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import watchfiles

from classifier.engine.compiler import load_ruleset
from classifier.engine.ruleset import Ruleset
from classifier.errors import Diagnostic, RulesetError
from classifier.lint.checks import lint
from classifier.server.shared.log import log, utc_now
from classifier.server.shared.serving_bundle import BundleError, Bundler, ServingBundle
from classifier.server.shared.serving_ruleset import ReloadResult, ReloadStatus, RulesetHolder
from classifier.source.loader import unreadable_entries

Check = Callable[[Ruleset], Sequence[Diagnostic]]
"""Findings that make a compiled ruleset unfit to serve (under `--strict`: lint warnings)."""

Listener = Callable[[str, ReloadStatus, Ruleset], None]
"""Told (role, status, serving ruleset) after every attempt, e.g. to update metrics."""

MAX_ERROR_LINES = 50
WATCH_DEBOUNCE_MS = 1600
WATCH_STEP_MS = 50
WATCH_RETRY_SECONDS = 1.0
FOLDER_CHECK_MS = 1000


def strict_check() -> Check:
    """The linter, whose warnings `--strict` makes fatal."""
    return lint


def render_error(diagnostics: Sequence[Diagnostic]) -> str:
    lines = [d.render() for d in diagnostics[:MAX_ERROR_LINES]]
    if len(diagnostics) > MAX_ERROR_LINES:
        lines.append(f"... and {len(diagnostics) - MAX_ERROR_LINES} more")
    return "\n".join(lines)


def load_checked(path: Path, check: Check | None) -> Ruleset:
    """Load and compile a folder; with a check, its findings are errors too.

    Entries of the folder that cannot be read at all (dangling links, link loops,
    FIFOs) are skipped by the loader; they are logged here, one `rules_warning` line
    naming each, so a broken mount is seen rather than silently ignored.
    """
    skipped = unreadable_entries(Path(path))
    if skipped:
        log("rules_warning", level="warning", source=str(path), skipped=skipped)
    ruleset = load_ruleset(path)
    if check is not None and (findings := list(check(ruleset))):
        raise RulesetError(findings)
    return ruleset


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while a ruleset loads.

    A load allocates hundreds of thousands of objects, and each full collection it
    triggers scans the whole heap holding the GIL: with 9,000 rules, pauses of
    90-170 ms for every caller. Paused, the longest pause measured 27 ms. A compiled
    ruleset holds no reference cycles (a dropped one is freed entirely by reference
    counting; tests/server/test_reload.py checks), so what the load made is frozen
    out of later collections once it serves (`gc.freeze`), and nothing leaks.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class Reloader:
    """Reloads one folder into one holder ("active" or "candidate").

    With a `bundler` (the active role's), a ruleset swaps in only with its bundle built
    and signed: a signatures file that does not verify over the new bundle fails the
    reload like a broken rule, and the old ruleset and bundle keep serving.
    """

    def __init__(
        self,
        path: Path,
        holder: RulesetHolder,
        *,
        role: str = "active",
        check: Check | None = None,
        listeners: Sequence[Listener] = (),
        bundler: Bundler | None = None,
    ) -> None:
        self.path = path
        self.holder = holder
        self.role = role
        self.check = check
        self.bundler = bundler
        self.listeners = list(listeners)
        self._lock = threading.Lock()

    def reload(self, trigger: str) -> ReloadStatus:
        """Load the folder in full; swap it in if it is whole and new; never raise."""
        with self._lock:
            status = self._attempt(trigger)
            self.holder.last_reload = status
            serving = self.holder.current
            self._log(status, serving)
            for listener in self.listeners:
                listener(self.role, status, serving)
            return status

    def _attempt(self, trigger: str) -> ReloadStatus:
        at = utc_now()
        try:
            with collector_paused():
                ruleset = load_checked(self.path, self.check)
                unchanged = ruleset.digest == self.holder.current.digest
                bundle = self._bundle(ruleset, unchanged)
        except RulesetError as exc:
            found = tuple(exc.diagnostics)
            return ReloadStatus(ReloadResult.failed, at, trigger, found, render_error(found))
        except BundleError as exc:
            return ReloadStatus(ReloadResult.failed, at, trigger, (), str(exc))
        except Exception as exc:  # a reload must never take the server down with it
            return ReloadStatus(ReloadResult.failed, at, trigger, (), f"{self.path}: {exc!r}")
        if unchanged:
            if bundle is not None:
                self.holder.resigned(bundle)
                log(
                    "bundle_signatures",
                    role=self.role,
                    bundle_digest=bundle.digest,
                    key_ids=list(bundle.key_ids),
                )
            return ReloadStatus(ReloadResult.unchanged, at, trigger)
        self.holder.swap(ruleset, bundle)
        gc.freeze()  # the new rules are never scanned again; the old are freed by refcount
        return ReloadStatus(ReloadResult.reloaded, at, trigger)

    def _bundle(self, ruleset: Ruleset, unchanged: bool) -> ServingBundle | None:
        """The bundle to serve with `ruleset` (None: no bundler, or, for unchanged rules,
        nothing new to serve); BundleError when it cannot be signed as configured."""
        if self.bundler is None:
            return None
        if unchanged:
            serving = self.holder.serving.bundle
            return None if serving is None else self.bundler.refreshed(serving, ruleset)
        return self.bundler.make(ruleset)

    def _log(self, status: ReloadStatus, serving: Ruleset) -> None:
        fields: dict[str, Any] = {
            "role": self.role,
            "trigger": status.trigger,
            "result": status.result.value,
            "version": serving.version,
            "digest": serving.digest,
            "rules": len(serving.rules),
        }
        bundle = self.holder.serving.bundle
        if bundle is not None:
            fields["bundle_digest"] = bundle.digest
            fields["bundle_signed"] = bundle.signed
        if status.ok:
            log("reload", **fields)
        else:
            log(
                "reload",
                level="error",
                **fields,
                source=str(self.path),
                error=status.error,
                diagnostics=[d.render() for d in status.diagnostics[:MAX_ERROR_LINES]],
            )


class RulesWatcher:
    """A thread that reloads a folder whenever anything in it changes.

    Every change counts, hidden entries included: a Kubernetes ConfigMap
    update touches only the hidden `..data` link, which it swaps to a new
    folder in one rename. A change that leaves the loaded content as it was
    is a reload with result `unchanged`. The folder itself being replaced
    (renamed over, or `--rules` a link switched to another release) is
    noticed within a second, and the new folder is loaded and watched. While
    the path names no folder, the old rules keep serving and the watcher
    waits for one (logging that once, and counting no failed reloads).
    """

    def __init__(
        self,
        reloader: Reloader,
        *,
        debounce_ms: int = WATCH_DEBOUNCE_MS,
        step_ms: int = WATCH_STEP_MS,
        force_polling: bool | None = None,
    ) -> None:
        self.reloader = reloader
        self.debounce_ms = debounce_ms
        self.step_ms = step_ms
        self.force_polling = force_polling
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"watch-{reloader.role}", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _folder(self) -> tuple[int, int] | None:
        """Which folder the path names now (device, inode), following links."""
        try:
            st = os.stat(self.reloader.path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def _bases(self) -> list[Path]:
        """The folders of the serving ruleset's bases: a change there is a rule change too."""
        top = self.reloader.path.resolve()
        found = []
        for layer in self.reloader.holder.current.layers[1:]:
            if not layer.folder:
                continue  # only in memory: nothing to watch
            folder = Path(layer.folder)
            if folder != top and folder.is_dir():
                found.append(folder)
        return found

    def _run(self) -> None:
        missed = False  # changes made while no watch was on the folder would go unseen
        missing = False
        while not self._stop.is_set():
            # Which folder, before loading it: a switch during the load is then seen.
            watched = self._folder()
            if watched is None:  # gone (deleted, or mid-replacement): wait for it, old rules serve
                if not missing:
                    self._log_error("the folder is missing; waiting for it to come back")
                missing = missed = True
                self._stop.wait(WATCH_RETRY_SECONDS)
                continue
            missing = False
            if missed:
                self.reloader.reload("watch")
                missed = False
            bases = self._bases()
            try:
                for changes in watchfiles.watch(
                    self.reloader.path,
                    *bases,
                    watch_filter=None,
                    debounce=self.debounce_ms,
                    step=self.step_ms,
                    stop_event=self._stop,
                    rust_timeout=FOLDER_CHECK_MS,
                    yield_on_timeout=True,
                    force_polling=self.force_polling,
                    raise_interrupt=False,
                ):
                    if self._folder() != watched:
                        missed = True
                        break
                    if changes:
                        self.reloader.reload("watch")
                        if self._bases() != bases:  # the stack changed: watch its new folders
                            break
            except Exception as exc:  # the folder may vanish and come back; keep watching
                self._log_error(repr(exc))
                missed = True
                self._stop.wait(WATCH_RETRY_SECONDS)

    def _log_error(self, error: str) -> None:
        log(
            "watch_error",
            level="error",
            role=self.reloader.role,
            source=str(self.reloader.path),
            error=error,
        )
