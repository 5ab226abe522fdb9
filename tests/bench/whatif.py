"""What-if: proposed package changes, measured by monkeypatching inside a benchmark process only.

Nothing here is imported by the package or edits its files. Each proposal is written as the
code it would become, so the figures measure exactly what is proposed.

``CoalescedRecorder`` — proposed for ``jupyter_turns/persist.py`` ``Recorder``:

* cycle boundaries update only the live output record (the crash-safety store); the cell and
  notebook metadata are written once, by ``finish()`` (today every boundary sends the whole
  record twice: display update + cell metadata);
* boundary writes are deferred to the loop and coalesced — at most one per ``min_interval``
  seconds, always the newest record — and a write still pending when the turn ends is dropped,
  because ``finish()`` writes the final record at once. A turn that ends in the same loop
  iteration as its last boundary (every turn without tools) then sends no live record at all;
* ``boundary`` also takes a zero-argument callable that builds the record, so the record is
  built only when it is written — proposed ``CellFront._boundary`` (``lazy_boundary`` below):
  ``self.recorder.boundary(lambda: self._record(turn))``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from jupyter_turns.persist import LIVE_TEXT, RECORD_MIME, Recorder, record_bundle

__all__ = ["CoalescedRecorder", "apply_in_kernel", "lazy_boundary"]

Record = dict[str, Any] | Callable[[], dict[str, Any]]


class CoalescedRecorder(Recorder):
    min_interval = 2.0  # seconds between two live-record writes

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pending: Record | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._last_write: float | None = None

    def boundary(self, record: Record) -> None:  # type: ignore[override]
        self._pending = record
        if self._timer is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._write_live()
            return
        due = 0.0 if self._last_write is None else self._last_write + self.min_interval
        self._timer = loop.call_later(max(0.0, due - loop.time()), self._write_live)

    def _write_live(self) -> None:
        self._timer = None
        pending, self._pending = self._pending, None
        if pending is None:
            return
        record = pending() if callable(pending) else pending
        bundle = {RECORD_MIME: record, "text/plain": LIVE_TEXT}
        if self._shown:
            self._update(bundle, raw=True, display_id=self._display_id)
        else:
            self._display(bundle, raw=True, display_id=self._display_id)
            self._shown = True
        try:
            self._last_write = asyncio.get_running_loop().time()
        except RuntimeError:
            self._last_write = None
        self.writes += 1

    def finish(self, record: dict[str, Any]) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._pending = None
        if self._shown:
            stub = {
                "version": 1,
                "conversation_id": record["conversation_id"],
                "thread": record.get("thread"),
                "events": [],
                "superseded": True,
            }
            self._update(
                {RECORD_MIME: stub, "text/plain": LIVE_TEXT}, raw=True, display_id=self._display_id
            )
        self._display(record_bundle(record), raw=True)
        self.metadata.cell(self.cell_id, record)
        self.metadata.notebook(self.notebook_state())
        self.writes += 1


def lazy_boundary(self: Any, turn: Any) -> None:
    """Proposed ``CellFront._boundary``: the record is built when (and if) it is written."""
    self._last = turn
    self.recorder.boundary(lambda: self._record(turn))


def apply_in_kernel() -> None:
    """Make every %%chat cell of this process use the proposal (front.py's names)."""
    import jupyter_turns.front as front

    front.Recorder = CoalescedRecorder  # type: ignore[attr-defined]
    front.CellFront._boundary = lazy_boundary  # type: ignore[method-assign]
