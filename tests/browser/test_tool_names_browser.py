"""A notebook's own `@tool run_cell(code)` (issue 39, point 9), in JupyterLab and Notebook 7,
as a user sees it: its approval card shows the code it will run (never "Run cell [NaN]?"),
the card says the built-in `run_cell` stepped aside, Approve runs the user's function, and the
saved card — live and after the notebook is reopened without a kernel — still shows the code
and offers none of the built-in's buttons (no Undo)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, expect

from .chat import LOAD, PAGES, SETUP, chat_cell, open_page, reopen_page, run_setup, start_chat
from .lab import Lab

pytestmark = pytest.mark.browser

CODE = "import shutil\nshutil.rmtree('scratch')  # <b>not markup</b>"
MINE = f'''
sandbox = []

@tool
def run_cell(code: str) -> str:
    """Run a snippet in my sandbox."""
    sandbox.append(code)
    return f"sandbox ran {{len(code)}} characters"

script = [cycle(tool_call('run_cell', {{'code': {CODE!r}}})), cycle(message('Ran it there.'))]
'''
RESULT = f"sandbox ran {len(CODE)} characters"


def _card(root: Locator) -> Locator:
    name = root.page.locator(".jt-tool-name:text-is('run_cell')")
    return root.locator(".jt-tool").filter(has=name)


def _expect_code(card: Locator) -> None:
    """The card shows the code argument as the exact lines that run, and no cell index."""
    block = card.locator(".jt-tool-args .jt-code-arg[data-arg='code'] .jt-cell-code")
    expect(block).to_be_visible()
    assert block.inner_text().rstrip("\n").split("\n") == CODE.split("\n")
    expect(card).not_to_contain_text("NaN")
    expect(card).not_to_contain_text("Run cell [")
    expect(card.locator("b")).to_have_count(0)


@pytest.mark.parametrize("page", PAGES)
def test_a_notebook_tool_named_run_cell_asks_with_its_code(lab: Lab, page: str) -> None:
    name = f"sandbox-{page}.ipynb"
    lab.write_notebook(name, [LOAD, SETUP + MINE, chat_cell("Run it in my sandbox."), "sandbox"])
    open_page(lab, page, name)
    run_setup(lab, 2)
    root = start_chat(lab, 2)

    card = _card(root)
    approve = card.get_by_role("button", name="Approve")
    expect(approve).to_be_visible()  # the prompt waits in the card
    expect(card.locator(".jt-prompt-title")).to_have_text("Run run_cell?")
    _expect_code(card)  # the card's Arguments, opened for the prompt
    expect(card.get_by_role("button", name="Run cell")).to_have_count(0)
    notice = root.locator(".jt-notice").filter(has_text="steps aside")
    expect(notice).to_contain_text("your @tool run_cell, not the built-in tool run_cell")
    approve.click()

    saved = lab.cell_output(2).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-message")).to_have_text("Ran it there.")
    expect(_card(saved).locator(".jt-tool-result")).to_contain_text(RESULT)
    _expect_code(_card(saved))
    lab.wait_cell_idle(2)
    expect(lab.run_cell(3)).to_contain_text("shutil.rmtree")  # the user's function ran

    lab.save()
    reopen_page(lab, page, name)
    reopened = _card(lab.cell_output(2).locator(".jt-root.jt-saved"))
    expect(reopened.locator(".jt-tool-result")).to_contain_text(RESULT)
    _expect_code(reopened)
    expect(reopened.get_by_role("button", name="Undo")).to_have_count(0)
    expect(reopened.locator(".jt-cell-preview")).to_have_count(0)
    assert lab.unexpected_page_errors() == []
