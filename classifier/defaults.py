"""The defaults `classifier serve` and the client start from, which the commands' `--help`
shows: kept here, out of `server/` and `client/`, so that building the command line's
parser (every command's, `--version` and `--help` included) imports neither the server
stack nor gRPC (tests/cli/test_start_up.py measures it). The server and the client read
them from here too: one home each. Limits on what a request may hold are in `limits`.
"""

from __future__ import annotations

from classifier import contract

DEFAULT_ADDRESS = "127.0.0.1:50051"
"""Where `classifier serve` listens, and where a command that calls a server calls."""
DEFAULT_THREADS = 4
"""Few threads serve more: every thread holding the GIL slows the others' calls (measured
in docs/performance.md: 4 threads answer 1.3-1.5x the calls 8 do). Each open stream holds
one, so raise --threads for clients that keep streams open."""
DEFAULT_GRACE_SECONDS = 5.0
DEFAULT_MAX_CONCURRENT_RPCS = 256

DEFAULT_MAX_STREAMS = 512
"""Open ClassifyStream calls at once (each holds a thread, asleep while idle)."""
DEFAULT_MAX_STREAMS_PER_CONNECTION = 100
"""HTTP/2 concurrent streams on one connection (the SETTINGS limit), every call included."""
DEFAULT_STREAM_IDLE_SECONDS = 60.0
DEFAULT_STREAM_MAX_AGE_SECONDS = 3600.0

DEFAULT_DECISION_LOG_MAX_BYTES = 64 * 1024 * 1024
"""The decision log rotates at this size (`--decision-log-max-bytes`)."""
DEFAULT_DECISION_LOG_BACKUPS = 3
DEFAULT_DECISION_LOG_QUEUE_BYTES = 16 * 1024 * 1024
"""Bytes of lines waiting for the writer, estimated: past it, lines are dropped."""
DEFAULT_SHADOW_EXAMPLES = 5
"""Examples the shadow logs of each kind of disagreement (`--shadow-examples`)."""
DEFAULT_UNKNOWN_SAMPLE_BYTES = 4 * 1024 * 1024
"""The live sample of Unknowns holds at most this (`--unknown-sample-bytes`)."""

DEFAULT_TIMEOUT = contract.DEADLINE_SECONDS
"""Seconds a client's call may take unless the client or the call says otherwise: every
client's deadline (classifier.contract, clients/spec/facts.json)."""
DEFAULT_ATTEMPTS = contract.ATTEMPTS
"""Tries per call when the server is UNAVAILABLE (gRPC's retry policy; 1 turns retries off)."""

SIGNATURES_SUFFIX = ".sig.json"
"""Where `bundle sign` writes a bundle's signatures and `bundle verify` looks for them by
default: the bundle's path and this."""
