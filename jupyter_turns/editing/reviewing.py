"""The review panel's answers: Keep and Keep all, Undo all, for a turn run with ``--edits review``.

Under ``--edits review`` the model's cell changes (insert, edit, delete, move; never a run of
code) are made without asking: each call's decision is the policy's
:data:`~jupyter_turns.tools.policy.REVIEWED`. The turn's saved record then shows a review
panel (``js/src/render/review.js``) listing those calls with Keep / Undo each and Keep all /
Undo all. Undo is the one undo machinery (:func:`.undoing.revert`; a single Undo is the card's
``undo`` request). Keep changes nothing in the notebook: a
:class:`~jupyter_turns.model.events.Review` event naming the kept calls joins the thread and
the record of the turn's cell, so a reopened notebook shows the review's outcome and who
clicked.
"""

from __future__ import annotations

from typing import Any

from ..model.conversation import Conversation
from ..model.events import Review, ToolCallResponse, Who
from ..record.transcript import kept_line
from ..tools.policy import REVIEWED
from .page import NotebookEditor
from .undo import UndoRefused, describe, undo_log
from .undoing import UndoSession, holds_call, revert, save_in_record

__all__ = ["keep", "undo_all"]


async def keep(
    session: UndoSession, editor: NotebookEditor | None, call_ids: list[str], who: Who | None
) -> list[str]:
    """Keep the reviewed changes of ``call_ids`` (those not kept or undone already); raises
    UndoRefused when none of them is a change waiting for review in this kernel's threads."""
    conversation = _holder(session, call_ids)
    waiting = _unreviewed(conversation, call_ids)
    if not waiting:
        raise UndoRefused("these changes were kept or undone already")
    event = Review(kept=waiting, who=who)
    conversation.append(event)
    cell_id = _record_of(session, waiting[0])
    if cell_id is not None:
        await save_in_record(session, editor, cell_id, event)
    return [kept_line(event)]


async def undo_all(
    session: UndoSession, editor: NotebookEditor | None, call_ids: list[str], who: Who | None
) -> list[str]:
    """Undo the changes of ``call_ids`` still standing, newest first (Undo all); raises
    UndoRefused when none can be undone here, or a later step of another turn stands."""
    conversation = _holder(session, call_ids)
    log = undo_log(session.namespace)
    steps = log.steps_for(set(_unreviewed(conversation, call_ids)))
    if not steps:
        raise UndoRefused(
            "nothing to undo for these changes in this kernel: they were undone already, or "
            "the kernel restarted since"
        )
    log.remove(steps)
    return [describe(event) for event in await revert(session, editor, steps, who)]


def _holder(session: UndoSession, call_ids: list[str]) -> Conversation:
    """The thread whose turn made these calls; UndoRefused when no thread here has them."""
    wanted = set(call_ids)
    for conversation in session.conversations():
        if any(getattr(e, "call_id", None) in wanted for e in conversation.events):
            return conversation
    raise UndoRefused(
        "this turn's thread is not in this kernel: run a chat cell or `%chat restore` first"
    )


def _unreviewed(conversation: Conversation, call_ids: list[str]) -> list[str]:
    """Those of ``call_ids`` that ``--edits review`` applied and nobody kept or undid yet."""
    settled: set[str] = set()
    reviewed: set[str] = set()
    for event in conversation.events:
        if event.kind == "review":
            settled.update(event.kept)
        elif event.kind == "undo":
            settled.add(event.call_id)
        elif isinstance(event, ToolCallResponse) and _was_reviewed(event):
            reviewed.add(event.call_id)
    return [c for c in call_ids if c in reviewed and c not in settled]


def _was_reviewed(response: ToolCallResponse) -> bool:
    applied = response.status == "done"
    return applied and any(d.detail == REVIEWED and d.by == "policy" for d in response.decisions)


def _record_of(session: UndoSession, call_id: str) -> str | None:
    """The cell whose record shows ``call_id`` (after a restart: the record read back)."""
    for cell_id in [*session.shown_records, *session.cell_records]:
        record = session.shown_records.get(cell_id) or _last(session.cell_records.get(cell_id))
        if record is not None and holds_call(record, call_id):
            session.shown_records[cell_id] = record
            return cell_id
    return None


def _last(runs: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    return runs[-1] if runs else None
