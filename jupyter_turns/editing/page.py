"""Changing the notebook's cells through the page: the kernel asks, the bundled extension does.

Kernel code cannot change cells (the frontend owns the notebook: docs/architecture.md, "Facts the
design depends on"); the JupyterLab / Notebook 7 extension answers requests on the
``jupyter_turns.metadata`` comm (``js/labextension/edit.js``). Every change that replaces text names
the text it expects to replace, and the page refuses when the cell holds something else: an edit
never overwrites what the user typed meanwhile. Every change is answered with the page's report
of the cell afterwards (:func:`reported`): the tools build their results from it, never from
what they asked. A change may carry the cell's provenance stamp (``stamp``: written in the same
change, or None: the cell's stamp removed; :data:`KEEP`: left as it is), so the cell and its
stamp never disagree (:mod:`jupyter_turns.model.provenance`). Replies arrive while a
``%%chat`` cell runs (ipykernel handles comm messages concurrently with an awaited cell) and
while the kernel is idle.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..reading.cells import CellView
from ..reading.sources import PageChannel, cells_from_json

__all__ = [
    "KEEP",
    "CellPage",
    "Keep",
    "NotebookEditor",
    "PageError",
    "Removed",
    "Stamp",
    "reported",
]

WAIT = 10.0  # seconds the page gets to answer a change (both cores may be busy)


class Keep(enum.Enum):
    KEEP = "keep"


KEEP = Keep.KEEP  # a change that leaves the cell's provenance stamp as it is
Stamp = dict[str, Any] | None  # the stamp a change writes; None removes the cell's


def _stamped(request: dict[str, Any], stamp: Stamp | Keep) -> dict[str, Any]:
    return request if stamp is KEEP else {**request, "provenance": stamp}


class PageError(Exception):
    """The page did not make the change: no page answered, or it refused (with its reason)."""


class CellPage(Protocol):
    """What undo needs of the page (a fake in tests)."""

    async def delete(self, cell_id: str, expected: str) -> Removed: ...

    async def set_source(
        self, cell_id: str, source: str, expected: str, stamp: Stamp | Keep = KEEP
    ) -> CellView: ...

    async def move(self, cell_id: str, to: int, expected: str) -> CellView: ...

    async def restore(self, index: int, cell: dict[str, Any]) -> CellView: ...

    async def set_outputs(
        self,
        cell_id: str,
        outputs: list[dict[str, Any]],
        execution_count: int | None,
        expected: str | None = None,
        stamp: Stamp | Keep = KEEP,
    ) -> CellView: ...


@dataclass(frozen=True)
class Removed:
    """A cell the page deleted: what it was (``view``, at its index then) and its whole
    nbformat JSON (outputs and metadata), which undo puts back."""

    view: CellView
    cell: dict[str, Any]
    remaining: int  # cells the notebook holds now


def reported(reply: dict[str, Any], key: str = "cell") -> CellView:
    """The cell as the page reports it after a change (``{id, cell_type, source,
    execution_count, outputs, index}``): what a tool's result is built from."""
    data = reply.get(key)
    index = data.get("index") if isinstance(data, dict) else None
    views = cells_from_json([data], None) if isinstance(data, dict) else ()
    if not views or not isinstance(index, int) or views[0].id is None:
        raise PageError("the page did not report what the cell is now")
    return dataclasses.replace(views[0], index=index)


class NotebookEditor:
    """The cell changes the kernel can ask of the page; each raises :class:`PageError`, and
    each answers with the page's report of the cell after the change."""

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
                f"no notebook page answered within {self.wait:g} s (the notebook was closed, "
                "or JupyterLab or Notebook 7 with the jupyter_turns extension is not open)"
            )
        if not reply.get("ok"):
            raise PageError(str(reply.get("reason") or "the page refused"))
        return reply

    async def insert(
        self, after: str, cell_type: str, source: str, stamp: Stamp | Keep = KEEP
    ) -> CellView:
        """Insert a cell right below cell ``after``; the page's report of it."""
        request = {"request": "insert_cell", "after": after, "cell_type": cell_type}
        reply = await self._ask(_stamped({**request, "source": source}, stamp))
        return reported(reply)

    async def restore(self, index: int, cell: dict[str, Any]) -> CellView:
        """Put a deleted cell back at ``index`` (its outputs and metadata too)."""
        return reported(await self._ask({"request": "insert_cell", "index": index, "cell": cell}))

    async def set_source(
        self, cell_id: str, source: str, expected: str, stamp: Stamp | Keep = KEEP
    ) -> CellView:
        """Replace the cell's text, which must still be ``expected``."""
        request = {"request": "set_source", "cell_id": cell_id, "source": source}
        reply = await self._ask(_stamped({**request, "expected": expected}, stamp))
        return reported(reply)

    async def delete(self, cell_id: str, expected: str) -> Removed:
        """Delete the cell, whose text must still be ``expected``."""
        reply = await self._ask(
            {"request": "delete_cell", "cell_id": cell_id, "expected": expected}
        )
        whole, remaining = reply.get("removed"), reply.get("cells")
        if not isinstance(whole, dict) or not isinstance(remaining, int):
            raise PageError("the page did not report the cell it deleted")
        return Removed(reported(reply), whole, remaining)

    async def move(self, cell_id: str, to: int, expected: str) -> CellView:
        """Move the cell (whose text must still be ``expected``) to index ``to``."""
        reply = await self._ask(
            {"request": "move_cell", "cell_id": cell_id, "to": to, "expected": expected}
        )
        return reported(reply)

    async def set_outputs(
        self,
        cell_id: str,
        outputs: list[dict[str, Any]],
        execution_count: int | None,
        expected: str | None = None,
        stamp: Stamp | Keep = KEEP,
    ) -> CellView:
        """Give a code cell these nbformat outputs and execution count (if its text is still
        ``expected``, when given: outputs never go under text they did not come from)."""
        request: dict[str, Any] = {
            "request": "set_outputs",
            "cell_id": cell_id,
            "outputs": outputs,
            "execution_count": execution_count,
        }
        if expected is not None:
            request["expected"] = expected
        return reported(await self._ask(_stamped(request, stamp)))

    async def replace_record(self, cell_id: str, bundle: dict[str, Any]) -> None:
        """Replace the chat record the cell shows (its output, or its metadata when the output
        was cleared) with ``bundle``'s: an undo is saved where the step's card is."""
        await self._ask({"request": "replace_record", "cell_id": cell_id, "bundle": bundle})
