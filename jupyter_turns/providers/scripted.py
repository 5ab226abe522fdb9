"""ScriptedProvider: a deterministic provider playing a list of cycles, for offline use and tests.

Each request plays the next cycle: a sequence of stream events (``Part``, ``Flush``,
``Finished``) and script items (``Fail`` raises, ``Delay`` sleeps, ``Gate`` waits until opened).
A cycle that is a bare ``Fail`` is a request that fails before any byte. Build cycles with
:func:`cycle` from :func:`message`, :func:`reasoning` and :func:`tool_call` blocks (a call's
arguments stream in pieces when it is given ``chunks``, as a model writes them). Without
cycles it answers every request with a short markdown echo, so the pipeline runs offline.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from ..errors import ProviderError
from ..model.events import (
    SCRIPTED,
    Finished,
    Flush,
    MessageDelta,
    Part,
    ReasoningDelta,
    ToolCall,
    ToolInputDelta,
    Usage,
    new_id,
    tally,
)
from ..model.interrupt import ThreadSafeFlag
from ..text import plural
from .base import Request

if TYPE_CHECKING:
    from ..model.events import FinishReason, StreamEvent

__all__ = [
    "Delay",
    "Fail",
    "Gate",
    "ScriptBlock",
    "ScriptedProvider",
    "cycle",
    "message",
    "reasoning",
    "tool_call",
]


@dataclass(frozen=True, slots=True)
class Fail:
    """Raise ``error`` at this point of the cycle (or, as a whole cycle, before any byte)."""

    error: BaseException


class Gate:
    """Holds the stream at this point until :meth:`open` is called (from any thread)."""

    def __init__(self) -> None:
        self._opened = ThreadSafeFlag()
        self._reached = threading.Event()

    @property
    def reached(self) -> bool:
        return self._reached.is_set()

    def open(self) -> None:
        self._opened.set()

    async def wait(self) -> None:
        self._reached.set()
        await self._opened.wait()


@dataclass(frozen=True, slots=True)
class Delay:
    """Wait ``seconds`` at this point of the cycle (with the provider's injected sleep)."""

    seconds: float


ScriptItem: TypeAlias = Part | Flush | Finished | Fail | Delay | Gate
Cycle: TypeAlias = Sequence[ScriptItem] | Fail

_WORDS = re.compile(r"\s*\S+\s*|\s+")


@dataclass(frozen=True, slots=True)
class ScriptBlock:
    """One block of a scripted response, before :func:`cycle` gives it an index."""

    parts: tuple[MessageDelta | ReasoningDelta | ToolInputDelta | ToolCall, ...]
    metadata: dict[str, Any] = field(default_factory=dict)


def _chunks(text: str, chunks: int | None) -> list[str]:
    if chunks is None:
        return _WORDS.findall(text) or [text]
    size = max(1, -(-len(text) // max(1, chunks)))
    return [text[i : i + size] for i in range(0, len(text), size)] or [text]


def message(text: str, *, chunks: int | None = None) -> ScriptBlock:
    """Answer text, streamed word by word (or in ``chunks`` equal pieces)."""
    return ScriptBlock(tuple(MessageDelta(t) for t in _chunks(text, chunks)))


def reasoning(text: str, *, signature: str | None = None, chunks: int | None = None) -> ScriptBlock:
    metadata = {"signature": signature} if signature else {}
    return ScriptBlock(tuple(ReasoningDelta(t) for t in _chunks(text, chunks)), metadata)


def tool_call(
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    call_id: str | None = None,
    raw_arguments: str | None = None,
    chunks: int | None = None,
) -> ScriptBlock:
    """A complete tool call; ``raw_arguments`` instead scripts unparseable argument text.

    With ``chunks``, the argument text (the arguments as JSON, or ``raw_arguments``) streams
    first in that many equal pieces, as a model writes it, so the page draws the call's draft
    card; without, the call comes whole, as before.
    """
    # unique across kernels: a restored conversation already holds the ids of earlier runs
    call_id = call_id or f"toolu_scripted_{new_id()}"
    if raw_arguments is not None:
        call = ToolCall(call_id, name, {}, raw_arguments, "arguments are not a JSON object")
        text = raw_arguments
    else:
        call = ToolCall(call_id, name, dict(arguments or {}))
        text = json.dumps(call.arguments)
    if chunks is None:
        return ScriptBlock((call,))
    pieces = [ToolInputDelta(piece, call_id, name) for piece in _chunks(text, chunks)]
    return ScriptBlock((*pieces, call))


def cycle(
    *blocks: ScriptBlock,
    finish: FinishReason | None = None,
    usage: Usage | None = None,
    details: dict[str, Any] | None = None,
) -> list[ScriptItem]:
    """Stream events for one response: each block's parts then its flush, then Finished.

    ``finish`` defaults to ``tool_use`` when a block is a tool call, else ``end_turn``.
    """
    items: list[ScriptItem] = []
    has_tools = False
    for index, block in enumerate(blocks):
        for content in block.parts:
            has_tools = has_tools or isinstance(content, ToolCall)
            items.append(Part(index, content))
        items.append(Flush(index, dict(block.metadata)))
    reason: FinishReason = finish or ("tool_use" if has_tools else "end_turn")
    items.append(Finished(reason, usage, dict(details or {}), model="scripted"))
    return items


class ScriptedProvider:
    """Plays ``cycles`` in order, one per request, and records every request it gets."""

    name = SCRIPTED
    # what it plays is the script's own: marked so (metadata.scripted), never sent to a model
    marks = True
    sees_scripted = True  # a script (or a replay) is sent the scripted turns; a model is not

    def __init__(
        self,
        cycles: Iterable[Cycle] | None = None,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._cycles: list[Cycle] | None = None if cycles is None else list(cycles)
        self._position = 0
        self._sleep = sleep
        self.requests: list[Request] = []

    @property
    def remaining(self) -> int:
        return 0 if self._cycles is None else len(self._cycles) - self._position

    @property
    def exhausted(self) -> bool:
        """Whether the script is played to its end (the echo, with no script, never is)."""
        return self._cycles is not None and self._position >= len(self._cycles)

    def assert_complete(self) -> None:
        """Raise AssertionError unless every scripted cycle was requested."""
        if self.remaining:
            raise AssertionError(
                f"ScriptedProvider: {self.remaining} of {len(self._cycles or [])} scripted "
                f"cycles were never requested (got {len(self.requests)} requests)"
            )

    def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        if self._cycles is None:
            return self._play(_echo(request))
        if self.exhausted:
            played = plural(len(self._cycles), "cycle")
            error = ProviderError(
                f"The script has no cycle left (it had {played}; this is request "
                f"{len(self.requests)}). Give the thread another script (--script VAR), "
                "another provider (--provider NAME), or start a new thread (--new).",
                kind="script_exhausted",
            )
            return self._play([Fail(error)])
        script = self._cycles[self._position]
        self._position += 1
        note = request.extra.get("compaction_note")
        return self._play([script] if isinstance(script, Fail) else script, note)

    async def _play(
        self, items: Sequence[ScriptItem], note: dict[str, Any] | None = None
    ) -> AsyncIterator[StreamEvent]:
        begun: set[int] = set()  # blocks that got a part: their flush makes an event
        for item in items:
            if isinstance(item, Fail):
                raise item.error
            if isinstance(item, Delay):
                await self._sleep(item.seconds)
            elif isinstance(item, Gate):
                await item.wait()
            elif isinstance(item, Flush):
                yield _marked(item, self.marks, item.index in begun, note)
            else:
                if isinstance(item, Part):
                    begun.add(item.index)
                yield item

    def classify(self, error: BaseException) -> ProviderError:
        if isinstance(error, ProviderError):
            return error
        return ProviderError(f"{type(error).__name__}: {error}", kind="internal")

    def cost(self, usage: Usage, model: str | None) -> float | None:
        return None


def _marked(flush: Flush, mark: bool, begun: bool, note: dict[str, Any] | None) -> Flush:
    """A block's flush, its event marked as the script's (``metadata.scripted``: never sent to
    a real model); a compaction block says how it came about, as the Anthropic provider's does.
    An empty block with nothing to keep stays unmarked: marking it would make it an event."""
    metadata = dict(flush.metadata)
    if note and _is_compaction(metadata):
        metadata["compaction"] = {**note, **(metadata.get("compaction") or {})}
    if mark and (begun or metadata):
        metadata[SCRIPTED] = True
    return Flush(flush.index, metadata)


def _is_compaction(metadata: dict[str, Any]) -> bool:
    raw = metadata.get("raw_block")
    return isinstance(raw, dict) and raw.get("type") == "compaction"


def _echo(request: Request) -> list[ScriptItem]:
    text = request.last_user_text.strip() or "(empty request)"
    quoted = "\n".join(f"> {line}" if line else ">" for line in text.splitlines())
    answer = (
        "**Scripted echo** — no model was called.\n\n"
        f"{quoted}\n\n"
        f"{_answer_number(request.cycle)}Sent with this request: {tally(request.events)}. "
        "Use `--provider anthropic` with `ANTHROPIC_API_KEY` set to talk to Claude."
    )
    return cycle(message(answer))


def _answer_number(cycle: int) -> str:
    """``This is answer 2 of the turn (after its tool calls). `` from a turn's second request
    on; nothing for the first (an echo never calls a tool)."""
    return f"This is answer {cycle} of the turn (after its tool calls). " if cycle > 1 else ""
