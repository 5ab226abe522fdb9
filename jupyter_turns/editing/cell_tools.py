"""The model's hands in the notebook: ``insert_cell`` and ``edit_cell``, which always ask.

Before the approval each call shows what it would do (its *preview*, saved on the response
whatever the answer): the proposed cell for ``insert_cell``, a line diff of the cell's current
text (read live from the page) for ``edit_cell``. Approved, the page makes the change
(:mod:`.page`), and the step joins the undo log (:mod:`.undo`).

* ``insert_cell`` puts the cell below the chat cell, after the cells this turn inserted before.
  With ``run=True`` its code runs in the kernel as part of the turn (the ``python`` tool's path:
  namespace diff, figures, interrupt), and the cell gets the outputs and the chat cell's
  execution count (it ran during that cell). Without a page that can insert (nbclient, VS
  Code without the extension) nothing is asked and nothing inserted: the proposal stays in the
  chat for the user to copy.
* ``edit_cell`` refuses the chat cell itself, a cell the model has not read in full, and a cell
  that changed since it read it: an edit never starts from text the model did not see.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
from typing import Any, Literal

from ..model.content import labeled
from ..reading.sources import NotebookReader
from ..tools.context import ToolContext
from ..tools.registry import Tool, tool
from ..tools.results import NotRun, ResponseFields, ToolResult
from .page import NotebookEditor, PageError
from .undo import run_step, undo_log

__all__ = ["edit_cell_tool", "insert_cell_tool", "line_diff"]

_NO_PAGE = (
    "this kernel has no notebook page that can change cells (JupyterLab or Notebook 7 with "
    "the jupyter_turns extension; here the cells come from {origin})"
)


def line_diff(before: str, after: str) -> str:
    """A unified line diff of a cell's text, as the approval and the card show it."""
    lines = difflib.unified_diff(
        before.splitlines(), after.splitlines(), "current", "proposed", lineterm=""
    )
    return "\n".join(lines)


def _execution_count() -> int | None:
    """The running cell's execution count (the chat cell's, during a turn): IPython counts
    the next cell already while one runs; the running cell's own result holds its count."""
    from IPython import get_ipython

    result = getattr(getattr(get_ipython(), "displayhook", None), "exec_result", None)
    count = getattr(result, "execution_count", None)
    return count if isinstance(count, int) else None


class _Inserts:
    """Where the next cell of this chat cell's run goes: below the chat cell, then below the
    cell inserted last (so a turn's cells keep their order)."""

    def __init__(self) -> None:
        self._run: tuple[str, int | None] | None = None
        self._last: str | None = None

    def after(self, chat_cell: str) -> str:
        run = (chat_cell, _execution_count())
        if run != self._run:
            self._run, self._last = run, None
        return self._last or chat_cell

    def inserted(self, cell_id: str) -> None:
        self._last = cell_id


def insert_cell_tool(reader: NotebookReader) -> Tool:
    editor = NotebookEditor(reader.page)
    inserts = _Inserts()

    @tool(name="insert_cell", run="ask", sequential=True, always_ask=True)
    async def insert_cell(
        source: str,
        ctx: ToolContext,
        cell_type: Literal["code", "markdown"] = "code",
        run: bool = False,
    ) -> ToolResult:
        """Propose a new notebook cell, inserted below this chat cell once the user approves
        it (after cells you inserted earlier in this turn). With run=True a code cell also
        runs in the kernel, as if the user ran it, and you get its output.

        Args:
            source: The cell's full text (code or markdown).
            cell_type: "code" or "markdown".
            run: Run the code cell after inserting it (ignored for markdown).
        """
        view = await reader.view()
        chat = next((c for c in view.cells if c.chat and c.id), None)
        if view.origin != "live" or chat is None or chat.id is None:
            raise NotRun("Not inserted: the notebook page stopped answering.")
        try:
            cell_id, index = await editor.insert(inserts.after(chat.id), cell_type, source)
        except PageError as exc:
            raise NotRun(f"Not inserted: {exc}.") from None
        inserts.inserted(cell_id)
        reader.seen[cell_id] = source
        cell = {"op": "insert", "cell_id": cell_id, "index": index, "after": source}
        if run and cell_type == "code":
            return await _run_inserted(reader, editor, ctx, cell)
        kind = "code" if cell_type == "code" else "markdown"
        undo_log(reader.namespace).record(ctx.call_id, "insert_cell", {}, None, cell=cell)
        return ToolResult(
            f"Inserted {kind} cell [{index}] (not run).", fields=ResponseFields(cell=cell)
        )

    preview = functools.partial(_insert_preview, reader)
    return dataclasses.replace(insert_cell, preview=preview, reads_notebook=True)


