"""JupyterLab's kernel status reads "Busy" for the whole of a %%chat turn, "Idle" after it.

What used to happen (JupyterLab 4.6, ipykernel 7.4): the first widget of a kernel session makes
JupyterLab send a control-channel `create_subshell_request` (comms over subshells, one per comm
target: `jupyter.widget`, then the lab extension's `jupyter_turns.metadata`). The kernel answers
each with busy/idle, and JupyterLab shows the status of the *last* status message, whatever its
parent — so the status bar read "Idle" from the moment the widget appeared until the turn ended.
jupyter_turns/kernel/kernel_status.py re-publishes `busy` for the running cell after such an idle.

The test waits until the page has had the answer to every `create_subshell_request` it sent (the
moment the status used to flip) and then looks at the status bar's text, as a person would.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, expect

from .chat import LOAD, SETUP, chat_cell, run_setup, start_chat
from .lab import Lab

pytestmark = pytest.mark.browser

BUSY = re.compile(r"\|\s*Busy\s*$")
IDLE = re.compile(r"\|\s*Idle\s*$")
WORDS = " ".join(f"w{i:02d}" for i in range(40))

# Counts the create_subshell_request messages the page sends and the idle statuses answering
# them; keeps the status bar's kernel text each time it changes.
_WATCH = """
() => {
  const kernel = window.__jt.panel.sessionContext.session.kernel;
  const watch = (window.__jtStatus = { sent: 0, answered: 0, texts: [] });
  kernel.anyMessage.connect((_, { msg, direction }) => {
    const type = msg.header.msg_type;
    if (direction === "send" && type === "create_subshell_request") watch.sent += 1;
    if (direction === "recv" && type === "status" && msg.content.execution_state === "idle"
        && msg.parent_header.msg_type === "create_subshell_request") watch.answered += 1;
  });
}
"""

_SUBSHELLS_CREATED = (
    "() => window.__jtStatus.sent > 0 && window.__jtStatus.answered === window.__jtStatus.sent"
)


def _kernel_status(lab: Lab) -> Locator:
    """The status bar item that reads e.g. "Python 3 (ipykernel) | Busy"."""
    return lab.page.locator("#jp-main-statusbar .jp-StatusBar-TextItem", has_text="Python 3")


def test_the_status_bar_reads_busy_until_the_turn_ends(lab: Lab) -> None:
    # the answer is held after its sixth word until the test drops `seen`
    script = (
        f"answer = cycle(message({WORDS!r}))\n"
        "script = [cycle(message('Let me add them.'), tool_call('add', {'a': 2, 'b': 3})),"
        " [*answer[:6], FileGate('seen'), *answer[6:]]]"
    )
    lab.write_notebook("status.ipynb", [LOAD, SETUP, script, chat_cell("Add 2 and 3")])
    lab.open("status.ipynb")  # a new kernel: no comm target has a subshell yet
    run_setup(lab, 3)
    status = _kernel_status(lab)
    expect(status).to_have_text(IDLE)
    lab.page.evaluate(_WATCH)

    root = start_chat(lab, 3)
    prompt = root.locator(".jt-tool .jt-prompt-approval")
    expect(prompt).to_contain_text("Run add?")
    # The page has created its subshells and had the kernel's idle for each: the moment the
    # status bar used to switch to "Idle" for the rest of the turn.
    lab.page.wait_for_function(_SUBSHELLS_CREATED, timeout=30_000, polling=50)
    expect(status).to_have_text(BUSY)
    expect(lab.prompt(3)).to_have_text("[*]:")

    prompt.get_by_role("button", name="Approve", exact=True).click()
    expect(root.locator(".jt-tool .jt-tool-result pre")).to_have_text("5")
    expect(root.locator(".jt-message").last).to_contain_text("w05")  # the answer streams
    expect(status).to_have_text(BUSY)
    expect(lab.prompt(3)).to_have_text("[*]:")

    lab.path("seen").write_text("")  # the rest of the answer
    lab.wait_cell_idle(3, timeout=60)
    expect(root.locator(".jt-message").last).to_contain_text("w39")
    expect(status).to_have_text(IDLE)
    expect(lab.page.locator(".jp-Notebook-ExecutionIndicator")).to_have_attribute(
        "data-status", "idle"
    )
    assert lab.unexpected_page_errors() == []
