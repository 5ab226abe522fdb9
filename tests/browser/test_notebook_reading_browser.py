"""Reading the notebook in JupyterLab: `notebook_cells` answers from the page as it is now, so
the model sees an edit the user typed but neither saved nor ran."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .chat import LOAD, SETUP, chat_cell, run_setup, start_chat, wait_turn_end
from .lab import Lab

pytestmark = pytest.mark.browser

MARKER = "edited-in-page-4711"
EDITED = f"x = 1  # {MARKER}"
SCRIPT = (
    "script = ScriptedProvider([cycle(tool_call('notebook_cells', {})), cycle(message('Seen.'))])"
)
# What the model got back from notebook_cells: the second request's tool result.
SHOW_RESULT = (
    "response = next(e for e in script.requests[1].events if e.kind == 'tool_call_response')\n"
    "print(response.content)"
)


def test_notebook_cells_reads_an_unsaved_edit_from_the_page(lab: Lab) -> None:
    lab.write_notebook(
        "reading.ipynb",
        [LOAD, SETUP + "\n" + SCRIPT, "x = 1", chat_cell("What is in my notebook?"), SHOW_RESULT],
    )
    lab.open("reading.ipynb")
    run_setup(lab, 2)

    # the user edits cell 2 in the page: neither saved nor run
    editor = lab.cell(2).locator(".cm-content")
    editor.click()
    lab.page.keyboard.press("Control+End")
    lab.page.keyboard.type(f"  # {MARKER}")
    expect(editor).to_have_text(EDITED)
    lab.page.keyboard.press("Escape")  # back to command mode
    expect(lab.prompt(2)).to_have_text("[ ]:")

    root = start_chat(lab, 3)
    expect(root.locator(".jt-message")).to_have_text("Seen.", timeout=30_000)
    expect(root.locator(".jt-tool .jt-tool-name")).to_have_text("notebook_cells")
    lab.wait_cell_idle(3)
    wait_turn_end(root)

    result = lab.run_cell(4)
    expect(result).to_contain_text("Source: the notebook as open in the page now")
    expect(result).to_contain_text("(with edits not saved yet)")
    expect(result).to_contain_text(EDITED)
    expect(result).to_contain_text("← this chat cell (asking now)")
    # the edit only ever lived in the page
    saved = lab.read_notebook("reading.ipynb")
    assert saved.cells[2].source == "x = 1"
    assert MARKER not in lab.path("reading.ipynb").read_text()
    assert lab.unexpected_page_errors() == []
