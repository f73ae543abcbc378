"""The id of a drafted rule: a name a team keeps.

The type's own namespace and its name without the Error/Exception suffix
(`acme.vector.IndexNotReady` -> `acme.vector.index-not-ready`), the runtime's name
before a standard library's namespace (`go.net.`, `dotnet.system.`), or `--id-prefix`;
a generic type is named by the words of its template. Apart from the class and the
action: a name is read from the failure's type and words, never from evidence.
"""

from __future__ import annotations

import re

from classifier.generic_types import is_generic
from classifier.unknowns.cluster import Cluster
from classifier.unknowns.mask import VALUE_TOKEN

_STANDARD_ROOTS = {
    "python": {"builtins", "asyncio", "concurrent", "json", "socket", "ssl", "subprocess"},
    "java": {"java", "javax", "jdk"},
    "dotnet": {"system", "microsoft"},
    "rust": {"std", "core", "alloc"},
    "go": {"errors", "fmt", "net", "url", "os", "poll", "context", "io", "http", "tls",
           "x509", "syscall", "json", "strconv", "exec"},
    "node": set(),
}  # fmt: skip
_SUFFIX = re.compile(r"(?<=[a-z0-9])(Error|Exception|Err)$")


def _kebab(name: str) -> str:
    kebab = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", name)
    return re.sub(r"[^a-z0-9]+", "-", kebab.lower()).strip("-")


def _split_type(type_name: str) -> tuple[list[str], str]:
    """A type's namespace parts and its own name (`*net.OpError` -> [net], OpError)."""
    name = type_name.lstrip("*&").split("<")[0]
    parts = [p for p in re.split(r"::|[./]", name) if p]
    return parts[:-1], (parts[-1] if parts else "error")


def _words_slug(template: str, limit: int = 4) -> str:
    """The template's longest run of literal words, kebab-cased, its first `limit` words."""
    best: list[str] = []
    run: list[str] = []
    for token in [*template.split(), "<*>"]:
        if "<" not in token and not VALUE_TOKEN.search(token):
            run += re.findall(r"[A-Za-z][A-Za-z0-9]*", token)
            continue
        if len(run) > len(best):
            best = run
        run = []
    return _kebab(" ".join(best[:limit]))


def rule_id_for(c: Cluster, taken: set[str], prefix: str = "") -> str:
    """A name a team keeps (see the module docstring), with the cluster id when taken."""
    k = c.key
    generic = is_generic(k.type)
    named = k.type
    if generic:
        named = next((cause[0] for cause in k.causes if not is_generic(cause[0])), k.type)
    space, own = _split_type(named)
    ns = [p.lower() for p in space]
    slug = _words_slug(c.template) if generic else _kebab(_SUFFIX.sub("", own))
    if not slug or ns[-1:] == [slug]:  # System.Text.Json.JsonException: json-exception
        slug = _kebab(own) or "error"
    language = (k.language or "any").lower()
    if prefix:
        base = f"{prefix.rstrip('.')}.{slug}"
    else:
        standard = not ns or ns[0] in _STANDARD_ROOTS.get(language, set())
        base = ".".join([*([language] if standard else []), *ns, slug])
    base = re.sub(r"[^A-Za-z0-9._/:-]", "-", base).strip("-.") or f"{language}.error"
    return base if base not in taken else f"{base}-{c.id}"


__all__ = ["rule_id_for"]
