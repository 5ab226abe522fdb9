"""The kernel's IOPub status during a %%chat turn, as JupyterLab reads it (the last one wins).

The test plays JupyterLab: while a turn waits for an approval it sends what JupyterLab sends when
a comm target first gets a comm (`create_subshell_request` on the control channel) and a comm
message on that subshell; each is answered with busy/idle, which used to leave the kernel
"idle" for the rest of the turn. See jupyter_turns/kernel/kernel_status.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.notebook_code import SETUP

from .kernel import KernelDriver, Widget

pytestmark = pytest.mark.kernel

SCRIPT = (
    "script = [cycle(message('Adding.'), tool_call('add', {'a': 2, 'b': 3})),"
    " cycle(message('It is 5.'))]"
)

# What JupyterLab skips when it derives the kernel status (jupyter_server's default
# untracked_message_types, as far as they can parent a status message).
UNTRACKED = {"comm_info_request", "kernel_info_request", "shutdown_request", "interrupt_request"}


class StatusDriver(KernelDriver):
    """Keeps every IOPub status message: (execution_state, parent msg_type, parent msg_id)."""

    def __init__(self, **kwargs: Any) -> None:
        self.statuses: list[tuple[str, str | None, str | None]] = []
        super().__init__(**kwargs)

    def _handle(self, msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "status":
            parent = msg["parent_header"]
            self.statuses.append(
                (msg["content"]["execution_state"], parent.get("msg_type"), parent.get("msg_id"))
            )
        super()._handle(msg)

    def shown(self) -> str | None:
        """The status JupyterLab shows: the last status whose parent it tracks."""
        tracked = [state for state, kind, _ in self.statuses if kind not in UNTRACKED]
        return tracked[-1] if tracked else None

    def create_subshell(self) -> tuple[str, str]:
        """Send what JupyterLab sends for a new comm target; return (msg_id, subshell_id)."""
        msg = self.kc.session.msg("create_subshell_request", {})
        self.kc.control_channel.send(msg)
        reply = self.kc.get_control_msg(timeout=30)
        assert reply["parent_header"]["msg_id"] == msg["header"]["msg_id"], reply
        return msg["header"]["msg_id"], reply["content"]["subshell_id"]

    def comm_msg_on(self, subshell_id: str) -> str:
        """A comm message on a subshell (to no comm: the kernel still answers busy/idle)."""
        msg = self.kc.session.msg("comm_msg", {"comm_id": "no-such-comm", "data": {}})
        msg["header"]["subshell_id"] = subshell_id
        self.kc.shell_channel.send(msg)
        return str(msg["header"]["msg_id"])

    def after(self, msg_id: str) -> list[tuple[str, str | None]]:
        """The statuses from `msg_id`'s idle on: (state, parent msg_type)."""
        index = self.statuses.index(
            next(s for s in self.statuses if s[2] == msg_id and s[0] == "idle")
        )
        return [(state, kind) for state, kind, _ in self.statuses[index:]]

    def busy_after_idle(self, msg_id: str) -> bool:
        """Whether a busy for `msg_id` came after its idle (it would leave the kernel busy)."""
        states = [state for state, _, mid in self.statuses if mid == msg_id]
        return "idle" in states and "busy" in states[states.index("idle") :]

    def idle_seen(self, msg_id: str) -> bool:
        return ("idle", msg_id) in {(state, mid) for state, _, mid in self.statuses}


@pytest.fixture
def driver(tmp_path) -> Any:  # type: ignore[no-untyped-def]
    """A kernel that believes JupyterLab owns it (see conftest.lab_kernel)."""
    kernel = StatusDriver(env={"JPY_SESSION_NAME": str(tmp_path / "chat.ipynb")})
    kernel.run("%load_ext jupyter_turns")
    kernel.run(SETUP)
    kernel.run(SCRIPT)
    yield kernel
    kernel.close()


def _start_turn(kernel: StatusDriver) -> tuple[Any, Widget, dict[str, Any]]:
    cell = kernel.execute("%%chat --provider scripted --script script\nAdd 2 and 3")
    widget = kernel.wait(lambda: _chat(kernel), 30, "a ChatWidget")
    kernel.send_custom(widget, {"type": "ready"})
    prompt = kernel.wait(lambda: kernel.prompt(widget, "approval"), 30, "an approval prompt")
    return cell, widget, prompt


def _fence(kernel: StatusDriver, msg_id: str) -> None:
    """Wait for the idle of `msg_id`, a request sent after the ones a test looks at."""
    kernel.wait(lambda: kernel.idle_seen(msg_id), 30, f"the idle of {msg_id}")


def _chat(kernel: KernelDriver) -> Widget | None:
    try:
        return kernel.chat_widget()
    except AssertionError:
        return None


def test_other_requests_during_a_turn_leave_the_kernel_busy(driver: StatusDriver) -> None:
    kernel = driver
    cell, widget, prompt = _start_turn(kernel)

    request, subshell = kernel.create_subshell()
    _fence(kernel, kernel.create_subshell()[0])  # the control thread answers in order
    assert kernel.after(request)[:2] == [
        ("idle", "create_subshell_request"),
        ("busy", "execute_request"),
    ]
    comm = kernel.comm_msg_on(subshell)
    _fence(kernel, kernel.comm_msg_on(subshell))  # so does the subshell's thread
    assert kernel.after(comm)[:2] == [("idle", "comm_msg"), ("busy", "execute_request")]
    kernel.wait(lambda: kernel.shown() == "busy", 30, "the kernel to read busy again")
    assert not cell.done

    kernel.send_custom(
        widget, {"type": "approval", "prompt_id": prompt["id"], "action": "approved"}
    )
    kernel.wait(lambda: cell.done and cell.reply is not None, 30, "the turn to end")
    assert cell.reply is not None and cell.reply["status"] == "ok"
    assert kernel.shown() == "idle"

    # After the turn the kernel is as before: a request's idle is the last word.
    later, _ = kernel.create_subshell()
    _fence(kernel, kernel.create_subshell()[0])
    assert kernel.after(later)[:2] == [
        ("idle", "create_subshell_request"),
        ("busy", "create_subshell_request"),
    ]
    assert not kernel.busy_after_idle(cell.msg_id)
    check = kernel.run("print('_publish_status' in vars(get_ipython().kernel))")
    assert check.stdout().strip() == "False"  # the wrapper is gone


def test_an_aborted_turn_ends_idle(driver: StatusDriver) -> None:
    kernel = driver
    cell, widget, _prompt = _start_turn(kernel)
    request, _ = kernel.create_subshell()
    _fence(kernel, kernel.create_subshell()[0])
    assert kernel.after(request)[:2] == [
        ("idle", "create_subshell_request"),
        ("busy", "execute_request"),
    ]

    kernel.km.interrupt_kernel()  # opens the interrupt menu
    kernel.wait(lambda: kernel.prompt(widget, "interrupt"), 30, "the interrupt menu")
    kernel.km.interrupt_kernel()  # a second one aborts the cell
    kernel.wait(lambda: cell.done and cell.reply is not None, 30, "the cell to end")
    assert cell.reply is not None and cell.reply["status"] == "error"
    later, _ = kernel.create_subshell()
    _fence(kernel, kernel.create_subshell()[0])
    assert kernel.after(later)[:2] == [
        ("idle", "create_subshell_request"),
        ("busy", "create_subshell_request"),
    ]
    assert not kernel.busy_after_idle(cell.msg_id)
    assert kernel.shown() == "idle"
