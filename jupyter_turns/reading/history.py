"""The kernel's own history of cells: the last resort when no notebook can be read.

Under nbclient, ``jupyter execute`` or a console there is no page to ask and no file to read,
but the kernel saw every cell it ran. IPython (>= 9) keeps, per execution count, the raw input,
what the cell printed and returned (``history_manager.outputs``) and the error it raised
(``history_manager.exceptions``). ipykernel records displayed outputs there only when
``store_display_history`` is set, and then under the wrong count for a ``display()`` inside the
cell, so :meth:`KernelHistory.install` keeps displayed outputs itself (figures, images), bounded
to the last :data:`KEEP_CELLS` cells. :meth:`KernelHistory.view` turns it all into a
:class:`~.cells.NotebookView` labeled as history, indexed by execution count.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from typing import Any

from ..persist import RECORD_MIME
from .cells import CellView, NotebookView

__all__ = ["KernelHistory"]

_SKIP_MIMES = (RECORD_MIME, "application/vnd.jupyter.widget-view+json")
_STREAMS = {"out_stream": "stdout", "err_stream": "stderr"}
LABEL = (
    "the kernel's own history (no notebook could be read: these are the inputs In[n] the "
    "kernel ran with what they printed, showed, returned and raised; cells may have been "
    "edited or deleted since)"
)


KEEP_CELLS = 200
KEEP_DISPLAYS = 20  # per cell


class KernelHistory:
    """Reads IPython's history of inputs, outputs and exceptions, plus displayed outputs."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.displays: OrderedDict[int, list[dict[str, Any]]] = OrderedDict()

    def install(self) -> None:
        """Keep what cells display from now on (once per shell; never breaks a display)."""
        publisher = getattr(self.shell, "display_pub", None)
        if publisher is None or getattr(publisher, "_jupyter_turns_history", None) is not None:
            return
        original = publisher.publish

        def publish(data: Any, metadata: Any = None, *args: Any, **kwargs: Any) -> Any:
            if not kwargs.get("update"):
                with contextlib.suppress(Exception):
                    self._displayed(data)
            return original(data, metadata, *args, **kwargs)

        publisher.publish = publish
        publisher._jupyter_turns_history = self

    def _displayed(self, data: Any) -> None:
        count = self.running_count()
        if count is None or not isinstance(data, dict) or any(m in data for m in _SKIP_MIMES):
            return
        kept = self.displays.setdefault(count, [])
        self.displays.move_to_end(count)
        while len(self.displays) > KEEP_CELLS:
            self.displays.popitem(last=False)
        if len(kept) < KEEP_DISPLAYS:
            kept.append({"output_type": "display_data", "data": dict(data), "metadata": {}})

    def running_count(self) -> int | None:
        """The running cell's execution count: IPython counts the next one while a cell runs."""
        count = getattr(self.shell, "execution_count", None)
        return count - 1 if isinstance(count, int) else None

    def view(self, notes: tuple[str, ...] = ()) -> NotebookView:
        manager = getattr(self.shell, "history_manager", None)
        inputs = getattr(manager, "input_hist_raw", None) or []
        outputs = getattr(manager, "outputs", None) or {}
        exceptions = getattr(manager, "exceptions", None) or {}
        running = self.running_count()
        cells = []
        for count, source in enumerate(inputs):
            if count == 0 or not isinstance(source, str):
                continue
            recorded = [o for o in map(_output, outputs.get(count, ())) if o is not None]
            converted = [o for o in recorded if o["output_type"] == "stream"]
            converted += self.displays.get(count, [])
            converted += [o for o in recorded if o["output_type"] == "execute_result"]
            error = exceptions.get(count)
            if isinstance(error, dict):
                converted.append({"output_type": "error", **error})
            cells.append(
                CellView(count, "code", source, count, tuple(converted), chat=count == running)
            )
        return NotebookView("history", LABEL, tuple(cells), notes)


def _output(item: Any) -> dict[str, Any] | None:
    """One ``HistoryOutput`` as an nbformat output (a chat cell's own record left out)."""
    kind = getattr(item, "output_type", None)
    bundle = getattr(item, "bundle", None)
    if not isinstance(bundle, dict):
        return None
    if kind in _STREAMS:
        text = bundle.get("stream", "")
        text = "".join(map(str, text)) if isinstance(text, list) else str(text)
        return {"output_type": "stream", "name": _STREAMS[kind], "text": text}
    if any(mime in bundle for mime in _SKIP_MIMES):
        return {"output_type": "display_data", "data": {}, "jupyter_turns": True}
    return {"output_type": kind or "display_data", "data": dict(bundle), "metadata": {}}
