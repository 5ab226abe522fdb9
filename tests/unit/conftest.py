"""Fakes for unit tests: a clock whose sleep advances time instantly and records each wait, and
the ``%%chat`` magic on a plain IPython shell (no kernel, no notebook file)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from IPython.core.interactiveshell import InteractiveShell

from jupyter_turns.kernel.magic import ChatMagics


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


@pytest.fixture
def magics() -> Iterator[ChatMagics]:
    """``ChatMagics`` on the plain IPython shell (the no-kernel path); nothing is restored."""
    shell = InteractiveShell.instance()
    magics = ChatMagics(shell)
    magics.session.restore_tried = True  # no notebook file here
    try:
        yield magics
    finally:
        shell.events.unregister("pre_run_cell", magics._pre_run_cell)
        shell.user_ns.pop("__session__", None)
