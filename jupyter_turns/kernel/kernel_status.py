"""Keep the kernel's status "busy" for the whole of a ``%%chat`` turn.

Why. JupyterLab shows the status of the last IOPub ``status`` message, whatever request it
answers (``KernelConnection._handleMessage`` in ``@jupyterlab/services``; it skips only parents
listed in ``untracked_message_types``: kernel_info, comm_info, interrupt, shutdown, debug).
While an awaited ``%%chat`` cell runs, ipykernel 7.4 handles the page's comm messages (``ready``,
clicks) concurrently on the main shell and publishes no status for them. But any *other* request
that the kernel answers meanwhile ends with its own ``idle``: JupyterLab sends a control-channel
``create_subshell_request`` the first time a comm target gets a comm in a kernel session (the
first widget, the lab extension's metadata comm: both during the first turn), and a comm message
that ipykernel routes to a subshell (where the comm's last kernel message came from) is answered
with busy/idle there. That ``idle`` made the status bar read "Idle" until the cell ended, while
the cell's ``[*]`` was right (verified in JupyterLab 4.6.6: tests/browser/test_status_bar.py).

How. During a turn, ipykernel's ``Kernel._publish_status`` is wrapped on the kernel instance:
right after an ``idle`` (which, while the cell runs, is never the cell's own), the wrapper
publishes ``busy`` with the running cell's parent header — the very message ipykernel sent when
the cell started — from the same thread, so it follows that ``idle`` on IOPub. Every request
still gets its busy/idle pair; clients that watch their own request (nbclient, nbval, JupyterLab's
cell futures) ignore a ``busy`` for a request they see start. The wrapper is removed when the
turn ends, also by an error, an interrupt or a cancel; a lock makes sure no ``busy`` is queued
on IOPub after that, so the cell's final ``idle`` is the last word and nothing stays busy.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["busy_while_running"]

_PublishStatus = Callable[..., None]


class _KeepBusy:
    """The wrapper installed as ``kernel._publish_status`` for one turn."""

    def __init__(self, publish: _PublishStatus, parent: dict[str, Any]) -> None:
        self._publish = publish
        self._parent = parent
        self._lock = threading.Lock()
        self._armed = True
        self.republished = 0

    def __call__(self, status: str, channel: str, parent: Any = None) -> None:
        self._publish(status, channel, parent)
        if status != "idle":
            return
        with self._lock:  # a busy is queued on IOPub before disarm() returns, or never
            if self._armed:
                self._publish("busy", "shell", self._parent)
                self.republished += 1

    def disarm(self) -> None:
        with self._lock:
            self._armed = False


@contextlib.contextmanager
def busy_while_running(kernel: Any) -> Iterator[_KeepBusy | None]:
    """Within the running cell: keep the kernel's status busy until the block ends.

    Changes nothing (yields ``None``) for a kernel that is not an ipykernel with
    ``_publish_status`` and ``get_parent``, or outside a cell.
    """
    publish = getattr(kernel, "_publish_status", None)
    get_parent = getattr(kernel, "get_parent", None)
    parent = get_parent("shell") if callable(get_parent) else None
    if not callable(publish) or not isinstance(parent, dict) or not parent.get("header"):
        yield None
        return
    keep = _KeepBusy(publish, parent)
    own = vars(kernel)
    had, previous = "_publish_status" in own, own.get("_publish_status")
    kernel._publish_status = keep
    try:
        yield keep
    finally:
        keep.disarm()
        if own.get("_publish_status") is keep:
            if had:
                kernel._publish_status = previous
            else:
                del kernel._publish_status
