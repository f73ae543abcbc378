"""Tools failing: files, parsing, DNS, refused connections, subprocesses, HTTP errors.

Every failure is the tool's (origin `tool`): ToolError, the run goes on. Name lookups are
numeric (AI_NUMERICHOST never asks a resolver) and connections go to the closed loopback
port or the fake tool API (tool_api.py).
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tomllib
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import requests
import yaml

from tests.conformance.runtime.drivers import ToolEnv
from tests.conformance.runtime.python import Failure, pair, raised

TOOL = "tool"


# --- files ---------------------------------------------------------------------------------


@pair("open-missing-file", "tool-error.file")
def file_missing(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: open(Path(env.tmp) / "missing.csv")), TOOL)


@pair("pathlib-is-a-directory", "tool-error.file")
def file_is_dir(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: Path(env.tmp).read_text()), TOOL)


@pair("listdir-not-a-directory", "tool-error.file")
def file_not_dir(env: ToolEnv) -> Failure:
    plain = Path(env.tmp) / "plain.txt"
    plain.write_text("x")
    return Failure(raised(lambda: os.listdir(plain)), TOOL)


@pair("shutil-copy-missing", "tool-error.file")
def file_copy(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: shutil.copy(Path(env.tmp) / "nope", Path(env.tmp) / "to")), TOOL)


# --- parsing -------------------------------------------------------------------------------


@pair("json-loads", "tool-error.parse")
def parse_json(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: json.loads('{"rows": [1, 2,')), TOOL)


@pair("csv-strict", "tool-error.parse")
def parse_csv(env: ToolEnv) -> Failure:
    reader = csv.reader(io.StringIO('a,"b\n'), strict=True)
    return Failure(raised(lambda: list(reader)), TOOL)


@pair("int-parse", "tool-error.parse")
def parse_int(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: int("12.5 EUR")), TOOL)


@pair("yaml-safe-load", "tool-error.parse")
def parse_yaml(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: yaml.safe_load("key: [unclosed")), TOOL)


@pair("tomllib", "tool-error.parse")
def parse_toml(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: tomllib.loads("a = ")), TOOL)


@pair("xml-etree", "tool-error.parse")
def parse_xml(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: ET.fromstring("<a><b></a>")), TOOL)


# --- name lookups (numeric only: no resolver is asked) -------------------------------------


@pair("getaddrinfo-numeric", "tool-error.dns")
def dns_getaddrinfo(env: ToolEnv) -> Failure:
    return Failure(
        raised(lambda: socket.getaddrinfo("tool-api.invalid", 443, flags=socket.AI_NUMERICHOST)),
        TOOL,
    )


async def _loop_lookup() -> Any:
    loop = asyncio.get_running_loop()
    return await loop.getaddrinfo("tool-api.invalid", 443, flags=socket.AI_NUMERICHOST)


@pair("asyncio-getaddrinfo-numeric", "tool-error.dns")
def dns_asyncio(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: asyncio.run(_loop_lookup())), TOOL)


class _NumericResolver(aiohttp.abc.AbstractResolver):
    """aiohttp's resolver interface, resolving numerically only (no resolver is asked)."""

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> Any:
        loop = asyncio.get_running_loop()
        infos = await loop.getaddrinfo(host, port, family=family, flags=socket.AI_NUMERICHOST)
        return [
            {
                "hostname": host,
                "host": i[4][0],
                "port": i[4][1],
                "family": i[0],
                "proto": i[2],
                "flags": 0,
            }
            for i in infos
        ]

    async def close(self) -> None:
        pass


async def _aiohttp_dns() -> None:
    connector = aiohttp.TCPConnector(resolver=_NumericResolver())
    async with (
        aiohttp.ClientSession(connector=connector) as session,
        session.get("http://tool-api.invalid/"),
    ):
        pass


@pair("aiohttp-numeric-resolver", "tool-error.dns")
def dns_aiohttp(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: asyncio.run(_aiohttp_dns())), TOOL)


# --- refused connections (the closed loopback port) ----------------------------------------


