"""What every cell tool checks before it changes a cell, and how a cell runs as the model's step.

* :func:`current_cell` is the one home of the rule "never change a cell blindly": the cell
  at ``index`` (as ``notebook_cells`` numbered it) must be one the model was shown whole, still
  at that index and still holding that text (:class:`~jupyter_turns.reading.sources.SeenCells`).
  A cell the user edited, or one that moved, is refused with its current text, which the model
  has then read: it can propose the change anew.
* :func:`run_in_cell` runs a cell's code in the kernel as part of the turn (the ``python``
  tool's path: namespace diff, figures, interrupt, an undo step) and gives the cell its
  outputs and the chat cell's execution count through the page. The page cannot run it
  itself: the ``%%chat`` cell holds the kernel's shell channel while the turn runs, so an
  ``execute_request`` from the page would wait behind the very turn that waits for it.
* :func:`stamp` is the provenance stamp a change writes on its cell (the turn, the call, who
  approved it, when: :mod:`jupyter_turns.model.provenance`), with the cell's earlier stamp for
  undo to put back.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ..model.content import labeled
from ..model.events import now_iso
from ..model.provenance import Provenance, StampedTool
from ..reading.cells import OUTLINE_CHARS, CellView, NotebookView, cell_place, output_summary
from ..reading.sources import NotebookReader
from ..tools.context import ToolContext
from ..tools.results import NotRun, ResponseFields, ToolFailed, ToolResult
from .page import KEEP, Keep, NotebookEditor, PageError, Stamp
from .undo import run_step

__all__ = [
    "NO_PAGE",
    "current_cell",
    "describe",
    "execution_count",
    "live_view",
    "run_in_cell",
    "stamp",
]

NO_PAGE = (
    "this kernel has no notebook page that can change cells (JupyterLab or Notebook 7 with "
    "the jupyter_turns extension; here the cells come from {origin})"
)


def execution_count() -> int | None:
    """The running cell's execution count (the chat cell's, during a turn): IPython counts
    the next cell already while one runs; the running cell's own result holds its count."""
    from IPython import get_ipython

    result = getattr(getattr(get_ipython(), "displayhook", None), "exec_result", None)
    count = getattr(result, "execution_count", None)
    return count if isinstance(count, int) else None


async def live_view(reader: NotebookReader, refused: str) -> NotebookView:
    """The page's cells now; without a page, NotRun says plainly there is none to change."""
    view = await reader.view()
    if view.origin != "live":
        raise NotRun(f"{refused}: {NO_PAGE.format(origin=view.label)}.", reason="no page")
    return view


async def current_cell(reader: NotebookReader, index: int, refused: str) -> CellView:
    """The cell at ``index``, live, if the model may change it; else NotRun says why
    (``refused`` starts the message: "Not edited")."""
    view = await live_view(reader, refused)
    cell = view.cell(index)
    if cell is None or cell.id is None:
        raise NotRun(f"{refused}: there is no cell {index} ({len(view.cells)} cells).")
    if cell.chat:
        raise NotRun(f"{refused}: cell {index} is this chat cell, which cannot change itself.")
    seen = reader.seen.get(cell.id)
    if seen is None:
        raise NotRun(
            f"{refused}: read cell {index} in full first — notebook_cells(start={index}, "
            f"end={index}) shows its whole source — so the change starts from its text."
        )
    if seen != (index, cell.source):
        raise NotRun(_changed(reader, cell, seen[0], refused))
    return cell


def _changed(reader: NotebookReader, cell: CellView, was: int, refused: str) -> str:
    """The refusal of a cell that changed since the model read it, with its text now."""
    why = "its text was edited" if was == cell.index else f"this cell was cell {was} then"
    head = f"{refused}: cell {cell.index} changed since you read it ({why})"
    if len(cell.source) > OUTLINE_CHARS:
        return f"{head}. Read it again (notebook_cells(start={cell.index}, end={cell.index}))."
    assert cell.id is not None
    reader.seen.saw(cell.id, cell.index, cell.source)  # the model reads it now
    now = labeled(cell.source, f"cell {cell.index} now")
    return f"{head}. It reads now:\n{now}\nPropose the change anew from this text."


