"""A `python` call asks with its code as a person reads code (issue 31, point 1): three lines,
highlighted, in the card the approval prompt sits in — while it waits, after Approve, and in
the saved record after the notebook is closed and reopened without a kernel — and its header
is the code's first line, not an escaped JSON one-liner. HTML in the code stays text."""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, expect

from .chat import LOAD, SETUP, chat_cell, run_setup, start_chat
from .lab import Lab

pytestmark = pytest.mark.browser

CODE = (
    'rain = [1, 2, 3]\ntotal = sum(rain)  # <img src=x onerror=alert(1)>\nprint(f"total: {total}")'
)
SCRIPT = f"script = [cycle(tool_call('python', {{'code': {CODE!r}}})), cycle(message('Ran it.'))]"
HEADER = "(rain = [1, 2, 3] … +2 lines)"


def _card(root: Locator) -> Locator:
    return root.locator(".jt-tool").filter(has=root.page.locator(".jt-tool-name:text-is('python')"))


def _expect_code(card: Locator) -> None:
    """The card shows the code as three visible, highlighted lines, its header one line."""
    expect(card.locator(".jt-tool-preview")).to_have_text(HEADER)
    block = card.locator(".jt-tool-args .jt-code-arg .jt-cell-code")
    expect(block).to_be_visible()
    expect(block.locator(".hljs-built_in").first).to_have_text("sum")
    expect(block.locator(".hljs-comment")).to_have_text("# <img src=x onerror=alert(1)>")
    assert block.inner_text().rstrip("\n").split("\n") == CODE.split("\n")
    line_height = block.evaluate("el => parseFloat(getComputedStyle(el).lineHeight)")
    box = block.bounding_box()
    assert box is not None and box["height"] >= 3 * line_height, (box, line_height)
    expect(card.locator(".jt-tool-args")).not_to_contain_text('"code"')
    expect(card.locator("img")).to_have_count(0)


def test_python_code_reads_as_code_in_the_prompt_the_card_and_the_saved_record(lab: Lab) -> None:
    lab.write_notebook(
        "code.ipynb",
        [LOAD, SETUP + "\n" + SCRIPT, "x = 1",
         chat_cell("Sum the rain.", options="--builtins python")],
    )  # fmt: skip
    lab.open("code.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)

    card = _card(root)
    approve = card.get_by_role("button", name="Approve")
    expect(approve).to_be_visible()  # the prompt waits in the card
    _expect_code(card)
    card.get_by_role("button", name="Edit arguments").click()
    expect(card.locator("textarea[data-role='code-arg:code']")).to_have_value(CODE)
    approve.click()

    saved = lab.cell_output(3).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-message")).to_have_text("Ran it.")
    expect(_card(saved).locator(".jt-tool-result")).to_contain_text("total: 6")
    _expect_code(_card(saved))
    lab.wait_cell_idle(3)

    lab.save()
    lab.close_and_reopen("code.ipynb")
    reopened = lab.cell_output(3).locator(".jt-root.jt-saved")
    expect(reopened.locator(".jt-message")).to_have_text("Ran it.")
    _expect_code(_card(reopened))
    assert lab.unexpected_page_errors() == []
