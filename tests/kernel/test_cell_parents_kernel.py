"""A cell queued behind an awaited cell keeps its own parent while comm messages arrive.

What used to happen (issue 45: Run All on the quickstart left its last cell ``[*]``): ipykernel
7.4 handles a comm message that arrives while a cell holds the main shell concurrently, and
afterwards sets back the shell parent it read before. When the running cell ended meanwhile and
the next queued cell had started and was awaiting, that restore gave the new cell the finished
cell's request: its prints and its final ``idle`` went out under the old request, so a frontend
never saw the new cell end. jupyter_turns/kernel/cell_hooks.py ``keep_cell_parents``.

The test plays a busy page: it queues two awaited cells at once (as Run All does) and sends a
stream of comm messages across the moment the first one ends, several times.
"""

from __future__ import annotations

import time

import pytest

from .kernel import Cell, KernelDriver

pytestmark = pytest.mark.kernel

# the first cell ends only once it heard 20 of the test's comm messages (handled while it
# awaits), however slow a loaded machine makes the test's sending: messages go before its end
FIRST = (
    "import asyncio\nstart = heard[0]\nwhile heard[0] < start + 20:\n    await asyncio.sleep(0.005)"
)
NEXT = "for _ in range(20):\n    await asyncio.sleep(0.002)\nprint('next')"
ROUNDS = 5
AFTER = 200  # comm messages sent after the first cell ended, each round


def _flood(kernel: KernelDriver, comm_id: str, first: Cell) -> tuple[int, int]:
    """Send comm messages to ``comm_id`` until ``first`` has ended and ``AFTER`` more went
    after it (however slow a loaded machine makes either): how many went before and after."""
    before = after = 0
    deadline = time.monotonic() + 120
    while after < AFTER and time.monotonic() < deadline:
        message = kernel.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {}})
        kernel.kc.shell_channel.send(message)
        while kernel.pump(0):  # reads what came (each comm message brings its statuses)
            pass
        if first.done:
            after += 1
        else:
            before += 1
        time.sleep(0.0005)
    return before, after


def _own(cell: Cell) -> list[str]:
    """The IOPub messages that name ``cell``'s request as their parent, by type."""
    return [m["msg_type"] for m in cell.messages]


def _round(kernel: KernelDriver, comm_id: str, number: int) -> None:
    first, queued = kernel.execute(FIRST), kernel.execute(NEXT)
    before, after = _flood(kernel, comm_id, first)
    # the messages straddle the moment the first cell ended and the queued one began
    assert before > 0 and after == AFTER, (before, after)
    try:
        kernel.wait(lambda: queued.done, 30, f"round {number}: the queued cell's idle")
    except AssertionError:
        raise AssertionError(
            f"round {number}: the queued cell got no idle of its own; its messages: "
            f"{_own(queued)}; the first cell's: {_own(first)}"
        ) from None
    assert queued.stdout() == "next\n", _own(queued)
    assert _own(first).count("status") == 2, _own(first)  # busy and idle, once each


def test_a_queued_cell_ends_under_its_own_request_while_comm_messages_arrive(
    kernel: KernelDriver,
) -> None:
    kernel.run(
        "from comm import create_comm\nprobe = create_comm(target_name='probe')\n"
        "heard = [0]\nprobe.on_msg(lambda _: heard.__setitem__(0, heard[0] + 1))"
    )
    comm_id = kernel.wait(lambda: next(iter(kernel.widgets), None), 30, "the probe comm")
    for number in range(ROUNDS):
        _round(kernel, comm_id, number)
