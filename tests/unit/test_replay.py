"""Replay's parts: saved turns as cycles, finding a cell's turn, the mode in force."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_turns import Chat, tool
from jupyter_turns.conversation import parse_events
from jupyter_turns.events import Finished, Flush, Part, ToolCall
from jupyter_turns.persist import RECORD_MIME, turn_record
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, reasoning, tool_call
from jupyter_turns.replay import (
    ENV,
    SavedIndex,
    cycles_of,
    find_saved,
    plan,
    replay_mode,
    replaying,
)

FIXTURE = Path(__file__).parents[1] / "fixtures" / "record_all_kinds.json"


@tool(run="unattended")
def double(x: int) -> int:
    """Double it."""
    return 2 * x


async def _recorded(request: str = "Double 21") -> list:  # type: ignore[type-arg]
    script = ScriptedProvider(
        [
            cycle(reasoning("Use the tool.", signature="sig-1"), tool_call("double", {"x": 21})),
            cycle(message("It is **42**.")),
        ]
    )
    turn = await Chat(script, tools=[double]).send(request)
    return list(turn.events)


def test_the_mode_in_force_is_the_environments(monkeypatch: pytest.MonkeyPatch) -> None:
    assert replay_mode("auto") == "auto"
    monkeypatch.setenv(ENV, "ON")
    assert replay_mode("off") == "on"
    monkeypatch.setenv(ENV, "sometimes")  # not a mode: the setting stays
    assert replay_mode("off") == "off"


def test_every_kind_of_saved_block_becomes_the_same_stream_again() -> None:
    events = parse_events(json.loads(FIXTURE.read_text()))
    cycles, note = cycles_of(events)
    assert note is not None and "interrupted" in note  # the fixture's last answer is partial
    first = cycles[0]
    calls = [p.content for p in first if isinstance(p, Part) and isinstance(p.content, ToolCall)]
    assert calls and all(c.call_id for c in calls)
    flushes = [f.metadata for f in first if isinstance(f, Flush)]
    assert any("signature" in f for f in flushes) and any("raw_block" in f for f in flushes)
    assert all(isinstance(c[-1], Finished) for c in cycles)


def _index(path: Path, recorded: list) -> SavedIndex:  # type: ignore[type-arg]
    """The saved turns of a notebook file holding ``recorded`` in cell ``c1``."""
    from jupyter_turns.replay import _chat_turns, _Notebook

    record = turn_record("conv", "main", recorded)
    output = {"output_type": "display_data", "data": {RECORD_MIME: record}}
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "id": "c1", "outputs": [output]}]}))
    index = SavedIndex(read=True)
    index.notebooks.append(_Notebook(path, _chat_turns(path)))
    return index


async def test_a_replayed_turn_is_the_recorded_one_and_its_tool_runs_again(
    tmp_path: Path,
) -> None:
    recorded = await _recorded()
    path = tmp_path / "recorded.ipynb"
    index = _index(path, recorded)
    turn, source, change = find_saved(index, {}, None, "Double 21")
    assert turn is not None and source == path.name and change is None
    missing, _, change = find_saved(index, {}, None, "Triple 21")
    assert missing is None and change is None  # the only turn was used: nothing left to match
    index.notebooks[0].cursor = 0
    _, _, change = find_saved(index, {}, None, "Double 22")
    assert change is not None and "-Double 21" in change and "+Double 22" in change
    by_id, _, _ = find_saved(index, {}, "c1", "Double 21")
    assert by_id is turn

    chosen = plan(turn, source, pace=0.0)
    chat = Chat(ScriptedProvider([]), tools=[double])
    with replaying(chat, chosen, None) as notes:
        again = await chat.send("Double 21", notes=notes)
    assert [
        (e.kind, getattr(e, "content", None)) for e in again.events if e.kind != "reasoning"
    ] == [(e.kind, getattr(e, "content", None)) for e in recorded if e.kind != "reasoning"]
    response = next(e for e in again.events if e.kind == "tool_call_response")
    assert response.replay == {"same": True}  # type: ignore[attr-defined]
    reasoning_event = next(e for e in again.events if e.kind == "reasoning")
    assert reasoning_event.metadata["signature"] == "sig-1"
    assert isinstance(chat.provider, ScriptedProvider) and chat.execution.replay is None
