"""busy_while_running against a stand-in kernel: what it publishes, when, and what it restores."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from jupyter_turns.kernel.kernel_status import busy_while_running

CELL = {"header": {"msg_id": "cell", "msg_type": "execute_request"}}


def _parent(msg_id: str) -> dict[str, Any]:
    return {"header": {"msg_id": msg_id, "msg_type": "create_subshell_request"}}


class FakeKernel:
    """What busy_while_running uses of ipykernel's Kernel; `sent` stands for IOPub's queue."""

    def __init__(self, parent: dict[str, Any] = CELL) -> None:
        self.parent = parent
        self.sent: list[tuple[str, str]] = []

    def _publish_status(self, status: str, channel: str, parent: Any = None) -> None:
        self.sent.append((status, (parent or self.parent)["header"]["msg_id"]))

    def get_parent(self, channel: str | None = None) -> dict[str, Any]:
        return self.parent


def test_an_idle_during_the_turn_is_followed_by_busy_for_the_cell() -> None:
    kernel = FakeKernel()
    with busy_while_running(kernel) as keep:
        kernel._publish_status("busy", "control", _parent("subshell"))
        kernel._publish_status("idle", "control", _parent("subshell"))
    assert kernel.sent == [("busy", "subshell"), ("idle", "subshell"), ("busy", "cell")]
    assert keep is not None and keep.republished == 1


def test_after_the_turn_nothing_is_added_and_the_method_is_the_kernels_again() -> None:
    kernel = FakeKernel()
    with pytest.raises(KeyboardInterrupt), busy_while_running(kernel):
        raise KeyboardInterrupt  # an aborted cell
    kernel._publish_status("idle", "control", _parent("later"))
    assert kernel.sent == [("idle", "later")]
    assert "_publish_status" not in vars(kernel)


def test_a_kernel_it_does_not_know_or_no_running_cell_is_left_alone() -> None:
    for kernel in (None, object(), FakeKernel(parent={})):
        with busy_while_running(kernel) as keep:
            assert keep is None
    assert "_publish_status" not in vars(kernel)


def test_no_busy_is_queued_after_the_turn_ends_while_another_thread_publishes() -> None:
    """The cell's final idle (queued after the block) is always the last status for the cell."""
    for _ in range(200):
        kernel = FakeKernel()
        started, stop = threading.Event(), threading.Event()

        def subshell(
            kernel: FakeKernel = kernel,
            started: threading.Event = started,
            stop: threading.Event = stop,
        ) -> None:
            while not stop.is_set():
                kernel._publish_status("idle", "shell", _parent("comm"))
                started.set()

        with busy_while_running(kernel):
            worker = threading.Thread(target=subshell)
            worker.start()
            started.wait()
        kernel.sent.append(("idle", "cell"))  # what ipykernel queues when the cell returns
        stop.set()
        worker.join()
        last_idle = kernel.sent.index(("idle", "cell"))
        assert ("busy", "cell") not in kernel.sent[last_idle:]
