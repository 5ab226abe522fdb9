"""Saving a cell's turn into the notebook: one output per chat cell, and metadata.

All written by the kernel through the messaging protocol (never the .ipynb file):

* the cell's *one output* (a single display id): while the turn runs, the chat widget where a
  page draws it, else the live record (mime ``application/vnd.jupyter-turns+json``) followed by
  live parts, one output per save with only what it adds (:class:`Recorder`); when the turn
  ends, the final record bundle replaces it in place: the record, an expanded sanitized HTML
  transcript (readable without the extension) and a one-line summary;
* cell and notebook metadata (key ``jupyter_turns``) through the ``jupyter_turns.metadata``
  comm, when the JupyterLab / Notebook 7 extension is there (without it nothing errors): the
  turn so far, marked ``live``, from the request on and within a second of every cycle
  boundary, so a kernel that dies mid-turn leaves it there; the extension then shows it (with
  what the page still showed) in place of the widget. At the end, a pointer to the output's
  record (``in_output``): the file holds the record once, and the extension moves it into the
  metadata if the output is cleared.

A page that opens the notebook during or after a turn (reloaded, a second tab, reconnected after
a drop) loaded the file, which misses what the kernel did since, and IOPub cannot reach its
cells (their outputs were never this kernel's displays). It says so; the kernel answers on a
fresh metadata comm (:meth:`MetadataWriter.reopen`) with the running turn's widget
(``show_live``) and the finished turns' records (``show_record``, also sent at the end of a turn
during which a page opened), which the extension puts in the cells: see
:func:`jupyter_turns.kernel.front.page_opened`. Such a page never hears of the run's state from
Jupyter either: the kernel says when a chat cell runs and when it ends, with its execution count
(``cell_run``), and every page but the one that ran it shows that prompt.

nbval ignores ``update_display_data``; :mod:`jupyter_turns.testing` applies it, so nbval
compares the final record bundle (its deterministic HTML and summary) with the saved one.
What is written (the mime, the metadata key, the record and its bundle) is the record's format,
:mod:`jupyter_turns.record.format`; this module only writes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import math
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from ..model.events import new_id
from ..record.format import META_KEY, RECORD_MIME, end_part, live_part, record_bundle, summary
from ..tools.capture import noting

__all__ = ["COMM_TARGET", "KEEP_PARTS", "CellPrints", "MetadataWriter", "Recorder"]

COMM_TARGET = "jupyter_turns.metadata"
# most of what printed to a headless cell during its turn that is kept to print again
PRINTED_CHARS = 20_000
# bytes of live parts from which a headless turn keeps them at its end (a long answer streamed:
# its text is not sent again); below, the parts go and the final record is the one output
KEEP_PARTS = 8_192

log = logging.getLogger(__name__)
_display_ids = itertools.count(1)


class CellPrints:
    """What printed to a cell since it began (a notice about a ``.env`` file, a warning), up to
    ``PRINTED_CHARS``, kept to print again after the turn's final ``clear_output`` — which
    takes every output of the cell, also what printed before the turn's first output (while
    the provider was built, say). Started when a ``%%chat`` cell begins
    (:meth:`jupyter_turns.kernel.magic.ChatMagics` ``pre_run_cell``), or by the Recorder."""

    def __init__(self) -> None:
        self._printed: list[tuple[str, str]] = []  # (stream, text)
        self._chars = 0
        self._stop = noting(self._note)

    def _note(self, stream: str, text: str) -> None:
        if self._chars < PRINTED_CHARS:
            self._printed.append((stream, text[: PRINTED_CHARS - self._chars]))
        self._chars += len(text)

    def stop(self) -> None:
        """Note nothing more (idempotent)."""
        self._stop()

    def print_again(self) -> None:
        """Print what was noted again, once (a clear took it away)."""
        self.stop()
        for stream, text in self._printed:
            getattr(sys, stream).write(text)
        if self._chars > PRINTED_CHARS:
            sys.stderr.write(f"\n[{self._chars - PRINTED_CHARS:,} more characters]\n")
        self._printed.clear()
        self._chars = 0


class MetadataWriter:
    """Sends ``{cell_id, key, value}`` to the lab extension over one lazily opened comm, and
    asks it questions on the same comm (:meth:`ask`: the live notebook's cells)."""

    def __init__(self, open_comm: Callable[[], Any] | None = None) -> None:
        self._open_comm = open_comm or _default_comm
        self._comm: Any = None
        self._retired: Any = None  # the comm before the last reopen: closed at the next one
        self.sent = 0
        self.pages_opened = 0  # how many times a page opened the notebook (:meth:`reopen`)
        self._waiting: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Future[Any]]] = {}
        self._html_on_save: set[str] = set()  # kernel clients whose server adds transcripts

    def _send(self, message: dict[str, Any]) -> bool:
        try:
            if self._comm is None:
                self._comm = self._open_comm()
                listen = getattr(self._comm, "on_msg", None)
                if callable(listen):  # replies to :meth:`ask`
                    listen(self._on_msg)
                closed = getattr(self._comm, "on_close", None)
                if callable(closed):  # a page without the extension closes it at once
                    closed(self._closer(self._comm))
            if self._comm is not None:
                self._comm.send(message)
                self.sent += 1
                return True
        except Exception as exc:  # no frontend, closed comm: the output record still holds it
            log.debug("jupyter_turns: metadata not sent: %s", exc)
            self._comm = None
        return False

    async def ask(self, request: dict[str, Any], wait: float) -> dict[str, Any] | None:
        """Send ``request`` with a fresh ``request_id``; the extension's reply, or ``None`` when
        nothing answers within ``wait`` seconds (no extension, no page, a closed notebook).
        The reply arrives while the ``%%chat`` cell is still running: ipykernel handles comm
        messages concurrently with an awaited cell (docs/architecture.md, "Facts the design
        depends on")."""
        loop = asyncio.get_running_loop()
        request_id = new_id()
        future: asyncio.Future[Any] = loop.create_future()
        self._waiting[request_id] = (loop, future)
        try:
            if not self._send({**request, "request_id": request_id}):
                return None
            reply = await asyncio.wait_for(future, wait)
            return reply if isinstance(reply, dict) else None
        except TimeoutError:
            return None
        finally:
            self._waiting.pop(request_id, None)

    def _on_msg(self, message: Any) -> None:
        """A reply from the page (maybe on a comm thread): resolve the waiting :meth:`ask`; a
        page whose server adds the HTML transcript when it saves says so in its answers."""
        try:
            data = message["content"]["data"]
            if isinstance(data, dict) and data.get("html_on_save") is True:
                self._html_on_save.add(str(message["header"]["session"]))
            loop, future = self._waiting[data["request_id"]]
        except (KeyError, TypeError):
            return  # an ``{ok}`` answer to a metadata write: nothing waits for it
        loop.call_soon_threadsafe(_resolve, future, data)

    def _closer(self, comm: Any) -> Callable[[Any], None]:
        """``comm``'s close callback: only the comm in use says nothing will answer."""

        def closed(message: Any = None) -> None:
            if comm is self._comm:
                self._on_close(message)

        return closed

    def _on_close(self, _message: Any = None) -> None:
        """The page closed the comm (no extension there, or the page went): nothing will
        answer, so every waiting :meth:`ask` gets ``None`` now; the next write opens anew."""
        self._comm = None
        for loop, future in list(self._waiting.values()):
            loop.call_soon_threadsafe(_resolve, future, None)

    def html_on_save(self, client: str | None) -> bool:
        """Whether the page of kernel client ``client`` (the one that ran a cell) said that its
        server adds a finished record's HTML transcript when it saves the notebook
        (:mod:`jupyter_turns.server_extension`): its final record can leave it out."""
        return client is not None and client in self._html_on_save

    def cell(self, cell_id: str | None, value: Any) -> None:
        if cell_id:
            self._send({"cell_id": cell_id, "key": META_KEY, "value": value})

    def cell_in_output(self, cell_id: str | None, mime: str) -> None:
        """The cell's record is its output's ``mime`` data: the extension keeps a pointer in
        the metadata (the file holds the record once) and moves the record there if the
        output is cleared."""
        if cell_id:
            self._send({"cell_id": cell_id, "key": META_KEY, "in_output": mime})

    def notebook(self, value: Any) -> None:
        self._send({"cell_id": None, "scope": "notebook", "key": META_KEY, "value": value})

    def reopen(self) -> None:
        """A page opened the notebook (a reload, a second tab, a reconnect): it never got this
        comm's ``comm_open``, so it drops what is sent on it. The next send opens a new one,
        which every page then open registers. The old one is closed only at the next reopen:
        JupyterLab runs a comm target's comms on one kernel subshell per page, deletes it when
        the page's last comm of the target closes, and a comm opened right after joins the
        subshell being deleted (each later answer of that page then goes nowhere: the kernel
        logs "Unknown subshell_id"). So a page that held a comm always holds one. An
        :meth:`ask` still waiting gets its answer on the old comm."""
        self.pages_opened += 1
        if self._comm is None:  # none opened since: the pages' last one stays
            return
        stale, self._retired, self._comm = self._retired, self._comm, None
        if stale is not None:
            with contextlib.suppress(Exception):
                stale.close()

    def trust_live(self, cell_id: str, model_id: str) -> None:
        """The kernel vouches for the running turn's widget (model ``model_id``) about to show
        in the cell: its view renders only in a trusted output, and in a shared notebook the
        pages that did not run the cell get it untrusted from the one that did. Each page
        trusts the cell while it is empty, and otherwise draws that one view itself (trusting
        a cell that holds outputs would rewrite them)."""
        self._send(
            {
                "request": "trust_live",
                "request_id": new_id(),
                "cell_id": cell_id,
                "model_id": model_id,
            }
        )

    def show_live(self, cell_id: str, model_id: str) -> None:
        """Every page shows the running turn's widget (model ``model_id``) as the cell's
        output; a page that already does keeps it. Not waited for: a page without the cell
        refuses."""
        self._send(
            {
                "request": "show_live",
                "request_id": new_id(),
                "cell_id": cell_id,
                "model_id": model_id,
            }
        )

    def cell_run(
        self, cell_id: str, *, running: bool, execution_count: int | None, runner: str | None
    ) -> None:
        """Every page that did not run the cell (``runner``: the kernel client of the one that
        did) shows its prompt as the kernel has it: ``[*]`` while ``running``, then
        ``[execution_count]``. Jupyter tells only the page that asked for the run: a reloaded
        page, a second tab or a page joining a shared notebook would show the cell as the file
        or the shared document left it (``[*]`` for ever where the running page went away)."""
        self._send(
            {
                "request": "cell_run",
                "request_id": new_id(),
                "cell_id": cell_id,
                "running": running,
                "execution_count": execution_count,
                "runner": runner,
            }
        )

    def show_record(self, cell_id: str, bundle: dict[str, Any]) -> None:
        """Every page puts this final record bundle in the cell (unless it already holds that
        record), with the metadata pointing at it: the user's next save keeps it."""
        self._send(
            {"request": "show_record", "request_id": new_id(), "cell_id": cell_id, "bundle": bundle}
        )


