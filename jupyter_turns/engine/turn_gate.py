"""TurnGate: what a turn decides before and after each request, beside the state machine.

Before a request: which events it sends and whether it compacts (``compaction.Compaction``),
and whether it may go out at all under the turn's spending limits (``budget.Budget``: the
estimate of the next call, the prompt when it would pass a limit). After a response: the
context in use (the gauge) and the notice that says a compaction happened. The coordinator
(``turn.py``) keeps the states and the loop; this keeps the arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model.budget import BudgetPrompt, estimate_next
from ..model.events import API_KINDS, ConversationEvent, Finished, Notice, Usage
from ..providers.base import Continuation, Provider, Request
from .compaction import compacted_notice, unavailable_notice
from .turn_state import TurnConfig
from .window import compaction_block, context_tokens

__all__ = ["TurnGate"]


class TurnGate:
    def __init__(self, config: TurnConfig, provider: Provider) -> None:
        self.config = config
        self.provider = provider
        self.context = config.context_tokens  # the gauge: context in use after the last response
        self.last_usage: Usage | None = None  # the last complete response's
        self.summarizing = False  # the request in flight is a summarize request

    # ------------------------------------------------------------------ before a request

    def request(
        self,
        events: Sequence[ConversationEvent],
        turn_start: int,
        continuation: Continuation | None,
        cycle: int,
    ) -> Request:
        """The next request; a summarize request sends what came before this turn's request
        when it opens the turn (the new request follows the summary, it is not summarized)."""
        compaction, events_all = self.config.compaction, events
        if not getattr(self.provider, "compaction", True):
            compaction.available = False
        plan = compaction.plan(events, self.context) if continuation is None else None
        if plan == "summarize":
            compaction.done = True
            opening = all(e.kind in ("chat_request", "notice") for e in events[turn_start:])
            events = events[:turn_start] if opening else events
            if not any(e.kind in API_KINDS for e in events):
                plan, events = None, events_all  # nothing before this request to summarize
        self.summarizing = plan == "summarize"
        extra = compaction.extra(plan, events, self.context)
        scripted = getattr(self.provider, "sees_scripted", False)  # a model is not sent them
        return self.config.request(events, continuation, cycle, extra, scripted=scripted)

    async def over_budget(self, request: Request, spent: float | None) -> BudgetPrompt | None:
        """The budget prompt, when this request would pass a limit (None: it may go out)."""
        budget = self.config.budget
        if budget is None or not budget.active:
            return None
        model = self.config.thread.model

        def price(usage: Usage) -> float | None:
            return self.provider.cost(usage, model)

        counter = getattr(self.provider, "count_tokens", None)
        count = (lambda: counter(request)) if callable(counter) else None
        next_cost, how = await estimate_next(count, self.last_usage, price)
        return budget.check(spent or 0.0, next_cost, how)

    # ------------------------------------------------------------------ after a response

    def finished(self, finished: Finished) -> None:
        """Take the gauge from a complete response."""
        if finished.usage is None:
            return
        self.last_usage = finished.usage
        measured = finished.details.get("context_tokens")
        self.context = measured if isinstance(measured, int) else context_tokens(finished.usage)

    def notices(self, cycle_events: Sequence[ConversationEvent]) -> list[Notice]:
        """ "Earlier conversation summarized" for each compaction block a response brought."""
        trigger = (
            "command" if self.summarizing and self.config.compaction.requested else "threshold"
        )
        return [
            compacted_notice(event, trigger)
            for event in cycle_events
            if compaction_block(event) is not None
        ]

    def failed_summary(self, detail: str) -> Notice:
        """A summarize request was refused: say so; the turn goes on with its request."""
        self.summarizing = False
        self.config.compaction.available = False
        return unavailable_notice(detail)
