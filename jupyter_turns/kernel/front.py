"""CellFront: wires one %%chat cell's widget, prompter and records to the thread's Chat.

It decides whether anyone can click: a rendered view means yes; a kernel with no frontend
session (nbclient, nbval, ``jupyter execute``) means no, and prompts resolve by the headless
policy at once; with a session it waits briefly for the view to render.

The cell has one output (see :mod:`jupyter_turns.kernel.persist`): the widget where a page draws it,
else the live record. The turn so far is saved when it starts (the request), at every cycle
boundary and when events arrive (within a second: the Recorder throttles). New streamed text
alone is saved only without a page, every second (each save adds only what is new: the
Recorder's live parts); a page keeps what it shows and, if the kernel dies, saves that in the
widget's place. At the end the final record replaces the
widget, which is then closed (its last pending sync is dropped: nothing will draw it).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..engine.turn_state import cycles_record
from ..model.events import SCHEMA_VERSION, ConversationEvent, Message, Reasoning, Who
from ..model.prompter import HEADLESS_WITHHOLD_REASON, PolicyPrompter
from ..providers.endpoints import custom
from ..record.format import record_bundle, turn_record
from ..record.notebook import session_paths
from ..widget.buttons import WidgetPrompter
from ..widget.chat_widget import ChatWidget
from ..widget.messages import TextPart
from ..widget.renderer import WidgetSink
from .grants import event_digest
from .persist import MetadataWriter, Recorder

if TYPE_CHECKING:
    from ..engine.turn import TurnCoordinator
    from .session import CellSettings, Session
    from .threads import Thread

__all__ = [
    "CellFront",
    "has_frontend",
    "keep_live",
    "metadata_writer",
    "notebook_state",
    "page_opened",
    "send_held_records",
]

_metadata_writer: MetadataWriter | None = None
_running: dict[str, CellFront] = {}  # cell id -> the front of the turn it runs now
# cell id -> a widget live in a cell that runs no turn (the %chat serve session's cards)
_kept_live: dict[str, ChatWidget] = {}


def metadata_writer() -> MetadataWriter:
    """The one comm to the lab extension, shared by every cell (opened on first use)."""
    global _metadata_writer
    if _metadata_writer is None:
        _metadata_writer = MetadataWriter()
    return _metadata_writer


def page_opened(session: Session) -> list[str]:
    """A page opened the notebook (loaded again, a second tab, reconnected after a drop): it
    shows what its file held, which misses what this kernel did since. Reach it on a fresh
    comm and send it each running turn's widget (the page's widget manager has the model from
    the kernel, and the view asks for the draft so far) with its cell's state (running: the
    page shows ``[*]``, and the turn's end when it comes), and each finished turn's record
    (the page writes those its cells do not hold yet, so the user's save keeps them). The ids
    of the cells whose turn runs: their widget is live, not a dead turn's (the page answers
    the kernel's death by showing a dead turn's saved record in its place)."""
    writer = metadata_writer()
    writer.reopen()
    running = list(_running.items())
    for cell_id, front in running:
        writer.show_live(cell_id, front.widget.model_id)
        front.tell_pages(running=True)
    kept = list(_kept_live.items())
    for cell_id, widget in kept:  # live too, though its cell ran to its end
        writer.show_live(cell_id, widget.model_id)
    send_held_records(session)
    return [cell_id for cell_id, _ in [*running, *kept]]


def keep_live(cell_id: str | None, widget: ChatWidget | None) -> None:
    """Cell ``cell_id`` shows ``widget`` live though no turn runs in it (``%chat serve``: the
    session's cards outlive the cell's run), until ``widget`` is None: every page draws it
    (the kernel vouches for it now), and a page opened meanwhile is sent it and keeps it, as
    a running turn's (:func:`page_opened`), instead of showing the live record the cell's
    metadata holds as a turn that did not finish."""
    if not cell_id:
        return
    if widget is None:
        _kept_live.pop(cell_id, None)
        return
    metadata_writer().trust_live(cell_id, widget.model_id)
    _kept_live[cell_id] = widget


def send_held_records(session: Session) -> int:
    """Send the open pages each finished turn's record this kernel holds (the page writes
    those its cells do not hold yet, so the user's save keeps them): at a page's opening, and
    on ``%chat restore``. How many were sent (none reach the file without a page)."""
    writer = metadata_writer()
    held = [(c, r) for c, r in list(session.shown_records.items()) if c not in _running]
    for cell_id, record in held:
        writer.show_record(cell_id, record_bundle(record))
    return len(held)


def has_frontend(namespace: dict[str, Any]) -> bool:
    """Whether a notebook frontend (JupyterLab, Notebook 7, VS Code) owns this kernel."""
    return bool(session_paths(namespace))


class CellFront:
    def __init__(
        self,
        session: Session,
        settings: CellSettings,
        thread: Thread,
        loop: asyncio.AbstractEventLoop,
    ):
        self.session = session
        self.settings = settings
        self.thread = thread
        self.cell_id = session.cell_id
        self.run = session.cell_run  # its prompt number and the page that ran it
        self.replayed_from: str | None = None  # a replayed turn: the notebook it came from
        # a replayed turn's events are the user's own only when its recording was
        self.replay_authored = False
        # what this turn recorded as authored: finished events by id (they never change), and
        # the digest of each streaming text as last saved (it grows under one id)
        self._authored: set[str] = set()
        self._drafts: dict[str, str] = {}
        chat = thread.chat
        namespace = session.namespace
        self.widget = ChatWidget(
            thread=thread.name,
            inline=settings.inline_widget or "__vsc_ipynb_file__" in namespace,
            settings={
                "reasoning": thread.reasoning,
                "thread": thread.name,
                "model": thread.model or getattr(chat.provider, "model", chat.provider.name),
                **_endpoint(chat.provider),
            },
        )
        self.widget.bind(loop)
        self.sink = WidgetSink(self.widget, max_rate=settings.max_rate)
        fallback = PolicyPrompter(
            "allow" if settings.headless_allows(thread) else "deny",
            results="withhold" if settings.headless_results == "withhold" else "deliver",
            withhold_reason=HEADLESS_WITHHOLD_REASON,
        )
        self.prompter = WidgetPrompter(
            self.widget, fallback, interactive=self._interactive, before_prompt=self.sink.flush
        )
        self.widget.handle("interrupt_request", self._on_interrupt_request)
        self.recorder = Recorder(
            thread=thread.name,
            cell_id=self.cell_id,
            # no frontend (nbclient, `jupyter execute`): nobody listens on the metadata comm
            metadata=metadata_writer() if has_frontend(namespace) else MetadataWriter(lambda: None),
            notebook_state=lambda: notebook_state(session),
            printed=session.cell_prints,
        )
        self._loop = loop
        self._last: TurnCoordinator | None = None
        self._displaced = _still_held(session, session.cell_records.get(self.cell_id or "", ()))
        self._saved: tuple[int, list[tuple[int, int]]] | None = None  # what the record holds
        self._ticker: asyncio.Handle | None = None

    def show(self) -> None:
        """Display the widget where a page can draw it; the turn's record follows once the
        turn has started, and replaces the widget when it ends."""
        if has_frontend(self.session.namespace):
            if self.cell_id:  # every page draws the widget, also where another page ran it
                metadata_writer().trust_live(self.cell_id, self.widget.model_id)
            self.recorder.show(self.widget)
            if self.cell_id:  # a page opened during the turn is sent it (page_opened)
                _running[self.cell_id] = self
                self.tell_pages(running=True)
        self._ticker = self._loop.call_soon(self._save_progress)

    def close(self) -> None:
        """After the turn (however it ended): flush the draft and write the final record."""
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        shown = _running.get(self.cell_id or "") is self  # show() put it there
        if shown:
            del _running[self.cell_id or ""]
        if self.recorder.showing_widget and self._last is not None:
            self.sink.drop_pending()  # the record replaces the widget now: nothing to draw
        else:
            self.sink.flush()
        turn = self._last
        if turn is None:
            self.recorder.abandon()
        else:
            final = self._record(turn)
            self.recorder.finish(final, runner=self.run.client)
            if self.cell_id:
                self.session.shown_records[self.cell_id] = final
                this_run = turn_record(
                    turn.conversation.conversation_id, self.thread.name, turn.events
                )
                self.session.cell_records[self.cell_id] = [*self._displaced, this_run]
        self.widget.prompts = []
        self.widget.close()  # the record replaced it; nothing draws it again
        if shown:  # after the record: a page shows the cell ended once it holds the end
            self.tell_pages(running=False)

    def tell_pages(self, *, running: bool) -> None:
        """Every page but the one that ran this cell shows its state as the kernel has it:
        ``[*]`` while the turn runs, its execution count once it ended (see
        :meth:`~jupyter_turns.kernel.persist.MetadataWriter.cell_run`)."""
        if self.cell_id:
            metadata_writer().cell_run(
                self.cell_id,
                running=running,
                execution_count=self.run.execution_count,
                runner=self.run.client,
            )

    async def _interactive(self) -> bool:
        if self.settings.headless != "auto":
            return False
        if self.widget.ready:
            return True
        if not has_frontend(self.session.namespace):
            return False
        return await self.widget.wait_ready(self.settings.view_timeout)

    def _on_interrupt_request(self, message: dict[str, Any]) -> None:
        """The Stop button stops at once (saying who clicked it, as the page reported); the
        options button or Esc opens the interrupt menu."""
        stop = message.get("action") == "stop"
        self.thread.chat.interrupt("stop" if stop else None, who=Who.from_page(message.get("who")))

    def _record(
        self, turn: TurnCoordinator, partial: list[ConversationEvent] | None = None
    ) -> dict[str, Any]:
        record = turn_record(
            turn.conversation.conversation_id,
            self.thread.name,
            [*turn.events, *(partial or ())],
            turn={
                "outcome": turn.outcome,
                "usage": turn.usage.as_dict(),
                "cost_usd": turn.cost_usd,
                "cycles": cycles_record(turn.ends),  # a replay ends them alike
                **({"replayed_from": self.replayed_from} if self.replayed_from else {}),
                **({} if self.replayed_from else _endpoint(self.thread.chat.provider)),
            },
            settings=self.session.saved_settings(self.thread),
            displaced=self._displaced,
        )
        self._author(record)
        return record

    def _author(self, record: dict[str, Any]) -> None:
        """Record this turn's events as saved now (not the earlier runs it carries) as written
        by this user's kernel: a restore tells them from someone else's by that. Only what
        this turn has not recorded yet; a replay of someone else's recording is not the
        user's."""
        if self.replayed_from is not None and not self.replay_authored:
            return
        digests = []
        for saved in record["events"]:
            key = str(saved.get("id"))
            if key in self._authored:
                continue
            digest = event_digest(saved)
            if _partial(saved):
                if self._drafts.get(key) == digest:
                    continue
                self._drafts[key] = digest
            else:
                self._authored.add(key)
            digests.append(digest)
        self.session.author(str(record["conversation_id"]), digests)

    def _live_record(self, turn: TurnCoordinator) -> dict[str, Any]:
        """The turn so far, with the text shown but not yet an event marked ``partial`` (a tool
        call's arguments still being written are not kept: the call was never complete). Each
        streaming text keeps one id while it grows: a live part sends only its new text."""
        first = turn.events[0].id if turn.events else ""
        partial: list[ConversationEvent] = [
            Reasoning(id=_draft_id(first, index), content=text, metadata={"partial": True})
            if kind == "reasoning"
            else Message(id=_draft_id(first, index), content=text, metadata={"partial": True})
            for index, kind, text in self._shown_text()
            if text
        ]
        return self._record(turn, partial)

    def boundary(self, turn: TurnCoordinator) -> None:
        """At each cycle boundary of this cell's turn (``Chat.send(on_boundary=...)``): save
        the record so far."""
        self._last = turn
        if turn.outcome == "running":  # the end of the turn is written once, by close()
            self._saved = self._mark(turn)
            self.recorder.save(lambda: self._live_record(turn))

    def _save_progress(self) -> None:
        """While the turn runs: save it when it has new events or new shown text."""
        turn = self.thread.chat.turn
        if turn is not None and turn.outcome == "running":
            self._last = turn
            mark = self._mark(turn)
            if mark != self._saved:
                text_only = self._saved is not None and mark[0] == self._saved[0]
                self._saved = mark
                # new events (or the turn's first save) go to the metadata; new text alone
                # only to a live record without a page (a page keeps what it shows)
                self.recorder.save(lambda: self._live_record(turn), metadata=not text_only)
        self._ticker = self._loop.call_later(self.recorder.min_interval, self._save_progress)

    def _mark(self, turn: TurnCoordinator) -> tuple[int, list[tuple[int, int]]]:
        return len(turn.events), [(i, len(text)) for i, _, text in self._shown_text()]

    def _shown_text(self) -> list[TextPart]:
        """The draft blocks of answer text and reasoning the page shows (not tool arguments)."""
        return [part for part in self.sink.live_drafts() if part[1] != "tool_input"]