def _closed(env: ToolEnv) -> str:
    return f"http://127.0.0.1:{env.closed_port}/v1/search"


@pair("socket-connect", "tool-error.refused")
def refused_socket(env: ToolEnv) -> Failure:
    return Failure(
        raised(lambda: socket.create_connection(("127.0.0.1", env.closed_port), timeout=1)), TOOL
    )


@pair("httpx-connect", "tool-error.refused")
def refused_httpx(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: httpx.get(_closed(env), timeout=1)), TOOL)


@pair("requests-connect", "tool-error.refused")
def refused_requests(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: requests.get(_closed(env), timeout=1)), TOOL)


@pair("urllib-urlopen", "tool-error.refused")
def refused_urllib(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: urllib.request.urlopen(_closed(env), timeout=1)), TOOL)


async def _aiohttp_get(url: str) -> None:
    async with aiohttp.ClientSession() as session, session.get(url) as resp:
        resp.raise_for_status()


@pair("aiohttp-connect", "tool-error.refused")
def refused_aiohttp(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: asyncio.run(_aiohttp_get(_closed(env)))), TOOL)


@pair("asyncio-open-connection", "tool-error.refused")
def refused_asyncio(env: ToolEnv) -> Failure:
    return Failure(
        raised(lambda: asyncio.run(asyncio.open_connection("127.0.0.1", env.closed_port))), TOOL
    )


# --- subprocesses --------------------------------------------------------------------------


@pair("subprocess-run-check", "tool-error.subprocess")
def sub_check(env: ToolEnv) -> Failure:
    cmd = [sys.executable, "-c", "import sys; sys.exit(3)"]
    return Failure(raised(lambda: subprocess.run(cmd, check=True, capture_output=True)), TOOL)


@pair("subprocess-check-output", "tool-error.subprocess")
def sub_output(env: ToolEnv) -> Failure:
    cmd = [sys.executable, "-c", "import sys; print('partial'); sys.exit(1)"]
    return Failure(raised(lambda: subprocess.check_output(cmd)), TOOL)


@pair("subprocess-missing-executable", "tool-error.subprocess")
def sub_missing(env: ToolEnv) -> Failure:
    cmd = [str(Path(env.tmp) / "no-such-tool")]
    return Failure(raised(lambda: subprocess.run(cmd, check=True)), TOOL)


# --- the tool's own HTTP API answered an error ---------------------------------------------


@pair("httpx-raise-for-status-404", "tool-error.http-status")
def http_httpx_404(env: ToolEnv) -> Failure:
    return Failure(
        raised(lambda: httpx.get(f"{env.tool_api}/status/404", timeout=2).raise_for_status()), TOOL
    )


@pair("httpx-raise-for-status-429", "tool-error.http-status")
def http_httpx_429(env: ToolEnv) -> Failure:
    """A 429 from the tool's own API is the tool failing, not the provider rate limiting."""
    return Failure(
        raised(lambda: httpx.get(f"{env.tool_api}/status/429", timeout=2).raise_for_status()), TOOL
    )


@pair("requests-raise-for-status-503", "tool-error.http-status")
def http_requests_503(env: ToolEnv) -> Failure:
    return Failure(
        raised(lambda: requests.get(f"{env.tool_api}/status/503", timeout=2).raise_for_status()),
        TOOL,
    )


@pair("urllib-http-error-500", "tool-error.http-status")
def http_urllib_500(env: ToolEnv) -> Failure:
    exc = raised(lambda: urllib.request.urlopen(f"{env.tool_api}/status/500", timeout=2))
    if isinstance(exc, urllib.error.HTTPError):
        exc.close()  # its socket; the status and headers stay on the exception
    return Failure(exc, TOOL)


@pair("aiohttp-raise-for-status-502", "tool-error.http-status")
def http_aiohttp_502(env: ToolEnv) -> Failure:
    return Failure(raised(lambda: asyncio.run(_aiohttp_get(f"{env.tool_api}/status/502"))), TOOL)
