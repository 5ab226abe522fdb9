"""Rebuilding a saved turn as the stream a provider yields, and playing it (replay's player).

:func:`cycles_of` turns a saved turn's events back into scripted cycles: text, reasoning with
its signature, tool calls with their raw blocks, opaque blocks. Where the record saved how each
response ended (``turn.cycles``: stop reason, where its events end, usage), each cycle ends as
it did live — a ``pause_turn`` or ``max_tokens`` response stays its own cycle, a refusal shows
its notice, the footer adds up the same usage; older records end cycles at tool results with a
guessed ``tool_use`` / ``end_turn`` and report the turn's usage with the last. A sub-agent's
nested turn is saved in the same record marked ``parent``: :class:`SavedCalls` hands the
sub-agent its own saved cycles, so a nested turn replays too and never reaches a model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast, get_args

from ..model.events import (
    SCRIPTED,
    ConversationEvent,
    Finished,
    FinishReason,
    Flush,
    MessageDelta,
    Part,
    ReasoningDelta,
    ToolCall,
    ToolCallResponse,
    Usage,
    is_scripted,
)
from ..providers.base import Request
from ..providers.scripted import Delay, ScriptedProvider

__all__ = ["ReplayProvider", "SavedCalls", "cycles_of", "subtree"]

_WORDS = re.compile(r"\S+\s*|\s+")
_BLOCKS = ("reasoning", "message", "block", "tool_call_request")
_REASONS: tuple[str, ...] = get_args(FinishReason)
_REFUSAL = "The model declined to answer."  # turn.py's notice, followed by the API's detail
INTERRUPTED = "This turn was interrupted when it was recorded; the replay stops there."
REPLIED = "The user replied mid-turn when this was recorded; the replay stops there."


class ReplayProvider(ScriptedProvider):
    """Plays a saved turn's cycles; reports tool results that differ from the saved ones."""

    name = "replay"
    marks = False  # a recording's blocks carry the marks they were saved with

    def stream(self, request: Request) -> Any:
        notices = _differences(request.events)
        if not self.remaining:  # the recording ends here (it was interrupted live)
            self.requests.append(request)
            notices.append("The recording ends here.")
            return _with_notices(self._play([Finished("end_turn")]), notices)
        inner = super().stream(request)
        if not notices:
            return inner
        return _with_notices(inner, notices)

    def cost(self, usage: Any, model: str | None) -> float | None:
        return None  # nothing was spent


async def _with_notices(stream: Any, notices: list[str]) -> Any:
    async for item in stream:
        if isinstance(item, Finished):
            details = {**item.details, "notices": notices}
            item = Finished(item.reason, item.usage, details, item.model)
        yield item


def _differences(events: Sequence[ConversationEvent]) -> list[str]:
    """Notices for the tool results of the last response that differ from the recording."""
    notes = []
    for event in reversed(events):
        if event.kind != "tool_call_response":
            if event.kind in ("chat_request", "tool_call_request") and event.parent is None:
                break
            continue
        if event.replay is not None and event.replay.get("same") is False:
            notes.append(f"Replay: the tool call {event.call_id} returned something else than "
                         "when this cell was recorded (see its card).")  # fmt: skip
    return list(reversed(notes))


@dataclass
class SavedCalls:
    """What a replayed turn's tools get from the recording (``ExecutionSettings.replay``): the
    saved results by call id (nested calls' too: call ids are unique) and the saved events, from
    which a sub-agent's nested turn replays its own cycles. It is the executor's
    :class:`~jupyter_turns.tools.executor.SavedResults` (the tools layer declares what it uses)."""

    events: Sequence[ConversationEvent]
    pace: float = 0.0
    saved_only: bool = False  # --replay-tools saved: answer with the saved results, run nothing
    responses: dict[str, ToolCallResponse] = field(init=False)

    def __post_init__(self) -> None:
        self.responses = {e.call_id: e for e in self.events if isinstance(e, ToolCallResponse)}

    def nested_events(self, call_id: str) -> list[ConversationEvent]:
        """Sub-agent call ``call_id``'s saved nested turn (``--replay-tools saved`` shows it)."""
        return subtree(self.events, call_id)

    def nested(self, call_id: str) -> ReplayProvider:
        """The provider of sub-agent call ``call_id``'s nested turn: its saved cycles (none, if
        the recording has no such turn: the replay then says the recording ends there)."""
        events = subtree(self.events, call_id)
        summary = getattr(self.responses.get(call_id), "subagent", None)
        summary = summary if isinstance(summary, dict) else {}
        usage = _nested_usage(summary, events, self.responses, call_id)
        cycles, _ = cycles_of(events, self.pace, summary.get("per_cycle") or (), usage, call_id)
        return ReplayProvider(cycles)


