"""Interrupts: the two menus, the user's choice, the request channel and cancellation tokens.

The Stop button (a comm message on a subshell thread) and SIGINT (the main thread, between
bytecodes) both call :meth:`InterruptChannel.request`, which only schedules work on the turn's
loop. While streaming the menu is Stop (keep what arrived) / Abort (discard this cycle) / Reply
(keep it and start a new turn with the user's text) / Continue (resume, or ask the model to
continue from the partial text if the stream is dead). While tools run it is Stop (cancel them;
each answers "cancelled by user") / Restart (cancel and run again) / Continue (keep waiting).
"""

from __future__ import annotations

import asyncio
import enum
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..loops import call_soon_on
from .events import Who

__all__ = [
    "STREAMING_ACTIONS",
    "TOOL_ACTIONS",
    "CancelToken",
    "InterruptAction",
    "InterruptChannel",
    "InterruptChoice",
    "InterruptContext",
    "ThreadSafeFlag",
    "ask_menu",
    "done_before_interrupt",
]


class InterruptAction(enum.Enum):
    STOP = "stop"
    ABORT = "abort"
    REPLY = "reply"
    CONTINUE = "continue"
    RESTART = "restart"


STREAMING_ACTIONS = (
    InterruptAction.STOP,
    InterruptAction.ABORT,
    InterruptAction.REPLY,
    InterruptAction.CONTINUE,
)
TOOL_ACTIONS = (InterruptAction.STOP, InterruptAction.RESTART, InterruptAction.CONTINUE)


@dataclass(frozen=True, slots=True)
class InterruptContext:
    """Where the turn was when interrupted: what the menu offers and whether Continue resumes."""

    where: Literal["streaming", "tool"]
    stream_alive: bool = True
    reason: str | None = None  # e.g. the error that killed the stream

    @property
    def actions(self) -> tuple[InterruptAction, ...]:
        return STREAMING_ACTIONS if self.where == "streaming" else TOOL_ACTIONS


@dataclass(frozen=True, slots=True)
class InterruptChoice:
    action: InterruptAction
    text: str = ""  # the reply, for REPLY
    # who chose: a person (a click, a key, a direct call) or a policy (nobody was there to ask)
    by: Literal["user", "policy"] = "user"
    who: Who | None = None  # the person who clicked Stop or chose, as their page said

    def __post_init__(self) -> None:
        if self.action is InterruptAction.REPLY and not self.text.strip():
            raise ValueError("a Reply needs the text to send")

    def valid_in(self, context: InterruptContext) -> bool:
        return self.action in context.actions


class ThreadSafeFlag:
    """A one-way flag: ``set()`` from any thread wakes every ``await wait()`` on any loop."""

    def __init__(self) -> None:
        self._flag = threading.Event()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._lock = threading.Lock()

    def is_set(self) -> bool:
        return self._flag.is_set()

    def set(self) -> bool:
        """Set the flag; False if it was already set."""
        with self._lock:
            if self._flag.is_set():
                return False
            self._flag.set()
            waiters, self._waiters = self._waiters, []
        for loop, event in waiters:
            call_soon_on(loop, event.set)
        return True

    async def wait(self) -> None:
        event = asyncio.Event()
        with self._lock:
            if self._flag.is_set():
                return
            self._waiters.append((asyncio.get_running_loop(), event))
        await event.wait()


class CancelToken:
    """Idempotent, thread-safe cancellation flag a tool can poll or await."""

    def __init__(self) -> None:
        self._flag = ThreadSafeFlag()
        self._reason = ""

    @property
    def cancelled(self) -> bool:
        return self._flag.is_set()

    @property
    def reason(self) -> str:
        return self._reason

    def cancel(self, reason: str = "cancelled by user") -> None:
        if not self._flag.is_set():
            self._reason = reason
        self._flag.set()

    async def wait(self) -> None:
        """Return once the token is cancelled."""
        await self._flag.wait()


@dataclass(frozen=True, slots=True)
class _Request:
    choice: InterruptChoice | None  # None: open the menu and ask


class InterruptChannel:
    """Carries interrupt requests from any thread into the turn's loop.

    ``request(None)`` asks the coordinator to open the menu; ``request(choice)`` applies a choice
    directly (a button that already knows what the user wants).
    """

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._event: asyncio.Event | None = None
        self._pending: _Request | None = None
        self._lock = threading.Lock()

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            self._loop = loop
            self._event = asyncio.Event()
            if self._pending is not None:
                self._event.set()

    def request(self, choice: InterruptChoice | None = None) -> None:
        with self._lock:
            self._pending = _Request(choice)
            loop, event = self._loop, self._event
        if event is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            event.set()  # at once: a take() that runs before a deferred set() would miss it
        else:
            call_soon_on(loop, event.set)

    @property
    def pending(self) -> bool:
        return self._pending is not None

    def take(self) -> InterruptChoice | None:
        """Consume the pending request (caller checked :attr:`pending`)."""
        with self._lock:
            request, self._pending = self._pending, None
            if self._event is not None:
                self._event.clear()
        return request.choice if request else None

    async def wait(self) -> None:
        """Return when a request is pending."""
        if self._event is None:
            self.bind(asyncio.get_running_loop())
        assert self._event is not None
        await self._event.wait()


async def done_before_interrupt(work: asyncio.Future[Any], interrupts: InterruptChannel) -> bool:
    """Wait until ``work`` is done or an interrupt is requested: True if ``work`` is done.

    The request is left in the channel for the caller to :meth:`~InterruptChannel.take`; when
    both happen at once, the finished work wins.
    """
    waiter = asyncio.ensure_future(interrupts.wait())
    try:
        await asyncio.wait({work, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    return work.done()


async def ask_menu(
    ask: Callable[[InterruptContext], Awaitable[InterruptChoice]],
    interrupts: InterruptChannel,
    context: InterruptContext,
) -> InterruptChoice:
    """The user's choice for ``context``: one already in the channel, else ask with the menu.

    A valid choice arriving through the channel while the menu is open wins; a repeated "open
    the menu" request is answered by the open menu; a choice the context does not offer from
    the menu counts as Stop.
    """
    choice = interrupts.take()
    if choice is not None and choice.valid_in(context):
        return choice
    menu = asyncio.ensure_future(ask(context))
    try:
        while True:
            if await done_before_interrupt(menu, interrupts):
                interrupts.take()
                choice = menu.result()
                if choice.valid_in(context):
                    return choice
                return InterruptChoice(InterruptAction.STOP, by=choice.by, who=choice.who)
            direct = interrupts.take()
            if direct is not None and direct.valid_in(context):
                return direct
    finally:
        menu.cancel()
