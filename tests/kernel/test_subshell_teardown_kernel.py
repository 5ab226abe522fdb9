"""A subshell deleted with comm messages still queued prints nothing into the user's cells.

What used to happen: JupyterLab and Notebook 7 run comms over a subshell per comm target and
delete it when the target's last comm closes (each time a chat cell's record replaces its
widget). Messages still queued for it were dropped with its loop and asyncio reported them on
stderr — "Task was destroyed but it is pending!" and "coroutine
'_async_in_context.<locals>.run_in_context' was never awaited" — which showed in the chat cell
running at the time (Run All after Restart Kernel in Notebook 7).
jupyter_turns/kernel/cell_hooks.py ``quiet_subshell_teardown``.

The test plays the page: a comm whose handler is slow gets messages on a subshell, and the
subshell is deleted while they wait. The same kernel without the extension is the control: the
reports appear there, so the test shows the teardown happened.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import pytest

from .kernel import Cell, KernelDriver

pytestmark = pytest.mark.kernel

SLOW_TARGET = """
import time
def _open(comm, msg):
    @comm.on_msg
    def _(m):
        time.sleep(0.5)
get_ipython().kernel.comm_manager.register_target('slow', _open)
"""
REPORTS = ("Task was destroyed but it is pending!", "was never awaited", "UnknownSubshellError")


def _control(kernel: KernelDriver, kind: str, content: dict) -> dict:  # type: ignore[type-arg]
    message = kernel.kc.session.msg(kind, content)
    kernel.kc.control_channel.send(message)
    while True:
        reply = kernel.kc.control_channel.get_msg(timeout=30)
        if reply["parent_header"].get("msg_id") == message["header"]["msg_id"]:
            return reply["content"]  # type: ignore[no-any-return]


def _teardown_reports(kernel: KernelDriver) -> str:
    """Queue messages on a subshell, delete it while they wait; what stderr said afterwards."""
    kernel.run(SLOW_TARGET)
    subshell = _control(kernel, "create_subshell_request", {})["subshell_id"]
    comm_id = uuid.uuid4().hex
    opening = {"comm_id": comm_id, "target_name": "slow", "data": {}}
    kernel.kc.shell_channel.send(kernel.kc.session.msg("comm_open", opening))
    kernel.run("pass")  # the comm is open once a later request is answered
    for number in range(4):
        message = kernel.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"n": number}})
        message["header"]["subshell_id"] = subshell
        kernel.kc.shell_channel.send(message)
    time.sleep(0.2)  # the first message is being handled, the others wait behind it
    assert _control(kernel, "delete_subshell_request", {"subshell_id": subshell})["status"] == "ok"
    kernel.run("import gc; gc.collect()")  # the dropped tasks are collected and reported
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        kernel.pump()
    return "".join(kernel.stderr)


def _without_and_with(scenario: Callable[[KernelDriver], str]) -> tuple[str, str]:
    """What ``scenario`` gives in a kernel without the extension (the control), then in one
    that loaded it."""
    seen = []
    for load in (False, True):
        kernel = KernelDriver()
        try:
            if load:
                kernel.run("%load_ext jupyter_turns")
            seen.append(scenario(kernel))
        finally:
            kernel.close()
    return seen[0], seen[1]


def test_a_deleted_subshell_leaves_no_asyncio_reports_in_the_cells() -> None:
    reported, quiet = _without_and_with(_teardown_reports)
    assert any(report in reported for report in REPORTS), (
        "without the extension, the teardown should have been reported: " + reported
    )
    assert not any(report in quiet for report in REPORTS), quiet


RECORDING_TARGET = """
received = []
def _open(comm, msg):
    @comm.on_msg
    def _(m):
        received.append(m['content']['data'])
get_ipython().kernel.comm_manager.register_target('recording', _open)
"""


def _sent_after_its_subshell_went(kernel: KernelDriver) -> str:
    """Open a comm, send on a subshell that was deleted (as a page does when JupyterLab
    deletes a comm target's subshell while a new comm of that target already uses it); what
    the comm's handler received."""
    kernel.run(RECORDING_TARGET)
    comm_id = uuid.uuid4().hex
    opening = {"comm_id": comm_id, "target_name": "recording", "data": {}}
    kernel.kc.shell_channel.send(kernel.kc.session.msg("comm_open", opening))
    subshell = _control(kernel, "create_subshell_request", {})["subshell_id"]
    assert _control(kernel, "delete_subshell_request", {"subshell_id": subshell})["status"] == "ok"
    message = kernel.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"click": 1}})
    message["header"]["subshell_id"] = subshell
    kernel.kc.shell_channel.send(message)
    sent = kernel.cells[message["header"]["msg_id"]] = Cell(message["header"]["msg_id"])
    # its idle: ipykernel handled it, or refused it with an error reply
    kernel.wait(lambda: sent.done, 30, "the comm message's idle")
    seen = kernel.run("print(received)")
    return seen.stdout()


def test_a_comm_message_for_a_deleted_subshell_reaches_its_comm() -> None:
    dropped, delivered = _without_and_with(_sent_after_its_subshell_went)
    assert dropped.strip() == "[]", "without the extension, ipykernel drops it: " + dropped
    assert delivered.strip() == "[{'click': 1}]", delivered
