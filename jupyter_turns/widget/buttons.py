"""WidgetPrompter: the Prompter that asks through a ChatWidget's buttons, or falls back to a policy.

A prompt is a dict in the widget's ``prompts`` trait with a unique id; the page answers with a
message of the prompt's own kind naming that id (:mod:`jupyter_turns.widget.messages`), so a stale
or repeated click (another widget, an earlier turn, a double click, a second page showing the same
widget) is ignored. The answer withdraws the prompt from the trait, so every page showing the
widget closes it. An answer carries ``who``, the identity its page reports: sanitized here into a
:class:`~jupyter_turns.model.events.Who` and saved with the decision (a label, not a
permission). ``interactive()`` decides per prompt whether to wait for a click or let the fallback
policy answer at once.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..model.budget import BudgetAnswer
from ..model.events import Who
from ..model.interrupt import InterruptAction, InterruptChoice, InterruptContext
from ..model.prompter import Approval, InquiryAnswer, PolicyPrompter, ResultDecision

if TYPE_CHECKING:
    from ..model.budget import BudgetPrompt
    from ..model.prompter import ApprovalRequest, InquiryPrompt, Prompter, ResultReview
    from .chat_widget import ChatWidget

__all__ = ["WidgetPrompter"]

T = TypeVar("T")
_ids = itertools.count(1)


class _Rejected(Exception):
    """The page's answer cannot be used: ask again, showing ``error`` if there is one."""

    def __init__(self, error: str | None = None) -> None:
        super().__init__(error)
        self.error = error


class WidgetPrompter:
    """Asks through the widget's buttons; ``fallback`` answers when nobody can click."""

    def __init__(
        self,
        widget: ChatWidget,
        fallback: Prompter | None = None,
        *,
        interactive: Callable[[], Awaitable[bool]] | None = None,
        before_prompt: Callable[[], None] | None = None,
    ) -> None:
        self.widget = widget
        self.fallback = fallback or PolicyPrompter()
        self.interactive = interactive or _always
        self.before_prompt = before_prompt  # e.g. the sink's flush: show the call before asking
        self._open: dict[str, tuple[str, asyncio.Future[dict[str, Any]]]] = {}
        for kind in ("approval", "result", "inquiry", "interrupt", "budget"):
            widget.handle(kind, self._on_answer)

    async def approve(self, request: ApprovalRequest) -> Approval:
        prompt = {
            "type": "approval",
            "call_id": request.call_id,
            "name": request.name,
            "arguments": request.arguments,
            "schema": request.schema,
            "description": request.description,
            "edit_first": request.edit_first,
            "error": request.error,
            "preview": request.preview,
        }
        if request.builtin:  # only the kernel's own tools: the page draws their own form
            prompt["builtin"] = True
        if request.asker:  # a terminal agent's call (%chat serve): the card names it
            prompt["asker"] = request.asker
        return await self._ask(prompt, _approval, lambda: self.fallback.approve(request))

    async def review_result(self, review: ResultReview) -> ResultDecision:
        prompt = {
            "type": "result",
            "call_id": review.call_id,
            "name": review.name,
            "content": review.content,
            "is_error": review.is_error,
            "edit_first": review.edit_first,
        }
        return await self._ask(prompt, _result, lambda: self.fallback.review_result(review))

    async def inquire(self, inquiry: InquiryPrompt) -> InquiryAnswer:
        prompt = {
            "type": "inquiry",
            "call_id": inquiry.call_id,
            "question": inquiry.question,
            "choices": list(inquiry.choices) if inquiry.choices else None,
        }
        return await self._ask(
            prompt,
            lambda answer: InquiryAnswer(str(answer.get("answer", ""))),
            lambda: self.fallback.inquire(inquiry),
        )

    async def interrupt_menu(self, context: InterruptContext) -> InterruptChoice:
        def read(answer: dict[str, Any]) -> InterruptChoice:
            try:
                action = InterruptAction(answer.get("action"))
                text = str(answer.get("text") or "")
                choice = InterruptChoice(action, text, who=Who.from_page(answer.get("who")))
            except ValueError:  # an unknown action or a Reply without text
                raise _Rejected() from None
            if not choice.valid_in(context):
                raise _Rejected()
            return choice

        prompt = {
            "type": "interrupt",
            "context": context.where,
            "stream_alive": context.stream_alive,
            "reason": context.reason,
        }
        return await self._ask(prompt, read, lambda: self.fallback.interrupt_menu(context))

    async def budget(self, prompt: BudgetPrompt) -> BudgetAnswer:
        def read(answer: dict[str, Any]) -> BudgetAnswer:
            action = answer.get("action")
            if action not in ("continue", "stop"):
                raise _Rejected()
            return BudgetAnswer("continue" if action == "continue" else "stop")

        shown = {
            "type": "budget",
            "scope": prompt.scope,
            "spent": prompt.spent,
            "limit": prompt.limit,
            "next_cost": prompt.next_cost,
            "estimated_by": prompt.estimated_by,
            "text": prompt.text,
        }
        return await self._ask(shown, read, lambda: self.fallback.budget(prompt))

    async def _ask(
        self,
        prompt: dict[str, Any],
        read: Callable[[dict[str, Any]], T],
        fallback: Callable[[], Awaitable[T]],
    ) -> T:
        """Ask the page, or let ``fallback()`` answer when nobody can click.

        ``read`` turns the page's answer into the result; while it raises :class:`_Rejected`
        the prompt is shown again (with the rejection's ``error``).
        """
        if not await self.interactive():
            return await fallback()
        while True:
            answer = await self._show(prompt)
            try:
                return read(answer)
            except _Rejected as rejected:
                if rejected.error is not None:
                    prompt = {**prompt, "error": rejected.error}

    async def _show(self, prompt: dict[str, Any]) -> dict[str, Any]:
        """Publish ``prompt`` under a new id until the page answers it; then withdraw it."""
        prompt_id = f"p{next(_ids)}-{id(self):x}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        if self.before_prompt is not None:
            self.before_prompt()
        self._open[prompt_id] = (prompt["type"], future)
        self.widget.prompts = [*self.widget.prompts, {**prompt, "id": prompt_id}]
        try:
            return await future
        finally:
            self._open.pop(prompt_id, None)
            self.widget.prompts = [p for p in self.widget.prompts if p.get("id") != prompt_id]

    def _on_answer(self, message: dict[str, Any]) -> None:
        """Resolve the open prompt this answer names, if the answer is of the prompt's kind."""
        entry = self._open.get(str(message.get("prompt_id")))
        if entry is None or entry[0] != message.get("type") or entry[1].done():
            return  # stale, repeated or mistyped: nothing is waiting for it
        entry[1].set_result(message)


def _approval(answer: dict[str, Any]) -> Approval:
    action, who = answer.get("action"), Who.from_page(answer.get("who"))
    if action in ("approved", "skipped", "always_allowed"):
        return Approval(action, who=who)
    if action == "edited" and isinstance(answer.get("arguments"), dict):
        return Approval("edited", arguments=answer["arguments"], who=who)
    raise _Rejected("the edit did not send a JSON object")


def _result(answer: dict[str, Any]) -> ResultDecision:
    action, who = answer.get("action"), Who.from_page(answer.get("who"))
    if action == "result_edited" and isinstance(answer.get("content"), str):
        return ResultDecision("result_edited", content=answer["content"], who=who)
    return ResultDecision("delivered" if action == "delivered" else "withheld", who=who)


async def _always() -> bool:
    return True
