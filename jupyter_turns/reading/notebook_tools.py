"""The read-only notebook tools: ``notebook_cells``, ``cell_output`` and ``variables``.

Offered by default (run mode ``unattended``: reading never asks), each call shows as a tool
card. Every answer is notebook content, so it is framed as labeled data
(:func:`~jupyter_turns.model.content.labeled`) and says where the cells came from. Outputs are cut
to the per-output budget (``ChatMagics.output_chars``) with a note saying how to read on; what is
cut into pages is the text with its secrets already withheld, so offsets count characters of
the redacted text and no page can start or end inside a secret.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ..model.content import labeled
from ..redaction import redact
from ..tools.registry import Tool, tool
from ..tools.results import ToolResult
from .cells import cell_text, outline
from .sources import NotebookReader
from .variables import describe_variables, user_variables

__all__ = ["cell_output_tool", "notebook_cells_tool", "page", "variables_tool"]

LISTING_CHARS = 6_000


def page(text: str, offset: int, budget: int, more: Callable[[int], str]) -> tuple[str, str]:
    """``text[offset:offset + budget]`` of ``text`` redacted whole, and a note of what was cut
    and how to read on (empty when nothing was cut). The note is the tool's own words: it
    goes outside the labeled notebook data, which the model is told never to take
    instructions from. Offsets are of the redacted text: a secret is withheld before the text
    is cut, so no offset shows a part of one."""
    text = redact(text).text
    total = len(text)
    offset = max(0, min(offset, total))
    end = min(total, offset + budget)
    piece = text[offset:end]
    if offset == 0 and end == total:
        return piece, ""
    notes = [f"[showing characters {offset:,}–{end:,} of {total:,}"]
    if end < total:
        notes.append(f"; {total - end:,} more: call {more(end)}")
    return piece, f"{''.join(notes)}]"


def _reading(made: Tool) -> Tool:
    return dataclasses.replace(made, run="unattended", reads_notebook=True)


def notebook_cells_tool(reader: NotebookReader) -> Tool:
    @tool(name="notebook_cells")
    async def notebook_cells(start: int | None = None, end: int | None = None) -> str:
        """List the notebook's cells: index, type, execution count, source and a one-line
        summary of each output (text, errors, images, DataFrames). The %%chat cell you are
        answering from is marked. Use cell_output(index) to read one cell's outputs in full.
        The tools take the 0-based index; the user sees no index: name a cell to them by the
        execution count Jupyter shows beside it ("cell [19]"), or by its place for one that
        has none ("the 4th cell").

        Args:
            start: First cell index to list (0-based; default the first).
            end: Last cell index to list, inclusive (default the last).
        """
        view = await reader.view()
        text, whole = outline(view, start, end)
        if view.origin != "history":  # what the cell tools check a cell against
            for cell in whole:
                if cell.id is not None:
                    reader.seen.saw(cell.id, cell.index, cell.source)
        return labeled(text, f"notebook cells ({view.origin})")

    return _reading(notebook_cells)


def cell_output_tool(reader: NotebookReader) -> Tool:
    @tool(name="cell_output")
    async def cell_output(index: int, offset: int = 0) -> ToolResult:
        """Read one cell's outputs in full: printed text, an error's traceback, rich results
        as text, and its images (you see them). Long outputs come in pages: pass the offset
        given at the end of a page to read on.

        Args:
            index: The cell's index as notebook_cells lists it (in kernel history: In[n]'s n).
            offset: Character offset to start from (0 for the beginning).
        """
        view = await reader.view()
        cell = view.cell(index)
        if cell is None:
            indexes = [c.index for c in view.cells]
            span = f"{indexes[0]}–{indexes[-1]}" if indexes else "none"
            return ToolResult(f"No cell {index} in {view.label}. Cell indexes: {span}.")
        shown = cell_text(cell)
        text, note = page(
            shown.text,
            offset,
            reader.output_chars(),
            lambda at: f"cell_output({index}, offset={at})",
        )
        images = shown.images if offset == 0 else []
        framed = labeled(text, f"cell {index} outputs ({view.origin})")
        return ToolResult(f"{framed}\n{note}" if note else framed, images)

    return _reading(cell_output)


def variables_tool(reader: NotebookReader) -> Tool:
    @tool(name="variables")
    def variables(pattern: str | None = None) -> str:
        """List the user's variables in the kernel: name, type and a short summary (shape and
        columns of DataFrames, shape and dtype of arrays, length of containers, short reprs).
        Use inspect(name) for one variable in detail.

        Args:
            pattern: Only names matching this glob (``df*``) or regular expression.
        """
        rows = user_variables(reader.namespace, pattern, reader.hidden())
        if not rows:
            which = f" matching {pattern!r}" if pattern else ""
            return f"No user variables{which}."
        return labeled(describe_variables(rows, LISTING_CHARS), "kernel variables")

    return _reading(variables)
