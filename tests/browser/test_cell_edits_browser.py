"""The model works in the notebook, in JupyterLab and Notebook 7, clicked as a person would:
a proposed cell is previewed and inserted below the chat cell (run, with its outputs and count),
an edit shows a diff and changes the cell, and the saved cards' Undo removes and restores them,
newest first, still shown undone after reopening."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .chat import LOAD, SETUP, cell_source, chat_cell, run_setup, start_chat, tool_card
from .lab import Lab

pytestmark = pytest.mark.browser

CODE = "rain = [1, 2, 3]\\nsum(rain)"
SCRIPT = (
    "script = [cycle(tool_call('notebook_cells', {})),"
    f" cycle(tool_call('insert_cell', {{'source': '{CODE}', 'run': True}})),"
    " cycle(tool_call('edit_cell', {'index': 2, 'source': 'x = 2'})),"
    " cycle(message('Done.'))]"
)


def test_proposed_cells_are_previewed_inserted_run_edited_and_undone(lab: Lab) -> None:
    lab.write_notebook(
        "edits.ipynb",
        [LOAD, SETUP + "\n" + SCRIPT, "x = 1", chat_cell("Sum the rain; set x to 2."),
         "print('rain' in dir())"],
    )  # fmt: skip
    lab.open("edits.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)

    # the proposal, highlighted as code, waits for a click
    insert = tool_card(root, "insert_cell")
    expect(insert.locator(".jt-prompt-title")).to_have_text(
        "Insert and run a code cell below the chat?"
    )
    proposal = insert.locator(".jt-prompt .jt-cell-preview .jt-cell-code")
    expect(proposal).to_have_text("rain = [1, 2, 3]\nsum(rain)")
    expect(proposal.locator(".hljs-built_in")).to_have_text("sum")
    # the Arguments show the same exact text as code, not as escaped JSON
    expect(insert.locator(".jt-tool-args .jt-cell-code")).to_have_text(
        "rain = [1, 2, 3]\nsum(rain)"
    )
    expect(lab.cells()).to_have_count(5)  # nothing inserted before the click
    insert.get_by_role("button", name="Insert", exact=True).click()
    expect(cell_source(lab, 4)).to_have_text("rain = [1, 2, 3]sum(rain)")  # one .cm-line per line
    expect(lab.cell_output(4).locator(".jp-OutputArea-output")).to_have_text("6")
    expect(lab.prompt(4)).to_have_text("[4]:")  # ran during chat cell [4]

    edit = tool_card(root, "edit_cell")
    expect(edit.locator(".jt-prompt-title")).to_have_text("Edit the 3rd cell?")
    expect(edit.locator(".jt-diff-del")).to_have_text("-x = 1")
    expect(edit.locator(".jt-diff-add")).to_have_text("+x = 2")
    edit.get_by_role("button", name="Apply edit").click()
    expect(cell_source(lab, 2)).to_have_text("x = 2")
    badge = lab.cell(2).locator(".jt-provenance-badge")
    expect(badge).to_have_text("edited from chat · turn 1")

    saved = lab.cell_output(3).locator(".jt-root.jt-saved")  # the turn ended: the record
    expect(saved.locator(".jt-message")).to_have_text("Done.")
    lab.wait_cell_idle(3)
    # undo goes newest first: the insert waits for the edit
    tool_card(saved, "insert_cell").get_by_role("button", name="Undo").click()
    expect(tool_card(saved, "insert_cell").locator(".jt-action-status")).to_contain_text(
        "undo the later 1 step first (edit_cell"
    )
    tool_card(saved, "edit_cell").get_by_role("button", name="Undo").click()
    expect(cell_source(lab, 2)).to_have_text("x = 1")
    expect(badge).to_have_count(0)  # Undo took the stamp with the change
    expect(tool_card(saved, "edit_cell").locator(".jt-undo")).to_have_text(
        re.compile(r"^Undone by [^:]+: restored the edited cell's earlier text$")
    )
    tool_card(saved, "insert_cell").get_by_role("button", name="Undo").click()
    expect(lab.cells()).to_have_count(5)
    expect(cell_source(lab, 4)).to_have_text("print('rain' in dir())")
    expect(tool_card(saved, "insert_cell").locator(".jt-undo")).to_contain_text(
        re.compile(r"Undone by [^:]+: removed the inserted cell, removed rain")
    )
    expect(lab.run_cell(4)).to_have_text("False")

    lab.save()
    lab.close_and_reopen("edits.ipynb")
    reopened = lab.cell_output(3).locator(".jt-root.jt-saved")
    expect(tool_card(reopened, "edit_cell").locator(".jt-undo")).to_contain_text("Undone by ")
    expect(tool_card(reopened, "insert_cell").locator(".jt-undo")).to_contain_text(
        "Not undone: files written and other side effects"
    )
    expect(tool_card(reopened, "edit_cell").locator(".jt-diff-add")).to_have_text("+x = 2")
    expect(reopened.get_by_role("button", name="Undo")).to_have_count(0)
    assert lab.unexpected_page_errors() == []


NB7_SCRIPT = (
    "script = [cycle(tool_call('notebook_cells', {'start': 2, 'end': 2})),"
    " cycle(tool_call('edit_cell', {'index': 2, 'source': 'rate = 0.5'})),"
    " cycle(tool_call('insert_cell', {'source': '## Findings', 'cell_type': 'markdown'})),"
    " cycle(tool_call('python', {'code': 'total = 40 + 2\\nprint(total)'})),"
    " cycle(message('Added.'))]"
)


def test_notebook_7_edits_inserts_adds_to_the_notebook_and_undoes(lab: Lab) -> None:
    lab.write_notebook(
        "nb7.ipynb",
        [LOAD, SETUP + "\n" + NB7_SCRIPT, "rate = 0.1",
         chat_cell("Add a heading.", options="--builtins python")],
    )  # fmt: skip
    lab.open_in_notebook7("nb7.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)
    edit = tool_card(root, "edit_cell")
    expect(edit.locator(".jt-diff-add")).to_have_text("+rate = 0.5")
    edit.get_by_role("button", name="Apply edit").click()
    expect(cell_source(lab, 2)).to_have_text("rate = 0.5")
    insert = tool_card(root, "insert_cell")
    expect(insert.locator(".jt-cell-markdown h2")).to_have_text("Findings")  # rendered
    insert.get_by_role("button", name="Insert", exact=True).click()
    expect(lab.cells()).to_have_count(5)
    expect(lab.cell(4)).to_contain_text("Findings")
    tool_card(root, "python").get_by_role("button", name="Approve").click()
    saved = lab.cell_output(3).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-message")).to_have_text("Added.")
    lab.wait_cell_idle(3)

    # the python run becomes a real cell, with its output, below the chat cell
    tool_card(saved, "python").get_by_role("button", name="Add to notebook").click()
    expect(lab.cells()).to_have_count(6)
    expect(cell_source(lab, 4)).to_have_text("total = 40 + 2print(total)")
    expect(lab.cell_output(4)).to_have_text("42")

    # newest first: the python run, the inserted heading, the edit
    tool_card(saved, "python").get_by_role("button", name="Undo").click()
    expect(tool_card(saved, "python").locator(".jt-undo")).to_contain_text(
        re.compile(r"Undone by [^:]+: removed total")
    )
    tool_card(saved, "insert_cell").get_by_role("button", name="Undo").click()
    expect(lab.cells()).to_have_count(5)  # the heading went; the added cell is the user's
    expect(tool_card(saved, "insert_cell").locator(".jt-undo")).to_have_text(
        re.compile(r"^Undone by [^:]+: removed the inserted cell$")
    )
    tool_card(saved, "edit_cell").get_by_role("button", name="Undo").click()
    expect(cell_source(lab, 2)).to_have_text("rate = 0.1")
