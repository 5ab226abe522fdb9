"""Small helpers for driving turns in tests: wait on observable state, never on time."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from comm.base_comm import BaseComm

from jupyter_turns.engine.turn import TurnResult
from jupyter_turns.model.events import ConversationEvent, Usage
from jupyter_turns.model.sink import RecordingSink, ToolUpdate
from jupyter_turns.providers.scripted import ScriptedProvider
from jupyter_turns.widget.chat_widget import ChatWidget

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


class PageComm(BaseComm):
    """A comm that keeps what the kernel would send to the page, in order."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.sent: list[dict[str, Any]] = []
        super().__init__(*args, **kwargs)

    def publish_msg(self, msg_type: str, data: Any = None, *args: Any, **kwargs: Any) -> None:
        if isinstance(data, dict):
            self.sent.append(data)

    def custom(self, *kinds: str) -> list[dict[str, Any]]:
        """The custom messages sent (of these kinds, if any are named)."""
        return [
            d["content"]
            for d in self.sent
            if d.get("method") == "custom" and (not kinds or d["content"]["type"] in kinds)
        ]


def page_widget(*, shown: bool = True, **kwargs: Any) -> tuple[ChatWidget, PageComm]:
    """A ChatWidget whose comm records what the page would get; ``shown``: a view of it has
    rendered and said ``ready`` (what it was sent for that is forgotten)."""
    import comm

    previous = comm.create_comm
    comm.create_comm = PageComm
    try:
        widget = ChatWidget(**kwargs)
    finally:
        comm.create_comm = previous
    page = widget.comm
    assert isinstance(page, PageComm)
    if shown:
        widget._dispatch({"type": "ready"})
        page.sent.clear()
    return widget, page


def write_notebook(path: Path, *cells: tuple[str | None, dict[str, Any]]) -> Path:
    """A notebook file whose code cells (cell id, saved record) hold chat records as outputs."""
    from jupyter_turns.record.format import RECORD_MIME

    written = []
    for cell_id, record in cells:
        output = {"output_type": "display_data", "data": {RECORD_MIME: record}, "metadata": {}}
        cell = {"cell_type": "code", "source": "%%chat", "metadata": {}, "outputs": [output]}
        written.append({**cell, **({"id": cell_id} if cell_id else {})})
    path.write_text(json.dumps({"cells": written, "metadata": {}, "nbformat": 4}))
    return path


def record_of(turn: TurnResult, summary: dict[str, Any] | None = None) -> dict[str, Any]:
    """The record a chat cell saves for ``turn`` (front.CellFront._record's ``turn`` summary,
    unless ``summary`` stands in for an older record's)."""
    from jupyter_turns.engine.turn_state import cycles_record
    from jupyter_turns.record.format import turn_record

    if summary is None:
        summary = {
            "outcome": turn.outcome,
            "usage": turn.usage.as_dict(),
            "cost_usd": turn.cost_usd,
            "cycles": cycles_record(turn.ends),
        }
    return turn_record("conv", "main", turn.events, turn=summary)


def subagent_totals(summary: Any) -> dict[str, Any]:
    """A sub-agent call's saved summary without its per-cycle list (replay's: one entry per
    response that ended, so at most one per cycle)."""
    assert isinstance(summary, dict)
    per_cycle = summary.get("per_cycle")
    if per_cycle is not None:
        assert len(per_cycle) <= summary["cycles"]
    return {k: v for k, v in summary.items() if k != "per_cycle"}


class PricedProvider(ScriptedProvider):
    """A ScriptedProvider whose tokens have a price: $1 per 1,000 tokens of any kind."""

    def cost(self, usage: Usage, model: str | None) -> float | None:
        tokens = (
            usage.input_tokens
            + usage.output_tokens
            + usage.cache_read_input_tokens
            + usage.cache_creation_input_tokens
        )
        return tokens / 1000