def notebook_state(session: Session) -> dict[str, Any]:
    """What the notebook's metadata holds: the current thread and each thread's settings."""
    threads = session.threads
    return {
        "version": SCHEMA_VERSION,
        "current": threads.current,
        "threads": {
            name: session.saved_settings(threads.by_name[name]) for name in threads.names()
        },
    }


def _still_held(session: Session, records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of a cell's earlier runs whose turn a thread still holds, which its new
    record carries (``displaced``) so that a restore gets them back; a turn the cell's re-run
    took the place of (:mod:`.rerun`) is gone from its thread, and from the notebook."""
    held = {e.id for c in session.conversations() for e in c.events}
    return [record for record in records if _first_id(record) in held]


def _first_id(record: dict[str, Any]) -> Any:
    """The id of a saved record's first event (its turn's request), None if it has none."""
    events = record.get("events")
    first = events[0] if isinstance(events, list) and events else None
    return first.get("id") if isinstance(first, dict) else None


def _partial(saved: dict[str, Any]) -> bool:
    """A streaming text saved so far: its text grows under one id, so it is authored anew."""
    metadata = saved.get("metadata")
    return isinstance(metadata, dict) and bool(metadata.get("partial"))


def _draft_id(first_event: str, index: int) -> str:
    """The id of the streaming text block ``index`` of the turn that began with
    ``first_event``: the same at every save, unique in the conversation."""
    return hashlib.sha256(f"{first_event}:draft:{index}".encode()).hexdigest()[:16]


def _endpoint(provider: object) -> dict[str, str]:
    """``{"endpoint": url}`` when the provider sends to a non-default endpoint, for the footer
    (the live widget's settings, the saved turn): the user sees where the turn went."""
    url = getattr(provider, "endpoint", None)
    shown = custom(url) if isinstance(url, str) else None
    return {"endpoint": shown} if shown else {}
