"""Fakes for unit tests: a clock whose sleep advances time instantly and records each wait."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest


@dataclass
class FakeClock:
    now: float = 1_000_000.0
    sleeps: list[float] = field(default_factory=list)

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
