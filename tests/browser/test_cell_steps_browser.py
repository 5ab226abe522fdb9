"""The model runs, deletes and moves cells, inserts below a chosen one and edits with a re-run,
in JupyterLab and Notebook 7, clicked as a person would: each asks with a preview, the notebook
shows the change, Undo puts a deleted cell back with its outputs, a cell the user edited after
the model read it is refused, and a notebook closed while a tool waits gives an error result."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Locator, expect

from .chat import (
    LOAD,
    PAGES,
    SETUP,
    cell_source,
    chat_cell,
    open_page,
    run_setup,
    start_chat,
    tool_card,
)
from .lab import Lab

pytestmark = pytest.mark.browser

STEPS = (
    "script = [cycle(tool_call('notebook_cells', {})),"
    " cycle(tool_call('edit_cell', {'index': 3, 'source': \"print('new')\", 'run': True})),"
    " cycle(tool_call('insert_cell', {'source': 'w = 4', 'after': 4})),"
    " cycle(tool_call('move_cell', {'index': 5, 'to': 3})),"
    " cycle(tool_call('delete_cell', {'index': 4})),"
    " cycle(message('Done.'))]"
)


def _badge(lab: Lab, index: int) -> Locator:
    """The provenance badge of cell ``index`` (none on a cell the model never touched)."""
    return lab.cell(index).locator(".jt-provenance-badge")


def _sources(lab: Lab, *texts: str) -> None:
    expect(lab.cells()).to_have_count(len(texts))
    for index, text in enumerate(texts):
        if text:
            expect(cell_source(lab, index)).to_have_text(text)


@pytest.mark.parametrize("page", PAGES)
def test_edit_and_run_insert_below_a_cell_move_delete_and_undo_the_deletion(
    lab: Lab, page: str
) -> None:
    lab.write_notebook(
        "steps.ipynb",
        [LOAD, SETUP + "\n" + STEPS, chat_cell("Tidy my notebook."), "print('old')", "y = 2",
         "z = 3"],
    )  # fmt: skip
    open_page(lab, page, "steps.ipynb")
    run_setup(lab, 2)
    expect(lab.run_cell(3)).to_have_text("old")
    root = start_chat(lab, 2)

    # the model's own read, shown to people without the model-facing frame
    reading = tool_card(root, "notebook_cells")
    expect(reading.locator(".jt-tool-result .jt-fold pre")).to_contain_text("print('old')")
    expect(reading.locator(".jt-tool-result .jt-fold pre")).not_to_contain_text("notebook_data")

    edit = tool_card(root, "edit_cell")
    expect(edit.locator(".jt-prompt-title")).to_have_text("Edit and run the 4th cell?")
    edit.get_by_role("button", name="Apply edit").click()
    expect(cell_source(lab, 3)).to_have_text("print('new')")
    expect(lab.cell_output(3)).to_have_text("new")  # its outputs match its text now
    expect(_badge(lab, 3)).to_have_text("edited from chat · turn 1")

    insert = tool_card(root, "insert_cell")
    title = insert.locator(".jt-prompt-title")
    expect(title).to_have_text("Insert a code cell below the 5th cell?")
    insert.get_by_role("button", name="Insert", exact=True).click()
    _sources(lab, "", "", "", "print('new')", "y = 2", "w = 4", "z = 3")
    expect(_badge(lab, 5)).to_have_text("from chat · turn 1")

    move = tool_card(root, "move_cell")
    expect(move.locator(".jt-prompt-title")).to_have_text("Move the 6th cell to be the 4th cell?")
    move.get_by_role("button", name="Move cell").click()
    _sources(lab, "", "", "", "w = 4", "print('new')", "y = 2", "z = 3")

    delete = tool_card(root, "delete_cell")
    expect(delete.locator(".jt-prompt-title")).to_have_text("Delete the 5th cell?")
    expect(delete.locator(".jt-prompt .jt-cell-code")).to_have_text("print('new')")
    expect(delete.locator(".jt-prompt .jt-cell-outputs")).to_have_text("→ stdout: new")
    delete.get_by_role("button", name="Delete cell").click()
    _sources(lab, "", "", "", "w = 4", "y = 2", "z = 3")
    expect(tool_card(root, "delete_cell").locator(".jt-tool-result .jt-fold pre")).to_contain_text(
        "Deleted the 5th cell (index 4): code"
    )

    saved = lab.cell_output(2).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-message")).to_have_text("Done.")
    lab.wait_cell_idle(2)
    tool_card(saved, "delete_cell").get_by_role("button", name="Undo").click()
    _sources(lab, "", "", "", "w = 4", "print('new')", "y = 2", "z = 3")
    expect(lab.cell_output(4)).to_have_text("new")  # back where it was, outputs included
    expect(_badge(lab, 4)).to_have_text("edited from chat · turn 1")  # and its stamp
    expect(tool_card(saved, "delete_cell").locator(".jt-undo")).to_contain_text(
        "put the deleted cell back: the 5th cell (index 4)"
    )
    assert lab.unexpected_page_errors() == []


CLOSING = (
    "script = [cycle(tool_call('notebook_cells', {})),"
    " cycle(tool_call('run_cell', {'index': 3})),"
    " cycle(message('Done.'))]"
)


def test_a_notebook_closed_while_a_cell_runs_gives_an_error_result(lab: Lab) -> None:
    lab.write_notebook(
        "closing.ipynb",
        [LOAD, SETUP + "\n" + CLOSING, chat_cell("Run it."),
         "import pathlib, time\npathlib.Path('started').touch()\ntime.sleep(3)\nprint('slept')"],
    )  # fmt: skip
    lab.open("closing.ipynb")
    run_setup(lab, 2)
    root = start_chat(lab, 2)
    run = tool_card(root, "run_cell")
    expect(run.locator(".jt-prompt-title")).to_have_text("Run the 4th cell?")
    expect(run.locator(".jt-prompt .jt-cell-code")).to_contain_text("time.sleep(3)")
    run.get_by_role("button", name="Run cell").click()
    # the tab closes while the cell runs (its code has started: the page was read and the
    # check passed), so nobody can show its outputs
    started = lab.dir / "started"
    deadline = time.monotonic() + 60
    while not started.exists():
        assert time.monotonic() < deadline, "the approved cell did not start running"
        time.sleep(0.1)
    lab.leave()
    deadline = time.monotonic() + 60
    while lab.server.sessions(lab.folder + "/")[0]["kernel"]["execution_state"] != "idle":
        assert time.monotonic() < deadline, "the turn did not end in the kernel"
        time.sleep(0.2)

    lab.reload("closing.ipynb")
    saved = lab.cell_output(2).locator(".jt-root.jt-saved")
    card = tool_card(saved, "run_cell")
    expect(card.locator(".jt-tool-result .jt-fold summary")).to_contain_text("Error")
    expect(card.locator(".jt-tool-result .jt-fold pre")).to_contain_text(
        "Ran the 4th cell (index 3) in the kernel, but the page did not show its outputs"
    )
    # what the model read
    expect(card.locator(".jt-tool-result .jt-fold pre")).to_contain_text("slept")


REFUSED = (
    "script = [cycle(tool_call('notebook_cells', {})),"
    " cycle(tool_call('run_cell', {'index': 3})),"
    " cycle(tool_call('run_cell', {'index': 3})),"
    " cycle(message('Ran.'))]"
)


@pytest.mark.parametrize("page", PAGES)
def test_a_cell_the_user_edited_is_refused_then_run_as_it_is_now(lab: Lab, page: str) -> None:
    lab.write_notebook(
        "refused.ipynb",
        [LOAD, SETUP + "\n" + REFUSED, chat_cell("Run cell 3."), "print('first')"],
    )
    open_page(lab, page, "refused.ipynb")
    run_setup(lab, 2)
    root = start_chat(lab, 2)
    first = tool_card(root, "run_cell").first
    expect(first.locator(".jt-prompt-title")).to_have_text("Run the 4th cell?")

    # the user edits the cell while the approval waits, then clicks Run
    editor = lab.cell(3).locator(".cm-content")
    editor.click()
    lab.page.keyboard.press("Control+End")
    lab.page.keyboard.type("  # mine")
    expect(editor).to_have_text("print('first')  # mine")
    lab.page.keyboard.press("Escape")
    first.get_by_role("button", name="Run cell").click()
    expect(first.locator(".jt-tool-result .jt-fold summary")).to_contain_text("Not run")
    expect(first.locator(".jt-tool-result .jt-fold pre")).to_contain_text(
        "Not run: cell 3 changed since you read it (its text was edited). It reads now:"
    )
    expect(lab.cell_output(3)).to_have_count(1)
    expect(lab.cell_output(3)).to_have_text("")  # nothing ran

    second = tool_card(root, "run_cell").nth(1)
    expect(second.locator(".jt-prompt .jt-cell-code")).to_have_text("print('first')  # mine")
    second.get_by_role("button", name="Run cell").click()
    expect(lab.cell_output(3)).to_have_text("first")
    expect(root.locator(".jt-message")).to_have_text("Ran.")
    assert lab.unexpected_page_errors() == []
