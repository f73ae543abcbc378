"""`classifier serve` assembled: the gRPC server, hot reload, the shadow, the decision
log and the HTTP side port, started and stopped in the right order.

`App` is the one owner of the process-wide pieces: it enters each into one
ExitStack as it builds it (the explanations, `explain.Explaining`: the explain
budget and the explaining process; the gRPC port's parts, `rpc.app.ServerParts`:
the lanes and their pushback; the observers, the ports and the watchers), hands
them to the gRPC port and the console, and `stop` closes the stack. It does no signal handling, so
tests run it in-process; `serve` adds the signals (SIGTERM/SIGINT stop
gracefully, SIGHUP reloads) and waits.
"""

from __future__ import annotations

import contextlib
import gc
import os
import resource
import signal
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from google.protobuf import json_format

import classifier
from classifier._signals import take as take_early_signals
from classifier.defaults import (
    DEFAULT_ADDRESS,
    DEFAULT_DECISION_LOG_BACKUPS,
    DEFAULT_DECISION_LOG_MAX_BYTES,
    DEFAULT_DECISION_LOG_QUEUE_BYTES,
    DEFAULT_GRACE_SECONDS,
    DEFAULT_SHADOW_EXAMPLES,
    DEFAULT_THREADS,
    DEFAULT_UNKNOWN_SAMPLE_BYTES,
)
from classifier.engine.ruleset import Ruleset
from classifier.redact import Redactor
from classifier.server.explain import Explaining
from classifier.server.observers.activity import Activity
from classifier.server.observers.decisions import DecisionLog, DecisionLogMetrics
from classifier.server.observers.metrics import Metrics
from classifier.server.observers.shadow import Shadow, ShadowMetrics
from classifier.server.observers.unknown_sample import UnknownSample, UnknownSampleMetrics
from classifier.server.reload import (
    WATCH_DEBOUNCE_MS,
    Check,
    Reloader,
    RulesWatcher,
    load_checked,
    strict_check,
)
from classifier.server.rpc import convert
from classifier.server.rpc.app import GrpcServer, ServerLimits, ServerParts, bind_server
from classifier.server.rpc.service import Observer, Reporter
from classifier.server.rpc.tls import TlsFiles
from classifier.server.shared.log import log
from classifier.server.shared.serving_bundle import BundleConfig, Bundler, ServingBundle
from classifier.server.shared.serving_ruleset import ReloadStatus, RulesetHolder
from classifier.server.web.admin import AdminServer
from classifier.server.web.console import Console
from classifier.server.web.queries import Sources


@dataclass(frozen=True)
class ServeConfig:
    """Everything `classifier serve` can be told (its flags, one field each)."""

    rules: Path
    address: str = DEFAULT_ADDRESS
    candidate: Path | None = None
    threads: int = DEFAULT_THREADS
    grace: float = DEFAULT_GRACE_SECONDS
    watch: bool = True
    watch_debounce_ms: int = WATCH_DEBOUNCE_MS
    strict: bool = False
    metrics_address: str | None = None
    reload_endpoint: bool = False
    decision_log: Path | None = None
    decision_log_unknown_only: bool = False
    decision_log_max_bytes: int = DEFAULT_DECISION_LOG_MAX_BYTES
    decision_log_backups: int = DEFAULT_DECISION_LOG_BACKUPS
    decision_log_queue_bytes: int = DEFAULT_DECISION_LOG_QUEUE_BYTES
    redact_patterns: tuple[str, ...] = ()
    """The installation's own masks, `NAME=RE2` (see classifier.redact)."""
    shadow_examples: int = DEFAULT_SHADOW_EXAMPLES
    unknown_sample_bytes: int = DEFAULT_UNKNOWN_SAMPLE_BYTES
    """The live sample of Unknowns on the admin port (GET /-/unknowns); 0 turns it off."""
    console: bool = True
    """The operator console on the admin port (GET /console); needs `metrics_address`."""
    tls: TlsFiles | None = None
    limits: ServerLimits = field(default_factory=ServerLimits)
    reuse_port: bool = False
    """Share the port with other processes (SO_REUSEPORT): set for each of --workers."""
    bundle: BundleConfig = field(default_factory=BundleConfig)
    """How the serving bundle is signed (--bundle-key, --bundle-signatures, --unsigned-bundle)."""

    def folders(self) -> dict[str, Path]:
        """The ruleset folders served, by role: `active`, and `candidate` when shadowing.

        Absolute (links kept, so a ConfigMap's swap is still followed): a reload reads
        the folder it started on, whatever the working directory is by then.
        """
        folders = {"active": self.rules.absolute()}
        if self.candidate is not None:
            folders["candidate"] = self.candidate.absolute()
        return folders

    def check(self) -> Check | None:
        """What makes a compiled ruleset unfit to serve: under --strict, lint warnings."""
        return strict_check() if self.strict else None


