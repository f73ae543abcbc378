"""The Python entries: every exception class the pinned SDKs export, and Bedrock's error codes.

    python -m tests.conformance.drift.python_sdks > entries.json

For each pinned SDK (the conformance extra), every submodule of its packages is imported
(offline: the loopback guard refuses any connection, litellm reads its bundled cost map;
a submodule whose optional dependency is missing is skipped, as a user without it could not
raise its errors either), and every class found in them that derives from BaseException,
is defined in the package, and has a public name (no `_`-prefixed part: the helper's type
name is what a rule names) becomes an entry, described with our helper's own `type_name`
and `supertypes`. Warnings are left out (they are not raised as failures). botocore's
service errors are made at run time per client (botocore.errorfactory.<Code>), so Bedrock
Runtime's are taken from its service model: each error shape (ThrottlingException, ...) is
a code entry raised as botocore.errorfactory.<Code>, and each exception member of its event
streams (throttlingException, ...) a code entry raised as EventStreamError.

It runs in a subprocess of the check, so the walk's imports never reach the test process.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import sys
import warnings
from collections.abc import Iterator
from types import ModuleType

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ.setdefault("LITELLM_TELEMETRY", "False")
os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

from errorclass_client.python_exception import supertypes, type_name
from tests.conformance import netguard
from tests.conformance.drift.entries import Entry

SDKS: dict[str, tuple[str, ...]] = {
    # distribution (pinned in the conformance extra): the packages it installs
    "openai": ("openai",),
    "anthropic": ("anthropic",),
    "httpx": ("httpx",),
    "requests": ("requests",),
    "aiohttp": ("aiohttp",),
    "tenacity": ("tenacity",),
    "google-genai": ("google.genai",),
    "boto3": ("boto3",),
    "botocore": ("botocore",),
    "litellm": ("litellm",),
    "langchain-core": ("langchain_core",),
    "langchain-openai": ("langchain_openai",),
    "langchain-anthropic": ("langchain_anthropic",),
    "pydantic-ai-slim": ("pydantic_ai",),
    "openai-agents": ("agents",),
}
SKIP_PARTS = frozenset({"tests", "test", "testing", "__main__"})
"""Submodules not imported: test suites, and entry points that run on import."""
SKIP_TREES = ("litellm.proxy",)
"""Parts of a package that are not the client a runtime calls through (LiteLLM's proxy
server and its CLI): which of their modules import depends on what else happens to be
installed (`rich`, say, which `make bench` brings), so they would make the check depend on
the machine rather than on the pins."""
BOTOCORE_SERVICES = ("bedrock-runtime",)


def modules(package: str) -> Iterator[ModuleType]:
    """The package and every submodule that imports (offline) without error."""
    try:
        root = importlib.import_module(package)
    except Exception:
        return
    yield root
    path = getattr(root, "__path__", None)
    if path is None:
        return
    for info in pkgutil.walk_packages(path, f"{package}.", onerror=lambda _name: None):
        if SKIP_PARTS & set(info.name.split(".")) or info.name.startswith(SKIP_TREES):
            continue
        try:
            yield importlib.import_module(info.name)
        except BaseException:
            continue


def exported(package: str, cls: type) -> bool:
    module = getattr(cls, "__module__", "") or ""
    if module != package and not module.startswith(f"{package}."):
        return False
    if not issubclass(cls, BaseException) or issubclass(cls, Warning):
        return False
    return not any(part.startswith("_") for part in type_name(cls).split("."))


def class_entries(sdk: str, packages: tuple[str, ...]) -> list[Entry]:
    found: dict[str, Entry] = {}
    for package in packages:
        for module in list(modules(package)):
            for value in list(vars(module).values()):
                if isinstance(value, type) and exported(package, value):
                    name = type_name(value)
                    found.setdefault(name, Entry(sdk, "python", name, supertypes(value)))
    return sorted(found.values(), key=lambda e: e.type)


def botocore_code_entries() -> list[Entry]:
    import botocore.session

    session = botocore.session.get_session()
    client_error = ("botocore.exceptions.ClientError", "Exception")
    out: list[Entry] = []
    for service in BOTOCORE_SERVICES:
        model = session.get_service_model(service)
        for shape in model.error_shapes:
            out.append(
                Entry(
                    "botocore",
                    "python",
                    f"botocore.errorfactory.{shape.name}",
                    client_error,
                    code=shape.name,
                )
            )
        for name in model.shape_names:
            shape = model.shape_for(name)
            if not shape.serialization.get("eventstream"):
                continue
            for member, member_shape in shape.members.items():
                if member_shape.metadata.get("exception"):
                    out.append(
                        Entry(
                            "botocore",
                            "python",
                            "botocore.exceptions.EventStreamError",
                            ("botocore.exceptions.ClientError", "Exception"),
                            code=member,
                        )
                    )
    unique = {(e.type, e.code): e for e in out}
    return sorted(unique.values(), key=lambda e: (e.code.lower(), e.code))


def python_entries(sdks: dict[str, tuple[str, ...]] = SDKS) -> list[Entry]:
    netguard.install()
    warnings.simplefilter("ignore")
    out: list[Entry] = []
    for sdk, packages in sdks.items():
        out += class_entries(sdk, packages)
    if "botocore" in sdks:
        out += botocore_code_entries()
    return out


def main(argv: list[str]) -> None:
    """Arguments: pinned distribution names, or `name=package[,package]` for any other."""
    sdks: dict[str, tuple[str, ...]] = {}
    for arg in argv:
        name, _, packages = arg.partition("=")
        sdks[name] = tuple(packages.split(",")) if packages else SDKS[name]
    sdks = sdks or SDKS
    json.dump([e.data() for e in python_entries(sdks)], sys.stdout, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
