"""The model's hands in the notebook: ``insert_cell`` and ``edit_cell``, which always ask
(``run_cell``, ``delete_cell`` and ``move_cell`` are in :mod:`.cell_steps`).

Before the approval each call shows what it would do (its *preview*, saved on the response
whatever the answer): the proposed cell for ``insert_cell``, a line diff of the cell's current
text (read live from the page) for ``edit_cell``. Approved, the page makes the change
(:mod:`.page`) and reports the cell as it is now, which the result says; the step joins the
undo log (:mod:`.undo`).

* ``insert_cell`` puts the cell below the chat cell, after the cells this turn inserted before,
  or below the cell ``after`` names. With ``run=True`` its code runs in the kernel as part of
  the turn (:func:`~.cell_checks.run_in_cell`). Without a page that can insert (nbclient, VS
  Code without the extension) nothing is asked and nothing inserted: the proposal stays in the
  chat for the user to copy.
* ``edit_cell`` changes only a cell the model read, still as it read it
  (:func:`~.cell_checks.current_cell`); with ``run=True`` the edited cell runs after the
  click, so its outputs match its text.

Each stamps the cell it changes with where the change came from, in the same change
(:func:`~.cell_checks.stamp`); undo puts back the stamp the cell had.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
from typing import Any, Literal

from ..reading.cells import cell_place
from ..reading.sources import NotebookReader
from ..tools.context import ToolContext
from ..tools.registry import Tool, tool
from ..tools.results import NotRun, ResponseFields, ToolFailed, ToolResult
from .cell_checks import (
    NO_PAGE,
    current_cell,
    describe,
    execution_count,
    live_view,
    run_in_cell,
    stamp,
)
from .page import KEEP, NotebookEditor, PageError
from .undo import undo_log

__all__ = ["edit_cell_tool", "insert_cell_tool", "line_diff"]


def line_diff(before: str, after: str) -> str:
    """A unified line diff of a cell's text, as the approval and the card show it."""
    lines = difflib.unified_diff(
        before.splitlines(), after.splitlines(), "current", "proposed", lineterm=""
    )
    return "\n".join(lines)


class _Inserts:
    """Where the next cell of this chat cell's run goes: below the chat cell, then below the
    cell inserted last (so a turn's cells keep their order)."""

    def __init__(self) -> None:
        self._run: tuple[str, int | None] | None = None
        self._last: str | None = None

    def after(self, chat_cell: str) -> str:
        run = (chat_cell, execution_count())
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
        after: int | None = None,
    ) -> ToolResult:
        """Propose a new notebook cell, inserted once the user approves it: below this chat
        cell (after cells you inserted earlier in this turn), or below cell `after`. With
        run=True a code cell also runs in the kernel, as if the user ran it, and you get its
        output.

        Args:
            source: The cell's full text (code or markdown).
            cell_type: "code" or "markdown".
            run: Run the code cell after inserting it (ignored for markdown).
            after: Insert below this cell (its index as notebook_cells lists it); default:
                below this chat cell.
        """
        below = await _below(reader, inserts, after)
        try:
            made = await editor.insert(below, cell_type, source, stamp(ctx, "insert_cell", None)[0])
        except PageError as exc:
            raise ToolFailed(f"Not inserted: {exc}.") from None
        if made.source != source or made.cell_type != cell_type:
            raise ToolFailed(f"Not inserted as proposed: the page reports {describe(made)}")
        assert made.id is not None
        if after is None:
            inserts.inserted(made.id)
        reader.seen.inserted(made.index)
        reader.seen.saw(made.id, made.index, source)
        cell = {"op": "insert", "cell_id": made.id, "index": made.index, "after": source}
        kind = "code" if cell_type == "code" else "markdown"
        if run and cell_type == "code":
            done = f"Inserted a code cell, {cell_place(made.index)}, and ran it"
            return await run_in_cell(reader, editor, ctx, ("insert_cell", cell, None), done)
        undo_log(reader.namespace).record(ctx.call_id, "insert_cell", {}, None, cell=cell)
        return ToolResult(
            f"Inserted a {kind} cell, {cell_place(made.index)} (not run).",
            fields=ResponseFields(cell=cell),
        )

    preview = functools.partial(_insert_preview, reader)
    return dataclasses.replace(
        insert_cell, preview=preview, reads_notebook=True, reviewable=_inserts_without_running
    )


def _inserts_without_running(args: dict[str, Any]) -> bool:
    """``--edits review`` inserts a cell without asking unless the insert runs code."""
    return not (args.get("run") and args.get("cell_type", "code") == "code")


