"""ToolCoordinator: runs the tool calls of one response and answers them in request order.

All executors start at once, so approval prompts surface as soon as they arise, in any order.
Runs are parallel by default; with ``sequential=True`` each call runs after the previous one
ends, and a tool declared ``sequential`` runs alone after every earlier call of the response.
Stop cancels every unfinished call (each answers "cancelled by user"); a tool that ignores
cancellation is abandoned after the grace period instead of holding the turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence

from ..model.events import ConversationEvent, ToolCallRequest, ToolCallResponse, Who
from ..model.interrupt import (
    InterruptAction,
    InterruptChannel,
    InterruptChoice,
    InterruptContext,
    done_before_interrupt,
)
from ..model.prompter import Prompter
from ..model.sink import Sink
from .executor import ExecutionSettings, ToolExecutor
from .registry import Tool
from .results import describe_exception

__all__ = ["ToolCoordinator"]


class ToolCoordinator:
    def __init__(
        self,
        requests: Sequence[ToolCallRequest],
        tools: Mapping[str, Tool],
        *,
        prompter: Prompter,
        sink: Sink,
        record: Callable[[ConversationEvent], None],
        settings: ExecutionSettings,
        sequential: bool = False,
    ) -> None:
        self.requests = list(requests)
        self.settings = settings
        self.executors = [
            ToolExecutor(
                request,
                tools.get(request.name),
                prompter=prompter,
                sink=sink,
                record=record,
                settings=settings,
            )
            for request in self.requests
        ]
        self._sequential = sequential
        self._ended = [asyncio.Event() for _ in self.requests]
        self._tasks: list[asyncio.Task[ToolCallResponse]] = []
        self._answers: dict[str, ToolCallResponse] = {}

    async def run(self) -> list[ToolCallResponse]:
        """Run every call to its end; the responses in request order."""
        self._tasks = [
            asyncio.create_task(self._lifecycle(i, executor), name=f"tool:{executor.name}")
            for i, executor in enumerate(self.executors)
        ]
        await asyncio.wait(self._tasks)
        return self._responses()

    async def run_interruptible(
        self,
        interrupts: InterruptChannel,
        menu: Callable[[InterruptContext], Awaitable[InterruptChoice]],
        paused: Callable[[bool], None],
    ) -> tuple[list[ToolCallResponse], InterruptChoice | None]:
        """Run every call, answering interrupts; the responses and the Stop that ended them
        (None: they ran to their end).

        Stop cancels the unfinished calls, Restart runs the running ones again, Continue waits
        on. ``paused(True)`` as the tool menu opens, ``paused(False)`` as the calls go on.
        """
        task = asyncio.create_task(self.run(), name="jupyter_turns:tools")
        try:
            while not await done_before_interrupt(task, interrupts):
                paused(True)
                choice = await menu(InterruptContext("tool"))
                if choice.action is InterruptAction.STOP:
                    return await self.stop(who=choice.who), choice
                if choice.action is InterruptAction.RESTART:
                    self.restart()
                paused(False)
            return task.result(), None
        except asyncio.CancelledError:
            await self.stop("cancelled: the cell was interrupted")
            raise
        finally:
            task.cancel()

    async def stop(
        self, reason: str = "cancelled by user", *, who: Who | None = None
    ) -> list[ToolCallResponse]:
        """Cancel every unfinished call; the responses in request order, within the grace
        (``who``: the person whose Stop it was, saved with each "cancelled" decision)."""
        pending = [task for task in self._tasks if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=self.settings.cancel_grace * 1.1 + 0.05)
        grace = self.settings.cancel_grace
        for executor, task in zip(self.executors, self._tasks, strict=True):
            call_id = executor.request.call_id
            if call_id in self._answers:
                continue
            abandoned = not task.done() or executor.abandoned
            text = reason
            if abandoned:
                text = f"{reason} (it did not stop within {grace:g} s and was abandoned)"
            self._answers[call_id] = executor.cancelled_response(text, who=who)
            if abandoned:
                executor.detach()  # it may still report progress; nobody listens any more
        return self._responses()

    def redacted(self) -> dict[str, int]:
        """Secrets withheld from the responses, by tool name (only tools that had some)."""
        counts: dict[str, int] = {}
        for executor in self.executors:
            if executor.redacted:
                counts[executor.name] = counts.get(executor.name, 0) + executor.redacted
        return counts

    def restart(self) -> int:
        """Restart every running call; how many were restarted."""
        return sum(executor.restart() for executor in self.executors)

    def _responses(self) -> list[ToolCallResponse]:
        return [self._answers[request.call_id] for request in self.requests]

    async def _lifecycle(self, i: int, executor: ToolExecutor) -> ToolCallResponse:
        try:
            response = await executor.run(lambda: self._gate(i))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in a prompter or executor must not lose the turn
            text = describe_exception(exc).content
            response = executor.failed_response(f"internal error: {text}")
        finally:
            self._ended[i].set()
        self._answers[executor.request.call_id] = response
        return response

    async def _gate(self, i: int) -> None:
        """Wait for the calls that must end before call ``i`` may run."""
        if self._sequential:
            before = [i - 1] if i else []
        elif self._is_sequential(i):
            before = list(range(i))
        else:
            before = [j for j in range(i) if self._is_sequential(j)]
        for j in before:
            await self._ended[j].wait()

    def _is_sequential(self, j: int) -> bool:
        tool = self.executors[j].tool
        return tool is not None and tool.sequential
