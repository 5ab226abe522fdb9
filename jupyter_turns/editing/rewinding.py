"""Rewinding a thread to before one of its turns, from ``%chat rewind [N]`` or a saved card's
"Rewind to before this turn".

A rewind takes back turn N and every later turn of the thread: their steps are undone newest
first by the one undo machinery (:func:`.undoing.revert`: cells, outputs, the names ``python``
bound, and plainly what could not be undone), and a
:class:`~jupyter_turns.model.events.Rewind` event joins the thread and the record of each
rewound turn's cell: the notebook keeps those turns, marked rewound, and no request sends them
again (:func:`jupyter_turns.engine.window.rewound`), after a restart too (a restore reads the
event back from the records).

:func:`plan_rewind` says what a rewind will do before it is done (the card asks the user to
confirm with it); :func:`rewind` does it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ..engine.window import rewound, turn_requests
from ..model.conversation import Conversation
from ..model.events import ChatRequest, Rewind, ToolCallResponse, Who
from ..record.transcript import rewound_line
from ..text import plural
from .page import NotebookEditor
from .undo import SIDE_EFFECTS, Step, UndoRefused, undo_log
from .undoing import UndoSession, revert, save_in_record

__all__ = ["RewindPlan", "mark_records", "plan_rewind", "rewind"]

# tools whose applied calls are undo steps (editing/undo.py); a call of one that is not in
# the kernel's undo log cannot be undone here
STEP_TOOLS = frozenset(
    {"python", "insert_cell", "edit_cell", "run_cell", "delete_cell", "move_cell"}
)


@dataclass
class RewindPlan:
    """What a rewind of ``thread`` to before turn ``turn`` takes back and undoes."""

    thread: str
    conversation: Conversation
    turn: int
    requests: list[str]  # the rewound turns' request ids, oldest first
    steps: list[Step]  # to undo, newest first
    missing: list[str]  # steps of those turns this kernel cannot undo, and why

    def lines(self) -> list[str]:
        """For the user, before (the card's confirmation) and after."""
        last = self.turn + len(self.requests) - 1
        if last == self.turn:
            turns = f"turn {self.turn} stays in the notebook, marked rewound, and is"
        else:
            turns = f"turns {self.turn}–{last} stay in the notebook, marked rewound, and are"
        lines = [
            f"Rewind thread {self.thread!r} to before turn {self.turn}: {turns} no longer "
            "sent to the model."
        ]
        if self.steps:
            named = ", ".join(f"{s.tool} call {s.call_id}" for s in self.steps)
            lines.append(f"Undoes {plural(len(self.steps), 'step')}, newest first: {named}.")
        else:
            lines.append("No step of these turns is left to undo in this kernel.")
        kept = [*self.missing, *_expected_kept(self.steps)]
        if kept:
            lines.append("Cannot be undone: " + "; ".join(kept) + ".")
        return lines


def _expected_kept(steps: list[Step]) -> list[str]:
    kept = [f"the in-place changes to {', '.join(s.changed)}" for s in steps if s.changed]
    if any(s.ran_code for s in steps):
        kept.append(SIDE_EFFECTS)
    return kept


def plan_rewind(
    session: UndoSession,
    conversation: Conversation,
    *,
    turn: int | None = None,
    request: str | None = None,
) -> RewindPlan:
    """The rewind to before turn ``turn`` (1-based; the request ``request``; neither: the last
    turn not rewound yet). Raises :class:`~.undo.UndoRefused` saying why it cannot be done."""
    thread, running = session.thread_of(conversation)
    events = conversation.events
    requests = turn_requests(events)
    number = _turn_number(thread, requests, rewound(events), turn, request)
    if running:
        raise UndoRefused(f"thread {thread!r} is running a turn: rewind it once the turn ends")
    taken = [r.id for r in requests[number - 1 :]]
    start = next(i for i, e in enumerate(events) if e.id == taken[0])
    tail = events[start:]
    calls = {e.call_id: e.name for e in tail if e.kind == "tool_call_request" and e.parent is None}
    steps = undo_log(session.namespace).steps_for(set(calls))
    held = {s.call_id for s in steps} | {e.call_id for e in tail if e.kind == "undo"}
    done = {e.call_id for e in tail if isinstance(e, ToolCallResponse) and e.status == "done"}
    missing = [
        f"{name} call {call_id} (not in this kernel's undo log: the kernel restarted since)"
        for call_id, name in calls.items()
        if name in STEP_TOOLS and call_id in done and call_id not in held
    ]
    return RewindPlan(thread, conversation, number, taken, steps, missing)


def _turn_number(
    thread: str,
    requests: list[ChatRequest],
    dropped: set[str],
    turn: int | None,
    request: str | None,
) -> int:
    """Which turn to rewind to before, checked."""
    live = [n for n, r in enumerate(requests, 1) if r.id not in dropped]
    if request is not None:
        turn = next((n for n, r in enumerate(requests, 1) if r.id == request), None)
        if turn is None:
            raise UndoRefused(f"this turn is not in thread {thread!r} in this kernel")
    elif turn is None:
        if not live:
            raise UndoRefused(f"thread {thread!r} has no turn to rewind")
        turn = live[-1]
    if not 1 <= turn <= len(requests):
        have = plural(len(requests), "turn")
        raise UndoRefused(f"thread {thread!r} has {have}: rewind 1 to {len(requests)}, not {turn}")
    if turn not in live:
        raise UndoRefused(f"turn {turn} of thread {thread!r} is rewound already")
    return turn


async def rewind(
    session: UndoSession, editor: NotebookEditor | None, plan: RewindPlan, who: Who | None = None
) -> list[str]:
    """Do ``plan``: undo its steps newest first, then mark its turns rewound in the thread
    and in their cells' records; the lines say what was done and what was not."""
    log = undo_log(session.namespace)
    log.remove(plan.steps)
    undos = await revert(session, editor, plan.steps, who)
    event = Rewind(
        requests=plan.requests,
        turn=plan.turn,
        done=[f"{u.tool} call {u.call_id}: {', '.join(u.done) or 'nothing'}" for u in undos],
        not_undone=[
            *plan.missing,
            *(
                f"{u.tool} call {u.call_id}: {'; '.join(u.not_undone)}"
                for u in undos
                if u.not_undone
            ),
        ],
        who=who,
    )
    plan.conversation.append(event)
    await mark_records(session, editor, event)
    return [rewound_line(event)]


async def mark_records(session: UndoSession, editor: NotebookEditor | None, event: Rewind) -> None:
    """Add the rewind to the record of each rewound turn's cell (after a restart the cell's
    record is the one read back from the notebook), the cells at once: a page that does not
    answer costs one wait, not one per cell."""
    wanted = set(event.requests)
    marked = event.model_dump(mode="json")
    cells = []
    for cell_id in sorted(set(session.shown_records) | set(session.cell_records)):
        record = session.shown_records.get(cell_id)
        if record is None:
            runs = session.cell_records.get(cell_id) or [{}]
            record = runs[-1]
        if _holds(record, wanted):
            session.shown_records[cell_id] = record
            cells.append(cell_id)
            # a re-run of the cell carries its earlier runs: marked there too
            session.cell_records[cell_id] = [
                {**run, "events": [*run["events"], marked]} if _holds(run, wanted) else run
                for run in session.cell_records.get(cell_id, [])
            ]
    await asyncio.gather(*(save_in_record(session, editor, c, event) for c in cells))


def _holds(record: dict[str, Any], ids: set[str]) -> bool:
    events = record.get("events")
    return isinstance(events, list) and any(
        isinstance(e, dict) and e.get("id") in ids for e in events
    )
