"""Loading threads from a saved notebook: every store read, the newest copy of a turn wins."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

from jupyter_turns.model.events import ChatRequest, Message, ToolCallRequest
from jupyter_turns.record.format import RECORD_MIME, turn_record
from jupyter_turns.record.notebook import load_threads, read_notebook

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _events(*events: Any) -> list[Any]:
    return list(events)


def _record(thread: str, events: list[Any], **extra: Any) -> dict[str, Any]:
    return {**turn_record("conv-1", thread, events), **extra}


def test_newest_copy_wins_and_turns_are_ordered_by_time(tmp_path: Path) -> None:
    first = _events(
        ChatRequest(content="one", timestamp="2026-01-01T10:00:00+00:00"),
        Message(content="answer one", timestamp="2026-01-01T10:00:01+00:00"),
    )
    second_old = _events(ChatRequest(content="two", timestamp="2026-01-01T11:00:00+00:00"))
    second_new = [
        *second_old,
        Message(content="answer two", timestamp="2026-01-01T11:00:05+00:00"),
    ]
    notebook = new_notebook()
    # cell order is the reverse of time order; the second cell has an older metadata copy
    later = new_code_cell("%%chat\ntwo")
    later.metadata["jupyter_turns"] = _record("main", second_old)
    later.outputs = [new_output("display_data", data={RECORD_MIME: _record("main", second_new)})]
    earlier = new_code_cell("%%chat\none")
    earlier.outputs = [
        new_output("display_data", data={RECORD_MIME: {**_record("main", []), "superseded": True}}),
        new_output(
            "display_data",
            data={
                "text/plain": "ChatWidget(thread='main')",
                "application/vnd.jupyter.widget-view+json": {"model_id": "m1"},
            },
        ),
    ]
    notebook.cells = [later, earlier]
    notebook.metadata["widgets"] = {
        WIDGET_STATE: {
            "state": {
                "m1": {
                    "state": {
                        "events": [e.model_dump(mode="json") for e in first],
                        "settings": {"thread": "main"},
                    }
                }
            }
        }
    }
    path = tmp_path / "n.ipynb"
    nbformat.write(notebook, path)
    threads, current = load_threads(path)
    conversation = threads["main"].conversation
    assert [getattr(e, "content", None) for e in conversation.events] == [
        "one",
        "answer one",
        "two",
        "answer two",
    ]
    assert current == "main" and threads["main"].problems == []


def test_a_broken_turn_is_skipped_and_reported(tmp_path: Path) -> None:
    good = _events(ChatRequest(content="fine"), Message(content="ok"))
    dangling = _events(
        ChatRequest(content="crashed"), ToolCallRequest(call_id="c1", name="f", arguments={})
    )
    notebook = new_notebook()
    for events in (good, dangling):
        cell = new_code_cell("%%chat")
        cell.outputs = [new_output("display_data", data={RECORD_MIME: _record("t", events)})]
        notebook.cells.append(cell)
    bad = new_code_cell("%%chat")
    broken = _record("t", [])
    broken["events"] = [{"kind": "message", "content": 5}]  # not a valid event
    bad.outputs = [new_output("display_data", data={RECORD_MIME: broken})]
    notebook.cells.append(bad)
    path = tmp_path / "n.ipynb"
    nbformat.write(notebook, path)
    saved = read_notebook(path)
    conversation = saved.threads["t"].conversation
    kinds = [e.kind for e in conversation.events]
    assert kinds == [
        "chat_request",
        "message",
        "chat_request",
        "tool_call_request",
        "tool_call_response",
    ]
    conversation.check_sendable()  # the dead kernel's call got an error answer
    assert len(saved.problems) == 1 and saved.problems[0].startswith("cell 3:")
