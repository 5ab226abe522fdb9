"""Spending limits that pause a turn, the estimate of the next call, and the session's ledger.

A turn may have two limits: its own (``--budget USD``) and the kernel session's
(``ChatMagics.budget_usd``, over every thread). Before each request the next call's cost is
estimated — from the API's token count of that very request where the provider offers one,
else from the last cycle's usage — and when what was spent plus that estimate would pass a
limit the turn pauses with a prompt: Continue (one more budget's worth) or Stop. Prices are
the model table's list prices (``providers/models.py``): every figure here is an estimate.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from .events import Usage

__all__ = [
    "Budget",
    "BudgetAnswer",
    "BudgetPrompt",
    "Ledger",
    "Spend",
    "estimate_next",
    "format_usd",
]

DEFAULT_OUTPUT_GUESS = 500  # output tokens assumed for a first call with nothing to go by

Estimator = Callable[[Usage], float | None]  # usage -> estimated cost on the turn's model


def format_usd(amount: float | None) -> str:
    """``$0.48``; below a cent, ``$0.0042``; ``unknown`` without a price."""
    if amount is None or math.isnan(amount):
        return "unknown"
    return f"${amount:.2f}" if amount >= 0.01 or amount == 0 else f"${amount:.4f}"


@dataclass
class Spend:
    """What one thread spent in this kernel session (estimates)."""

    cost_usd: float = 0.0
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    unpriced: int = 0  # turns whose model has no price in the table


@dataclass
class Ledger:
    """Spending per thread in this kernel session; ``%chat cost`` prints it."""

    threads: dict[str, Spend] = field(default_factory=dict)
    allowed_extra: float = 0.0  # the session's budget grown by Continue clicks

    def add(self, thread: str, usage: Usage, cost: float | None) -> None:
        spend = self.threads.setdefault(thread, Spend())
        spend.turns += 1
        spend.usage = spend.usage + usage
        if cost is None:
            spend.unpriced += int(usage != Usage())
        else:
            spend.cost_usd += cost

    @property
    def total(self) -> float:
        return sum(spend.cost_usd for spend in self.threads.values())


@dataclass(frozen=True, slots=True)
class BudgetPrompt:
    """The question a paused turn asks: go on past the limit, or stop."""

    scope: Literal["turn", "session"]
    spent: float
    limit: float
    next_cost: float | None  # None: nothing to estimate it from
    estimated_by: Literal["token count", "last call", "none"] = "none"

    @property
    def text(self) -> str:
        which = "this turn's budget" if self.scope == "turn" else "the session's budget"
        line = f"Spent {format_usd(self.spent)} of {format_usd(self.limit)} ({which})"
        if self.next_cost is not None:
            line += f"; next call ≈ {format_usd(self.next_cost)}"
        return line + " — estimates from list prices."


@dataclass(frozen=True, slots=True)
class BudgetAnswer:
    action: Literal["continue", "stop"]
    by: Literal["user", "policy"] = "user"
    reason: str | None = None


@dataclass
class Budget:
    """The limits one turn runs under; ``ledger`` holds the session's earlier spending."""

    turn_usd: float | None = None
    session_usd: float | None = None
    ledger: Ledger = field(default_factory=Ledger)

    def __post_init__(self) -> None:
        self._turn_limit = self.turn_usd

    @property
    def _session_limit(self) -> float | None:
        return self.session_usd + self.ledger.allowed_extra if self.session_usd else None

    @property
    def active(self) -> bool:
        return bool(self.turn_usd) or bool(self.session_usd)

    def check(self, spent_turn: float, next_cost: float | None, how: str) -> BudgetPrompt | None:
        """The prompt to pause with, when ``spent_turn`` plus ``next_cost`` passes a limit."""
        ahead = next_cost or 0.0
        by: Literal["token count", "last call", "none"] = (
            "token count" if how == "token count" else "last call" if how == "last call" else "none"
        )
        if self._turn_limit and spent_turn + ahead > self._turn_limit:
            return BudgetPrompt("turn", spent_turn, self._turn_limit, next_cost, by)
        spent_session = self.ledger.total + spent_turn
        if self._session_limit and spent_session + ahead > self._session_limit:
            return BudgetPrompt("session", spent_session, self._session_limit, next_cost, by)
        return None

    def allow(self, prompt: BudgetPrompt) -> None:
        """Continue: the limit that paused grows by one more budget's worth."""
        if prompt.scope == "turn" and self.turn_usd:
            self._turn_limit = prompt.limit + self.turn_usd
        elif prompt.scope == "session" and self.session_usd:
            self.ledger.allowed_extra += self.session_usd  # for the rest of the session


async def estimate_next(
    count: Callable[[], Awaitable[int | None]] | None,
    last: Usage | None,
    price: Estimator,
) -> tuple[float | None, str]:
    """The next call's estimated cost and how it was estimated.

    With a token count of the request: the part the last request already sent is priced as a
    cache read (the request's breakpoints keep it cached), the rest as a cache write, and the
    output as the last call's (or a guess). Without one: the last call's cost again."""
    counted = await count() if count is not None else None
    if counted is not None:
        prefix = (
            0
            if last is None
            else (
                last.input_tokens + last.cache_read_input_tokens + last.cache_creation_input_tokens
            )
        )
        cached = min(counted, prefix)
        output = last.output_tokens if last is not None else DEFAULT_OUTPUT_GUESS
        usage = Usage(
            input_tokens=0,
            output_tokens=output,
            cache_read_input_tokens=cached,
            cache_creation_input_tokens=counted - cached,
        )
        return price(usage), "token count"
    if last is not None:
        return price(last), "last call"
    return None, "none"