async def _below(reader: NotebookReader, inserts: _Inserts, after: int | None) -> str:
    """The id of the cell the new one goes below: ``after``'s, or the chat cell's turn."""
    view = await live_view(reader, "Not inserted")
    if after is not None:
        cell = view.cell(after)
        if cell is None or cell.id is None:
            raise NotRun(f"Not inserted: there is no cell {after} ({len(view.cells)} cells).")
        return cell.id
    chat = next((c for c in view.cells if c.chat and c.id), None)
    if chat is None or chat.id is None:
        raise NotRun("Not inserted: the chat cell is not in the page's notebook.")
    return inserts.after(chat.id)


async def _insert_preview(reader: NotebookReader, args: dict[str, Any]) -> dict[str, Any]:
    """The proposed cell and where it goes, if the page can insert one; else NotRun says
    why (without a page the proposal stays in the chat, where the user can copy it)."""
    view = await reader.view()
    if view.origin != "live":
        raise NotRun(
            f"Not inserted: {NO_PAGE.format(origin=view.label)}. The proposed cell is "
            "shown in the chat, where the user can copy it.",
            reason="no page to insert into",
        )
    after = args.get("after")
    if after is None and not any(c.chat and c.id for c in view.cells):
        raise NotRun("Not inserted: the chat cell is not in the page's notebook.")
    if after is not None and view.cell(after) is None:
        raise NotRun(f"Not inserted: there is no cell {after} ({len(view.cells)} cells).")
    return {
        "kind": "insert",
        "cell_type": args["cell_type"],
        "source": args["source"],
        "run": bool(args["run"]) and args["cell_type"] == "code",
        **({"after": after} if after is not None else {}),
    }


def edit_cell_tool(reader: NotebookReader) -> Tool:
    editor = NotebookEditor(reader.page)

    @tool(name="edit_cell", run="ask", sequential=True, always_ask=True)
    async def edit_cell(index: int, source: str, ctx: ToolContext, run: bool = False) -> ToolResult:
        """Propose new text for an existing cell; the user sees a line diff and approves it.
        Read the cell in full first (notebook_cells(start=index, end=index)). Without run,
        its outputs stay those of its earlier text; with run=True the edited code cell runs
        after the change, so its outputs match its text, and you get them.

        Args:
            index: The cell's index, as notebook_cells lists it.
            source: The cell's complete new text.
            run: Run the edited code cell after the change.
        """
        before = await current_cell(reader, index, "Not edited")
        assert before.id is not None
        mark, earlier = stamp(ctx, "edit_cell", before)
        try:
            now = await editor.set_source(before.id, source, before.source, mark)
        except PageError as exc:
            raise ToolFailed(f"Not edited: {exc}.") from None
        if now.source != source:
            raise ToolFailed(f"Not edited: the page reports {describe(now)}, not the new text.")
        reader.seen.saw(before.id, now.index, source)
        cell = {"op": "edit", "cell_id": before.id, "index": now.index,
                "before": before.source, "after": source}  # fmt: skip
        changes = line_diff(before.source, source).splitlines()[2:]
        added = sum(1 for line in changes if line.startswith("+"))
        removed = sum(1 for line in changes if line.startswith("-"))
        edited = f"Edited {cell_place(now.index)} (+{added} -{removed} lines)"
        if run and now.cell_type == "code":
            step = ("edit_cell", {**cell, "ran": True}, before)
            done = f"{edited} and ran it"
            return await run_in_cell(reader, editor, ctx, step, done, marks=(KEEP, earlier))
        undo_log(reader.namespace).record(
            ctx.call_id, "edit_cell", {}, None, cell=cell, restore=earlier or None
        )
        return ToolResult(
            f"{edited}. It has not been run: its outputs are from its earlier text.",
            fields=ResponseFields(cell=cell),
        )

    preview = functools.partial(_edit_preview, reader)
    return dataclasses.replace(
        edit_cell, preview=preview, reads_notebook=True, reviewable=lambda a: not a.get("run")
    )


async def _edit_preview(reader: NotebookReader, args: dict[str, Any]) -> dict[str, Any]:
    """The line diff the user approves, of the cell's live text."""
    before = await current_cell(reader, args["index"], "Not edited")
    if before.source == args["source"]:
        run = f"; run_cell({args['index']}) runs it" if args.get("run") else ""
        raise NotRun(f"Not edited: that is already cell {args['index']}'s text{run}.")
    return {
        "kind": "edit",
        "index": args["index"],
        "diff": line_diff(before.source, args["source"]),
        **({"run": True} if args.get("run") else {}),
    }
