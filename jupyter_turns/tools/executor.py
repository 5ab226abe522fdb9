"""ToolExecutor: one tool call's lifecycle — check, decide, run, review — and its response.

Every path ends in exactly one ``tool_call_response``: bad arguments, an unknown tool, a skip, a
raise, a timeout are ``is_error`` responses the model reads, never exceptions for the user. Each
decision (approved, skipped, edited, always allowed, denied, delivered, withheld...) and who made
it (the user or a policy) is recorded on the response (see :mod:`.policy`). Cancellation is the
caller's: it cancels the task running :meth:`ToolExecutor.run` and asks
:meth:`ToolExecutor.cancelled_response` for the outcome. In a replay each call is checked and
decided like any call (nothing in a recording approves anything) and each result is compared
with the recorded one; with ``--replay-tools saved`` a call that passes the check (a tool
offered this turn, valid arguments) is answered with the recorded result, labelled
"recorded, not run" (a policy skip: nothing runs, so nothing needs approving), and a call of an
unknown tool is refused as in a live turn, never answered from the recording.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..model.events import (
    ConversationEvent,
    Decision,
    InquiryRequest,
    InquiryResponse,
    ToolCallRequest,
    ToolCallResponse,
    Who,
    new_id,
    now_iso,
)
from ..model.interrupt import CancelToken
from ..model.prompter import InquiryPrompt, Prompter
from ..model.provenance import TurnOrigin
from ..model.sink import NullSink, Sink, ToolState, ToolUpdate
from ..providers.base import Provider
from ..redaction import head, redact, redact_data, withheld
from .capture import LiveOutput, capturing
from .context import Nest, ToolContext
from .invoke import invoke
from .policy import Run, decide_run, review_result
from .registry import EditsMode, RunMode, Tool, ToolArgumentError
from .results import (
    NotRun,
    Outcome,
    ResponseFields,
    ToolFailed,
    ToolResult,
    describe_exception,
    result_content,
)

__all__ = ["ExecutionSettings", "SavedResults", "ToolExecutor"]

RECORDED = "recorded, not run"  # --replay-tools saved: the detail of the call's decision


class SavedResults(Protocol):
    """A replayed turn's saved tool calls, as its tools use them. Declared here so the executor
    does not depend on the replay that builds them (``record.replay_rebuild.SavedCalls`` is
    the one implementation)."""

    @property
    def responses(self) -> Mapping[str, ToolCallResponse]:
        """The saved response of each call, nested calls' too, by call id (ids are unique)."""
        ...

    @property
    def saved_only(self) -> bool:
        """``--replay-tools saved``: answer with the saved results, run nothing."""
        ...

    def nested_events(self, call_id: str) -> Sequence[ConversationEvent]:
        """Sub-agent call ``call_id``'s saved nested turn, as it ran."""
        ...

    def nested(self, call_id: str) -> Provider:
        """A provider that plays sub-agent call ``call_id``'s saved nested turn (its own
        sub-agent calls see these same saved results)."""
        ...


@dataclass
class ExecutionSettings:
    """Thread-level settings every executor of a turn shares (``allowed`` is mutated)."""

    default_run: RunMode = "ask"  # deny: tools without their own mode never run
    edits: EditsMode = "ask"  # review: reviewable cell changes are made without asking
    allowed: set[str] = field(default_factory=set)  # "always allow" decisions of this thread
    max_result_chars: int = 100_000
    cancel_grace: float = 2.0  # seconds a cancelled tool gets to finish before it is abandoned
    provider: Any = None  # the thread's provider, for sub-agents that name none (Chat.send)
    replay: SavedResults | None = None  # a replayed turn's saved tool calls
    clock: Callable[[], float] = time.time
    # how a sub-agent's nested chat is made: the Chat class running this thread sets itself
    # (engine/subagent.py runs a turn of it; the tools layer does not import the engine)
    new_chat: Callable[..., Any] | None = None
    origin: TurnOrigin | None = None  # the running turn: what its cell tools stamp on cells