def _resolve(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)


def _default_comm() -> Any:
    from comm import create_comm

    return create_comm(target_name=COMM_TARGET, data={})


class Recorder:
    """Keeps one cell's one output: the live view while the turn runs, the record at its end.

    With a page (:meth:`show` a widget) the output is the chat widget; the turn so far goes to
    the cell's metadata (the lab extension), marked ``live``, so a kernel that dies mid-turn
    leaves it there for the page to show in place of the widget. Without a page (nbclient,
    ``jupyter execute``) the output is the live record itself, and each later write adds an
    output holding only what is new (:func:`jupyter_turns.record.format.live_part`: new events,
    the text streamed since), so nothing saved is sent again; a kernel that dies mid-turn leaves
    the record and its parts, which the readers join. At the end the first output (one display
    id) becomes the final record bundle. Where parts were added, and they hold ``KEEP_PARTS``
    bytes or more (a long answer streamed), they stay (their text is not sent again) and one
    last output ends them (:func:`~jupyter_turns.record.format.end_part`: what the finished
    record adds, with the HTML transcript and the summary); the live record stops saying the
    turn runs. Fewer parts are cleared first (``clear_output(wait=True)``: the cell then holds
    the one output it held before), and what printed to the cell meanwhile (a notice, a
    warning: :func:`~jupyter_turns.tools.capture.noting`, up to ``PRINTED_CHARS``) is printed
    again above it, so the clear loses nothing.

    :meth:`save` writes at once unless the last write was less than ``min_interval`` seconds
    ago: then one deferred write, with the newest record, follows when the interval is up. So
    the turn so far is saved within ``min_interval``, and a long, fast tool loop or a long
    stream does not resend its growing record many times a second. The record is built only
    when it is written.
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
        clear_output: Callable[..., Any] | None = None,
        printed: CellPrints | None = None,
        parts: bool = True,
    ) -> None:
        if display is None or update_display is None or clear_output is None:
            from IPython.display import clear_output as ipy_clear
            from IPython.display import display as ipy_display
            from IPython.display import update_display as ipy_update

            display, update_display = display or ipy_display, update_display or ipy_update
            clear_output = clear_output or ipy_clear
        self.thread = thread
        self.cell_id = cell_id
        self.metadata = metadata
        self.notebook_state = notebook_state
        self.min_interval = min_interval
        self._clock = clock
        self._call_later = call_later or _loop_call_later
        self._display = display
        self._update = update_display
        self._clear = clear_output
        self.display_id = f"jupyter-turns-{os.getpid()}-{next(_display_ids)}"
        self._shown = False
        self._widget = False  # the output is a live widget (a page draws it)
        self._pending: Callable[[], dict[str, Any]] | None = None
        self._pending_metadata = False
        self._timer: Any = None
        self._last_write = -math.inf
        self.writes = 0
        self.parts = 0  # outputs added after the live record, each with what was new
        # False: each write replaces the live record in place (%chat serve: its writes come
        # while other cells run, and an added output would go to the running cell)
        self._add_parts = parts
        self._parts_bytes = 0  # the size of their records
        self._held: dict[str, str | None] = {}  # what the live outputs hold (live_part)
        self._head: dict[str, Any] = {}  # the live record the first output holds
        self._pages_opened = metadata.pages_opened
        # what printed to the cell (since it began, when the magic started noting)
        self._printed = printed if printed is not None else CellPrints()
        self._stop_noting = self._printed.stop

    def show(self, widget: Any) -> None:
        """Make ``widget`` the cell's output until the turn ends."""
        self._stop_noting()  # a page keeps the cell's other outputs: no clear
        self._display(widget, display_id=self.display_id)
        self._shown = self._widget = True
        self._pages_opened = self.metadata.pages_opened

    @property
    def showing_widget(self) -> bool:
        """The output is the live widget: a page draws the turn, and keeps what it showed."""
        return self._widget

    def save(self, build: Callable[[], dict[str, Any]], *, metadata: bool = True) -> None:
        """Save the turn so far, now or within ``min_interval``. ``metadata=False`` marks new
        streamed text: written to the live record without a page, and left to the page (which
        shows it, and saves it if the kernel dies) where there is one."""
        if self._widget and not metadata:
            return
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
        record = {**build(), "live": True}
        if not self._widget:
            self._write_live(record)
        self.metadata.cell(self.cell_id, record)
        if metadata:
            self.metadata.notebook(self.notebook_state())
        self._last_write = self._clock()
        self.writes += 1

    def _write_live(self, record: dict[str, Any]) -> None:
        """No page: the first write shows the live record, each later one adds an output with
        what it lacks (nothing when nothing is new)."""
        if not self._shown or not self._add_parts:
            self._head = record
            self._output({RECORD_MIME: record, "text/plain": summary(record, live=True)})
            if self._add_parts:  # what later parts need not hold again
                live_part(record, self._held)
            return
        part = live_part(record, self._held)
        if part is not None:
            self.parts += 1
            self._parts_bytes += len(json.dumps(part, ensure_ascii=False))
            part_id = f"{self.display_id}-part-{self.parts}"
            self._display({RECORD_MIME: part, "text/plain": ""}, raw=True, display_id=part_id)

    def finish(self, record: dict[str, Any], *, runner: str | None = None) -> None:
        """The turn ended: its output becomes the final record; the final metadata. Where the
        page that ran the cell (kernel client ``runner``) shows the widget and its server adds
        the HTML transcript when it saves (:meth:`MetadataWriter.html_on_save`), the record
        goes without it: the page draws the record, and the saved file gets the transcript."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._pending = None
        self._pending_metadata = False
        html = not (self._widget and self.metadata.html_on_save(runner))
        bundle = record_bundle(record, html=html)
        if self.parts and self._parts_bytes >= KEEP_PARTS:
            self._stop_noting()  # nothing is cleared
            self._end_parts(record, bundle)
        elif self.parts:  # the cell's one output again: the parts go, the record replaces them
            self._clear(wait=True)
            self._printed.print_again()
            self._display(bundle, raw=True, display_id=self.display_id)
            self.parts = 0
        else:
            self._stop_noting()
            self._output(bundle)
        if self._widget:  # the page has it in the output: the metadata points there
            self.metadata.cell_in_output(self.cell_id, RECORD_MIME)
            opened = self.metadata.pages_opened != self._pages_opened
            if self.cell_id and opened:  # pages opened since (reloaded, other tabs) get it too
                self.metadata.show_record(self.cell_id, bundle)
        else:
            self.metadata.cell(self.cell_id, record)
        self._widget = False
        self.metadata.notebook(self.notebook_state())
        self.writes += 1

    def _end_parts(self, record: dict[str, Any], bundle: dict[str, Any]) -> None:
        """A turn saved as live parts ends with one more output: what the finished record adds
        to them, with the bundle's HTML transcript and summary (readers join the parts to the
        live record: :func:`~jupyter_turns.record.format.joined_records`). The text the parts
        hold is not sent again; the live record's own line no longer says the turn runs."""
        end = end_part(record, self._held)
        self._update(
            {RECORD_MIME: self._head, "text/plain": ""}, raw=True, display_id=self.display_id
        )
        end_id = f"{self.display_id}-end"
        self._display({**bundle, RECORD_MIME: end}, raw=True, display_id=end_id)
        self.parts = 0

    def abandon(self) -> None:
        """No turn ran (the request was refused before it began): the output goes empty."""
        self._stop_noting()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._shown:
            self._update({"text/plain": ""}, raw=True, display_id=self.display_id)
        self._widget = False

    def _output(self, bundle: dict[str, Any]) -> None:
        if self._shown:
            self._update(bundle, raw=True, display_id=self.display_id)
        else:
            self._display(bundle, raw=True, display_id=self.display_id)
            self._shown = True


def _loop_call_later(delay: float, callback: Callable[[], None]) -> Any:
    import asyncio

    return asyncio.get_running_loop().call_later(delay, callback)
