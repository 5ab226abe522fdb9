"""ChatWidget (anywidget): one cell's synced state, and the page's messages handed to the turn.

Kernel -> page: durable state lives in synced traits (``events``, ``tools``, ``prompts``,
``status``, ``usage``, ``settings``), which a fresh view draws at once; the live tail streams as
custom messages (:mod:`jupyter_turns.widget.renderer`). Page -> kernel: every click is a custom
message (:mod:`jupyter_turns.widget.messages`; never a trait write: ipywidgets holds back a busy
cell's later trait updates); comm handlers may run on a subshell thread, so each message is
handed to the turn's loop (:func:`~jupyter_turns.loops.call_soon_on`).

Nothing goes to the page before a view of the widget has rendered and said ``ready``: under
nbclient, papermill, nbval or ``jupyter execute`` nobody ever draws it (the cell's record output
is what such a run keeps), and a page that opens the notebook later asks for the model's state
(``request_state``, answered at once) and its view then says ``ready``. So until the first
``ready`` trait changes are not synced (that ``ready`` sends the synced traits whole) and the
sink holds back its custom messages (:mod:`jupyter_turns.widget.renderer` answers ``ready``
with the draft so far).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from ..loops import call_soon_on
from .loader import widget_source
from .messages import KernelMessage

__all__ = ["ChatWidget"]


_SYNCED = ("events", "tools", "prompts", "status", "usage", "settings")


class ChatWidget(anywidget.AnyWidget):
    """One cell's turn: its events, live tool status, open prompts, status, usage, settings."""

    events: traitlets.List[Any] = traitlets.List().tag(sync=True)
    tools = traitlets.Dict().tag(sync=True)
    prompts: traitlets.List[Any] = traitlets.List().tag(sync=True)
    status: traitlets.Dict[str, Any] = traitlets.Dict({"state": "idle", "retry": None}).tag(
        sync=True
    )
    usage = traitlets.Dict().tag(sync=True)
    settings = traitlets.Dict().tag(sync=True)

    def __init__(self, *, thread: str = "main", inline: bool = False, **kwargs: Any) -> None:
        """``inline`` ships the whole front end in the widget (frontends without the lab
        extension, e.g. VS Code); otherwise a loader fetches it from the extension."""
        self._esm = widget_source(inline)
        self.ready = False  # a view has rendered and said so
        super().__init__(**kwargs)
        self.thread = thread
        self._ready_waiters: list[asyncio.Future[None]] = []
        self._handlers: dict[str, list[Callable[[dict[str, Any]], None]]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self.on_msg(self._on_custom)
        self.handle("ready", self._on_ready)

    def __repr__(self) -> str:  # stable text/plain (no memory address) for nbval
        return f"ChatWidget(thread={self.thread!r})"

    def send_state(self, key: Any = None) -> None:
        """Sync ``key`` (a trait that changed), or the whole state a page asked for.

        A change is not sent before a view has rendered (nothing draws it: see the module's
        docstring); the first ``ready`` sends the synced traits as they are then."""
        if key is not None and not self.ready:
            key = ({key} if isinstance(key, str) else set(key)) - set(_SYNCED)
            if not key:
                return
        super().send_state(key)

    def close(self) -> None:
        """Close the widget and its ``layout``: the Layout ipywidgets gives every DOMWidget is a
        widget of its own, with a comm in the kernel and a model in every page, which closing
        the widget alone leaves open (one more per finished turn, for the kernel's life)."""
        layout = self._trait_values.get("layout")
        super().close()
        if layout is not None:
            layout.close()

    def stream(self, content: KernelMessage) -> None:
        """Send a custom message of the live tail (new text, a handover, tool lines) with no
        parent header. Pages route a comm message by its comm id, never by its parent, and the
        execute request's header copied into each of a long stream's hundreds of messages was
        about 40 % of their Jupyter framing (docs/benchmarks.md, B2). Where the comm is not
        ipykernel's (tests, other kernels), a plain :meth:`send`."""
        comm = self.comm
        kernel = getattr(comm, "kernel", None)
        session = getattr(kernel, "session", None)
        socket = getattr(kernel, "iopub_socket", None)
        topic = getattr(comm, "topic", None)
        if session is None or socket is None or not isinstance(topic, bytes):
            self.send(content)
            return
        data = {"method": "custom", "content": content}
        session.send(
            socket, "comm_msg", {"data": data, "comm_id": comm.comm_id}, parent={}, ident=topic
        )

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def handle(self, kind: str, handler: Callable[[dict[str, Any]], None]) -> None:
        """Run ``handler(message)`` on the bound loop for each page message of ``kind``."""
        self._handlers.setdefault(kind, []).append(handler)

    async def wait_ready(self, seconds: float) -> bool:
        """Whether a view renders (and says ready) within ``seconds``."""
        if self.ready:
            return True
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._ready_waiters.append(future)
        try:
            await asyncio.wait_for(future, seconds)
        except TimeoutError:
            return False
        finally:
            if future in self._ready_waiters:
                self._ready_waiters.remove(future)
        return True

    def _on_ready(self, _message: dict[str, Any]) -> None:
        if not self.ready:  # the first view: the changes held back since the widget opened
            self.ready = True
            self.send_state(list(_SYNCED))
        for future in self._ready_waiters:
            if not future.done():
                future.set_result(None)

    def _on_custom(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and not call_soon_on(self._loop, self._dispatch, content):
            self._dispatch(content)  # not bound to a turn's loop (tests, a closed loop)

    def _dispatch(self, content: dict[str, Any]) -> None:
        for handler in self._handlers.get(str(content.get("type")), ()):
            handler(content)
