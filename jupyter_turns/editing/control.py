"""The page's requests to the kernel: a saved card's Undo and Rewind buttons, the review panel's.

A finished turn's cards are drawn by the extension's record renderer, long after the chat cell
ended; their Undo button cannot reach the turn's widget. The extension opens a comm to the
kernel's ``jupyter_turns.control`` target instead and sends

    {request: "undo", request_id, call_id, who?}  ->  {request_id, ok: true, lines}
                                                   ->  {request_id, ok: false, reason}
    {request: "rewind", request_id, chat_request, confirm, who?}
                                                   ->  {request_id, ok: true, lines}
                                                   ->  {request_id, ok: false, reason}
    {request: "keep", request_id, call_ids, who?} ->  {request_id, ok: true, lines}
    {request: "undo", request_id, call_ids, who?} ->  {request_id, ok: true, lines}
    {request: "page", request_id, path?}          ->  {request_id, ok: true, running}

A rewind (:mod:`.rewinding`) names the request of the card's turn; without ``confirm`` the
kernel only says what it would do (the card asks the user with those lines), with it it does it.
``keep`` and ``undo`` with ``call_ids`` are the review panel's Keep (all) and Undo all of a turn
run with ``--edits review`` (:mod:`.reviewing`).

``who`` is the identity the page reports (JupyterLab's current user): sanitized and saved on
the undo event, a label and never a permission. ``page`` says a page has just opened the
notebook (loaded, reloaded, a second tab, reconnected after a network drop): the kernel sends it
the turns it would otherwise miss (``on_page``, :func:`jupyter_turns.kernel.front.page_opened`)
on the metadata comm, and answers with the ids of the cells whose turn runs now (``running``):
their widget is live, never a dead turn's to replace with its saved record. Its ``path`` (the
notebook's, relative to the server's root) tells the kernel where the server's root is, above
which no instruction file is read.

The comm handler may run on a subshell thread: the work is handed to the kernel's loop
(:func:`~jupyter_turns.loops.call_soon_on`), where undo asks the page to remove or restore
cells over the metadata comm.

Registered at ``%load_ext``, so it is light: the session is asked for (``session()``) and the
undo machinery imported when a request first needs them, and a page opening before the first
chat cell (``on_page``) needs neither.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..loops import call_soon_on

if TYPE_CHECKING:
    from .page import NotebookEditor
    from .undoing import UndoSession

__all__ = ["CONTROL_TARGET", "register_control"]

CONTROL_TARGET = "jupyter_turns.control"
log = logging.getLogger(__name__)
_tasks: set[asyncio.Task[None]] = set()  # held until done (the loop keeps weak references)


def register_control(
    session: Callable[[], UndoSession],
    on_page: Callable[[dict[str, Any]], list[str]] = lambda _: [],
) -> bool:
    """Answer the page's requests in this kernel, on the loop running now (``%load_ext`` runs
    in a cell) or else the one running the comm handler (loaded at kernel start, from
    ``ipython_config.py``); False where there is no comm manager. ``session`` gives the
    session an undo, keep or rewind acts on (made on its first call). ``on_page`` runs, with
    the page's message, when a page says it opened the notebook: the ids of the cells whose
    turn runs now."""
    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    try:
        from comm import get_comm_manager

        manager = get_comm_manager()
    except Exception:  # no kernel: plain IPython
        return False

    def opened(comm: Any, message: Any) -> None:
        def received(msg: Any) -> None:
            data = (msg.get("content") or {}).get("data")
            target = loop
            if target is None:
                with contextlib.suppress(RuntimeError):
                    target = asyncio.get_running_loop()
            call_soon_on(target, _start, session, comm, data, on_page)

        comm.on_msg(received)
        received(message)

    manager.register_target(CONTROL_TARGET, opened)
    return True


def _start(
    session: Callable[[], UndoSession],
    comm: Any,
    data: Any,
    on_page: Callable[[dict[str, Any]], list[str]],
) -> None:
    if not isinstance(data, dict) or "request" not in data:
        return  # a comm_open without a request
    if data.get("request") == "page":
        try:
            reply: dict[str, Any] = {"ok": True, "running": on_page(data)}
        except Exception as exc:  # the page still works; only what it missed is not sent
            log.warning("jupyter_turns: a page's turns not sent: %s", exc)
            reply = {"ok": False, "reason": str(exc)}
        with contextlib.suppress(Exception):
            comm.send({"request_id": data.get("request_id"), **reply})
        return
    task = asyncio.get_running_loop().create_task(_answer(session(), comm, data))
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)


async def _answer(session: UndoSession, comm: Any, data: dict[str, Any]) -> None:
    from .page import NotebookEditor
    from .undo import UndoRefused

    reader = session.reader
    editor = NotebookEditor(reader.page) if reader is not None else None
    reply: dict[str, Any]
    try:
        reply = {"ok": True, "lines": await _act(session, editor, data)}
    except UndoRefused as exc:
        reply = {"ok": False, "reason": str(exc)}
    with contextlib.suppress(Exception):  # the page went away: nobody waits for the answer
        comm.send({"request_id": data.get("request_id"), **reply})


async def _act(
    session: UndoSession, editor: NotebookEditor | None, data: dict[str, Any]
) -> list[str]:
    """Undo a call, keep or undo reviewed ones, or plan or do a rewind; raises UndoRefused
    (the answer says why)."""
    from ..model.events import Who
    from .reviewing import keep, undo_all
    from .rewinding import plan_rewind, rewind
    from .undo import UndoRefused
    from .undoing import undo

    who = Who.from_page(data.get("who"))
    if data.get("request") == "undo" and isinstance(data.get("call_id"), str):
        return await undo(session, editor, call_id=data["call_id"], who=who)
    calls = data.get("call_ids")
    if data.get("request") in ("keep", "undo") and isinstance(calls, list) and _call_ids(calls):
        act = keep if data["request"] == "keep" else undo_all
        return await act(session, editor, [str(c) for c in calls], who)
    request = data.get("chat_request")
    if data.get("request") != "rewind" or not isinstance(request, str):
        raise UndoRefused(
            "expected {request: 'undo', call_id}, {request: 'keep' | 'undo', call_ids} or "
            "{request: 'rewind', chat_request}"
        )
    conversation = next(
        (c for c in session.conversations() if any(e.id == request for e in c.events)), None
    )
    if conversation is None:
        raise UndoRefused(
            "this turn's thread is not in this kernel: run a chat cell or `%chat restore` first"
        )
    plan = plan_rewind(session, conversation, request=request)
    if data.get("confirm") is not True:
        return plan.lines()
    return await rewind(session, editor, plan, who)


def _call_ids(value: list[Any]) -> bool:
    """A page's list of call ids: strings, at least one, a bounded number."""
    return 0 < len(value) <= 1_000 and all(isinstance(c, str) and c for c in value)
