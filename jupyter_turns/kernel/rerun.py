"""A chat cell run again takes its earlier turn's place, as a notebook re-runs a cell.

A ``%%chat`` cell whose earlier turn a thread still holds — known by the cell's id (the
records it showed, :attr:`Session.cell_records <jupyter_turns.kernel.session.Session>`: this
kernel's runs, and those a restore read back from the notebook) or, for a replayed cell, by
its recording (the recording's request id; an earlier replay of it has the recorded call ids)
— continues that thread from before that turn: the turn leaves the thread, and the turns sent
after it are rewound: they stay in their cells, marked, and are never sent again
(:func:`jupyter_turns.engine.window.replacement`). So Run All, once or ten times, sends each
chat cell the turns of the cells above it, never a shipped recording or an earlier run.

Which thread: the one the cell names (``--thread``); else the one holding its earlier turn
(the thread it ran in, whatever is current now); ``--new`` starts over the thread its earlier
turn opened when nothing else of it is sent. A thread that sends nothing after the cut starts
over as a new thread would (the cell's options and the user's defaults; nothing a restore
proposed, nothing it would say). A headless run (nbclient, nbval) has no cell id and restores
nothing: only a replayed cell played again in one kernel finds its earlier replay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..editing.page import NotebookEditor
from ..editing.rewinding import mark_records
from ..engine.window import Replacement, own_turns, replacement
from ..errors import ConversationError
from ..model.conversation import Conversation
from ..model.events import ConversationEvent, Rewind, ToolCallRequest

if TYPE_CHECKING:
    from .session import Session
    from .threads import Thread, Threads

__all__ = ["Rerun", "mark_rewound", "plan_rerun"]


@dataclass(frozen=True)
class Rerun:
    """What running the cell again does before its turn: in thread ``thread``, the cut
    (``replacement``); ``fresh``: the thread sends nothing after it and starts over."""

    thread: str
    replacement: Replacement
    fresh: bool

    def apply(self, threads: Threads) -> Thread:
        """Cut the thread and make it current; a fresh one is a new thread (the user's
        defaults, no restored settings) holding what is left of the conversation."""
        conversation = threads.by_name[self.thread].chat.conversation
        conversation.remove(self.replacement.removed)
        if self.replacement.rewind is not None:
            conversation.append(self.replacement.rewind)
        thread = threads.get(self.thread, new=self.fresh)
        thread.chat.conversation = conversation
        return thread


def plan_rerun(
    session: Session,
    *,
    thread: str | None,
    new: bool,
    recorded: Sequence[ConversationEvent] = (),
) -> Rerun | None:
    """What the running cell replaces (None: nothing, it adds a turn). ``thread``: the
    ``--thread`` it names; ``new``: ``--new``; ``recorded``: the saved turn it replays. Pure:
    the session changes only when the cell's checks passed (:meth:`Rerun.apply`)."""
    threads = session.threads
    records = session.cell_records.get(session.cell_id or "", []) if session.cell_id else []
    requests = {r for record in records for r in _requests_of(record)}
    if recorded:
        requests.add(recorded[0].id)
    calls = {e.call_id for e in recorded if isinstance(e, ToolCallRequest)}
    if not requests and not calls:
        return None
    held = {
        t.name: own_turns(t.chat.conversation.events, requests, calls)
        for t in threads.current_first()
    }
    held = {name: turns for name, turns in held.items() if turns}
    name = thread if thread is not None else _holder(held, records)
    own = held.get(name or "")
    if name is None or not own:
        return None
    events = threads.by_name[name].chat.conversation.events
    cut = replacement(events, own)
    try:
        Conversation(cut.events(events))  # a crafted thread whose cut is not valid: no cut
    except ConversationError:
        return None
    fresh = cut.sends_nothing(events)
    if new and not fresh:
        return None  # --new: the cell's earlier turn stays where it is (its record carries it)
    return Rerun(name, cut, fresh)


def _requests_of(record: dict[str, Any]) -> list[str]:
    """The top-level request ids a cell's saved record holds (its turn's, normally one)."""
    events = record.get("events")
    return [
        str(e["id"])
        for e in (events if isinstance(events, list) else [])
        if isinstance(e, dict) and e.get("kind") == "chat_request" and e.get("parent") is None
    ]


def _holder(held: dict[str, list[str]], records: list[dict[str, Any]]) -> str | None:
    """The thread holding the cell's newest earlier turn (the current thread first)."""
    for record in reversed(records):
        for request in _requests_of(record):
            for name, own in held.items():
                if request in own:
                    return name
    return next(iter(held), None)


async def mark_rewound(session: Session, rewind: Rewind) -> None:
    """Mark the turns a cell's re-run rewound in their cells' records, through the page."""
    editor = NotebookEditor(session.reader.page) if session.reader is not None else None
    await mark_records(session, editor, rewind)
