"""The cell tools (insert, edit, run, delete, move): what the approval shows, what the page is
asked, what is refused, and undo of each step (against a page that answers like the extension)."""

from __future__ import annotations

from typing import Any

from jupyter_turns import Chat
from jupyter_turns.editing.cell_tools import line_diff
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
    assert ran.content.startswith("Inserted a code cell, the 3rd cell (index 2), and ran it.")
    assert "kernel state: created total (42)" in ran.content
    assert ran.cell["op"] == "insert" and ran.state["created"]
    assert ran.outputs[-1]["output_type"] == "execute_result"
    assert notes.content == "Inserted a markdown cell, the 4th cell (index 3) (not run)."
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
    assert edited.content.startswith("Edited the 1st cell (index 0) (+1 -1 lines)")
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


async def _session_turn(page: FakePage, space: dict[str, Any], *calls: Any) -> tuple[Session, Any]:
    """A turn in a notebook session (so that undo can rewrite the card's record)."""
    reader = _setup(page, space)
    threads = Threads(lambda: Chat(ScriptedProvider([])))
    session = Session(threads, space, reader=reader)
    thread = threads.get("main")
    thread.chat.provider = ScriptedProvider([cycle(*calls), cycle(message("Done."))])
    thread.chat.tools = {n: BUILTINS[n](reader) for n in DEFAULT}
    thread.chat.prompter = PolicyPrompter(User())
    events = await thread.chat.send("go")
    record = {"version": 2, "conversation_id": "c", "thread": "main",
              "events": [e.model_dump(mode="json") for e in events]}  # fmt: skip
    session.shown_records[page.chat_id] = record
    return session, events


async def test_run_cell_runs_the_cell_read_and_undo_puts_the_earlier_outputs_back() -> None:
    page = FakePage("%%chat\ngo", "x = 1 / 0", chat=0)
    page.cells[1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "old\n"}]
    space: dict[str, Any] = {}
    session, events = await _session_turn(
        page,
        space,
        tool_call("notebook_cells", {}, call_id="read"),
        tool_call("edit_cell", {"index": 1, "source": "x = 6 * 7\nprint(x)", "run": True},
                  call_id="fix"),
        tool_call("run_cell", {"index": 1}, call_id="again"),
    )  # fmt: skip
    _, fixed, again = _responses(events)
    assert fixed.content.startswith(
        "Edited the 2nd cell (index 1) (+2 -1 lines) and ran it. The page reports "
    )
    assert "→ stdout: 42" in fixed.content and space["x"] == 42
    assert fixed.preview == {"kind": "edit", "index": 1, "run": True,
                             "diff": line_diff("x = 1 / 0", "x = 6 * 7\nprint(x)")}  # fmt: skip
    assert again.content.startswith(
        "Ran the 2nd cell (index 1). The page reports the 2nd cell (index 1): code"
    )
    assert again.preview == {"kind": "run", "index": 1, "source": "x = 6 * 7\nprint(x)"}
    assert page.cells[1]["outputs"][0]["text"] == "42\n"

    [line] = await undo(session, NotebookEditor(session.reader.page), call_id="again")
    assert line.startswith("Undid run_cell call again: restored the cell's earlier outputs")
    assert page.cells[1]["outputs"][0]["text"] == "42\n"  # the edit's run's outputs
    [line] = await undo(session, NotebookEditor(session.reader.page), call_id="fix")
    assert "restored the edited cell's earlier text and outputs" in line
    assert page.sources()[1] == "x = 1 / 0"
    assert page.cells[1]["outputs"][0]["text"] == "old\n"


