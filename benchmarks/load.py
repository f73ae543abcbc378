"""Load generator: drives one gRPC method with pre-serialized requests and times it.

Runs in its own process (`python -m benchmarks.load SPEC.json`), so the
server under test keeps its own GIL; prints one JSON object. Requests and
responses stay bytes on this side (no protobuf parsing), so the client
costs the same whichever server it drives. grpc.aio keeps `concurrency`
calls (or stream messages) in flight from one event loop.

Modes:
    unary      `concurrency` calls in flight for `seconds`
    latency    one caller, one call at a time, `calls` calls
    stream     `concurrency` bidi streams, each keeping `window` messages in flight
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc


@dataclass(frozen=True)
class Spec:
    target: str
    method: str
    mode: str
    payloads: list[bytes]
    per_message: int = 1
    concurrency: int = 32
    seconds: float = 3.0
    warmup: float = 1.0
    calls: int = 2000
    window: int = 8

    @classmethod
    def read(cls, path: str) -> Spec:
        data: dict[str, Any] = json.loads(Path(path).read_text())
        blob = Path(data.pop("payload_file")).read_bytes()
        payloads = []
        at = 0
        while at < len(blob):
            size = int.from_bytes(blob[at : at + 4], "big")
            payloads.append(blob[at + 4 : at + 4 + size])
            at += 4 + size
        return cls(payloads=payloads, **data)


def median(values: list[float]) -> float:
    """The upper median: the middle of an odd count, the higher middle of an even one."""
    return sorted(values)[len(values) // 2]


def write_payloads(path: Path, payloads: list[bytes]) -> None:
    """The payload file: each serialized request behind a 4-byte length."""
    path.write_bytes(b"".join(len(p).to_bytes(4, "big") + p for p in payloads))


def run_in_process(spec: dict[str, Any], spec_file: Path, timeout: float = 120.0) -> dict[str, Any]:
    """Write `spec` to `spec_file` and drive it from a process of its own; its JSON result."""
    spec_file.write_text(json.dumps(spec))
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.load", str(spec_file)],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if out.returncode != 0:
        raise RuntimeError(f"load generator failed: {out.stderr[-500:]}")
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def _ident(b: bytes) -> bytes:
    return b


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _unary(spec: Spec, channel: grpc.aio.Channel) -> dict[str, Any]:
    call = channel.unary_unary(spec.method, request_serializer=_ident, response_deserializer=_ident)
    payloads = spec.payloads
    latencies: list[float] = []
    done = 0
    start = time.perf_counter()
    measure_from = start + spec.warmup
    end = measure_from + spec.seconds

    async def worker(offset: int) -> None:
        nonlocal done
        i = offset
        while True:
            t0 = time.perf_counter()
            if t0 >= end:
                return
            await call(payloads[i % len(payloads)])
            t1 = time.perf_counter()
            if t0 >= measure_from:
                done += 1
                latencies.append(t1 - t0)
            i += spec.concurrency

    await asyncio.gather(*(worker(k) for k in range(spec.concurrency)))
    return _result(done, spec.per_message, spec.seconds, latencies)


async def _latency(spec: Spec, channel: grpc.aio.Channel) -> dict[str, Any]:
    call = channel.unary_unary(spec.method, request_serializer=_ident, response_deserializer=_ident)
    for i in range(min(200, spec.calls)):
        await call(spec.payloads[i % len(spec.payloads)])
    latencies = []
    start = time.perf_counter()
    for i in range(spec.calls):
        t0 = time.perf_counter()
        await call(spec.payloads[i % len(spec.payloads)])
        latencies.append(time.perf_counter() - t0)
    return _result(spec.calls, spec.per_message, time.perf_counter() - start, latencies)


async def _stream(spec: Spec, channel: grpc.aio.Channel) -> dict[str, Any]:
    method = channel.stream_stream(
        spec.method, request_serializer=_ident, response_deserializer=_ident
    )
    payloads = spec.payloads
    start = time.perf_counter()
    measure_from = start + spec.warmup
    end = measure_from + spec.seconds
    done = 0

    async def one_stream(offset: int) -> None:
        nonlocal done
        call = method()
        slots = asyncio.Semaphore(spec.window)
        stop = asyncio.Event()

        async def writer() -> None:
            i = offset
            while time.perf_counter() < end:
                await slots.acquire()
                await call.write(payloads[i % len(payloads)])
                i += 1
            await call.done_writing()
            stop.set()

        async def reader() -> None:
            nonlocal done
            while True:
                response = await call.read()
                if response is grpc.aio.EOF:
                    return
                if measure_from <= time.perf_counter() < end:
                    done += 1
                slots.release()

        await asyncio.gather(writer(), reader())

    await asyncio.gather(*(one_stream(k * 7) for k in range(spec.concurrency)))
    return _result(done, spec.per_message, spec.seconds, [])


def _result(calls: int, per_message: int, seconds: float, latencies: list[float]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "calls": calls,
        "seconds": seconds,
        "calls_per_s": calls / seconds,
        "items_per_s": calls * per_message / seconds,
    }
    if latencies:
        out["p50_ms"] = _percentile(latencies, 0.50) * 1e3
        out["p99_ms"] = _percentile(latencies, 0.99) * 1e3
    return out


async def run(spec: Spec) -> dict[str, Any]:
    async with grpc.aio.insecure_channel(spec.target) as channel:
        await asyncio.wait_for(channel.channel_ready(), timeout=20)
        modes = {"unary": _unary, "latency": _latency, "stream": _stream}
        return await modes[spec.mode](spec, channel)


def main(argv: list[str]) -> int:
    spec = Spec.read(argv[0])
    print(json.dumps(asyncio.run(run(spec))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