Rulesets = Mapping[str, Ruleset]
"""Loaded rulesets by role, as ServeConfig.folders names them."""


def load_rulesets(config: ServeConfig) -> Rulesets:
    """Load and check every folder the config serves; raises RulesetError.

    Done once, before `--workers` forks, so every worker starts on the same rules.
    """
    check = config.check()
    return {role: load_checked(path, check) for role, path in config.folders().items()}


def serving_bundle(config: ServeConfig, rulesets: Rulesets) -> ServingBundle:
    """The active ruleset's bundle, signed as the flags say; BundleError (a ValueError)
    naming the flag when a key file is bad or a signatures file does not verify over it.

    Made once, before `--workers` forks, with the rules: every worker serves the same
    bytes, and a bundle that cannot be served refuses the start before any worker runs.
    """
    return Bundler(config.bundle).make(rulesets["active"])


class App:
    """A configured service, bound to its ports but not yet started.

    Serves `rulesets` when given (load_rulesets(config), loaded earlier), else loads
    them, and `bundle` (serving_bundle(config, rulesets)) when given, else builds it.
    Raises RulesetError when the rules (or the candidate) do not load, OSError when a
    port cannot be bound or a file opened, ValueError for bad TLS files and BundleError
    (a ValueError) for a bundle that cannot be signed as the flags say.
    """

    def __init__(
        self,
        config: ServeConfig,
        rulesets: Rulesets | None = None,
        bundle: ServingBundle | None = None,
    ) -> None:
        self.config = config
        self._stopped = False
        self._grace = 0.0
        """The stop's grace (0 while a failed construction unwinds)."""
        self._stop_started = time.monotonic()
        loaded = load_rulesets(config) if rulesets is None else rulesets
        self.bundler = Bundler(config.bundle)
        if bundle is None:
            bundle = self.bundler.make(loaded["active"])
        holders = {
            role: RulesetHolder(loaded[role], bundle if role == "active" else None)
            for role in config.folders()
        }
        self.metrics = Metrics()
        self.redactor = Redactor.from_specs(config.redact_patterns)
        self.active = holders["active"]
        self.candidate = holders.get("candidate")
        with contextlib.ExitStack() as stack:
            self._assemble(stack, config, holders)
            self._parts = stack.pop_all()
        """Every part, entered so that closing it stops them in the order `stop` says."""

    def _assemble(
        self, stack: contextlib.ExitStack, config: ServeConfig, holders: dict[str, RulesetHolder]
    ) -> None:
        """Build every part, each entered into `stack` as it is made: a failure part-way
        closes what was made, and `stop` closes them all, the last made first. So they
        are made in the reverse of the order they stop in (the watchers first, then the
        gRPC port, the decision log, the live sample, the side port, the lanes and last
        the explaining process, which the console may still be using)."""
        self.explaining = stack.enter_context(Explaining())
        self.parts = ServerParts.enter(
            stack, config.limits, config.threads, self.metrics, self.explaining
        )
        self.lanes = self.parts.lanes
        self.activity = Activity() if config.metrics_address and config.console else None
        self.shadow: Shadow | None = None
        if self.candidate is not None:
            self.shadow = Shadow(
                self.candidate,
                self.metrics,
                examples=config.shadow_examples,
                redactor=self.redactor,
            )
        else:  # its instruments all the same, at zero: one exposition whatever the flags
            ShadowMetrics(self.metrics.registry)
        self.sample = (
            UnknownSample(
                self.metrics, max_bytes=config.unknown_sample_bytes, redactor=self.redactor
            )
            if config.metrics_address and config.unknown_sample_bytes > 0
            else None
        )
        if self.sample is None:
            UnknownSampleMetrics(self.metrics.registry)
        self.admin = (
            AdminServer(
                config.metrics_address,
                self.metrics.registry,
                ready=lambda: self.server.can_answer(),
                reload=self.reload if config.reload_endpoint else None,
                unknowns=self.sample.lines if self.sample is not None else None,
                console=self._console(config),
                ruleset=self._described,
            )
            if config.metrics_address
            else None
        )
        if self.admin is not None:
            stack.callback(self.admin.stop)
        if self.sample is not None:
            stack.callback(self.sample.close)
        self.decisions = (
            DecisionLog(
                config.decision_log,
                self.metrics,
                unknown_only=config.decision_log_unknown_only,
                max_bytes=config.decision_log_max_bytes,
                backups=config.decision_log_backups,
                queue_bytes=config.decision_log_queue_bytes,
                redactor=self.redactor,
            )
            if config.decision_log
            else None
        )
        if self.decisions is not None:  # what the grace has left: every decision written
            decisions = self.decisions
            stack.callback(lambda: decisions.close(self._grace - self._stopping_for()))
        else:  # its instruments all the same, at zero: one exposition with or without a log
            DecisionLogMetrics(self.metrics.registry)
        observers: list[Observer] = [
            o for o in (self.activity, self.shadow, self.decisions, self.sample) if o is not None
        ]
        reporters: list[Reporter] = [r for r in (self.decisions, self.sample) if r is not None]
        self.server: GrpcServer = bind_server(
            self.active,
            config.address,
            self.parts,
            candidate=self.candidate,
            observers=observers,
            reporters=reporters,
            tls=config.tls,
            reuse_port=config.reuse_port,
        )
        stack.callback(lambda: self.server.stop(self._grace))
        check = config.check()
        self.reloaders = [
            self._reloader(path, holders[role], role, check)
            for role, path in config.folders().items()
        ]
        self.watchers = (
            [RulesWatcher(r, debounce_ms=config.watch_debounce_ms) for r in self.reloaders]
            if config.watch
            else []
        )
        for watcher in self.watchers:
            stack.callback(watcher.stop)

    def _stopping_for(self) -> float:
        return time.monotonic() - self._stop_started

    def _described(self) -> str:
        """GetRuleset's answer as JSON, for the side port's `GET /-/ruleset`: one answer
        for both ports, so a tool that only has the admin address (`classifier unknowns
        --admin-addr`) learns what is served and where from."""
        info = convert.ruleset_info(self.active, self.candidate)
        return json_format.MessageToJson(info, preserving_proto_field_name=True) + "\n"

    def _console(self, config: ServeConfig) -> Console | None:
        if self.activity is None:
            return None
        return Console(
            Sources(
                active=self.active,
                activity=self.activity,
                explaining=self.explaining,
                max_request_bytes=config.limits.max_request_bytes,
                candidate=self.candidate,
                sample=self.sample,
                shadow=self.shadow,
            )
        )

    def _reloader(
        self, path: Path, holder: RulesetHolder, role: str, check: Check | None
    ) -> Reloader:
        self.metrics.serving(role, holder.current)
        if role != "active":
            return Reloader(path, holder, role=role, check=check, listeners=[self.metrics.reloaded])
        self.metrics.bundle(holder.serving.bundle)
        return Reloader(
            path,
            holder,
            role=role,
            check=check,
            listeners=[self.metrics.reloaded, self._bundle_served],
            bundler=self.bundler,
        )

    def _bundle_served(self, role: str, status: ReloadStatus, serving: Ruleset) -> None:
        self.metrics.bundle(self.active.serving.bundle)

    @property
    def address(self) -> str:
        host = self.config.address.rsplit(":", 1)[0]
        return f"{host}:{self.server.port}"

    def start(self) -> None:
        if self.decisions is not None:
            self.decisions.start()
        if self.sample is not None:
            self.sample.start()
        self.server.start()
        if self.admin is not None:
            self.admin.start()
        log("start", **self._describe())
        for watcher in self.watchers:
            watcher.start()

    def reload(self, trigger: str) -> dict[str, ReloadStatus]:
        """Reload every ruleset folder now; each keeps serving its old rules if it fails."""
        return {r.role: r.reload(trigger) for r in self.reloaders}

    def stop(self, grace: float | None = None) -> None:
        """Refuse new calls, let in-flight ones finish within `grace`, then close the rest.

        Stopping twice is harmless: the second call finds nothing left to stop.
        """
        if self._stopped:
            return
        self._stopped = True
        self._grace = self.config.grace if grace is None else grace
        self._stop_started = time.monotonic()
        self._parts.close()

    def _describe(self) -> dict[str, Any]:
        def summary(r: Ruleset) -> dict[str, object]:
            return {
                "name": r.name,
                "version": r.version,
                "digest": r.digest,
                "rules": len(r.rules),
                "source": r.source,
            }

        active, bundle = self.active.serving
        tls = self.config.tls
        out: dict[str, object] = {
            "address": self.address,
            "pid": os.getpid(),
            "classifier_version": classifier.__version__,
            "ruleset": active.name,
            "version": active.version,
            "digest": active.digest,
            "rules": len(active.rules),
            "source": active.source,
            "tls": "mutual" if tls and tls.client_ca else "on" if tls else "off",
            "bundle_digest": bundle.digest if bundle is not None else "",
            "bundle_signing": bundle.signing.value if bundle is not None else "",
            "bundle_key_ids": list(bundle.key_ids) if bundle is not None else [],
            "watch": self.config.watch,
            "strict": self.config.strict,
        }
        if self.candidate is not None:
            out["candidate"] = summary(self.candidate.current)
        if self.admin is not None:
            out["metrics_address"] = self.admin.address
        if self.decisions is not None:
            out["decision_log"] = str(self.decisions.path)
        return out


