"""Helpers for the chat browser tests: notebook code for scripted turns, waits on the widget.

A chat test writes a notebook whose first cells are `LOAD` and `SETUP` (ScriptedProvider, the
`add` tool, `slow()` to stretch a stream), runs a `%%chat --provider scripted --script VAR`
cell and waits on the widget's DOM (`.jt-root`, see js/README.md for its counters):

    lab.write_notebook("t.ipynb", [LOAD, SETUP, "script = [slow(cycle(message('hi')))]",
                                   chat_cell("say hi")])
    lab.open("t.ipynb")
    run_setup(lab, 3)                    # cells 0..2
    root = start_chat(lab, 3)            # the .jt-root of cell 3's widget, once it rendered
    lab.wait_cell_idle(3)
    wait_turn_end(root)                  # the widget drew the turn's last events
    record = final_record(lab.read_notebook("t.ipynb").cells[3])   # after lab.save()
"""

from __future__ import annotations

from typing import Any

from nbformat import NotebookNode
from playwright.sync_api import Locator, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.support.notebook_code import SETUP

from .lab import Lab
from .server import LabError

__all__ = [
    "LOAD",
    "PAGES",
    "RECORD_MIME",
    "SETUP",
    "WIDGET_FAILED",
    "chat_cell",
    "final_record",
    "message_text",
    "open_page",
    "print_cell",
    "reload_page",
    "reopen_page",
    "run_setup",
    "start_chat",
    "wait_turn_end",
    "wait_widget",
]

RECORD_MIME = "application/vnd.jupyter-turns+json"

# What the widget's loader shows when it cannot import the front end
# (jupyter_turns/widget/chat_widget.py).
WIDGET_FAILED = "jupyter_turns: the chat view needs"

LOAD = "%load_ext jupyter_turns"

# The two pages a notebook opens in, for tests parametrized over them ("page").
PAGES = ("lab", "notebook7")


def open_page(lab: Lab, page: str, name: str) -> None:
    """Open notebook ``name`` in JupyterLab (``"lab"``) or Notebook 7's own page
    (``"notebook7"``), with its kernel idle; the cell locators work the same in both."""
    if page == "lab":
        lab.open(name)
    else:
        lab.open_in_notebook7(name)


def reopen_page(lab: Lab, page: str, name: str) -> None:
    """Leave the page, shut the folder's kernels down and open the saved ``name`` again in the
    same kind of page, as a person coming back to it later does (save first)."""
    if page == "lab":
        lab.close_and_reopen(name)
    else:
        lab.open_in_notebook7(name)


def reload_page(lab: Lab, page: str, name: str) -> None:
    """Load the page of notebook ``name`` again while its kernel runs on (maybe mid-turn), in
    JupyterLab (``"lab"``) or Notebook 7 (``"notebook7"``); also a second tab's first load."""
    if page == "lab":
        lab.reload(name)
    else:
        lab.reload_in_notebook7(name)


def chat_cell(body: str, *, script: str = "script", options: str = "") -> str:
    """A `%%chat` cell playing the notebook variable `script`."""
    line = f"%%chat --provider scripted --script {script} {options}".rstrip()
    return f"{line}\n{body}"


def run_setup(lab: Lab, count: int, timeout: float = 60) -> None:
    """Run cells 0..count-1 one after the other; each must end without an error."""
    for index in range(count):
        out = lab.run_cell(index, timeout=timeout)
        errors = lab.errors(index)
        if errors:
            raise AssertionError(f"setup cell {index} failed: {errors}\n{out.inner_text()}")


_WIDGET_STATE = """
({ index, failed }) => {
  const cell = window.__jt.panel.content.widgets[index];
  if (!cell) return null;
  if (cell.node.querySelector(".jt-root")) return "rendered";
  const text = cell.node.querySelector(".jp-OutputArea")?.textContent ?? "";
  if (text.includes(failed)) return "failed: " + text.slice(0, 300);
  if (text.includes("Traceback")) return "error: " + text.slice(0, 2000);
  return null;
}
"""


def tool_card(root: Locator, tool: str) -> Locator:
    """The cards of calls to ``tool`` under ``root`` (a chat view or a saved record)."""
    return root.locator(".jt-tool").filter(
        has=root.page.locator(f".jt-tool-name:text-is('{tool}')")
    )


def cell_source(lab: Lab, index: int) -> Locator:
    """The editor text of notebook cell ``index``."""
    return lab.cell(index).locator(".jp-InputArea .cm-content")


def wait_widget(lab: Lab, index: int, timeout: float = 30) -> Locator:
    """The `.jt-root` of cell `index`'s chat widget once it rendered; fails fast if the
    widget's loader gave up or the cell raised."""
    try:
        handle = lab.page.wait_for_function(
            _WIDGET_STATE,
            arg={"index": index, "failed": WIDGET_FAILED},
            timeout=timeout * 1000,
            polling=50,
        )
    except PlaywrightTimeoutError:
        raise LabError(f"no chat widget in cell {index} after {timeout} s") from None
    state = handle.json_value()
    if state != "rendered":
        raise LabError(f"the chat widget of cell {index} did not render: {state}")
    return lab.cell_output(index).locator(".jt-root").first


def start_chat(lab: Lab, index: int, timeout: float = 30) -> Locator:
    """Run a `%%chat` cell without waiting for the turn; return its widget's `.jt-root`."""
    lab.run_cell(index, wait=False)
    return wait_widget(lab, index, timeout)


def wait_turn_end(root: Locator, state: str = "complete") -> None:
    """Wait until the widget shows the turn's end: its state, and no draft left (the last
    events are drawn: the widget's status can arrive before its final, throttled events)."""
    expect(root).to_have_attribute("data-state", state)
    expect(root.locator(".jt-draft > *")).to_have_count(0)


def print_cell(lab: Lab, index: int, timeout: float = 30) -> str:
    """Run a cell that prints and return its output text (fails on a traceback)."""
    text = lab.run_cell(index, timeout=timeout).inner_text().strip()
    if "Traceback" in text:
        raise AssertionError(f"cell {index} failed:\n{text}")
    return text


def message_text(root: Locator) -> str:
    """The text of every assistant message in a widget, saved or streaming, in page order."""
    texts: list[str] = root.locator(".jt-message .jt-md").all_text_contents()
    return "".join(texts)


def final_record(cell: NotebookNode) -> dict[str, Any]:
    """The turn record of a saved cell: its final output record (not the superseded stub)."""
    records = [
        output["data"][RECORD_MIME]
        for output in cell.get("outputs", [])
        if RECORD_MIME in output.get("data", {})
        and not output["data"][RECORD_MIME].get("superseded")
    ]
    if not records:
        raise AssertionError(f"no record output in the saved cell: {cell.get('outputs')}")
    record: dict[str, Any] = records[-1]
    return record
