"""insert_cell and edit_cell: what the approval shows, what the page is asked, what is refused,
and undo of each step (against a page that answers like the bundled extension)."""

from __future__ import annotations

from typing import Any

from jupyter_turns import Chat
from jupyter_turns.editing.page import NotebookEditor
from jupyter_turns.editing.undoing import undo
from jupyter_turns.kernel.session import Session
from jupyter_turns.kernel.threads import Threads
from jupyter_turns.kernel_tools.builtin import BUILTINS, DEFAULT
from jupyter_turns.model.events import ToolCallResponse
from jupyter_turns.model.prompter import Approval, ApprovalRequest, PolicyPrompter
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call
from jupyter_turns.reading.sources import NotebookReader
from tests.support.fake_page import FakePage


class User:
    """Clicks Approve on everything and remembers what each approval showed."""

    def __init__(self) -> None:
        self.shown: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Approval:
        self.shown.append(request)
        return Approval("approved")


def _setup(page: FakePage | None, namespace: dict[str, Any] | None = None) -> NotebookReader:
    space = namespace if namespace is not None else {}
    if page is not None:
        space["__session__"] = "nb.ipynb"  # JupyterLab owns this kernel: its page answers
    return NotebookReader(
        space,
        metadata=(lambda: page) if page is not None else None,  # type: ignore[arg-type,return-value]
        cell_id=lambda: page.chat_id if page is not None else None,
    )


async def _turn(reader: NotebookReader, *calls: Any, user: User | None = None) -> list[Any]:
    provider = ScriptedProvider([cycle(*calls), cycle(message("Done."))])
    tools = [BUILTINS[name](reader) for name in DEFAULT]
    prompter = PolicyPrompter(user) if user is not None else PolicyPrompter()
    return list(await Chat(provider, tools=tools, prompter=prompter).send("go"))


def _responses(events: list[Any]) -> list[ToolCallResponse]:
    return [e for e in events if isinstance(e, ToolCallResponse)]


async def test_approved_cells_go_below_the_chat_cell_in_order_and_a_run_gets_its_outputs() -> None:
    page = FakePage("import math", "%%chat\ngo", "print('after')", chat=1)
    reader, user = _setup(page), User()
    events = await _turn(
        reader,
        tool_call("insert_cell", {"source": "total = 6 * 7\ntotal", "run": True}, call_id="a"),
        tool_call("insert_cell", {"source": "# Notes", "cell_type": "markdown"}, call_id="b"),
        user=user,
    )
    assert page.sources() == ["import math", "%%chat\ngo", "total = 6 * 7\ntotal", "# Notes",
                              "print('after')"]  # fmt: skip
    assert [r.preview for r in user.shown] == [
        {"kind": "insert", "cell_type": "code", "source": "total = 6 * 7\ntotal", "run": True},
        {"kind": "insert", "cell_type": "markdown", "source": "# Notes", "run": False},
    ]
    ran, notes = _responses(events)
    assert reader.namespace["total"] == 42
    assert page.cells[2]["outputs"][-1]["data"]["text/plain"] == "42"
    assert ran.content.startswith("Inserted code cell [2] and ran it.")
    assert "kernel state: created total (42)" in ran.content
    assert ran.cell["op"] == "insert" and ran.state["created"]
    assert ran.outputs[-1]["output_type"] == "execute_result"
    assert notes.content == "Inserted markdown cell [3] (not run)."
    assert notes.preview["cell_type"] == "markdown"  # the proposal is saved


async def test_without_a_page_nothing_is_asked_or_inserted_and_the_proposal_is_kept() -> None:
    reader = _setup(None)  # nbclient, jupyter execute: the cells come from the kernel's history
    events = await _turn(reader, tool_call("insert_cell", {"source": "x = 1"}, call_id="a"))
    [response] = _responses(events)
    assert response.status == "skipped" and response.is_error
    assert response.content.startswith("Not inserted: this kernel has no notebook page")
    assert [d.detail for d in response.decisions] == ["no page to insert into"]
    assert events[1].arguments == {"source": "x = 1"}  # the proposal, in the record
    assert getattr(response, "preview", None) is None  # no approval was shown


async def test_an_edit_shows_a_diff_and_is_refused_unread_changed_or_for_the_chat_cell() -> None:
    page = FakePage("x = 1\ny = 2", "%%chat\ngo", chat=1)
    reader, user = _setup(page), User()
    unread = await _turn(reader, tool_call("edit_cell", {"index": 0, "source": "x = 5"}))
    assert _responses(unread)[0].content.startswith("Not edited: read cell 0 in full first")
    assert not user.shown and page.sources()[0] == "x = 1\ny = 2"

    events = await _turn(
        reader,
        tool_call("notebook_cells", {}, call_id="read"),
        tool_call("edit_cell", {"index": 1, "source": "%%chat\nother"}, call_id="self"),
        tool_call("edit_cell", {"index": 0, "source": "x = 5\ny = 2"}, call_id="edit"),
        user=user,
    )
    _, itself, edited = _responses(events)
    assert itself.content.startswith("Not edited: cell 1 is this chat cell")
    [shown] = user.shown
    diff = "--- current\n+++ proposed\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 5\n y = 2"
    assert shown.preview == {"kind": "edit", "index": 0, "diff": diff}
    assert page.sources()[0] == "x = 5\ny = 2"
    assert edited.content.startswith("Edited cell [0] (+1 -1 lines)")
    assert edited.cell["before"] == "x = 1\ny = 2"

    page.cells[0]["source"] = "x = 5\ny = 2  # the user's edit"
    changed = await _turn(
        reader, tool_call("edit_cell", {"index": 0, "source": "x = 6"}), user=user
    )
    assert _responses(changed)[0].content.startswith("Not edited: cell 0 changed since you read it")
    assert len(user.shown) == 1  # refused before anyone was asked


async def test_undo_removes_the_inserted_cell_restores_bindings_and_rewrites_the_record() -> None:
    page = FakePage("%%chat\ngo", chat=0)
    space: dict[str, Any] = {"rows": 3}
    reader = _setup(page, space)
    threads = Threads(lambda: Chat(ScriptedProvider([])))
    session = Session(threads, space, reader=reader)
    thread = threads.get("main")
    provider = ScriptedProvider([
        cycle(tool_call("insert_cell", {"source": "rows = 4\ndata = [0] * rows", "run": True},
                        call_id="ins")),
        cycle(message("Done.")),
    ])  # fmt: skip
    thread.chat.provider = provider
    thread.chat.tools = {n: BUILTINS[n](reader) for n in DEFAULT}
    thread.chat.prompter = PolicyPrompter(User())
    events = await thread.chat.send("go")
    assert space["rows"] == 4 and len(page.cells) == 2
    record = {"version": 2, "conversation_id": "c", "thread": "main",
              "events": [e.model_dump(mode="json") for e in events]}  # fmt: skip
    session.shown_records[page.chat_id] = record

    [line] = await undo(session, NotebookEditor(reader.page), call_id="ins")
    assert line == (
        "Undid insert_cell call ins: removed the inserted cell, removed data, restored rows; "
        "not undone: files written and other side effects of the code, if any"
    )
    assert space["rows"] == 3 and "data" not in space and page.sources() == ["%%chat\ngo"]
    saved = page.cells[0]["outputs"][0]["data"]["application/vnd.jupyter-turns+json"]
    assert saved["events"][-1]["kind"] == "undo" and saved["events"][-1]["call_id"] == "ins"
    assert "Undone by the user" in page.cells[0]["outputs"][0]["data"]["text/html"]
    assert thread.chat.conversation.events[-1].kind == "undo"  # the model hears of it next
