"""Run All on every example notebook ends, as a person running it in the page sees it.

Issue 45: Run All on examples/quickstart.ipynb left its last cell (`await chat.send('Hi')`, after
a `%%chat` cell) `[*]` for good while the kernel was idle: ipykernel 7.4 gave that cell the
previous cell's request as its parent (kernel/cell_hooks.py `keep_cell_parents`). Each example
is opened as shipped (its saved outputs), Run All is chosen, and the test answers what waits
for the person as they would (Approve on a tool call that asks, Stop on an interrupt menu: keep
what arrived) until every cell has its execution count.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from .chat import PAGES, open_page
from .lab import Lab
from .server import LabError

pytestmark = pytest.mark.browser

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QUICKSTART = "quickstart.ipynb"  # in JupyterLab and Notebook 7: its own test below
NOTEBOOKS = sorted(p.name for p in EXAMPLES.glob("*.ipynb") if p.name != QUICKSTART)

ROUNDS = 3  # Run All of the quickstart, one after the other

# What a person answers, by the prompt's class: the button they click.
ANSWERS = {"approval": "Approve", "interrupt": "Stop"}

# Cell `index` has ended ("idle"), or a prompt under it waits for a click (its type).
_STATE = """
({ index, answers }) => {
  const { panel } = window.__jt;
  const cell = panel.content.widgets[index];
  const prompt = cell.node.querySelector(".jp-InputArea-prompt")?.textContent ?? "";
  if (cell.model.type !== "code") return "idle";
  if (!prompt.includes("*") && cell.model.executionCount !== null) return "idle";
  for (const [type, label] of Object.entries(answers)) {
    const buttons = [...cell.node.querySelectorAll(`.jt-prompt-${type} button`)];
    if (buttons.some((b) => b.textContent.trim() === label && !b.disabled)) return type;
  }
  return false;
}
"""


def _run_all_approving(lab: Lab, timeout: float) -> None:
    """Run All, then wait for each cell in turn, answering each prompt as a person would."""
    lab.run_all(wait=False)
    deadline = time.monotonic() + timeout
    for index in range(lab.cells().count()):
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LabError(f"Run All: cell {index} has not ended after {timeout} s")
            handle = lab.page.wait_for_function(
                _STATE, arg={"index": index, "answers": ANSWERS}, timeout=left * 1000, polling=50
            )
            state = handle.json_value()
            if state == "idle":
                break
            prompt = lab.cell(index).locator(f".jt-prompt-{state}")
            prompt.get_by_role("button", name=ANSWERS[state], exact=True).first.click()


def _copy_example(lab: Lab, name: str) -> None:
    shutil.copy(EXAMPLES / name, lab.path(name))
    for helper in EXAMPLES.glob("*.py"):  # the MCP example's server
        if helper.name != "conftest.py":
            shutil.copy(helper, lab.dir / helper.name)


def _prompts(lab: Lab) -> list[str]:
    texts: list[str] = lab.page.locator(".jp-Cell .jp-InputArea-prompt").all_inner_texts()
    return texts


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_run_all_of_an_example_ends(lab: Lab, name: str) -> None:
    _copy_example(lab, name)
    lab.open(name)
    _run_all_approving(lab, timeout=150)
    prompts = _prompts(lab)
    assert not [p for p in prompts if "*" in p], prompts
    lab.wait_kernel_idle(30)


@pytest.mark.parametrize("page", PAGES)
def test_run_all_of_the_quickstart_ends_after_its_python_cell(lab: Lab, page: str) -> None:
    """The quickstart's last cell (plain Python awaiting `Chat.send`, right after a `%%chat`
    cell) gets its execution count and its output, in JupyterLab and Notebook 7, Run All after
    Run All (the old failure depended on timing: it showed in about half of the runs)."""
    _copy_example(lab, QUICKSTART)
    open_page(lab, page, QUICKSTART)
    last = lab.cells().count() - 1
    for _ in range(ROUNDS):
        _run_all_approving(lab, timeout=120)
        counts = [p for p in _prompts(lab) if p.strip() not in ("", "[ ]:")]
        assert lab.prompt(last).inner_text().strip() == counts[-1] != "[*]:", counts
        assert "complete" in lab.cell_output(last).inner_text()
