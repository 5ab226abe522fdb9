"""ServeSession: a terminal agent's calls, run on the kernel's loop like a turn's tool calls.

A serve session is a long "turn" whose tool calls come from an MCP client instead of a model:
each call is a ``tool_call_request`` and ends in one ``tool_call_response``, made by the same
:class:`~jupyter_turns.tools.executor.ToolExecutor` as in a ``%%chat`` turn, with the same
tools, the same rules (a read never asks; a cell change, a run and ``python`` always ask; a
cell changed since it was read is refused with its current text; every result redacted), the
same sink (the serve cell's widget shows each card) and the same prompter (its buttons), whose
prompts name the client ("Claude Code · call 7"). A user's Skip becomes an error the agent can
read ("the user declined ..."); where nobody can click (no page, a headless kernel) the call is
declined, saying why. Each change a call makes to a cell carries the client's name and the call
number in its provenance stamp; every step goes to the kernel's undo log.

Everything here runs on the kernel's loop; :meth:`ServeSession.status`, :meth:`interrupt`,
:meth:`connected` and :meth:`busy` are also called from the server's thread and touch only what
is safe there.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import os
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..model.budget import BudgetAnswer, BudgetPrompt
from ..model.conversation import Conversation
from ..model.events import ConversationEvent, Part, ToolCallRequest, ToolCallResponse, Who
from ..model.interrupt import InterruptChoice, InterruptContext
from ..model.prompter import (
    Approval,
    ApprovalRequest,
    InquiryAnswer,
    InquiryPrompt,
    Prompter,
    ResultDecision,
    ResultReview,
)
from ..model.provenance import TurnOrigin
from ..model.sink import Appended, Sink, ToolUpdate, Update
from ..tools.executor import ExecutionSettings, ToolExecutor
from ..tools.registry import Tool

__all__ = ["BEHIND_A_CELL", "DECLINED", "Incoming", "ServeSession", "calling_cell", "runs_code"]

DECLINED = "the user declined the call in the notebook"
# A call not begun on the kernel's loop yet: a cell runs there (the loop takes the call once
# the cell ends, as it would take a queued cell)
BEHIND_A_CELL = "waiting for the cell that is running in the kernel to finish"
THREAD = "serve"  # the record's thread name (a serve record is never restored as a thread)

# The cell a running call belongs to (the serve cell), set in each call's task: the notebook
# tools read it as a turn's tools read its chat cell (cells go in below it, it is not edited),
# whatever cell the user ran last
_calling_cell: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "jupyter_turns_serve_cell", default=None
)


def calling_cell() -> str | None:
    """The serve cell, inside a served call's task; None elsewhere."""
    return _calling_cell.get()


class _CallPrompter:
    """The session's prompter for one call: its prompts name the client and the call, and a
    person's Skip tells the agent that the user declined."""

    def __init__(self, base: Prompter, asker: str) -> None:
        self._base = base
        self._asker = asker

    async def approve(self, request: ApprovalRequest) -> Approval:
        answer = await self._base.approve(dataclasses.replace(request, asker=self._asker))
        if answer.action == "skipped" and answer.by == "user":
            return dataclasses.replace(answer, reason=DECLINED)
        return answer

    async def review_result(self, review: ResultReview) -> ResultDecision:
        return await self._base.review_result(review)

    async def inquire(self, inquiry: InquiryPrompt) -> InquiryAnswer:
        return await self._base.inquire(inquiry)

    async def interrupt_menu(self, context: InterruptContext) -> InterruptChoice:
        return await self._base.interrupt_menu(context)

    async def budget(self, prompt: BudgetPrompt) -> BudgetAnswer:
        return await self._base.budget(prompt)


@dataclass(frozen=True)
class Incoming:
    """One ``tools/call`` as it reaches the kernel: its id there, the tool, the arguments and
    the client that asked (named from its ``clientInfo``)."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    client: str


_CODE_TOOLS = ("run_cell", "python")  # and insert_cell / edit_cell with run=True


def runs_code(request: ToolCallRequest) -> bool:
    """Whether the call runs code on the kernel's main thread (blocking its loop meanwhile)."""
    return request.name in _CODE_TOOLS or (
        request.name in ("insert_cell", "edit_cell") and request.arguments.get("run") is True
    )


class _Watching:
    """The session's sink, noting when a call's code starts and ends on the main thread (a
    client's cancel then interrupts it)."""

    def __init__(self, sink: Sink, session: ServeSession, request: ToolCallRequest) -> None:
        self._sink = sink
        self._session = session
        self._request = request if runs_code(request) else None

    def part(self, part: Part) -> None:
        self._sink.part(part)

    def update(self, update: Update) -> None:
        if isinstance(update, ToolUpdate):
            running = update.status == "running"
            self._session.note(update.call_id, "running" if running else update.status)
            if self._request is not None:
                self._session.running_code(self._request.call_id if running else None)
        self._sink.update(update)


class _Log(Conversation):
    """The session's calls in the order they happened, unchecked (a client's calls may
    overlap; nothing here is sent to a model); whatever joins it is shown and saved (an undo
    of a call joins it too: the kernel's Session lists it among its conversations)."""

    def __init__(
        self,
        events: Sequence[ConversationEvent],
        conversation_id: str,
        on_event: Callable[[ConversationEvent], None],
    ) -> None:
        self._on_event: Callable[[ConversationEvent], None] | None = None  # not the earlier
        super().__init__(events, conversation_id=conversation_id, checked=False)
        self._on_event = on_event

    def append(self, event: ConversationEvent) -> None:
        super().append(event)
        if self._on_event is not None:
            self._on_event(event)


