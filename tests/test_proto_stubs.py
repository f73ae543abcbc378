"""The committed generated modules match what the proto generates today."""

from __future__ import annotations

from pathlib import Path

from tools import gen_proto


def test_generated_modules_do_not_drift_from_the_proto(tmp_path: Path) -> None:
    """Fails when proto/ changed without `make proto`."""
    for fresh in gen_proto.generate(tmp_path):
        committed = gen_proto.OUT / fresh.relative_to(tmp_path)
        assert committed.read_text() == fresh.read_text(), f"{committed} is stale: run `make proto`"
