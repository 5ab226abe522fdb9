"""Undoing steps in a notebook session, from ``%chat undo [N]`` or a card's Undo button.

After :mod:`.undo` reverts a step, its :class:`~jupyter_turns.model.events.Undo` event joins the
thread that made the call (so ``%chat history`` shows it, and the model's next request says
what was undone: :func:`~jupyter_turns.reading.kernel_note.kernel_note`), and the record of
the cell whose card shows the call is rewritten with it, through the page: reopened, the card
still says what was undone and what was not.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from ..model.events import Undo
from ..record.format import record_bundle
from .page import NotebookEditor, PageError
from .undo import describe, undo_log

if TYPE_CHECKING:
    from ..kernel.session import Session

__all__ = ["undo"]


async def undo(
    session: Session,
    editor: NotebookEditor | None,
    *,
    count: int = 1,
    call_id: str | None = None,
) -> list[str]:
    """Undo the newest ``count`` steps (or the step of ``call_id``); a line per step. Raises
    :class:`~.undo.UndoRefused` when nothing can be undone as asked."""
    steps = undo_log(session.namespace).take(count=count, call_id=call_id)
    lines = []
    for step in steps:
        event = await step.revert(session.namespace, editor)
        lines.append(describe(event))
        _join_thread(session, event)
        await _save_in_record(session, editor, event)
    return lines


def _join_thread(session: Session, event: Undo) -> None:
    for thread in session.threads.by_name.values():
        conversation = thread.chat.conversation
        if any(getattr(e, "call_id", None) == event.call_id for e in conversation.events):
            conversation.append(event)
            return


async def _save_in_record(session: Session, editor: NotebookEditor | None, event: Undo) -> None:
    for cell_id, record in session.shown_records.items():
        if not _holds_call(record, event.call_id):
            continue
        updated = {**record, "events": [*record["events"], event.model_dump(mode="json")]}
        session.shown_records[cell_id] = updated
        if editor is not None:
            # no page (nbclient) or a closed notebook: the thread still has the event, and the
            # next request's note says it
            with contextlib.suppress(PageError):
                await editor.replace_record(cell_id, record_bundle(updated))
        return


def _holds_call(record: dict[str, Any], call_id: str) -> bool:
    events = record.get("events")
    return isinstance(events, list) and any(
        isinstance(e, dict) and e.get("kind") == "tool_call_request" and e.get("call_id") == call_id
        for e in events
    )
