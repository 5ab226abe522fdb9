"""``run_cell``, ``delete_cell`` and ``move_cell``: the model runs, removes and reorders cells.

Like ``insert_cell`` and ``edit_cell`` (:mod:`.cell_tools`) each always asks, with a preview
(the code that will run; the cell and its outputs that will go; where the cell will move), acts
only on a cell the model read, still where and as it read it
(:func:`~.cell_checks.current_cell`), builds its result from the page's report of the cell
after the change, and is one undo step: a run's names and the outputs it replaced, a deleted
cell put back where it was with its outputs, a moved cell moved back. A run stamps the cell's
provenance unless the model wrote its text (:func:`~.cell_checks.stamp`); a moved cell keeps its
stamp, and a deleted one goes back with its own.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from ..reading.cells import CellView, cell_place, output_summary
from ..reading.sources import NotebookReader
from ..tools.context import ToolContext
from ..tools.registry import Tool, tool
from ..tools.results import NotRun, ResponseFields, ToolFailed, ToolResult
from .cell_checks import current_cell, describe, live_view, run_in_cell, stamp
from .page import NotebookEditor, PageError
from .undo import undo_log

__all__ = ["delete_cell_tool", "move_cell_tool", "run_cell_tool"]


def run_cell_tool(reader: NotebookReader) -> Tool:
    editor = NotebookEditor(reader.page)

    @tool(name="run_cell", run="ask", sequential=True, always_ask=True)
    async def run_cell(index: int, ctx: ToolContext) -> ToolResult:
        """Run an existing code cell in the kernel, as if the user ran it, once the user
        approves: its outputs and execution count go into the notebook, and you get them
        (images too; an error as its traceback). Read the cell first (notebook_cells).

        Args:
            index: The code cell's index, as notebook_cells lists it.
        """
        cell = await _code_cell(reader, index, "Not run")
        assert cell.id is not None
        record = {"op": "run", "cell_id": cell.id, "index": cell.index, "after": cell.source}
        step = ("run_cell", record, cell)
        marks = stamp(ctx, "run_cell", cell)
        return await run_in_cell(
            reader, editor, ctx, step, f"Ran {cell_place(cell.index)}", marks=marks
        )

    return dataclasses.replace(
        run_cell, preview=functools.partial(_run_preview, reader), reads_notebook=True
    )


async def _code_cell(reader: NotebookReader, index: int, refused: str) -> CellView:
    cell = await current_cell(reader, index, refused)
    if cell.cell_type != "code":
        raise NotRun(f"{refused}: cell {index} is a {cell.cell_type} cell, not code.")
    return cell


async def _run_preview(reader: NotebookReader, args: dict[str, Any]) -> dict[str, Any]:
    cell = await _code_cell(reader, args["index"], "Not run")
    return {"kind": "run", "index": cell.index, "source": cell.source}


def delete_cell_tool(reader: NotebookReader) -> Tool:
    editor = NotebookEditor(reader.page)

    @tool(name="delete_cell", run="ask", sequential=True, always_ask=True)
    async def delete_cell(index: int, ctx: ToolContext) -> ToolResult:
        """Propose deleting a cell; the user sees it and its outputs and approves. Undo puts
        it back where it was, outputs included. Read the cell first (notebook_cells).

        Args:
            index: The cell's index, as notebook_cells lists it.
        """
        cell = await current_cell(reader, index, "Not deleted")
        assert cell.id is not None
        try:
            removed = await editor.delete(cell.id, expected=cell.source)
        except PageError as exc:
            raise ToolFailed(f"Not deleted: {exc}.") from None
        gone = removed.view
        reader.seen.removed(cell.id, gone.index)
        record = {"op": "delete", "cell_id": cell.id, "index": gone.index, "before": gone.source}
        undo_log(reader.namespace).record(
            ctx.call_id, "delete_cell", {}, None, cell=record, restore={"cell": removed.cell}
        )
        return ToolResult(
            f"Deleted {describe(gone)}\nThe notebook has {removed.remaining} cells now; the "
            f"cells below it moved up one.",
            fields=ResponseFields(cell=record),
        )

    return dataclasses.replace(
        delete_cell,
        preview=functools.partial(_delete_preview, reader),
        reads_notebook=True,
        reviewable=_always,
    )


async def _delete_preview(reader: NotebookReader, args: dict[str, Any]) -> dict[str, Any]:
    cell = await current_cell(reader, args["index"], "Not deleted")
    return {
        "kind": "delete",
        "index": cell.index,
        "cell_type": cell.cell_type,
        "source": cell.source,
        "outputs": [output_summary(o) for o in cell.outputs],
    }


def move_cell_tool(reader: NotebookReader) -> Tool:
    editor = NotebookEditor(reader.page)

    @tool(name="move_cell", run="ask", sequential=True, always_ask=True)
    async def move_cell(index: int, to: int, ctx: ToolContext) -> ToolResult:
        """Propose moving a cell so that it ends up at index `to` (the other cells shift).
        Read the cell first (notebook_cells).

        Args:
            index: The cell's index now, as notebook_cells lists it.
            to: Its index after the move.
        """
        cell = await _movable(reader, index, to)
        assert cell.id is not None
        try:
            now = await editor.move(cell.id, to, expected=cell.source)
        except PageError as exc:
            raise ToolFailed(f"Not moved: {exc}.") from None
        if now.index != to:
            raise ToolFailed(f"Not moved to index {to}: the page reports {describe(now)}")
        reader.seen.moved(cell.id, cell.source, index, now.index)
        record = {"op": "move", "cell_id": cell.id, "index": now.index, "from": index,
                  "after": cell.source}  # fmt: skip
        undo_log(reader.namespace).record(ctx.call_id, "move_cell", {}, None, cell=record)
        return ToolResult(
            f"Moved {cell_place(index)} to index {now.index}: the page reports {describe(now)}",
            fields=ResponseFields(cell=record),
        )

    return dataclasses.replace(
        move_cell,
        preview=functools.partial(_move_preview, reader),
        reads_notebook=True,
        reviewable=_always,
    )


def _always(_: dict[str, Any]) -> bool:
    """A delete or a move runs no code: ``--edits review`` makes it without asking."""
    return True


async def _movable(reader: NotebookReader, index: int, to: int) -> CellView:
    cell = await current_cell(reader, index, "Not moved")
    count = len((await live_view(reader, "Not moved")).cells)
    if not 0 <= to < count:
        raise NotRun(f"Not moved: there is no index {to} ({count} cells: 0–{count - 1}).")
    if to == index:
        raise NotRun(f"Not moved: cell {index} is at index {to} already.")
    return cell


async def _move_preview(reader: NotebookReader, args: dict[str, Any]) -> dict[str, Any]:
    cell = await _movable(reader, args["index"], args["to"])
    return {"kind": "move", "index": cell.index, "to": args["to"], "source": cell.source}
