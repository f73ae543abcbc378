"""The failover DRIVER of the Python client (tests/clients/test_failover.py drives it).

One JSON request a line on stdin, one JSON response a line on stdout, nothing else on
stdout (logs go to stderr). The requests (the harness's protocol):

    {"op":"open", "addr", "mode", "deadline_ms", "bundle_file", "signatures_file",
     "trusted_keys", "allow_unsigned", "fetch_bundle", "report_batch", "report_interval_ms"}
    {"op":"classify", "descriptor"}   {"op":"load_bundle", "bundle_file", "signatures_file"}
    {"op":"refresh"}   {"op":"flush"}   {"op":"status"}   {"op":"close"}

Run from the repository root: `.venv/bin/python clients/python/tests/failover_driver.py`.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the client of this checkout

from errorclass_client import Client, ClientError, Unclassified
from errorclass_client.answer import Answer
from errorclass_client.bundle import BundleError
from errorclass_client.descriptor import descriptor_from_mapping

JSON = dict[str, Any]


def answer_fields(a: Answer) -> JSON:
    """An answer in the protocol's spelling."""
    wait = a.retry_after
    return {
        "class": a.class_name,
        "action": a.action.id,
        "effect": a.effect.label,
        "retryable": a.retryable,
        "rule_id": a.rule_id,
        "ruleset_version": a.ruleset_version,
        "ruleset_digest": a.ruleset_digest,
        "unknown_reason": a.unknown_reason.name if a.unknown_reason else "",
        "local": a.local,
        "bundle_digest": a.bundle_digest,
        "retry_after_ms": None if wait is None else round(wait.total_seconds() * 1000),
        "retry_after_source": a.retry_after_source,
    }


def _error(exc: BaseException) -> str:
    """`code: message`: a bundle's stable code, else the gRPC status or the exception's type."""
    if isinstance(exc, BundleError | ClientError):
        return str(exc)  # `code: message` already
    code = getattr(exc, "code", None)
    name = getattr(code, "name", None) or type(exc).__name__
    return f"{name}: {exc}"


class Driver:
    def __init__(self) -> None:
        self.client: Client | None = None

    def open(self, req: JSON) -> JSON:
        if self.client is not None:
            self.client.close()
        deadline = req.get("deadline_ms")
        try:
            self.client = Client(
                req["addr"],
                timeout=None if deadline is None else deadline / 1000,
                mode=req.get("mode") or "remote",
                bundle=req.get("bundle_file"),
                bundle_signatures=req.get("signatures_file"),
                trusted_keys=[Path(p) for p in req.get("trusted_keys") or ()],
                allow_unsigned=bool(req.get("allow_unsigned")),
                fetch_bundle=req.get("fetch_bundle"),
                report_batch=req.get("report_batch") or 100,
                report_interval=(req.get("report_interval_ms") or 1000) / 1000,
            )
        except (BundleError, ValueError) as exc:
            self.client = None
            return {"error": _error(exc)}
        return {"ok": True, "bundle_digest": self.client.bundle_digest}

    def classify(self, req: JSON) -> JSON:
        client = self._client()
        started = time.perf_counter()
        try:
            answer = client.classify(descriptor_from_mapping(req["descriptor"]))
        except Unclassified:
            return {"unclassified": True, "elapsed_ms": _since(started)}
        return {"answer": answer_fields(answer), "elapsed_ms": _since(started)}

    def load_bundle(self, req: JSON) -> JSON:
        client = self._client()
        try:
            digest = client.load_bundle(req["bundle_file"], req.get("signatures_file"))
        except BundleError as exc:
            return {"error": _error(exc), "bundle_digest": client.bundle_digest}
        return {"ok": True, "bundle_digest": digest}

    def refresh(self, req: JSON) -> JSON:
        client = self._client()
        try:
            changed = client.refresh_bundle()
        except (BundleError, ClientError, TimeoutError, ValueError) as exc:
            return {"error": _error(exc), "bundle_digest": client.bundle_digest}
        return {"ok": True, "bundle_digest": client.bundle_digest, "changed": changed}

    def flush(self, req: JSON) -> JSON:
        try:
            return {"ok": True, "reported": self._client().flush_decisions()}
        except (ClientError, TimeoutError) as exc:
            return {"error": _error(exc)}

    def status(self, req: JSON) -> JSON:
        s = self._client().local_status()
        return {
            "bundle_digest": s.bundle_digest,
            "pending": s.pending,
            "reported": s.reported,
            "dropped": s.dropped,
            "refusals": s.refusals,
            "last_refusal": s.last_refusal,
        }

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None

    def _client(self) -> Client:
        if self.client is None:
            raise RuntimeError("no client: send open first")
        return self.client


def _since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def main() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="driver: %(message)s")
    driver = Driver()
    ops = {
        "open": driver.open,
        "classify": driver.classify,
        "load_bundle": driver.load_bundle,
        "refresh": driver.refresh,
        "flush": driver.flush,
        "status": driver.status,
    }
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        op = req.get("op")
        if op == "close":
            driver.close()
            print(json.dumps({"ok": True}), flush=True)
            return 0
        handler = ops.get(op)
        try:
            reply = handler(req) if handler else {"error": f"unknown_op: {op!r}"}
        except Exception as exc:
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(reply), flush=True)
    driver.close()  # EOF is close
    return 0


if __name__ == "__main__":
    sys.exit(main())
