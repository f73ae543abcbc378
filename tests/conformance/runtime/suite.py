"""The runtime suite as a whole: its situations, every available driver, the tool API.

`listed()` is what pytest collects (each driver's cheap `list_pairs`, checked against
situations.yaml); `running()` opens the drivers and the tool API for a session and hands
back a `Suite` that describes and judges any pair.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from errorclass_client import Client
from tests.conformance.runtime import tool_api
from tests.conformance.runtime.drivers import RuntimeDriver, ToolEnv, driver_modules
from tests.conformance.runtime.judge import Result, judge
from tests.conformance.runtime.situations import (
    Situation,
    check_pairs,
    load_situations,
    parse_pair,
)


@dataclass(frozen=True)
class Listing:
    situations: Mapping[str, Situation]
    pairs: tuple[str, ...]
    unavailable: Mapping[str, str]
    """Languages whose driver cannot run here, with the reason."""


def listed(languages: set[str] | None = None) -> Listing:
    situations = load_situations()
    pairs: list[str] = []
    unavailable: dict[str, str] = {}
    ran: list[str] = []
    for language, module in driver_modules().items():
        if languages is not None and language not in languages:
            continue
        reason = module.unavailable()
        if reason:
            unavailable[language] = reason
            continue
        pairs += module.list_pairs()
        ran.append(language)
    check_pairs(situations, pairs, languages=ran)
    return Listing(situations, tuple(pairs), unavailable)


@dataclass
class Suite:
    listing: Listing
    drivers: Mapping[str, RuntimeDriver]
    env: ToolEnv
    client: Client

    def situation(self, pair: str) -> Situation:
        return self.listing.situations[parse_pair(pair).situation]

    def judge(self, pair: str, *, contract: bool = True) -> Result:
        driver = self.drivers[parse_pair(pair).language]
        return judge(
            driver.describe(pair, self.env, contract=contract), self.situation(pair), self.client
        )


@contextlib.contextmanager
def running(client: Client, listing: Listing) -> Iterator[Suite]:
    """The tool API and every language's driver that has pairs in `listing`, for the block."""
    languages = {parse_pair(p).language for p in listing.pairs}
    modules = driver_modules()
    with contextlib.ExitStack() as stack:
        env = stack.enter_context(tool_api.serving())
        drivers = {
            lang: stack.enter_context(modules[lang].open_driver()) for lang in sorted(languages)
        }
        yield Suite(listing, drivers, env, client)
