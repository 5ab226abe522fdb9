"""Run policy: whether a tool call runs, and whether its result reaches the model.

Before a run: the run mode (the tool's own, else the thread's default), the thread's "always
allow" list, else the prompter's approval — approve, skip, edit the arguments (validated again;
rejected ones are shown back with the error), always allow. ``always_ask`` tools run only when a
person approves: a policy's approval is refused. The one exception is the user's own choice:
under ``edits="review"`` a cell change its tool declares ``reviewable`` (an insert, an edit, a
delete, a move; never a run of code) is made at once, and the person keeps or undoes it in the
turn's review panel. After a run: the result mode, else the
prompter's review — deliver, withhold, edit the result. Each answer is recorded as a
:class:`~jupyter_turns.model.events.Decision` naming who made it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..model.events import Decision, ToolCallRequest
from ..model.prompter import Approval, ApprovalRequest, Prompter, ResultReview
from .registry import EditsMode, RunMode, Tool, ToolArgumentError
from .results import Outcome

__all__ = ["ALWAYS_ALLOWED", "REVIEWED", "Run", "decide_run", "review_result"]

# the detail of a call approved by the user's earlier "Always allow": their decision, not a policy's
ALWAYS_ALLOWED = "always allowed by you in this thread"
# the detail of a cell change made without asking under ``--edits review``: the turn's review
# panel lists each call so decided (js/src/render/review.js reads this exact text)
REVIEWED = "applied for your review at the end of the turn"


@dataclass(frozen=True, slots=True)
class Run:
    """Run the call with these validated arguments; ``note`` tells the model about an edit."""

    arguments: dict[str, Any]
    note: str = ""


async def decide_run(
    tool: Tool,
    request: ToolCallRequest,
    arguments: dict[str, Any],
    *,
    default_run: RunMode,
    allowed: set[str],
    prompter: Prompter,
    decisions: list[Decision],
    waiting: Callable[[], None],
    preview: dict[str, Any] | None = None,
    edits: EditsMode = "ask",
) -> Run | Outcome:
    """Run (with ``arguments``, or the user's edit of them), or the response for a call that
    does not run. ``allowed`` gains the tool on "always allow"; ``waiting()`` is called before
    each question to the user; ``edits="review"`` makes a reviewable cell change at once."""
    mode = tool.run or default_run
    if mode not in ("deny", "skip") and edits == "review" and _reviewable(tool, arguments):
        decisions.append(Decision(action="approved", by="policy", detail=REVIEWED))
        return Run(arguments)
    settled = _by_policy(tool, mode, arguments, allowed, decisions)
    if settled is not None:
        return settled
    error: str | None = None
    while True:  # until an answer other than arguments that do not validate
        waiting()
        approval = await prompter.approve(
            ApprovalRequest(
                call_id=request.call_id,
                name=tool.name,
                arguments=dict(request.arguments),
                schema=tool.schema,
                description=tool.description,
                edit_first=mode == "edit",
                error=error,
                always_ask=tool.always_ask,
                preview=preview,
                builtin=tool.builtin,
            )
        )
        answered = _answered(tool, approval, arguments, allowed, decisions)
        if answered is not None:
            return answered
        try:
            edited_arguments = tool.validate(approval.arguments)
        except ToolArgumentError as exc:
            error = str(exc)
            continue
        edited = json.dumps(approval.arguments, ensure_ascii=False, default=repr)
        decisions.append(Decision(action="edited", by=approval.by, detail=edited, who=approval.who))
        return Run(edited_arguments, f"(The user changed the arguments before running: {edited})")


def _reviewable(tool: Tool, arguments: dict[str, Any]) -> bool:
    """Whether ``--edits review`` makes this call without asking: a cell change its tool
    declares reviewable with these arguments (never a run of code)."""
    return tool.reviewable is not None and tool.reviewable(arguments)


def _by_policy(
    tool: Tool,
    mode: RunMode,
    arguments: dict[str, Any],
    allowed: set[str],
    decisions: list[Decision],
) -> Run | Outcome | None:
    """The decision made without asking (the run mode, "always allow"); None: ask."""
    if mode == "deny":
        decisions.append(Decision(action="denied", by="policy", detail="tools disabled"))
        where = (
            f"{tool.name} is set to deny"
            if tool.run == "deny"
            else "tool use is disabled in this thread"
        )
        return Outcome(f"Not run: {where}.", True, "skipped")
    if mode == "skip":
        decisions.append(Decision(action="skipped", by="policy", detail="run mode skip"))
        return Outcome(f"Not run: {tool.name} is set to skip.", True, "skipped")
    if mode == "unattended" and not tool.always_ask:
        decisions.append(Decision(action="approved", by="policy", detail="unattended"))
        return Run(arguments)
    if tool.name in allowed:  # the user's own "Always allow" (a click, `%chat allow`, restored)
        decisions.append(Decision(action="approved", by="user", detail=ALWAYS_ALLOWED))
        return Run(arguments)
    return None


def _answered(
    tool: Tool,
    approval: Approval,
    arguments: dict[str, Any],
    allowed: set[str],
    decisions: list[Decision],
) -> Run | Outcome | None:
    """The decision an approval makes, recorded; None: it edited the arguments (to validate).
    An ``always_ask`` tool refuses any approval but a person's."""
    if tool.always_ask and approval.by == "policy" and approval.action != "skipped":
        reason = f"not run: {tool.name} runs only when a person approves the call"
        decisions.append(Decision(action="denied", by="policy", detail=reason))
        return Outcome(_sentence(reason), True, "skipped")
    if approval.action == "approved":
        decisions.append(Decision(action="approved", by=approval.by, who=approval.who))
        return Run(arguments)
    if approval.action == "always_allowed":
        allowed.add(tool.name)
        decisions.append(Decision(action="always_allowed", by=approval.by, who=approval.who))
        return Run(arguments)
    if approval.action == "skipped":
        reason = approval.reason or "the user skipped this tool call"
        action = "skipped" if approval.by == "user" else "denied"
        decisions.append(Decision(action=action, by=approval.by, detail=reason, who=approval.who))
        text = reason if reason.startswith("not run") else f"not run: {reason}"
        return Outcome(_sentence(text), True, "skipped")
    return None


async def review_result(
    tool: Tool,
    call_id: str,
    outcome: Outcome,
    *,
    prompter: Prompter,
    decisions: list[Decision],
) -> Outcome:
    """What the model gets of a successful run: the outcome, an edit of it, or a note that the
    result was withheld."""
    mode = tool.result
    if mode == "deliver":
        return outcome
    if mode == "skip":
        decisions.append(Decision(action="withheld", by="policy", detail="result skip"))
        return Outcome("The result was not shared (the tool withholds results).", False, "done")
    decision = await prompter.review_result(
        ResultReview(
            call_id, tool.name, outcome.content, outcome.is_error, edit_first=mode == "edit"
        )
    )
    if decision.action == "delivered":
        decisions.append(Decision(action="delivered", by=decision.by, who=decision.who))
        return outcome
    if decision.action == "result_edited" and decision.content is not None:
        decisions.append(Decision(action="result_edited", by=decision.by, who=decision.who))
        return Outcome(decision.content, outcome.is_error, outcome.status)
    decisions.append(
        Decision(action="withheld", by=decision.by, detail=decision.reason, who=decision.who)
    )
    if decision.by == "policy":
        reason = decision.reason or "withheld by policy"
        return Outcome(f"The result was not shared: {reason}.", False, "done")
    return Outcome("The user chose not to share this tool's result.", False, "done")


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:] + "."
