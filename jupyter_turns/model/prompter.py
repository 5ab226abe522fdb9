"""The Prompter protocol (everything the turn asks the user) and the policy-driven PolicyPrompter.

A prompt is a coroutine: the turn awaits the answer, and cancels the coroutine when the question
no longer matters (the user stopped the turn), so an implementation must clean up its prompt in
``finally``. The widget answers with buttons; :class:`PolicyPrompter` answers by rules, for
scripts, tests and headless runs (nbclient, nbval), where no one can click.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol

from .budget import BudgetAnswer, BudgetPrompt
from .events import Who
from .interrupt import InterruptAction, InterruptChoice, InterruptContext

__all__ = [
    "HEADLESS_BUDGET_REASON",
    "HEADLESS_DENY_REASON",
    "HEADLESS_WITHHOLD_REASON",
    "Approval",
    "ApprovalRequest",
    "BudgetAnswer",
    "BudgetPrompt",
    "InquiryAnswer",
    "InquiryPrompt",
    "PolicyPrompter",
    "Prompter",
    "ResultDecision",
    "ResultReview",
]

HEADLESS_DENY_REASON = (
    "not run: this is a headless run and nobody can approve tool calls "
    "(use `--tools unattended` to let tools run without approval)"
)
HEADLESS_BUDGET_REASON = (
    "nobody can agree to spend past the budget in this headless run "
    "(raise --budget or ChatMagics.budget_usd to let it go on)"
)
HEADLESS_WITHHOLD_REASON = (
    "this tool's results are reviewed by the user before the model sees them, "
    "and nobody can review them in this headless run"
)


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    call_id: str
    name: str
    arguments: dict[str, Any]
    schema: dict[str, Any]
    description: str = ""
    edit_first: bool = False  # the tool's run mode is "edit": open the editor at once
    error: str | None = None  # why the previous edit was rejected
    always_ask: bool = False  # only a person may approve: a policy's approval is refused
    preview: dict[str, Any] | None = None  # what the call would do (a proposed cell, a diff)
    builtin: bool = False  # the kernel's built-in tool (Tool.builtin): the page's form is its own
    asker: str | None = None  # who asks, when not the thread's model ("Claude Code · call 7")


@dataclass(frozen=True, slots=True, kw_only=True)
class _Answer:
    """Who answered: the user, or a policy (and why, shown to the model when it refuses)."""

    by: Literal["user", "policy"] = "user"
    reason: str | None = None
    who: Who | None = None  # the person who clicked, as their page said (saved with the decision)


@dataclass(frozen=True, slots=True)
class Approval(_Answer):
    """The answer to an approval; ``action`` is the decision's saved name (``skipped`` by a
    policy is saved as ``denied``)."""

    action: Literal["approved", "skipped", "edited", "always_allowed"]
    arguments: dict[str, Any] | None = None  # the edited arguments, for "edited"


@dataclass(frozen=True, slots=True)
class ResultReview:
    call_id: str
    name: str
    content: str
    is_error: bool
    edit_first: bool = False


@dataclass(frozen=True, slots=True)
class ResultDecision(_Answer):
    """The answer to a result review; ``action`` is the decision's saved name."""

    action: Literal["delivered", "withheld", "result_edited"]
    content: str | None = None  # the edited result, for "result_edited"


@dataclass(frozen=True, slots=True)
class InquiryPrompt:
    call_id: str
    inquiry_id: str
    question: str
    choices: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class InquiryAnswer:
    answer: str | None  # None: nobody could answer
    by: Literal["user", "policy"] = "user"


class Prompter(Protocol):
    async def approve(self, request: ApprovalRequest) -> Approval: ...

    async def review_result(self, review: ResultReview) -> ResultDecision: ...

    async def inquire(self, inquiry: InquiryPrompt) -> InquiryAnswer: ...

    async def interrupt_menu(self, context: InterruptContext) -> InterruptChoice: ...

    async def budget(self, prompt: BudgetPrompt) -> BudgetAnswer: ...


