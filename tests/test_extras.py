"""classifier.extras: the install hint for an optional feature names what works with no index
serving this package: the extra's own requirements (from PyPI), and the checkout's form."""

from __future__ import annotations

import tomllib

from classifier.extras import extra_requirements, install_hint
from tests.support import ROOT

EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def test_the_arrow_hint_installs_the_arrow_extras_requirements_not_the_package() -> None:
    hint = install_hint("arrow")
    assert EXTRAS["arrow"] == ["pyarrow>=18"]
    assert hint.startswith("pip install 'pyarrow>=18' ")
    assert "pip install -e '.[arrow]'" in hint
    assert "errorclass-classifier[" not in hint  # no index has it


def test_an_extra_naming_another_gets_both_requirements() -> None:
    """`spark` names `errorclass-classifier[arrow]`: its hint lists pyarrow itself."""
    needed = extra_requirements("spark")
    assert needed[0] == "pyarrow>=18"
    assert [r.split("[")[0].split("<")[0] for r in needed[1:]] == ["pyspark", "pandas"]
    assert not any("errorclass" in r for r in needed)


def test_a_loop_of_extras_ends() -> None:
    declared = [
        'errorclass-classifier[b]; extra == "a"',
        'errorclass-classifier[a]; extra == "b"',
        'pyarrow>=18; extra == "b"',
        "grpcio>=1.66",
    ]
    assert extra_requirements("a", declared) == ["pyarrow>=18"]