async def test_run_cell_gives_an_error_as_data_and_a_figure_as_an_image() -> None:
    figure = ("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
              "fig = plt.figure(figsize=(1, 1), dpi=20)\n_ = plt.plot([1, 2])")  # fmt: skip
    page = FakePage("%%chat\ngo", "1 / 0", figure, chat=0)
    reader, user = _setup(page), User()
    events = await _turn(
        reader,
        tool_call("notebook_cells", {}),
        tool_call("run_cell", {"index": 1}),
        tool_call("run_cell", {"index": 2}),
        user=user,
    )
    _, failed, drawn = _responses(events)
    # the cell's error is what it printed, not a failure of the tool: the model reads it
    assert failed.status == "done" and not failed.is_error
    assert failed.content.startswith(
        "Ran the 2nd cell (index 1). The page reports the 2nd cell (index 1): code"
    )
    assert "ZeroDivisionError: division by zero" in failed.content
    assert "jupyter_turns" not in failed.content  # the cell's own frames, not the tool's
    traceback = page.cells[1]["outputs"][0]["traceback"]
    assert traceback[-2:] == ['  File "<python tool>", line 1, in <module>',
                              "ZeroDivisionError: division by zero"]  # fmt: skip
    assert not any("jupyter_turns" in line for line in traceback)
    assert page.cells[1]["outputs"][0]["output_type"] == "error"  # and the notebook shows it
    assert [(i.label, i.media_type) for i in drawn.images] == [("figure 1", "image/png")]
    assert "→ image/png" in drawn.content


async def test_delete_shows_the_cell_and_outputs_and_undo_puts_it_back_where_it_was() -> None:
    page = FakePage("a = 1", "%%chat\ngo", "plot()", "b = 2", chat=1)
    out = {"output_type": "display_data", "data": {"text/plain": "<Figure>"}}
    page.cells[2]["outputs"] = [out]
    session, events = await _session_turn(
        page,
        {},
        tool_call("notebook_cells", {}),
        tool_call("delete_cell", {"index": 2}, call_id="d"),
    )
    deleted = _responses(events)[1]
    assert deleted.preview == {"kind": "delete", "index": 2, "cell_type": "code",
                               "source": "plot()", "outputs": ["<Figure>"]}  # fmt: skip
    assert deleted.content.startswith("Deleted the 3rd cell (index 2): code, 1 lines\n  → <Figure>")
    assert "The notebook has 3 cells now" in deleted.content
    assert page.sources() == ["a = 1", "%%chat\ngo", "b = 2"]
    [line] = await undo(session, NotebookEditor(session.reader.page), call_id="d")
    assert line == "Undid delete_cell call d: put the deleted cell back: the 3rd cell (index 2)"
    assert page.sources() == ["a = 1", "%%chat\ngo", "plot()", "b = 2"]
    assert page.cells[2]["outputs"] == [out]


async def test_move_then_act_on_the_moved_cells_by_their_new_indexes_and_undo_moves_back() -> None:
    page = FakePage("%%chat\ngo", "a = 1", "b = 2", "c = 3", chat=0)
    session, events = await _session_turn(
        page,
        {},
        tool_call("notebook_cells", {}),
        tool_call("move_cell", {"index": 3, "to": 1}, call_id="m"),
        tool_call("edit_cell", {"index": 2, "source": "a = 10"}, call_id="e"),  # a moved down
        tool_call("insert_cell", {"source": "# end", "cell_type": "markdown", "after": 3},
                  call_id="i"),
    )  # fmt: skip
    _, moved, edited, inserted = _responses(events)
    assert moved.content.startswith(
        "Moved the 4th cell (index 3) to index 1: the page reports the 2nd cell (index 1): code"
    )
    assert edited.content.startswith("Edited the 3rd cell (index 2)"), edited.content
    assert inserted.content == "Inserted a markdown cell, the 5th cell (index 4) (not run)."
    assert page.sources() == ["%%chat\ngo", "c = 3", "a = 10", "b = 2", "# end"]
    editor = NotebookEditor(session.reader.page)
    assert len(await undo(session, editor, count=3)) == 3
    assert page.sources() == ["%%chat\ngo", "a = 1", "b = 2", "c = 3"]