def subtree(events: Sequence[ConversationEvent], call_id: str) -> list[ConversationEvent]:
    """Sub-agent call ``call_id``'s nested turn as it ran: the events marked with it, and those
    of the sub-agents it called in turn (as the nested chat's own conversation held them)."""
    inside, found = {call_id}, []
    for event in events:
        if event.parent in inside:
            found.append(event)
            if event.kind == "tool_call_request":
                inside.add(event.call_id)
    return found


def _nested_usage(
    summary: Mapping[str, Any],
    events: Sequence[ConversationEvent],
    responses: Mapping[str, ToolCallResponse],
    call_id: str,
) -> dict[str, int] | None:
    """The usage of a nested turn itself, for an older record that did not save it per cycle:
    its summary also counts its own sub-agents' usage (subagent._result), which their replays
    report again."""
    own = _usage(summary.get("usage"))
    for event in events:
        if event.kind == "tool_call_request" and event.parent == call_id:
            deeper = getattr(responses.get(event.call_id), "subagent", None)
            spent = _usage(deeper.get("usage")) if isinstance(deeper, dict) else {}
            own = {name: max(0, count - spent.get(name, 0)) for name, count in own.items()}
    return own or None


# --------------------------------------------------------------------------- saved turn -> cycles

End = tuple[int, FinishReason, Usage | None]  # where a response's events end, why, its usage


def cycles_of(
    events: Sequence[ConversationEvent],
    pace: float = 0.0,
    saved: Sequence[Any] = (),
    usage: Any = None,
    own: str | None = None,
) -> tuple[list[list[Any]], str | None]:
    """The saved turn's complete responses as scripted cycles, and a note if it was interrupted
    live (the replay stops there: a Stop, Abort or Reply cannot be replayed as a model answer).

    ``saved``: the record's ``turn.cycles``; ``usage``: its ``turn.usage`` (reported with the
    last response when the cycles do not say how each ended); ``own``: the sub-agent call whose
    nested turn ``events`` is (None: the top level). Deeper sub-agents' events are skipped:
    their own calls replay them."""
    blocks: list[tuple[int, ConversationEvent]] = []  # (position, event) of the turn's blocks
    results: list[int] = []  # positions of its tool results: where a guessed cycle ends
    note, stop = None, len(events)
    for position, event in enumerate(events):
        if position == 0 or event.parent != own:
            continue
        if event.kind in ("reasoning", "message") and event.metadata.get("partial"):
            note, stop = INTERRUPTED, position
            break
        if event.kind == "chat_request":
            note, stop = REPLIED, position
            break
        if event.kind in _BLOCKS:
            blocks.append((position, event))
        elif event.kind == "tool_call_response":
            results.append(position)
    ends = _saved_ends(saved, stop)
    guessed = ends is None
    if ends is None:
        ends = _guessed_ends(blocks, results, stop, note, saved, usage)
    answered = [] if guessed else _answered_by(saved, stop)
    cycles, start = [], 0
    for number, (end, reason, spent) in enumerate(ends):
        mine = [event for position, event in blocks if start <= position < end]
        after = max((p + 1 for p, _ in blocks if start <= p < end), default=start)
        refusal = _refusal(events, after, own)
        details: dict[str, Any] = {}
        if refusal is not None and (reason == "refusal" or (guessed and reason == "end_turn")):
            reason, details = "refusal", refusal  # an older record: its notice tells
        items = [item for index, event in enumerate(mine) for item in _block(index, event, pace)]
        model, provider = answered[number] if number < len(answered) else (None, None)
        if provider:  # the replay saves again who answered live, not "replay"
            details["provider"] = provider
        cycles.append([*items, Finished(reason, spent, details, model)])
        start = end
    return cycles, note


def _saved_ends(saved: Sequence[Any], stop: int) -> list[End] | None:
    """Each complete response's end, stop reason and usage, where the record saved them (and
    they fit the events: a hand-edited record falls back to the guess)."""
    entries = list(saved) if isinstance(saved, list | tuple) else []
    ends: list[End] = []
    last = 0
    for entry in entries:
        end = entry.get("events") if isinstance(entry, dict) else None
        reason = entry.get("stop_reason") if isinstance(entry, dict) else None
        if not isinstance(end, int) or isinstance(end, bool) or not isinstance(reason, str):
            return None
        if end < last:
            return None
        last = end
        if end <= stop:  # a response after the interruption is not replayed
            known = cast(FinishReason, reason) if reason in _REASONS else "end_turn"
            ends.append((end, known, _as_usage(entry)))
    return ends if entries else None


