"""Where the model's view of the notebook comes from, best first.

1. **live**: the page (JupyterLab, Notebook 7) through the bundled extension's comm, asked
   while the ``%%chat`` cell runs — unsaved edits and current outputs included;
2. **file**: the notebook file this kernel belongs to (``__session__``, VS Code's
   ``__vsc_ipynb_file__``), as last saved;
3. **history**: the kernel's own inputs with what they printed, showed and raised
   (:class:`~.history.KernelHistory`) — under nbclient, ``jupyter execute`` or a console.

Each view says which it is, and why a better one was not used.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from ..record.format import META_KEY
from ..record.notebook import find_notebook
from .cells import CellView, NotebookView
from .history import KernelHistory

__all__ = ["NotebookReader", "PageChannel", "SeenCells", "cells_from_json"]

LIVE_TIMEOUT = 5.0  # seconds the page gets to answer (both cores may be busy)
LIVE_RETRY = 60.0  # seconds before a page that did not answer is asked again
MAX_FILE_BYTES = 200_000_000


class PageChannel(Protocol):
    """The channel to the page that owns this kernel (JupyterLab, Notebook 7): the kernel
    layer's comm (:class:`jupyter_turns.kernel.persist.MetadataWriter`), passed in by the
    session, so reading and editing the notebook need nothing of the kernel glue."""

    async def ask(self, request: dict[str, Any], wait: float) -> dict[str, Any] | None:
        """The page's reply to ``request``, or ``None`` when nothing answers within ``wait``
        seconds."""
        ...


class SeenCells:
    """The cells the model was shown whole, by id: the index and the text each had then. The
    cell tools change only a cell that is still where, and what, the model read; their own
    changes shift the indexes here as they shift them in the notebook."""

    def __init__(self) -> None:
        self._cells: dict[str, tuple[int, str]] = {}

    def saw(self, cell_id: str, index: int, source: str) -> None:
        self._cells[cell_id] = (index, source)

    def get(self, cell_id: str) -> tuple[int, str] | None:
        return self._cells.get(cell_id)

    def inserted(self, index: int) -> None:
        """A cell went in at ``index``: those at or below it moved down one."""
        self._shift(index, 1)

    def removed(self, cell_id: str, index: int) -> None:
        """The cell at ``index`` went: those below it moved up one."""
        self._cells.pop(cell_id, None)
        self._shift(index + 1, -1)

    def moved(self, cell_id: str, source: str, start: int, end: int) -> None:
        self.removed(cell_id, start)
        self.inserted(end)
        self.saw(cell_id, end, source)

    def _shift(self, at: int, by: int) -> None:
        for cell_id, (index, source) in list(self._cells.items()):
            if index >= at:
                self._cells[cell_id] = (index + by, source)


class NotebookReader:
    """Reads the notebook for one session; the notebook tools call :meth:`view`."""

    def __init__(
        self,
        namespace: dict[str, Any],
        *,
        metadata: Callable[[], PageChannel] | None = None,
        history: KernelHistory | None = None,
        cell_id: Callable[[], str | None] = lambda: None,
        hidden: Callable[[], set[str]] = set,
        output_chars: Callable[[], int] = lambda: 2_000,
        live_timeout: float = LIVE_TIMEOUT,
    ) -> None:
        self.namespace = namespace  # the user's namespace itself (``python`` binds names in it)
        self._metadata = metadata
        self.history = history
        self._cell_id = cell_id
        self.hidden = hidden  # IPython's own names, never listed as the user's variables
        self.output_chars = output_chars  # the per-output budget (ChatMagics.output_chars)
        self.live_timeout = live_timeout
        self._live_failed_at = -math.inf  # the page did not answer: skip it for a while
        # what the model was shown in full: the cell tools change only a cell whose text and
        # place are still what the model read
        self.seen = SeenCells()

    def page(self) -> PageChannel | None:
        """The comm to the page (JupyterLab, Notebook 7), where one owns this kernel; None
        elsewhere (nbclient, a console, VS Code: no extension answers there)."""
        if self._metadata is None or not _lab_session(self.namespace):
            return None
        return self._metadata()

    async def view(self) -> NotebookView:
        notes: list[str] = []
        cell_id = self._cell_id()
        asked_lately = time.monotonic() - self._live_failed_at < LIVE_RETRY
        if self._metadata is not None and _lab_session(self.namespace) and not asked_lately:
            live = await self._live(cell_id, notes)
            if live is not None:
                return live
        path = find_notebook(self.namespace)
        if path is not None:
            saved = _file(path, cell_id, notes)
            if saved is not None:
                return saved
        elif not notes:
            notes.append("no notebook page or file is known to this kernel")
        if self.history is None:
            return NotebookView("history", "nothing (no kernel history here)", (), tuple(notes))
        return self.history.view(tuple(notes))

    async def _live(self, cell_id: str | None, notes: list[str]) -> NotebookView | None:
        assert self._metadata is not None
        started = time.monotonic()
        reply = await self._metadata().ask({"request": "cells"}, self.live_timeout)
        if reply is None:
            self._live_failed_at = time.monotonic()
            waited = self._live_failed_at - started
            notes.append(f"the page did not answer within {waited:.0f} s (is the extension on?)")
            return None
        if not reply.get("ok"):
            notes.append(f"the page could not give its cells: {reply.get('reason', 'no reason')}")
            return None
        dirty = " (with edits not saved yet)" if reply.get("dirty") else ""
        label = f"the notebook as open in the page now{dirty}"
        return NotebookView("live", label, cells_from_json(reply.get("cells"), cell_id))


def _lab_session(namespace: dict[str, Any]) -> bool:
    """JupyterLab or Notebook 7 runs this kernel (their extension can answer); VS Code's
    ``__vsc_ipynb_file__`` alone means no extension: read its file at once."""
    return bool(namespace.get("__session__") or os.environ.get("JPY_SESSION_NAME"))


def _file(path: Path, cell_id: str | None, notes: list[str]) -> NotebookView | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            notes.append(f"{path.name} is too large to read")
            return None
        saved = datetime.fromtimestamp(path.stat().st_mtime).strftime("%Y-%m-%d %H:%M:%S")
        notebook = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError) as exc:
        notes.append(f"{path.name} could not be read ({type(exc).__name__})")
        return None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    label = (
        f"the saved file {path.name}, as last saved at {saved} (edits and outputs since are "
        "not in it)"
    )
    return NotebookView("file", label, cells_from_json(cells, cell_id), tuple(notes))


def cells_from_json(cells: Any, chat_cell_id: str | None) -> tuple[CellView, ...]:
    """nbformat cells (from the page or a file) as views; anything malformed is skipped."""
    if not isinstance(cells, list):
        return ()
    views = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        source = cell.get("source")
        source = "".join(map(str, source)) if isinstance(source, list) else str(source or "")
        outputs = cell.get("outputs")
        count = cell.get("execution_count")
        views.append(
            CellView(
                index=index,
                cell_type=str(cell.get("cell_type") or "unknown"),
                source=source,
                execution_count=count if isinstance(count, int) else None,
                outputs=tuple(o for o in outputs if isinstance(o, dict))
                if isinstance(outputs, list)
                else (),
                chat=chat_cell_id is not None and cell.get("id") == chat_cell_id,
                id=cell.get("id") if isinstance(cell.get("id"), str) else None,
                provenance=_stamp(cell),
            )
        )
    return tuple(views)


def _stamp(cell: dict[str, Any]) -> dict[str, Any] | None:
    """The cell's provenance stamp: ``provenance`` as the page sends it, else the saved
    file's ``metadata.jupyter_turns.provenance``."""
    stamp = cell.get("provenance")
    if stamp is None:
        metadata = cell.get("metadata")
        ours = metadata.get(META_KEY) if isinstance(metadata, dict) else None
        stamp = ours.get("provenance") if isinstance(ours, dict) else None
    return stamp if isinstance(stamp, dict) else None
