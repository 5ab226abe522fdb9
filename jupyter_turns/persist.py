"""Saving a cell's turn into the notebook: output records, metadata through the lab extension.

Three stores, all written by the kernel through the messaging protocol (never the .ipynb file):

* the *live record*: a display output (mime ``application/vnd.jupyter-turns+json``) written
  when the turn starts (the user's request), then within a second of every cycle boundary and
  of new streamed text (unfinished blocks saved as ``partial`` events), so a kernel that dies
  mid-turn, even in its first cycle, leaves the request and what was shown saved;
* the *final record*: at the end of the turn, a new display output with the whole record and a
  ``<details>``-folded markdown transcript (readable without a kernel or the extension); the
  live record then shrinks to a stub, so the record is not stored twice;
* cell and notebook metadata (key ``jupyter_turns``) through the ``jupyter_turns.metadata`` comm,
  when the JupyterLab / Notebook 7 extension is there; without it nothing errors.

nbval compares an output's first display with its saved last one: the live record's compared
parts never change (its JSON mime is skipped, see :mod:`jupyter_turns.testing`) and the final
record is displayed once, with a deterministic transcript.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from .events import ConversationEvent, conversation_record
from .text import plural
from .transcript import to_html

__all__ = ["RECORD_MIME", "MetadataWriter", "Recorder", "record_bundle", "turn_record"]

RECORD_MIME = "application/vnd.jupyter-turns+json"
META_KEY = "jupyter_turns"
COMM_TARGET = "jupyter_turns.metadata"
LIVE_TEXT = ""  # the live record shows nothing in frontends without a renderer

log = logging.getLogger(__name__)
_display_ids = itertools.count(1)


def turn_record(
    conversation_id: str,
    thread: str,
    events: Sequence[ConversationEvent],
    *,
    turn: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
    displaced: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The record of one cell's turn; ``displaced`` are the records of the cell's earlier runs
    (a re-run cell replaces its outputs, and its history must not go with them)."""
    record = conversation_record(conversation_id, events, thread=thread)
    if turn:
        record["turn"] = turn
    if settings:
        record["settings"] = settings  # the thread's, so a restore works without the extension
    if displaced:
        record["displaced"] = list(displaced)
    return record


def record_bundle(record: dict[str, Any]) -> dict[str, Any]:
    """The final output: the record plus a folded, sanitized transcript for readers without
    a renderer (HTML, because a session's own markdown outputs render raw HTML as trusted)."""
    from .conversation import parse_events

    events = parse_events(record)
    thread = record.get("thread", "main")
    summary = f"Conversation record · thread {thread} · {plural(len(events), 'event')}"
    return {
        RECORD_MIME: record,
        "text/html": to_html(events, summary=summary),
        "text/plain": summary,
    }


class MetadataWriter:
    """Sends ``{cell_id, key, value}`` to the lab extension over one lazily opened comm."""

    def __init__(self, open_comm: Callable[[], Any] | None = None) -> None:
        self._open_comm = open_comm or _default_comm
        self._comm: Any = None
        self.sent = 0

    def _send(self, message: dict[str, Any]) -> None:
        try:
            if self._comm is None:
                self._comm = self._open_comm()
            if self._comm is not None:
                self._comm.send(message)
                self.sent += 1
        except Exception as exc:  # no frontend, closed comm: the output record still holds it
            log.debug("jupyter_turns: metadata not sent: %s", exc)
            self._comm = None

    def cell(self, cell_id: str | None, value: Any) -> None:
        if cell_id:
            self._send({"cell_id": cell_id, "key": META_KEY, "value": value})

    def notebook(self, value: Any) -> None:
        self._send({"cell_id": None, "scope": "notebook", "key": META_KEY, "value": value})


def _default_comm() -> Any:
    from comm import create_comm

    return create_comm(target_name=COMM_TARGET, data={})


class Recorder:
    """Writes one cell's turn while it runs and once more at its end.

    :meth:`save` writes the live record (and, for a cycle boundary, the metadata) at once,
    unless the last write was less than ``min_interval`` seconds ago: then one deferred write,
    with the newest record, follows when the interval is up. So the turn so far is saved within
    ``min_interval``, and a long, fast tool loop or a long stream does not resend its growing
    record many times a second. The record is built only when it is written.
    """

    def __init__(
        self,
        *,
        thread: str,
        cell_id: str | None,
        metadata: MetadataWriter,
        notebook_state: Callable[[], dict[str, Any]],
        min_interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        call_later: Callable[[float, Callable[[], None]], Any] | None = None,
        display: Callable[..., Any] | None = None,
        update_display: Callable[..., Any] | None = None,
    ) -> None:
        if display is None or update_display is None:
            from IPython.display import display as ipy_display
            from IPython.display import update_display as ipy_update

            display, update_display = ipy_display, ipy_update
        self.thread = thread
        self.cell_id = cell_id
        self.metadata = metadata
        self.notebook_state = notebook_state
        self.min_interval = min_interval
        self._clock = clock
        self._call_later = call_later or _loop_call_later
        self._display = display
        self._update = update_display
        self._display_id = f"jupyter-turns-{os.getpid()}-{next(_display_ids)}"
        self._shown = False
        self._pending: Callable[[], dict[str, Any]] | None = None
        self._pending_metadata = False
        self._timer: Any = None
        self._last_write = -math.inf
        self.writes = 0

    def save(self, build: Callable[[], dict[str, Any]], *, metadata: bool = True) -> None:
        """Save the turn so far, now or within ``min_interval``; ``metadata=False`` writes only
        the live record (streamed text: the output alone survives a crash, and the cell's
        metadata is not resent every second)."""
        self._pending = build
        self._pending_metadata = self._pending_metadata or metadata
        wait = self._last_write + self.min_interval - self._clock()
        if wait <= 0:
            self._write_pending()
        elif self._timer is None:
            self._timer = self._call_later(wait, self._write_pending)

    def _write_pending(self) -> None:
        self._timer = None
        build, self._pending = self._pending, None
        metadata, self._pending_metadata = self._pending_metadata, False
        if build is None:
            return
        record = build()
        bundle = {RECORD_MIME: record, "text/plain": LIVE_TEXT}
        if self._shown:
            self._update(bundle, raw=True, display_id=self._display_id)
        else:
            self._display(bundle, raw=True, display_id=self._display_id)
            self._shown = True
        if metadata:
            self.metadata.cell(self.cell_id, record)
            self.metadata.notebook(self.notebook_state())
        self._last_write = self._clock()
        self.writes += 1

    def finish(self, record: dict[str, Any]) -> None:
        """The turn ended: the final record output, a stub in the live one, final metadata."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._pending = None
        self._pending_metadata = False
        if self._shown:
            stub = conversation_record(
                record["conversation_id"], (), thread=record.get("thread"), superseded=True
            )
            self._update(
                {RECORD_MIME: stub, "text/plain": LIVE_TEXT}, raw=True, display_id=self._display_id
            )
        self._display(record_bundle(record), raw=True)
        self.metadata.cell(self.cell_id, record)
        self.metadata.notebook(self.notebook_state())
        self.writes += 1


def _loop_call_later(delay: float, callback: Callable[[], None]) -> Any:
    import asyncio

    return asyncio.get_running_loop().call_later(delay, callback)