@dataclass
class _Open:
    """A call in progress: its executor, the task running it, and who stopped it (the page's
    ■ Stop: the agent is answered; a client's cancel: nobody listens for the answer)."""

    executor: ToolExecutor
    task: asyncio.Task[Any] | None
    stopped_by: Who | None = None
    stopped: bool = False


@dataclass
class ServeSession:
    """The kernel's side of ``%chat serve``: the tools offered, the calls made, the record."""

    tools: Sequence[Tool]
    conversation_id: str
    prompter: Prompter
    sink: Sink
    settings: ExecutionSettings = field(default_factory=ExecutionSettings)
    on_change: Callable[[], None] = lambda: None  # the record has new events: save it
    cell_running: Callable[[], bool] = lambda: False  # the kernel runs a cell now (any thread)
    cell_id: str | None = None  # the serve cell
    earlier: Sequence[ConversationEvent] = ()  # the record this session continues
    calls: int = 0
    clients: dict[str, int] = field(default_factory=dict)  # name -> calls made
    _open: dict[str, _Open] = field(default_factory=dict)
    _status: dict[str, str] = field(default_factory=dict)  # read from the server's thread
    _running_code: str | None = None  # the call whose code runs on the main thread now
    _code_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._by_name = {tool.name: tool for tool in self.tools}
        self.log = _Log(self.earlier, self.conversation_id, self._show)
        self.calls = max(self.calls, self._numbered())

    @property
    def events(self) -> Sequence[ConversationEvent]:
        return self.log.events

    def _numbered(self) -> int:
        """The last call number the earlier record gave (a restarted session goes on)."""
        numbers = [e.metadata.get("call") for e in self.earlier if isinstance(e, ToolCallRequest)]
        return max((n for n in numbers if isinstance(n, int)), default=0)

    # ------------------------------------------------------------------ from the server

    async def call(self, incoming: Incoming) -> ToolCallResponse:
        """Run one client call to its one response (cancelled: the response says so)."""
        _calling_cell.set(self.cell_id)  # this task's own context (run_coroutine_threadsafe)
        self.calls += 1
        number = self.calls
        self.clients[incoming.client] = self.clients.get(incoming.client, 0) + 1
        request = ToolCallRequest(
            call_id=incoming.call_id,
            name=incoming.name,
            arguments=incoming.arguments,
            metadata={"client": incoming.client, "call": number},
        )
        self._record(request)
        origin = TurnOrigin(
            thread=THREAD,
            conversation_id=self.conversation_id,
            turn=1,
            model=None,
            client=incoming.client,
            call=number,
        )
        executor = ToolExecutor(
            request,
            self._by_name.get(incoming.name),
            prompter=_CallPrompter(self.prompter, f"{incoming.client} · call {number}"),
            sink=_Watching(self.sink, self, request),
            record=self._record,
            settings=dataclasses.replace(self.settings, origin=origin),
        )
        opened = self._open[incoming.call_id] = _Open(executor, asyncio.current_task())
        self._status[incoming.call_id] = "starting"
        try:
            response = await executor.run()
        except asyncio.CancelledError:
            stopped = opened.stopped and executor.token.reason
            reason = stopped or f"cancelled by {incoming.client}"
            response = executor.cancelled_response(reason, who=opened.stopped_by)
            self._record(response)
            if not opened.stopped:
                raise
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            return response  # the page stopped it: the agent reads why
        finally:
            del self._open[incoming.call_id]
            self._status.pop(incoming.call_id, None)
        self._record(response)
        return response

    def status(self, call_id: str) -> str:
        """What the call does now, in a few words (read from the server's thread)."""
        return self._status.get(call_id, BEHIND_A_CELL)

    def note(self, call_id: str, status: str) -> None:
        """What the call does now, for the progress notifications the client gets."""
        if call_id in self._open:
            waiting = "waiting for the user's approval in the notebook"
            self._status[call_id] = waiting if status == "waiting" else status

    def connected(self, client: str) -> None:
        self.clients.setdefault(client, 0)

    def busy(self) -> bool:
        """Whether a cell runs in the kernel now, which a call would wait behind."""
        return self.cell_running()

    def interrupt(self, call_id: str) -> None:
        """The client cancelled ``call_id``: if its code runs on the main thread now (the
        kernel's loop waits for it), interrupt it as the kernel's ■ does; its task is
        cancelled besides (by the server, once the loop runs)."""
        with self._code_lock:
            if self._running_code == call_id:
                os.kill(os.getpid(), signal.SIGINT)

    # ------------------------------------------------------------------ from the page

    def stop(self, who: Who | None = None) -> int:
        """■ Stop: every open call ends, declined if it waits for a click, cancelled if it
        runs; the agent reads which. How many calls were open."""
        opened = list(self._open.values())
        for call in opened:
            waiting = call.executor.state == "waiting"
            call.executor.token.cancel(
                "declined by the user in the notebook"
                if waiting
                else "stopped by the user in the notebook"
            )
            call.stopped, call.stopped_by = True, who
            if call.task is not None:
                call.task.cancel()
        return len(opened)

    # ------------------------------------------------------------------ the record

    def _record(self, event: ConversationEvent) -> None:
        self.log.append(event)

    def _show(self, event: ConversationEvent) -> None:
        """Every event the log gains (a call, its response, an undo): shown, then saved."""
        self.sink.update(Appended((event,)))
        self.on_change()

    def running_code(self, call_id: str | None) -> None:
        """The code of ``call_id`` starts (None: it ended) on the main thread."""
        with self._code_lock:
            self._running_code = call_id

    def summary(self) -> dict[str, Any]:
        """What the record says of the session besides its events."""
        return {"calls": self.calls, "clients": sorted(self.clients)}
