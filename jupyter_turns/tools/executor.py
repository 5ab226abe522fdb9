"""ToolExecutor: one tool call's lifecycle — check, decide, run, review — and its response.

Every path ends in exactly one ``tool_call_response``: bad arguments, an unknown tool, a skip, a
raise, a timeout are ``is_error`` responses the model reads, never exceptions for the user. Each
decision (approved, skipped, edited, always allowed, denied, delivered, withheld...) and who made
it (the user or a policy) is recorded on the response. Cancellation is the caller's: it cancels
the task running :meth:`ToolExecutor.run` and asks :meth:`cancelled_response` for the outcome.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import time
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from ..events import (
    ConversationEvent,
    Decision,
    InquiryRequest,
    InquiryResponse,
    ToolCallRequest,
    ToolCallResponse,
    ToolStatus,
    new_id,
)
from ..interrupt import CancelToken
from ..loops import call_soon_on
from ..prompter import ApprovalRequest, InquiryPrompt, Prompter, ResultReview
from ..sink import NullSink, Sink, ToolState, ToolUpdate
from .capture import capturing
from .context import ToolContext
from .output import ToolOutput
from .registry import RunMode, Tool, ToolArgumentError

__all__ = ["ExecutionSettings", "ToolExecutor", "describe_exception", "format_result"]

_NOTHING = object()


@dataclass
class ExecutionSettings:
    """Thread-level settings every executor of a turn shares (``allowed`` is mutated)."""

    default_run: RunMode | Literal["deny"] = "ask"  # deny: tools without their own mode never run
    allowed: set[str] = field(default_factory=set)  # "always allow" decisions of this thread
    max_result_chars: int = 100_000
    cancel_grace: float = 2.0  # seconds a cancelled tool gets to finish before it is abandoned
    clock: Callable[[], float] = time.time


@dataclass
class _Outcome:
    content: str
    is_error: bool
    status: ToolStatus


class ToolExecutor:
    def __init__(
        self,
        request: ToolCallRequest,
        tool: Tool | None,
        *,
        prompter: Prompter,
        sink: Sink,
        record: Callable[[ConversationEvent], None],
        settings: ExecutionSettings,
    ) -> None:
        self.request = request
        self.tool = tool
        self.prompter = prompter
        self.sink = sink
        self.record = record
        self.settings = settings
        self.decisions: list[Decision] = []
        self.token = CancelToken()
        self.arguments: dict[str, Any] | None = None  # approved, validated arguments
        self.state: ToolState = "waiting"
        self.started_at: float | None = None
        self._edit_note = ""
        self._restart: asyncio.Event | None = None
        self.abandoned = False  # a cancelled attempt outlived the grace period
        self._loop: asyncio.AbstractEventLoop | None = None
        self.output = ToolOutput()  # what the tool printed or reported, bounded
        self._report_lock = threading.Lock()
        self._report_pending = False

    @property
    def name(self) -> str:
        return self.request.name

    # ------------------------------------------------------------------ the lifecycle

    async def run(self, gate: Callable[[], Awaitable[None]] | None = None) -> ToolCallResponse:
        """Check, decide, wait for ``gate`` (the scheduling turn), run, review."""
        rejected = self._check()
        if rejected is not None:
            return self._respond(rejected)
        decided = await self._decide()
        if decided is not None:
            return self._respond(decided)
        if gate is not None:
            await gate()
        return await self.execute()

    async def execute(self) -> ToolCallResponse:
        """Run with the approved arguments and review the result.

        :meth:`restart` cancels the running attempt and starts it again; a cancelled caller
        gives the tool up to ``cancel_grace`` seconds to finish its cleanup, then abandons it.
        """
        assert self.tool is not None and self.arguments is not None
        while True:
            self.token = CancelToken()
            self.started_at = self.settings.clock()
            self._status("running")
            self._restart = asyncio.Event()
            self._loop = asyncio.get_running_loop()
            with capturing(self._printed):  # the attempt's task inherits the capture
                attempt = asyncio.create_task(self._invoke(self.tool, dict(self.arguments)))
            restart = asyncio.create_task(self._restart.wait())
            try:
                await asyncio.wait({attempt, restart}, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                await self._cancel_attempt(attempt, restart, self.token.reason or "cancelled")
                raise
            if attempt.done():
                restart.cancel()
                outcome = attempt.result()
                self.output.finish()
                break
            await self._cancel_attempt(attempt, restart, "restarted")
            self.decisions.append(Decision(action="restarted", by="user"))
        if outcome.status == "done":
            outcome = await self._review(outcome)
        if self._edit_note:
            outcome.content = f"{self._edit_note}\n{outcome.content}"
        return self._respond(outcome)

    def restart(self) -> bool:
        """Cancel the running attempt and run again with the same arguments."""
        if self.state != "running" or self._restart is None:
            return False
        self._restart.set()
        return True

    def detach(self) -> None:
        """Stop reporting: the call was answered without waiting for this executor to end."""
        self.sink = NullSink()
        self.record = lambda event: None

    async def _cancel_attempt(
        self, attempt: asyncio.Task[_Outcome], restart: asyncio.Task[Any], reason: str
    ) -> None:
        self.token.cancel(reason)
        restart.cancel()
        attempt.cancel()
        await asyncio.wait({attempt}, timeout=self.settings.cancel_grace)
        self.abandoned = not attempt.done()

    def cancelled_response(self, reason: str = "cancelled by user") -> ToolCallResponse:
        """The response for a call whose task was cancelled (Stop), whatever phase it was in."""
        self.token.cancel(reason)
        self.decisions.append(Decision(action="cancelled", by="user", detail=reason))
        ran = " after it started" if self.started_at is not None else " before it ran"
        return self._respond(_Outcome(f"Tool call {reason}{ran}.", True, "cancelled"))

    def failed_response(self, text: str) -> ToolCallResponse:
        return self._respond(_Outcome(text, True, "error"))

    # ------------------------------------------------------------------ phases

    def _check(self) -> _Outcome | None:
        request, tool = self.request, self.tool
        if tool is None:
            return _Outcome(f"Unknown tool {request.name!r}.", True, "error")
        if "parse_error" in request.metadata:
            raw = str(request.metadata.get("raw_arguments") or "")[:2000]
            return _Outcome(
                f"Could not parse the arguments for {tool.name} as a JSON object "
                f"({request.metadata['parse_error']}). Received: {raw!r}",
                True,
                "error",
            )
        try:
            self.arguments = tool.validate(request.arguments)
        except ToolArgumentError as exc:
            return _Outcome(str(exc), True, "error")
        return None

    async def _decide(self) -> _Outcome | None:
        assert self.tool is not None
        tool, settings = self.tool, self.settings
        mode = tool.run or settings.default_run
        if mode == "deny":
            self.decisions.append(Decision(action="denied", by="policy", detail="tools disabled"))
            return _Outcome("Not run: tool use is disabled in this thread.", True, "skipped")
        if mode == "skip":
            self.decisions.append(Decision(action="skipped", by="policy", detail="run mode skip"))
            return _Outcome(f"Not run: {tool.name} is set to skip.", True, "skipped")
        if mode == "unattended" and not tool.always_ask:
            self.decisions.append(Decision(action="approved", by="policy", detail="unattended"))
            return None
        if tool.name in settings.allowed:
            self.decisions.append(
                Decision(action="approved", by="policy", detail="always allowed in this thread")
            )
            return None
        error: str | None = None
        while True:
            self._status("waiting")
            approval = await self.prompter.approve(
                ApprovalRequest(
                    call_id=self.request.call_id,
                    name=tool.name,
                    arguments=dict(self.request.arguments),
                    schema=tool.schema,
                    description=tool.description,
                    edit_first=mode == "edit",
                    error=error,
                    always_ask=tool.always_ask,
                )
            )
            if tool.always_ask and approval.by == "policy" and approval.action != "skip":
                reason = f"not run: {tool.name} runs only when a person approves the call"
                self.decisions.append(Decision(action="denied", by="policy", detail=reason))
                return _Outcome(reason[0].upper() + reason[1:] + ".", True, "skipped")
            if approval.action == "approve":
                self.decisions.append(Decision(action="approved", by=approval.by))
                return None
            if approval.action == "always_allow":
                settings.allowed.add(tool.name)
                self.decisions.append(Decision(action="always_allowed", by=approval.by))
                return None
            if approval.action == "skip":
                reason = approval.reason or "the user skipped this tool call"
                action = "skipped" if approval.by == "user" else "denied"
                self.decisions.append(Decision(action=action, by=approval.by, detail=reason))
                text = reason if reason.startswith("not run") else f"not run: {reason}"
                return _Outcome(text[0].upper() + text[1:] + ".", True, "skipped")
            try:
                self.arguments = tool.validate(approval.arguments)
            except ToolArgumentError as exc:
                error = str(exc)
                continue
            edited = json.dumps(approval.arguments, ensure_ascii=False, default=repr)
            self.decisions.append(Decision(action="edited", by=approval.by, detail=edited))
            self._edit_note = f"(The user changed the arguments before running: {edited})"
            return None

    async def _invoke(self, tool: Tool, kwargs: dict[str, Any]) -> _Outcome:
        if tool.context_param:
            kwargs[tool.context_param] = ToolContext(
                self.request.call_id, tool.name, self.token, self._ask, self._progress
            )
        try:
            async with asyncio.timeout(tool.timeout):
                value = await self._call(tool, kwargs)
        except TimeoutError:
            self.token.cancel("timed out")
            self.decisions.append(
                Decision(action="timed_out", by="policy", detail=f"{tool.timeout} s")
            )
            return _Outcome(f"Timed out after {tool.timeout:g} s.", True, "timeout")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return _Outcome(describe_exception(exc), True, "error")
        return _Outcome(format_result(value, self.settings.max_result_chars), False, "done")

    async def _call(self, tool: Tool, kwargs: dict[str, Any]) -> Any:
        if tool.flavor == "async":
            return await tool.fn(**kwargs)
        if tool.flavor == "asyncgen":
            last: Any = _NOTHING
            async for item in tool.fn(**kwargs):
                last = item
                self._progress(item if isinstance(item, str) else format_result(item, 2000))
            return None if last is _NOTHING else last
        return await asyncio.to_thread(tool.fn, **kwargs)

    async def _review(self, outcome: _Outcome) -> _Outcome:
        assert self.tool is not None
        mode = self.tool.result
        if mode == "deliver":
            return outcome
        if mode == "skip":
            self.decisions.append(Decision(action="withheld", by="policy", detail="result skip"))
            text = "The result was not shared (the tool withholds results)."
            return _Outcome(text, False, "done")
        decision = await self.prompter.review_result(
            ResultReview(
                self.request.call_id,
                self.tool.name,
                outcome.content,
                outcome.is_error,
                edit_first=mode == "edit",
            )
        )
        if decision.action == "deliver":
            self.decisions.append(Decision(action="delivered", by=decision.by))
            return outcome
        if decision.action == "edit" and decision.content is not None:
            self.decisions.append(Decision(action="result_edited", by=decision.by))
            return _Outcome(decision.content, outcome.is_error, outcome.status)
        self.decisions.append(Decision(action="withheld", by=decision.by, detail=decision.reason))
        if decision.by == "policy":
            reason = decision.reason or "withheld by policy"
            return _Outcome(f"The result was not shared: {reason}.", False, "done")
        return _Outcome("The user chose not to share this tool's result.", False, "done")

    # ------------------------------------------------------------------ helpers

    async def _ask(self, question: str, choices: Sequence[str] | None) -> str | None:
        inquiry_id = new_id()
        choice_list = [str(c) for c in choices] if choices else None
        self.record(
            InquiryRequest(
                inquiry_id=inquiry_id,
                call_id=self.request.call_id,
                question=question,
                choices=choice_list,
            )
        )
        answer = await self.prompter.inquire(
            InquiryPrompt(
                self.request.call_id,
                inquiry_id,
                question,
                tuple(choice_list) if choice_list else None,
            )
        )
        self.record(
            InquiryResponse(
                inquiry_id=inquiry_id,
                call_id=self.request.call_id,
                answer=answer.answer,
                by=answer.by,
            )
        )
        return answer.answer

    def _printed(self, stream: str, text: str) -> None:
        """What the tool printed (from any thread): finished lines are reported, coalesced."""
        if self.output.write(stream, text):
            self._report_soon()

    def _progress(self, text: str) -> None:
        """``ctx.progress()`` or an async generator's ``yield`` (from any thread)."""
        self.output.line(text)
        self._report_soon()

    def _report_soon(self) -> None:
        """One output report per turn of the loop, however many lines arrived meanwhile."""
        with self._report_lock:
            if self._report_pending:
                return
            self._report_pending = True
        if not call_soon_on(self._loop, self._report):
            with self._report_lock:
                self._report_pending = False

    def _report(self) -> None:
        with self._report_lock:
            self._report_pending = False
        self._update(self.state)

    def _status(self, state: ToolState) -> None:
        self.state = state
        self._update(state, self.settings.clock() if state not in ("waiting", "running") else None)

    def _update(self, state: ToolState, ended: float | None = None) -> None:
        output = self.output.snapshot()
        call_id, started = self.request.call_id, self.started_at
        self.sink.update(ToolUpdate(call_id, self.name, state, started, ended, output))

    def _respond(self, outcome: _Outcome) -> ToolCallResponse:
        ended = self.settings.clock()
        self._status(outcome.status)
        elapsed = None if self.started_at is None else round(ended - self.started_at, 3)
        return ToolCallResponse(
            call_id=self.request.call_id,
            content=outcome.content,
            is_error=outcome.is_error,
            status=outcome.status,
            decisions=list(self.decisions),
            elapsed=elapsed,
        )


def format_result(value: Any, max_chars: int) -> str:
    """A tool's return value as text for the model, truncated with a note past ``max_chars``."""
    if value is None:
        text = "(no output)"
    elif isinstance(value, str):
        text = value
    elif isinstance(value, bytes | bytearray):
        text = f"<{len(value)} bytes of binary data>"
    elif isinstance(value, BaseModel):
        text = value.model_dump_json()
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        text = json.dumps(dataclasses.asdict(value), ensure_ascii=False, default=repr)
    elif isinstance(value, dict | list | tuple | int | float | bool):
        try:
            text = json.dumps(value, ensure_ascii=False, default=repr)
        except (TypeError, ValueError):
            text = repr(value)
    else:
        text = repr(value)
    if len(text) > max_chars:
        head = text[:max_chars]
        text = f"{head}\n[output truncated: showing {max_chars:,} of {len(text):,} characters]"
    return text or "(empty output)"


def describe_exception(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {frames[-1].name}, line {frames[-1].lineno})" if frames else ""
    return f"The tool raised {type(exc).__name__}: {exc}{where}"
