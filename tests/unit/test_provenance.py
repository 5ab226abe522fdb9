"""Provenance stamps on the cells the model changes: written with the change (against a page
that answers like the extension), put back as they were by Undo, of a checked shape, never
taken for a conversation record, and never shown by ``jupyter nbconvert``."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbconvert import HTMLExporter
from pydantic import ValidationError

from jupyter_turns import Chat
from jupyter_turns.editing.page import NotebookEditor
from jupyter_turns.editing.undoing import undo
from jupyter_turns.kernel.session import Session
from jupyter_turns.kernel.threads import Threads
from jupyter_turns.kernel_tools.builtin import BUILTINS, DEFAULT
from jupyter_turns.model.events import Who
from jupyter_turns.model.prompter import Approval, ApprovalRequest, PolicyPrompter
from jupyter_turns.model.provenance import Provenance
from jupyter_turns.model.record_schema import record_schema
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call
from jupyter_turns.reading.sources import NotebookReader
from jupyter_turns.record.saved_turns import saved_turns
from tests.support.fake_page import FakePage

ADA = Who(name="Ada Lovelace", username="ada")


def _approve(request: ApprovalRequest) -> Approval:
    return Approval("approved", who=ADA)


class _Notebook:
    """A notebook session on a fake page whose thread ``main`` runs scripted turns."""

    def __init__(self, page: FakePage) -> None:
        self.page = page
        self.space: dict[str, Any] = {"__session__": "nb.ipynb"}
        self.reader = NotebookReader(
            self.space,
            metadata=lambda: page,
            cell_id=lambda: page.chat_id,  # type: ignore[arg-type,return-value]
        )
        self.session = Session(Threads(lambda: Chat(ScriptedProvider([]))), self.space,
                               reader=self.reader)  # fmt: skip
        self.chat = self.session.threads.get("main").chat
        self.chat.tools = {n: BUILTINS[n](self.reader) for n in DEFAULT}
        self.chat.prompter = PolicyPrompter(_approve)

    async def turn(self, *calls: Any, model: str = "claude-test") -> None:
        self.chat.provider = ScriptedProvider([cycle(*calls), cycle(message("Done."))])
        self.chat.config = self.chat.config.__class__(**{**vars(self.chat.config), "model": model})
        events = await self.chat.send("go")
        for response in (e for e in events if e.kind == "tool_call_response"):
            assert not response.is_error, response.content
        saved = [e.model_dump(mode="json") for e in events]
        conversation = self.chat.conversation.conversation_id
        record = {"version": 2, "conversation_id": conversation, "thread": "main", "events": saved}
        self.session.shown_records[self.page.chat_id] = record

    async def undo(self, call_id: str) -> str:
        [line] = await undo(self.session, NotebookEditor(self.reader.page), call_id=call_id)
        return line


async def test_an_inserted_cell_carries_turn_call_model_approver_time_and_undo_takes_it() -> None:
    page = FakePage("%%chat\ngo", chat=0)
    notebook = _Notebook(page)
    await notebook.turn(tool_call("insert_cell", {"source": "x = 1"}, call_id="ins"))
    stamp = page.cells[1]["provenance"]
    assert page.asked[-1]["request"] == "insert_cell"  # written with the cell, not after it
    when = stamp.pop("timestamp")
    assert datetime.fromisoformat(when).tzinfo is not None
    assert stamp == {
        "thread": "main",
        "conversation_id": notebook.chat.conversation.conversation_id,
        "turn": 1,
        "model": "claude-test",
        "call_id": "ins",
        "tool": "insert_cell",
        "who": {"name": "Ada Lovelace", "username": "ada"},
    }
    assert "undone" not in await notebook.undo("ins")
    assert page.sources() == ["%%chat\ngo"]  # the cell went, and its stamp with it


async def test_an_edit_restamps_the_cell_and_undo_puts_the_earlier_stamp_back() -> None:
    page = FakePage("%%chat\ngo", "x = 1", chat=0)
    notebook = _Notebook(page)
    read = tool_call("notebook_cells", {}, call_id="read")
    await notebook.turn(read, tool_call("edit_cell", {"index": 1, "source": "x = 2"}, call_id="e1"))
    first = dict(page.cells[1]["provenance"])
    assert (first["tool"], first["turn"], first["call_id"]) == ("edit_cell", 1, "e1")

    await notebook.turn(
        tool_call("edit_cell", {"index": 1, "source": "x = 3", "run": True}, call_id="e2"),
        model="claude-other",
    )
    second = page.cells[1]["provenance"]
    assert (second["turn"], second["call_id"], second["model"]) == (2, "e2", "claude-other")
    assert [r.get("provenance", {}).get("call_id") for r in page.asked if
            r["request"] == "set_outputs"] == [None]  # the run kept the edit's stamp  # fmt: skip

    await notebook.undo("e2")
    assert page.sources()[1] == "x = 2" and page.cells[1]["provenance"] == first
    await notebook.undo("e1")
    assert page.sources()[1] == "x = 1" and "provenance" not in page.cells[1]


async def test_a_run_stamps_a_cell_the_user_wrote_but_not_one_the_model_wrote() -> None:
    page = FakePage("%%chat\ngo", "y = 6 * 7", chat=0)
    notebook = _Notebook(page)
    await notebook.turn(
        tool_call("notebook_cells", {}, call_id="read"),
        tool_call("run_cell", {"index": 1}, call_id="run"),
        tool_call("insert_cell", {"source": "z = y", "run": True}, call_id="ins"),
    )
    assert page.sources() == ["%%chat\ngo", "z = y", "y = 6 * 7"]  # inserted below the chat
    inserted, ran = page.cells[1]["provenance"], page.cells[2]["provenance"]
    assert (ran["tool"], ran["call_id"]) == ("run_cell", "run")
    assert (inserted["tool"], inserted["call_id"]) == ("insert_cell", "ins")

    await notebook.turn(tool_call("run_cell", {"index": 1}, call_id="again"))
    assert page.cells[1]["provenance"]["call_id"] == "ins"  # the writer's stamp stays
    await notebook.undo("again")
    await notebook.undo("ins")
    await notebook.undo("run")
    assert page.sources() == ["%%chat\ngo", "y = 6 * 7"]
    assert "provenance" not in page.cells[1]  # the user's cell, as it was


def test_the_stamp_shape_is_checked_and_documented() -> None:
    good = {"thread": "main", "conversation_id": "c1", "turn": 3, "call_id": "a",
            "tool": "insert_cell", "timestamp": "2025-01-01T00:00:00.000+00:00"}  # fmt: skip
    assert Provenance.model_validate(good).turn == 3
    no_call = {k: v for k, v in good.items() if k != "call_id"}
    wrong = [{**good, "turn": 0}, {**good, "tool": "python"}, {**good, "thread": ""}, no_call,
             {**good, "turn": "3<b>"}]  # fmt: skip
    for bad in wrong:
        with pytest.raises(ValidationError):
            Provenance.model_validate(bad)
    documented = record_schema()["$defs"]["Provenance"]
    assert set(documented["required"]) == {"thread", "conversation_id", "turn", "call_id", "tool",
                                           "timestamp"}  # fmt: skip
    saved = json.loads(Path("docs/event-schema.json").read_text())
    assert saved["$defs"]["Provenance"] == documented


def _stamped_notebook() -> dict[str, Any]:
    stamp = {"thread": "main", "conversation_id": "c1", "turn": 3, "call_id": "a",
             "tool": "insert_cell", "timestamp": "2025-01-01T00:00:00.000+00:00",
             "notebook": "analysis.ipynb"}  # fmt: skip
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("total = 42\ntotal", id="stamped")
    cell.metadata["jupyter_turns"] = {"provenance": stamp}
    cell.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "42"},
                                           execution_count=1)]  # fmt: skip
    notebook.cells = [cell]
    return dict(notebook)


def test_a_stamped_cell_is_not_a_conversation_to_restore() -> None:
    problems: list[str] = []
    assert saved_turns(_stamped_notebook(), problems) == []
    assert problems == []


def test_nbconvert_shows_the_cell_and_its_outputs_but_not_its_stamp() -> None:
    stamped = _stamped_notebook()
    html, _ = HTMLExporter().from_notebook_node(nbformat.from_dict(stamped))
    assert "<pre>42</pre>" in html
    for text in ("from chat", "analysis.ipynb", "insert_cell", "provenance"):
        assert text not in html
    plain = json.loads(json.dumps(stamped))
    plain["cells"][0]["metadata"] = {}
    unstamped, _ = HTMLExporter().from_notebook_node(nbformat.from_dict(plain))
    assert html == unstamped  # the stamp adds nothing: no badge, no output