def _answered_by(saved: Sequence[Any], stop: int) -> list[tuple[str | None, str | None]]:
    """The model and provider each replayed response was saved with (None: not saved). A
    response that names neither is the previous one's (:func:`~jupyter_turns.engine.turn_state.
    cycles_record` writes them when they change)."""
    out: list[tuple[str | None, str | None]] = []
    model: str | None = None
    provider: str | None = None
    for entry in saved:
        if not isinstance(entry, dict) or not isinstance(entry.get("events"), int):
            continue
        if isinstance(entry.get("model"), str) or isinstance(entry.get("provider"), str):
            model = entry["model"] if isinstance(entry.get("model"), str) else None
            provider = entry["provider"] if isinstance(entry.get("provider"), str) else None
        if entry["events"] <= stop:
            out.append((model, provider))
    return out


def _guessed_ends(
    blocks: list[tuple[int, ConversationEvent]],
    results: list[int],
    stop: int,
    note: str | None,
    saved: Sequence[Any],
    usage: Any,
) -> list[End]:
    """An older record's cycles: a response ends at the tool results after it (``tool_use``)
    or at the end of the turn (``end_turn``)."""
    ends: list[End] = []
    calls = False
    for number, (position, event) in enumerate(blocks):
        calls = calls or event.kind == "tool_call_request"
        following = blocks[number + 1][0] if number + 1 < len(blocks) else stop
        if any(position < result < following for result in results):
            ends.append((following, "tool_use" if calls else "end_turn", None))
            calls = False
        elif number + 1 == len(blocks) and note is None:
            ends.append((stop, "tool_use" if calls else "end_turn", None))
    entries = list(saved) if isinstance(saved, list | tuple) else []
    if ends and len(entries) == len(ends):  # each cycle's usage, saved without its stop reason
        return [(end, why, _as_usage(e)) for (end, why, _), e in zip(ends, entries, strict=True)]
    if ends and _usage(usage):  # the turn's usage, reported with its last response
        end, reason, _ = ends[-1]
        ends[-1] = (end, reason, _as_usage(usage))
    return ends


def _refusal(
    events: Sequence[ConversationEvent], after: int, own: str | None
) -> dict[str, Any] | None:
    """A refusal's details, read back from the notice the live turn showed after the response
    (None: no such notice before the next response)."""
    for event in events[after:]:
        if event.parent != own:
            continue
        if event.kind == "notice" and event.text.startswith(_REFUSAL):
            detail = event.text[len(_REFUSAL) :].strip()
            return {"explanation": detail} if detail else {}
        if event.kind in _BLOCKS or event.kind == "chat_request":
            return None
    return None


def _usage(value: Any) -> dict[str, int]:
    """The token counts in a saved usage dict (anything else dropped)."""
    if not isinstance(value, dict):
        return {}
    names = Usage.__dataclass_fields__
    return {
        name: count
        for name, count in value.items()
        if name in names and isinstance(count, int) and not isinstance(count, bool)
    }


def _as_usage(value: Any) -> Usage | None:
    counts = _usage(value)
    return Usage(**counts) if counts else None


def _block(index: int, event: ConversationEvent, pace: float) -> list[Any]:
    """The stream items that make ``event`` again; what the scripted provider wrote stays
    marked so (``metadata.scripted``), so a replay of it is never sent to a real model either."""
    marked = {SCRIPTED: True} if is_scripted(event) else {}
    match event.kind:
        case "reasoning":
            flush = {"signature": event.metadata.get("signature", ""), **marked}
            return [*_text(index, event.content, ReasoningDelta, pace), Flush(index, flush)]
        case "message":
            citations = event.metadata.get("citations")
            flush = {"citations": citations} if citations else {}
            return [*_text(index, event.content, MessageDelta, pace), Flush(index, flush | marked)]
        case "tool_call_request":
            raw = event.metadata.get("raw_block") or {}
            call = ToolCall(event.call_id, event.name, dict(event.arguments))
            return [Part(index, call), Flush(index, {"raw_block": raw, **marked})]
        case _:  # an opaque block (redacted reasoning, a server tool's)
            raw = getattr(event, "metadata", {}).get("raw_block") or {}
            return [Flush(index, {"raw_block": raw, **marked})]


def _text(index: int, text: str, kind: Any, pace: float) -> list[Any]:
    if not text:
        return [Part(index, kind(""))] if kind is ReasoningDelta else []
    if pace <= 0:
        return [Part(index, kind(text))]
    items: list[Any] = []
    for word in _WORDS.findall(text):
        items += [Part(index, kind(word)), Delay(pace)]
    return items