async def test_a_cell_the_user_changed_or_moved_is_refused_with_its_text_now() -> None:
    page = FakePage("%%chat\ngo", "a = 1", "b = 2", chat=0)
    reader, user = _setup(page), User()
    await _turn(reader, tool_call("notebook_cells", {}), user=user)
    page.cells[2]["source"] = "b = 3  # the user's"
    page.cells.insert(1, page._cell("import os"))  # the user's new cell: a and b move down
    events = await _turn(
        reader,
        tool_call("delete_cell", {"index": 3}, call_id="d"),
        tool_call("run_cell", {"index": 2}, call_id="r"),
        tool_call("move_cell", {"index": 1, "to": 2}, call_id="m"),
        user=user,
    )
    deleted, ran, moved = _responses(events)
    assert deleted.content.startswith(
        "Not deleted: cell 3 changed since you read it (this cell was cell 2 then). It reads "
        'now:\n<notebook_data source="cell 3 now">\nb = 3  # the user\'s\n</notebook_data>'
    )
    assert ran.content.startswith("Not run: cell 2 changed since you read it (this cell was cell")
    assert moved.content.startswith("Not moved: read cell 1 in full first")
    assert not user.shown and [r.status for r in (deleted, ran, moved)] == ["skipped"] * 3
    assert page.sources() == ["%%chat\ngo", "import os", "a = 1", "b = 3  # the user's"]
    again = await _turn(reader, tool_call("delete_cell", {"index": 3}), user=user)
    assert _responses(again)[0].content.startswith(
        "Deleted the 4th cell (index 3)"
    )  # now it has read it


async def test_a_page_that_stops_answering_gives_an_error_result_not_a_change() -> None:
    page = FakePage("%%chat\ngo", "a = 1", chat=0)
    reader, user = _setup(page), User()
    await _turn(reader, tool_call("notebook_cells", {}), user=user)

    class Closing:
        """Answers what the tool reads, then closes before the change (the tab closed)."""

        async def ask(self, request: dict[str, Any], wait: float) -> dict[str, Any] | None:
            return await page.ask(request, wait) if request["request"] == "cells" else None

    reader._metadata = lambda: Closing()  # type: ignore[assignment,return-value]
    events = await _turn(reader, tool_call("delete_cell", {"index": 1}), user=user)
    [response] = _responses(events)
    assert response.status == "error" and response.is_error
    assert response.content.startswith("Not deleted: no notebook page answered within 10 s")
    assert page.sources() == ["%%chat\ngo", "a = 1"]


class Unchanging(FakePage):
    """A page that answers "ok" to a change it did not make (a stale extension, a collaborator's
    document that won): its report is the cell as it still is."""

    def _apply(self, request: dict[str, Any]) -> dict[str, Any]:
        if request["request"] in ("set_source", "move_cell"):
            return self._report(request["cell_id"])
        if request["request"] == "insert_cell":
            request = {**request, "source": request["source"].upper()}
        return super()._apply(request)


async def test_a_page_that_says_ok_but_did_not_change_the_cell_gives_an_error_not_done() -> None:
    page = Unchanging("%%chat\ngo", "a = 1", "b = 2", chat=0)
    reader, user = _setup(page), User()
    events = await _turn(
        reader,
        tool_call("notebook_cells", {}),
        tool_call("edit_cell", {"index": 1, "source": "a = 10"}),
        tool_call("move_cell", {"index": 2, "to": 1}),
        tool_call("insert_cell", {"source": "c = 3", "after": 2}),
        user=user,
    )
    _, edited, moved, inserted = _responses(events)
    assert edited.content == (
        "Not edited: the page reports the 2nd cell (index 1): code, 1 lines\n  (no outputs), "
        "not the new text."
    )
    assert moved.content == (
        "Not moved to index 1: the page reports the 3rd cell (index 2): code, 1 lines\n"
        "  (no outputs)"
    )
    assert inserted.content.startswith(
        "Not inserted as proposed: the page reports the 4th cell (index 3): code"
    )
    assert [r.status for r in (edited, moved, inserted)] == ["error"] * 3
    assert all(r.is_error for r in (edited, moved, inserted))


async def test_without_a_page_each_cell_tool_says_there_is_no_page_to_change() -> None:
    reader = _setup(None)
    events = await _turn(
        reader,
        tool_call("run_cell", {"index": 0}),
        tool_call("delete_cell", {"index": 0}),
        tool_call("move_cell", {"index": 0, "to": 1}),
        tool_call("edit_cell", {"index": 0, "source": "x"}),
    )
    said = [r.content for r in _responses(events)]
    for response, verb in zip(
        said, ("Not run", "Not deleted", "Not moved", "Not edited"), strict=True
    ):
        assert response.startswith(f"{verb}: this kernel has no notebook page that can change")
