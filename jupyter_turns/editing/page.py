"""Changing the notebook's cells through the page: the kernel asks, the bundled extension does.

Kernel code cannot change cells (the frontend owns the notebook: docs/architecture.md, "Facts the
design depends on"); the JupyterLab / Notebook 7 extension answers requests on the
``jupyter_turns.metadata`` comm (``js/labextension/edit.js``). Every change that replaces text names
the text it expects to replace, and the page refuses when the cell holds something else: an edit
never overwrites what the user typed meanwhile. Replies arrive while a ``%%chat`` cell runs
(ipykernel handles comm messages concurrently with an awaited cell) and while the kernel is idle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..reading.sources import PageChannel

__all__ = ["CellPage", "NotebookEditor", "PageError"]

WAIT = 10.0  # seconds the page gets to answer a change (both cores may be busy)


class PageError(Exception):
    """The page did not make the change: no page answered, or it refused (with its reason)."""


class CellPage(Protocol):
    """What undo needs of the page (a fake in tests)."""

    async def delete(self, cell_id: str, expected: str) -> None: ...

    async def set_source(self, cell_id: str, source: str, expected: str) -> int: ...


class NotebookEditor:
    """The cell changes the kernel can ask of the page; each raises :class:`PageError`."""

    def __init__(self, page: Callable[[], PageChannel | None], wait: float = WAIT) -> None:
        self._page = page  # the comm to the page, or None where no page owns the kernel
        self.wait = wait

    async def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        writer = self._page()
        if writer is None:
            raise PageError("no notebook page is connected to this kernel")
        reply = await writer.ask(request, self.wait)
        if reply is None:
            raise PageError(
                "no notebook page answered (JupyterLab or Notebook 7 with the jupyter_turns "
                "extension is needed to change cells)"
            )
        if not reply.get("ok"):
            raise PageError(str(reply.get("reason") or "the page refused"))
        return reply

    async def insert(self, after: str, cell_type: str, source: str) -> tuple[str, int]:
        """Insert a cell right below cell ``after``; its id and index."""
        reply = await self._ask(
            {"request": "insert_cell", "after": after, "cell_type": cell_type, "source": source}
        )
        cell_id, index = reply.get("cell_id"), reply.get("index")
        if not isinstance(cell_id, str) or not isinstance(index, int):
            raise PageError("the page inserted a cell but did not say which")
        return cell_id, index

    async def set_source(self, cell_id: str, source: str, expected: str) -> int:
        """Replace the cell's text, which must still be ``expected``; its index."""
        reply = await self._ask(
            {"request": "set_source", "cell_id": cell_id, "source": source, "expected": expected}
        )
        index = reply.get("index")
        return index if isinstance(index, int) else -1

    async def delete(self, cell_id: str, expected: str) -> None:
        """Delete the cell, whose text must still be ``expected``."""
        await self._ask({"request": "delete_cell", "cell_id": cell_id, "expected": expected})

    async def set_outputs(
        self, cell_id: str, outputs: list[dict[str, Any]], execution_count: int | None
    ) -> None:
        """Give a code cell these nbformat outputs and execution count."""
        await self._ask(
            {
                "request": "set_outputs",
                "cell_id": cell_id,
                "outputs": outputs,
                "execution_count": execution_count,
            }
        )

    async def replace_record(self, cell_id: str, bundle: dict[str, Any]) -> None:
        """Replace the chat record the cell shows (its output, or its metadata when the output
        was cleared) with ``bundle``'s: an undo is saved where the step's card is."""
        await self._ask({"request": "replace_record", "cell_id": cell_id, "bundle": bundle})