def _recorded() -> Decision:
    """The decision of a call answered from the recording: not run, by policy (there is no
    approval to show: nobody approved anything)."""
    return Decision(action="skipped", by="policy", detail=RECORDED)


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
        self.preview: dict[str, Any] | None = None  # shown with the approval, then saved
        self.token = CancelToken()
        self.state: ToolState = "waiting"
        self.started_at: float | None = None
        self._run: Run | None = None  # what the policy decided to run
        self._restart: asyncio.Event | None = None
        self.abandoned = False  # a cancelled attempt outlived the grace period
        self.fields = ResponseFields()  # ``ctx.fields``: saved on the response however it ends
        self.live = LiveOutput(lambda: self._update(self.state))
        self.redacted = 0  # secrets taken out of the text the model reads (see _redact)

    @property
    def name(self) -> str:
        return self.request.name

    # ------------------------------------------------------------------ the lifecycle

    async def run(self, gate: Callable[[], Awaitable[None]] | None = None) -> ToolCallResponse:
        """Check, decide, wait for ``gate`` (the scheduling turn), run, review."""
        checked = self._check()  # first: a recording cannot answer a call of an unknown tool
        if isinstance(checked, Outcome):
            return self._respond(checked)
        saved = self._saved()
        if saved is not None and self.settings.replay and self.settings.replay.saved_only:
            return self._replayed(saved)
        tool, settings = checked
        if tool.preview is not None:
            # what it would change must be read after the calls before it changed things
            if gate is not None:
                await gate()
                gate = None
            try:
                self.preview = await tool.preview(settings)
            except NotRun as refused:
                detail = refused.reason
                self.decisions.append(Decision(action="denied", by="policy", detail=detail))
                return self._respond(Outcome(refused.message, True, "skipped"))
        decided = await decide_run(
            tool,
            self.request,
            settings,
            default_run=self.settings.default_run,
            allowed=self.settings.allowed,
            prompter=self.prompter,
            decisions=self.decisions,
            waiting=lambda: self._status("waiting"),
            preview=self.preview,
            edits=self.settings.edits,
        )
        if isinstance(decided, Outcome):
            return self._respond(decided)
        self._run = decided
        if gate is not None:
            await gate()
        return await self.execute()

    async def execute(self) -> ToolCallResponse:
        """Run with the approved arguments and review the result.

        :meth:`restart` cancels the running attempt and starts it again; a cancelled caller
        gives the tool up to ``cancel_grace`` seconds to finish its cleanup, then abandons it.
        """
        tool, run = self.tool, self._run
        assert tool is not None and run is not None
        while True:
            self.token = CancelToken()
            self.started_at = self.settings.clock()
            self._status("running")
            self._restart = asyncio.Event()
            self.live.bind(asyncio.get_running_loop())
            with capturing(self.live.printed):  # the attempt's task inherits the capture
                attempt = asyncio.create_task(self._attempt(tool, dict(run.arguments)))
            restart = asyncio.create_task(self._restart.wait())
            try:
                await asyncio.wait({attempt, restart}, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                await self._cancel_attempt(attempt, restart, self.token.reason or "cancelled")
                raise
            if attempt.done():
                restart.cancel()
                outcome = attempt.result()
                self.live.output.finish()
                break
            await self._cancel_attempt(attempt, restart, "restarted")
            self.decisions.append(Decision(action="restarted", by="user"))
        if outcome.status == "done":
            outcome = await review_result(
                tool,
                self.request.call_id,
                outcome,
                prompter=self.prompter,
                decisions=self.decisions,
            )
        if run.note:
            outcome.content = f"{run.note}\n{outcome.content}"
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
        self, attempt: asyncio.Task[Outcome], restart: asyncio.Task[Any], reason: str
    ) -> None:
        self.token.cancel(reason)
        restart.cancel()
        attempt.cancel()
        await asyncio.wait({attempt}, timeout=self.settings.cancel_grace)
        self.abandoned = not attempt.done()

    def cancelled_response(
        self, reason: str = "cancelled by user", *, who: Who | None = None
    ) -> ToolCallResponse:
        """The response for a call whose task was cancelled (Stop), whatever phase it was in."""
        self.token.cancel(reason)
        self.decisions.append(Decision(action="cancelled", by="user", detail=reason, who=who))
        ran = " after it started" if self.started_at is not None else " before it ran"
        return self._respond(Outcome(f"Tool call {reason}{ran}.", True, "cancelled"))

    def failed_response(self, text: str) -> ToolCallResponse:
        return self._respond(Outcome(text, True, "error"))

    # ------------------------------------------------------------------ phases

    def _check(self) -> tuple[Tool, dict[str, Any]] | Outcome:
        """The tool and the validated arguments, or the error response for a call that cannot
        run (unknown tool, arguments that are not JSON or fail the tool's schema)."""
        request, tool = self.request, self.tool
        if tool is None:
            return Outcome(f"Unknown tool {request.name!r}.", True, "error")
        if "parse_error" in request.metadata:
            raw = head(str(request.metadata.get("raw_arguments") or ""), 2000)
            return Outcome(
                f"Could not parse the arguments for {tool.name} as a JSON object "
                f"({request.metadata['parse_error']}). Received: {raw!r}",
                True,
                "error",
            )
        try:
            return tool, tool.validate(request.arguments)
        except ToolArgumentError as exc:
            return Outcome(str(exc), True, "error")

    def _saved(self) -> ToolCallResponse | None:
        """The recorded response of this call, in a replay."""
        replay = self.settings.replay
        return replay.responses.get(self.request.call_id) if replay is not None else None

    def _replayed(self, saved: ToolCallResponse) -> ToolCallResponse:
        """``--replay-tools saved``: the recorded result, and a sub-agent's recorded work.
        Nothing runs, so nothing is asked; the decisions say so ("recorded, not run") — the
        recording's own decisions, nested ones too, are never shown as if made here."""
        assert self.settings.replay is not None
        self.decisions.append(_recorded())
        for event in self.settings.replay.nested_events(self.request.call_id):
            update: dict[str, Any] = {"id": new_id(), "timestamp": now_iso()}
            if isinstance(event, ToolCallResponse):
                update["decisions"] = [_recorded()]
            self.record(event.model_copy(update=update))
        recorded = ResponseFields(subagent=saved.subagent)  # the sub-agent's usage, as recorded
        outcome = Outcome(saved.content, saved.is_error, saved.status, list(saved.images), recorded)
        return self._respond(outcome)

    async def _attempt(self, tool: Tool, kwargs: dict[str, Any]) -> Outcome:
        if tool.context_param:
            nest = Nest(self.record, self.prompter, self.sink, self.settings)
            kwargs[tool.context_param] = ToolContext(
                self.request.call_id,
                tool.name,
                self.token,
                self._ask,
                self.live.progress,
                nest,
                self.fields,
                origin=self.settings.origin,
                decisions=self.decisions,
            )
        try:
            value = await invoke(tool, kwargs, self.live.progress)
        except TimeoutError:
            self.token.cancel("timed out")
            detail = f"{tool.timeout} s"
            self.decisions.append(Decision(action="timed_out", by="policy", detail=detail))
            return Outcome(f"Timed out after {tool.timeout:g} s.", True, "timeout")
        except asyncio.CancelledError:
            raise
        except NotRun as refused:
            return Outcome(refused.message, True, "skipped")
        except ToolFailed as failed:
            return Outcome(failed.message, True, "error")
        except Exception as exc:
            return describe_exception(exc)
        text, images = result_content(value, self.settings.max_result_chars)
        if not isinstance(value, ToolResult):
            return Outcome(text, False, "done", images)
        error = value.is_error
        return Outcome(text, error, "error" if error else "done", images, value.fields)

    async def _ask(self, question: str, choices: Sequence[str] | None) -> str | None:
        """``ctx.ask()``: the question and its answer are recorded as inquiry events."""
        call_id, inquiry_id = self.request.call_id, new_id()
        choice_list = [str(c) for c in choices] if choices else None
        self.record(
            InquiryRequest(
                inquiry_id=inquiry_id, call_id=call_id, question=question, choices=choice_list
            )
        )
        answer = await self.prompter.inquire(
            InquiryPrompt(call_id, inquiry_id, question, tuple(choice_list or ()) or None)
        )
        self.record(
            InquiryResponse(
                inquiry_id=inquiry_id, call_id=call_id, answer=answer.answer, by=answer.by
            )
        )
        return answer.answer

    # ------------------------------------------------------------------ reporting

    def _status(self, state: ToolState) -> None:
        self.state = state
        self._update(state, self.settings.clock() if state not in ("waiting", "running") else None)

    def _update(self, state: ToolState, ended: float | None = None) -> None:
        output = self.live.output.snapshot()
        call_id, started = self.request.call_id, self.started_at
        self.sink.update(ToolUpdate(call_id, self.name, state, started, ended, output))

    def _respond(self, outcome: Outcome) -> ToolCallResponse:
        ended = self.settings.clock()
        self._status(outcome.status)
        outcome.fields = self.fields.under(outcome.fields)
        preview = self._redact(outcome)
        elapsed = None if self.started_at is None else round(ended - self.started_at, 3)
        fields = outcome.fields
        return ToolCallResponse(
            call_id=self.request.call_id,
            content=outcome.content,
            is_error=outcome.is_error,
            status=outcome.status,
            decisions=list(self.decisions),
            elapsed=elapsed,
            images=outcome.images,
            preview=preview,
            subagent=fields.subagent,
            cell=fields.cell,
            outputs=fields.outputs,
            state=fields.state,
            replay=self._check_replayed(outcome),
            builtin=None if self.tool is None else self.tool.builtin,
        )

    def _check_replayed(self, outcome: Outcome) -> dict[str, Any] | None:
        """In a replay, whether the result is the recorded one (and the recorded one when it
        is not); None outside a replay."""
        saved = self._saved()
        if saved is None:
            return None
        same = (saved.content, saved.is_error) == (outcome.content, outcome.is_error)
        return {"same": True} if same else {"same": False, "saved": saved.content[:4_000]}

    def _redact(self, outcome: Outcome) -> dict[str, Any] | None:
        """Every response is made here, so this is where secrets leave what the model reads
        and the record saves: its text and the saved fields that hold notebook text
        (``outputs``, ``state``, ``preview``...); returns the preview, redacted. Images are
        left as they are. The count is of the labels in what the model reads (the saved
        fields mostly repeat it): a tool that redacted its text whole before cutting it
        (``cell_output``'s pages) withheld what its page shows."""
        outcome.content = redact(outcome.content).text
        self.redacted = withheld(outcome.content)
        outcome.fields = outcome.fields.redacted()
        preview: dict[str, Any] | None = redact_data(self.preview)[0]
        return preview