def describe(cell: CellView) -> str:
    """The page's report of a cell, in a line per output: what a result says the cell is."""
    count = f" [{cell.execution_count}]" if cell.execution_count is not None else ""
    lines = [f"{cell_place(cell.index)}: {cell.cell_type}{count}, "
             f"{len(cell.source.splitlines())} lines"]  # fmt: skip
    lines += [f"  → {output_summary(o)}" for o in cell.outputs]
    if cell.cell_type == "code" and not cell.outputs:
        lines.append("  (no outputs)")
    return "\n".join(lines)


def stamp(
    ctx: ToolContext, tool: StampedTool, before: CellView | None
) -> tuple[Stamp | Keep, dict[str, Any]]:
    """The provenance stamp ``tool``'s change writes on the cell (``before``: the cell as it
    was; None for a new one), and what undo puts back: ``{"provenance": the earlier stamp}``,
    or nothing when the stamp is left as it is. A run leaves the stamp of the text's writer
    (an inserted or edited cell the model then runs still says it wrote it); a call outside
    a turn (a Chat without one) stamps nothing."""
    if ctx.origin is None or (tool == "run_cell" and before and _wrote(before.provenance)):
        return KEEP, {}
    made = Provenance(
        **ctx.origin.model_dump(),
        call_id=ctx.call_id,
        tool=tool,
        who=ctx.approver,
        timestamp=now_iso(),
    )
    earlier = {"provenance": before.provenance} if before is not None else {}
    return made.model_dump(mode="json", exclude_none=True), earlier


def _wrote(value: dict[str, Any] | None) -> bool:
    """Whether the stamp says the model wrote the cell's text (a malformed one says not)."""
    try:
        return value is not None and Provenance.model_validate(value).written_text()
    except ValidationError:
        return False


async def run_in_cell(
    reader: NotebookReader,
    editor: NotebookEditor,
    ctx: ToolContext,
    step: tuple[str, dict[str, Any], CellView | None],
    done: str,
    *,
    marks: tuple[Stamp | Keep, dict[str, Any]] = (KEEP, {}),
) -> ToolResult:
    """Run the cell's code (``step``: the tool's name, the response's ``cell`` record with
    the code as ``after``, and the cell as it was before, whose outputs undo puts back) and
    show its outputs in it, with the stamp ``marks`` gives (and the earlier one undo puts
    back: :func:`stamp`). The result starts with ``done`` ("Edited the 3rd cell (index 2) and ran
    it")
    and says what the page reports the cell is; a page that did not take the outputs gives
    an error result (the code did run: the model reads its output either way)."""
    tool, cell, before = step
    mark, restore = marks[0], dict(marks[1])
    if before is not None:
        restore |= {"outputs": list(before.outputs), "execution_count": before.execution_count}
    code, state = run_step(
        cell["after"], reader.namespace, ctx.call_id, tool, cell=cell, restore=restore or None
    )
    count = execution_count()
    output = labeled(code.text(), f"cell {cell['index']} run output")
    if state:
        output += f"\n\n{state.text()}"
    try:
        outputs = code.outputs(rich=True, execution_count=count)
        report = await editor.set_outputs(cell["cell_id"], outputs, count, cell["after"], mark)
    except PageError as exc:
        raise ToolFailed(
            f"{done} in the kernel, but the page did not show its outputs: {exc}.\n{output}"
        ) from None
    fields = ResponseFields(cell=cell, outputs=code.outputs(rich=False))
    if state:
        fields.state = state.as_dict()
    text = f"{done}. The page reports {describe(report)}\n{output}"
    return ToolResult(text, code.images, fields)