ApprovalRule = Callable[[ApprovalRequest], Approval | Awaitable[Approval]]
ResultRule = Callable[[ResultReview], ResultDecision | Awaitable[ResultDecision]]
InquiryRule = Callable[[InquiryPrompt], str | Awaitable[str | None] | None]
InterruptRule = Callable[[InterruptContext], InterruptChoice | Awaitable[InterruptChoice]]
BudgetRule = Callable[[BudgetPrompt], BudgetAnswer | Awaitable[BudgetAnswer]]


async def _apply(rule: Any, question: Any) -> Any:
    if callable(rule):
        answer = rule(question)
        return await answer if inspect.isawaitable(answer) else answer
    return rule


class PolicyPrompter:
    """Answers every prompt by rule; each rule is a fixed answer or a (possibly async) callable.

    ``approve``: "deny" (the default: skip with an explanation), "allow", or a callable returning
    an :class:`Approval`. ``results``: "deliver" (default), "withhold", or a callable returning a
    :class:`ResultDecision`. ``inquiry``: a fixed answer string, ``None`` (the default: "no
    answer", what :meth:`ToolContext.ask` then returns) or a callable. ``interrupt``: an
    :class:`InterruptAction` (default STOP) or a callable returning an :class:`InterruptChoice`.
    ``on_dead_stream`` is the choice when a stream broke off (default STOP: keep the partial text).
    ``budget``: "stop" (the default: a turn that would pass its budget stops, saying why),
    "continue", or a callable returning a :class:`BudgetAnswer`.
    """

    def __init__(
        self,
        approve: Literal["deny", "allow"] | ApprovalRule = "deny",
        *,
        results: Literal["deliver", "withhold"] | ResultRule = "deliver",
        inquiry: str | InquiryRule | None = None,
        interrupt: InterruptAction | InterruptRule = InterruptAction.STOP,
        on_dead_stream: InterruptAction = InterruptAction.STOP,
        deny_reason: str = HEADLESS_DENY_REASON,
        withhold_reason: str = "withheld by policy",
        budget: Literal["stop", "continue"] | BudgetRule = "stop",
    ) -> None:
        self._budget = budget
        self._approve = approve
        self._results = results
        self._inquiry = inquiry
        self._interrupt = interrupt
        self._on_dead_stream = on_dead_stream
        self._deny_reason = deny_reason
        self._withhold_reason = withhold_reason

    async def approve(self, request: ApprovalRequest) -> Approval:
        if self._approve == "deny":
            return Approval("skipped", by="policy", reason=self._deny_reason)
        if self._approve == "allow":
            return Approval("approved", by="policy", reason="allowed by policy")
        answer: Approval = await _apply(self._approve, request)
        return answer

    async def review_result(self, review: ResultReview) -> ResultDecision:
        if self._results == "deliver":
            return ResultDecision("delivered", by="policy")
        if self._results == "withhold":
            return ResultDecision("withheld", by="policy", reason=self._withhold_reason)
        answer: ResultDecision = await _apply(self._results, review)
        return answer

    async def inquire(self, inquiry: InquiryPrompt) -> InquiryAnswer:
        answer = await _apply(self._inquiry, inquiry)
        return InquiryAnswer(None if answer is None else str(answer), by="policy")

    async def interrupt_menu(self, context: InterruptContext) -> InterruptChoice:
        """The rule's choice, marked as the policy's (no person chose it)."""
        return replace(await self._interrupt_choice(context), by="policy")

    async def _interrupt_choice(self, context: InterruptContext) -> InterruptChoice:
        if not context.stream_alive and context.where == "streaming":
            if not isinstance(self._interrupt, InterruptAction) and callable(self._interrupt):
                choice: InterruptChoice = await _apply(self._interrupt, context)
                return choice
            return InterruptChoice(self._on_dead_stream)
        if isinstance(self._interrupt, InterruptAction):
            action = self._interrupt
            if action not in context.actions:
                action = InterruptAction.STOP
            return InterruptChoice(action)
        answer: InterruptChoice = await _apply(self._interrupt, context)
        return answer

    async def budget(self, prompt: BudgetPrompt) -> BudgetAnswer:
        if self._budget == "stop":
            return BudgetAnswer("stop", by="policy", reason=HEADLESS_BUDGET_REASON)
        if self._budget == "continue":
            return BudgetAnswer("continue", by="policy")
        answer: BudgetAnswer = await _apply(self._budget, prompt)
        return answer