async def _insert_preview(reader: NotebookReader, args: dict[str, Any]) -> dict[str, Any]:
    """The proposed cell, if the page can insert one; else NotRun says why."""
    view = await reader.view()
    if view.origin != "live":
        raise NotRun(
            f"Not inserted: {_NO_PAGE.format(origin=view.label)}. The proposed cell is "
            "shown in the chat, where the user can copy it.",
            reason="no page to insert into",
        )
    chat = next((c for c in view.cells if c.chat and c.id), None)
    if chat is None:
        raise NotRun("Not inserted: the chat cell is not in the page's notebook.")
    return {
        "kind": "insert",
        "cell_type": args["cell_type"],
        "source": args["source"],
        "run": bool(args["run"]) and args["cell_type"] == "code",
    }


async def _run_inserted(
    reader: NotebookReader, editor: NotebookEditor, ctx: ToolContext, cell: dict[str, Any]
) -> ToolResult:
    """Run an inserted code cell as the ``python`` tool runs code (undo step, namespace diff),
    and give the cell its outputs and the chat cell's execution count. ``cell`` is the insert's
    undo record (``cell_id``, ``index``, its text as ``after``), saved on the response."""
    index = cell["index"]
    code, state = run_step(cell["after"], reader.namespace, ctx.call_id, "insert_cell", cell=cell)
    count = _execution_count()
    note = ""
    try:
        outputs = code.outputs(rich=True, execution_count=count)
        await editor.set_outputs(cell["cell_id"], outputs, count)
    except PageError as exc:
        note = f"\n(The cell ran, but its outputs could not be shown in it: {exc}.)"
    text = f"Inserted code cell [{index}] and ran it.{note}\n" + labeled(
        code.text(), f"cell {index} run output"
    )
    fields = ResponseFields(cell=cell, outputs=code.outputs(rich=False))
    if state:
        text += f"\n\n{state.text()}"
        fields.state = state.as_dict()
    return ToolResult(text, code.images, fields)


def edit_cell_tool(reader: NotebookReader) -> Tool:
    editor = NotebookEditor(reader.page)

    @tool(name="edit_cell", run="ask", sequential=True, always_ask=True)
    async def edit_cell(index: int, source: str, ctx: ToolContext) -> ToolResult:
        """Propose new text for an existing cell; the user sees a line diff and approves it.
        Read the cell in full first (notebook_cells(start=index, end=index)). The cell is not
        run: its outputs stay those of its earlier text.

        Args:
            index: The cell's index, as notebook_cells lists it.
            source: The cell's complete new text.
        """
        cell_id, before = await _editable(reader, index)
        try:
            where = await editor.set_source(cell_id, source, expected=before)
        except PageError as exc:
            raise NotRun(f"Not edited: {exc}.") from None
        reader.seen[cell_id] = source
        index = where if where >= 0 else index
        cell = {"op": "edit", "cell_id": cell_id, "index": index, "before": before, "after": source}
        undo_log(reader.namespace).record(ctx.call_id, "edit_cell", {}, None, cell=cell)
        changes = line_diff(before, source).splitlines()[2:]
        added = sum(1 for line in changes if line.startswith("+"))
        removed = sum(1 for line in changes if line.startswith("-"))
        return ToolResult(
            f"Edited cell [{index}] (+{added} -{removed} lines). It has not been run: its "
            "outputs are from its earlier text.",
            fields=ResponseFields(cell=cell),
        )

    preview = functools.partial(_edit_preview, reader)
    return dataclasses.replace(edit_cell, preview=preview, reads_notebook=True)


async def _editable(reader: NotebookReader, index: int) -> tuple[str, str]:
    """The cell's id and text, live, if the model may edit it; else NotRun says why."""
    view = await reader.view()
    if view.origin != "live":
        raise NotRun(f"Not edited: {_NO_PAGE.format(origin=view.label)}.")
    cell = view.cell(index)
    if cell is None or cell.id is None:
        raise NotRun(f"Not edited: there is no cell {index} ({len(view.cells)} cells).")
    if cell.chat:
        raise NotRun(f"Not edited: cell {index} is this chat cell, which cannot edit itself.")
    seen = reader.seen.get(cell.id)
    if seen is None:
        raise NotRun(
            f"Not edited: read cell {index} in full first — notebook_cells(start={index}, "
            f"end={index}) shows its whole source — so the edit starts from its text."
        )
    if seen != cell.source:
        raise NotRun(
            f"Not edited: cell {index} changed since you read it. Read it again "
            f"(notebook_cells(start={index}, end={index})) and propose the edit anew."
        )
    return cell.id, cell.source


async def _edit_preview(reader: NotebookReader, args: dict[str, Any]) -> dict[str, Any]:
    """The line diff the user approves, of the cell's live text."""
    _, before = await _editable(reader, args["index"])
    if before == args["source"]:
        raise NotRun(f"Not edited: that is already cell {args['index']}'s text.")
    return {"kind": "edit", "index": args["index"], "diff": line_diff(before, args["source"])}