EXIT_SLACK_SECONDS = 1.8
"""After SIGTERM, the process is gone within --grace plus this, whatever is stuck."""


class ReloadRequests:
    """Reloads asked for by signal, run one at a time on a thread of their own: a burst
    of requests while one runs becomes one more reload, not one per request."""

    def __init__(self, app: App) -> None:
        self.app = app
        self._wanted = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="reload-requests", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def request(self) -> None:
        """Safe in a signal handler: it only sets an event."""
        self._wanted.set()

    def stop(self) -> None:
        self._stop.set()
        self._wanted.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wanted.wait()
            if self._stop.is_set():
                return
            self._wanted.clear()
            self.app.reload("signal")


def _exit_after(seconds: float) -> None:
    """The last resort of a stop: exit even if a thread is stuck (a hung disk)."""

    def run() -> None:
        time.sleep(seconds)
        log("forced_exit", level="error", after_seconds=round(seconds, 2))
        os._exit(1)

    threading.Thread(target=run, name="exit-watchdog", daemon=True).start()


class SignalPipe:
    """SIGTERM, SIGINT and SIGHUP, acted on by a thread of their own.

    The kernel hands a process's signal to any of its threads that does not block it,
    and Python runs its handlers only on the main thread, the next time that thread
    runs: one taken by a gRPC thread while the main thread slept in `serve`'s wait
    was acted on only at the next signal that woke it (a SIGHUP "lost" until
    SIGTERM; tests/server/test_signal_pipe.py sends one to a gRPC thread). So the
    signal's number reaches the pipe from C, in whichever thread took it
    (`signal.set_wakeup_fd`), and this thread reads the pipe and logs, stops or
    reloads. The Python-level handler does nothing: it only replaces the default
    action (a SIGHUP would end the process), and logging in a handler, between two
    bytecodes of a thread that may be inside a write to stderr, raised "reentrant
    call" and ended the process.
    """

    SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

    def __init__(self, on_stop: Callable[[int], None], on_reload: Callable[[], None]) -> None:
        self._on_stop = on_stop
        self._on_reload = on_reload
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)  # a full pipe: enough of this signal is queued
        self._previous = {s: signal.signal(s, _taken_from_the_pipe) for s in self.SIGNALS}
        self._previous_fd = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        self._thread = threading.Thread(target=self._run, name="signals", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while data := os.read(self._read, 64):
            for signum in data:
                if signum == signal.SIGHUP:
                    self._on_reload()
                elif signum in self.SIGNALS:
                    self._on_stop(signum)
                # any other signal with a Python handler of its own is not ours

    def close(self) -> None:
        """Put the handlers and the wakeup descriptor back (a later signal must not write to
        a closed pipe), then end."""
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        signal.set_wakeup_fd(self._previous_fd)
        os.close(self._write)
        self._thread.join(timeout=1.0)
        os.close(self._read)


def _taken_from_the_pipe(_signum: int, _frame: FrameType | None) -> None:
    """SignalPipe's handlers: the signal's number is in the pipe already (written from C by
    the thread that took it); what to do is decided there."""


def serve(
    config: ServeConfig, rulesets: Rulesets | None = None, bundle: ServingBundle | None = None
) -> None:
    """Serve until SIGTERM or SIGINT, then let in-flight calls finish and return.

    SIGHUP reloads the rules (on a thread of its own: a handler must not block);
    one that came before the server was ready (see classifier._signals) reloads
    once it is, and a burst of them reloads once more, not once each. Once SIGTERM
    came, the process exits within --grace + EXIT_SLACK_SECONDS whatever happens.
    """
    stopping = threading.Event()
    lock = threading.Lock()
    reload_wanted = False
    requests: ReloadRequests | None = None

    def on_stop(signum: int) -> None:
        if not stopping.is_set():
            log("shutdown", signal=signal.Signals(signum).name, grace_seconds=config.grace)
            _exit_after(config.grace + EXIT_SLACK_SECONDS)
        stopping.set()

    def on_reload() -> None:
        nonlocal reload_wanted
        with lock:
            if requests is None:
                reload_wanted = True  # not serving yet: reload once it is
            else:
                requests.request()

    signals = SignalPipe(on_stop, on_reload)
    try:
        if take_early_signals():
            on_reload()
        raise_fd_limit()
        app = App(config, rulesets, bundle)
        gc.freeze()  # the rules and the modules are never garbage: keep them out of every scan
        app.start()
        with lock:
            requests = ReloadRequests(app)
            requests.start()
            if reload_wanted:
                requests.request()
        stopping.wait()
        requests.stop()
        app.stop()
    finally:
        signals.close()
    log("stopped")


def raise_fd_limit() -> tuple[int, int]:
    """Raise the soft open-file limit to the hard one (every connection is a descriptor;
    1,024, a common soft limit, is a few hundred clients); the limits after."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard == resource.RLIM_INFINITY:
            hard = max(soft, 1 << 20)
        if soft < hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        return resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ValueError, OSError):  # not allowed here: serve with what there is
        return resource.getrlimit(resource.RLIMIT_NOFILE)
