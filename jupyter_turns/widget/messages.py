"""The custom messages between a ChatWidget and its page, both ways, as typed dicts.

``js/src/protocol/messages.js`` declares the same messages as JSDoc typedefs, with the same
names, kinds and fields (``tests/unit/test_messages.py`` compares the two lists). Durable state
is not here: it travels in the widget's synced traits (``events``, ``tools``, ``prompts``...).

Kernel → page, the live tail (see :mod:`jupyter_turns.widget.renderer`): ``delta`` appends text
to draft blocks (answer text, reasoning, or a tool call's arguments as the model writes them),
``released`` hands draft blocks over to the events that replace them, ``draft`` resends the
whole draft (a view rendered late), ``draft_clear`` drops it (Abort), ``progress`` carries new
output lines of running tools. The draft messages of a running sub-agent carry ``parent``: the
call id of the card whose nested transcript draws them.

Page → kernel, every user action (never a trait write): ``ready`` from each rendered view, the
answer to each prompt kind under the prompt's own kind (``approval``, ``result``, ``inquiry``,
``interrupt``, ``budget``), and ``interrupt_request`` from the Stop button or Esc. An answer's
``action`` is the name the decision is saved under (``approved``, ``withheld``...). Every answer
and Stop carries ``who``, the page's current user: a label the kernel sanitizes
(:meth:`~jupyter_turns.model.events.Who.from_page`) and saves, never a permission.
"""

# no ``from __future__ import annotations``: TypedDict (Python 3.11) sees NotRequired only in
# evaluated annotations
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

__all__ = [
    "KERNEL_TO_PAGE",
    "PAGE_TO_KERNEL",
    "ApprovalMsg",
    "BudgetMsg",
    "DeltaMsg",
    "DraftClearMsg",
    "DraftMsg",
    "DraftPart",
    "InquiryMsg",
    "InterruptMsg",
    "InterruptRequestMsg",
    "KernelMessage",
    "PageUser",
    "ProgressMsg",
    "ProgressUpdate",
    "ReadyMsg",
    "ReleasedMsg",
    "ResultMsg",
    "TextKind",
    "TextPart",
    "ToolInputPart",
]

TextKind: TypeAlias = Literal["message", "reasoning"]
TextPart: TypeAlias = tuple[int, TextKind, str]  # [block index, kind, text]
# [block index, "tool_input", argument text, tool name, call id]: a tool call's draft card
ToolInputPart: TypeAlias = tuple[int, Literal["tool_input"], str, str, str]
DraftPart: TypeAlias = TextPart | ToolInputPart

# --------------------------------------------------------------------------- kernel -> page


class DeltaMsg(TypedDict):
    """Text added to each draft block since the last flush."""

    type: Literal["delta"]
    parts: list[DraftPart]
    parent: NotRequired[str]  # a sub-agent's draft: the call id whose card draws it


class DraftMsg(TypedDict):
    """The whole draft, replacing what the page holds (the answer to ``ready``)."""

    type: Literal["draft"]
    blocks: list[DraftPart]
    parent: NotRequired[str]  # a sub-agent's draft: the call id whose card draws it


class ReleasedMsg(TypedDict):
    """Draft blocks that became events: ``[index, event id]``; a null id drops the block."""

    type: Literal["released"]
    blocks: list[tuple[int, str | None]]
    parent: NotRequired[str]  # a sub-agent's draft: the call id whose card draws it


class DraftClearMsg(TypedDict):
    """Drop the whole draft (Abort discarded it)."""

    type: Literal["draft_clear"]
    parent: NotRequired[str]  # a sub-agent's draft: the call id whose card draws it


# ``from`` is a Python keyword: the functional form
ProgressUpdate = TypedDict(
    "ProgressUpdate",
    {
        "head": int,  # how many lines (from 0) the kernel keeps as the head
        "from": int,  # the first tail line it still keeps
        "total": int,  # lines printed so far
        "runs": list[tuple[int, list[str]]],  # [first line number, lines] not sent before
    },
)


class ProgressMsg(TypedDict):
    """New output lines of running tools, by call id."""

    type: Literal["progress"]
    tools: dict[str, ProgressUpdate]


# --------------------------------------------------------------------------- page -> kernel


class PageUser(TypedDict):
    """Who clicked, as the page knows them (JupyterLab's current user; "you" without one)."""

    name: str
    username: str


class ReadyMsg(TypedDict):
    """A view rendered: it can show prompts and needs the draft."""

    type: Literal["ready"]


class ApprovalMsg(TypedDict):
    type: Literal["approval"]
    prompt_id: str
    action: Literal["approved", "skipped", "edited", "always_allowed"]
    arguments: NotRequired[dict[str, Any]]  # for "edited"
    who: NotRequired[PageUser]  # the page's current user: a label, not a permission


class ResultMsg(TypedDict):
    type: Literal["result"]
    prompt_id: str
    action: Literal["delivered", "withheld", "result_edited"]
    content: NotRequired[str]  # for "result_edited"
    who: NotRequired[PageUser]  # the page's current user: a label, not a permission


class InquiryMsg(TypedDict):
    type: Literal["inquiry"]
    prompt_id: str
    answer: str
    who: NotRequired[PageUser]  # the page's current user: a label, not a permission


class InterruptMsg(TypedDict):
    """The interrupt prompt's answer."""

    type: Literal["interrupt"]
    prompt_id: str
    action: Literal["stop", "abort", "reply", "continue", "restart"]
    text: NotRequired[str]  # for "reply"
    who: NotRequired[PageUser]  # the page's current user: a label, not a permission


class BudgetMsg(TypedDict):
    """The budget pause's answer: go on past the limit (one more budget's worth), or stop."""

    type: Literal["budget"]
    prompt_id: str
    action: Literal["continue", "stop"]
    who: NotRequired[PageUser]  # the page's current user: a label, not a permission


class InterruptRequestMsg(TypedDict):
    """Interrupt the turn: ``action`` "stop" from the Stop button (one click stops, keeping
    what arrived); none from the options button or Esc (the kernel opens the interrupt menu)."""

    type: Literal["interrupt_request"]
    action: NotRequired[Literal["stop"]]
    who: NotRequired[PageUser]  # the page's current user: a label, not a permission


KernelMessage: TypeAlias = DeltaMsg | DraftMsg | ReleasedMsg | DraftClearMsg | ProgressMsg

KERNEL_TO_PAGE = (DeltaMsg, DraftMsg, ReleasedMsg, DraftClearMsg, ProgressMsg)
PAGE_TO_KERNEL = (
    ReadyMsg,
    ApprovalMsg,
    ResultMsg,
    InquiryMsg,
    InterruptMsg,
    BudgetMsg,
    InterruptRequestMsg,
)
