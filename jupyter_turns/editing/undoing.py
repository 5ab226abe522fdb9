"""Undoing steps in a notebook session, from ``%chat undo [N]`` or a card's Undo button.

After :mod:`.undo` reverts a step, its :class:`~jupyter_turns.model.events.Undo` event joins the
thread that made the call (so ``%chat history`` shows it, and the model's next request says
what was undone: :func:`~jupyter_turns.reading.kernel_note.kernel_note`), and the record of
the cell whose card shows the call is rewritten with it, through the page: reopened, the card
still says what was undone and what was not.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Protocol

from ..model.events import ConversationEvent, Undo, Who
from ..record.format import record_bundle
from .page import NotebookEditor, PageError
from .undo import Step, describe, undo_log

if TYPE_CHECKING:
    from ..model.conversation import Conversation
    from ..reading.sources import NotebookReader

__all__ = ["UndoSession", "revert", "save_in_record", "undo"]


class UndoSession(Protocol):
    """What undo needs of the notebook session (the kernel's
    :class:`~jupyter_turns.kernel.session.Session` has it): the user's namespace the steps
    revert in, the records the cells show now, the reader whose page comm edits cells, the
    threads' conversations, one of which made the call undone, and (for a rewind) the
    threads' names and whether a turn runs in one."""

    @property
    def namespace(self) -> dict[str, Any]: ...

    @property
    def shown_records(self) -> dict[str, dict[str, Any]]: ...

    @property
    def cell_records(self) -> dict[str, list[dict[str, Any]]]: ...

    @property
    def reader(self) -> NotebookReader | None: ...

    def conversations(self) -> list[Conversation]: ...

    def thread_of(self, conversation: Conversation) -> tuple[str, bool]: ...


async def undo(
    session: UndoSession,
    editor: NotebookEditor | None,
    *,
    count: int = 1,
    call_id: str | None = None,
    who: Who | None = None,
) -> list[str]:
    """Undo the newest ``count`` steps (or the step of ``call_id``); a line per step, each
    undo event saying ``who`` asked (as their page said). Raises :class:`~.undo.UndoRefused`
    when nothing can be undone as asked."""
    steps = undo_log(session.namespace).take(count=count, call_id=call_id)
    return [describe(event) for event in await revert(session, editor, steps, who)]


async def revert(
    session: UndoSession, editor: NotebookEditor | None, steps: list[Step], who: Who | None
) -> list[Undo]:
    """Revert ``steps`` (taken from the log, newest first); each undo event joins the thread
    that made the call and the record of the cell whose card shows it."""
    events = []
    for step in steps:
        event = await step.revert(session.namespace, editor)
        if who is not None:
            event = event.model_copy(update={"who": who})
        _join_thread(session, event)
        for cell_id, record in session.shown_records.items():
            if _holds_call(record, event.call_id):
                await save_in_record(session, editor, cell_id, event)
                break
        events.append(event)
    return events


def _join_thread(session: UndoSession, event: Undo) -> None:
    for conversation in session.conversations():
        if any(getattr(e, "call_id", None) == event.call_id for e in conversation.events):
            conversation.append(event)
            return


async def save_in_record(
    session: UndoSession, editor: NotebookEditor | None, cell_id: str, event: ConversationEvent
) -> None:
    """Add ``event`` to the record cell ``cell_id`` shows, through the page: reopened, its
    card still says what happened."""
    record = session.shown_records[cell_id]
    updated = {**record, "events": [*record["events"], event.model_dump(mode="json")]}
    session.shown_records[cell_id] = updated
    if editor is not None:
        # no page (nbclient) or a closed notebook: the thread still has the event, and the
        # next request's note says it
        with contextlib.suppress(PageError):
            await editor.replace_record(cell_id, record_bundle(updated))


def _holds_call(record: dict[str, Any], call_id: str) -> bool:
    events = record.get("events")
    return isinstance(events, list) and any(
        isinstance(e, dict) and e.get("kind") == "tool_call_request" and e.get("call_id") == call_id
        for e in events
    )
