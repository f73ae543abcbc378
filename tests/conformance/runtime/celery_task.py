"""The task billiard's pool runs in the Celery pairs (python/runtime.py): a module of its
own, so a spawned pool process imports nothing else."""

from __future__ import annotations

import time


def sleeps() -> None:
    """A task that outlives any time limit the pairs set."""
    time.sleep(3)
