"""Small helpers for driving turns in tests: wait on observable state, never on time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from jupyter_turns.events import ConversationEvent
from jupyter_turns.sink import RecordingSink, ToolUpdate

API_KINDS = {"chat_request", "reasoning", "message", "tool_call_request", "tool_call_response"}


async def until(predicate: Callable[[], bool], *, spins: int = 20_000) -> None:
    """Yield to the loop until ``predicate()`` holds; fail loudly instead of hanging."""
    for _ in range(spins):
        if predicate():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never became true")


def kinds(events: object) -> list[str]:
    return [e.kind for e in events]  # type: ignore[attr-defined]


def api_kinds(events: list[ConversationEvent]) -> list[str]:
    return [e.kind for e in events if e.kind in API_KINDS]


def tool_timeline(sink: RecordingSink) -> list[tuple[str, str]]:
    """(call name, status) for every start and end of a run, in the order the sink saw them
    (a status change, not the output reports in between)."""
    out = []
    last: dict[str, str] = {}
    for update in sink.updates:
        if not isinstance(update, ToolUpdate):
            continue
        changed = last.get(update.call_id) != update.status
        last[update.call_id] = update.status
        if changed and update.status in ("running", "done", "error", "cancelled"):
            out.append((update.name, update.status))
    return out
