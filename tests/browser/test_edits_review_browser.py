"""``--edits review`` in JupyterLab and Notebook 7, clicked as a person would: the model's two
cell changes are made without a prompt, the turn ends with a review panel listing them, Keep on
one and Undo on the other (the deleted cell comes back), and the panel says how each ended,
reopened too."""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, expect

from .chat import LOAD, PAGES, SETUP, chat_cell, open_page, reopen_page, run_setup, start_chat
from .lab import Lab

pytestmark = pytest.mark.browser

WAIT = 60_000  # ms: both cores may be busy with other work

REVIEW = (
    "script = [cycle(tool_call('notebook_cells', {})),"
    " cycle(tool_call('insert_cell', {'source': '# Notes', 'cell_type': 'markdown'})),"
    " cycle(tool_call('delete_cell', {'index': 5})),"
    " cycle(message('Tidied.'))]"
)


def _sources(lab: Lab, *texts: str) -> None:
    expect(lab.cells()).to_have_count(len(texts), timeout=WAIT)
    for index, text in enumerate(texts):
        if text:
            expect(lab.cell(index)).to_contain_text(text, timeout=WAIT)


def _item(panel: Locator, line: str) -> Locator:
    return panel.locator(".jt-review-item").filter(has_text=line)


@pytest.mark.parametrize("page", PAGES)
def test_review_keeps_one_change_and_undoes_the_other(lab: Lab, page: str) -> None:
    lab.write_notebook(
        "review.ipynb",
        [LOAD, SETUP + "\n" + REVIEW, chat_cell("Tidy up.", options="--edits review"),
         "x = 1", "y = 2"],
    )  # fmt: skip
    open_page(lab, page, "review.ipynb")
    run_setup(lab, 2)
    root = start_chat(lab, 2)
    # no prompt: both changes are made as they come
    _sources(lab, "", "", "", "Notes", "x = 1")
    expect(root.locator(".jt-prompt")).to_have_count(0)

    saved = lab.cell_output(2).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-message")).to_have_text("Tidied.", timeout=WAIT)
    lab.wait_cell_idle(2, timeout=60)
    panel = saved.locator(".jt-review")
    expect(panel.locator(".jt-review-title")).to_have_text(
        "Review the 2 changes made without asking (2 to review)", timeout=WAIT
    )
    inserted = _item(panel, "Inserted a markdown cell, the 4th cell")
    deleted = _item(panel, "Deleted the")
    expect(deleted.locator("summary")).to_have_text("Deleted the 6th cell")
    deleted.locator("summary").click()  # its preview: the cell that went
    expect(deleted.locator(".jt-cell-code")).to_have_text("y = 2")

    user = lab.user_name()
    inserted.get_by_role("button", name="Keep").click()
    expect(_item(panel, "Inserted").locator(".jt-review-state")).to_have_text(
        f"Kept by {user}", timeout=WAIT
    )
    _item(panel, "Deleted").get_by_role("button", name="Undo").click()
    _sources(lab, "", "", "", "Notes", "x = 1", "y = 2")  # the deleted cell is back
    expect(_item(panel, "Deleted").locator(".jt-review-state")).to_have_text(
        f"Undone by {user}", timeout=WAIT
    )
    expect(panel.locator(".jt-review-title")).to_have_text(
        "Reviewed: 2 changes made without asking"
    )
    expect(panel.get_by_role("button", name="Keep all")).to_have_count(0)

    # saved in the notebook: reopened, the panel still says how each change ended
    lab.save()
    reopen_page(lab, page, "review.ipynb")
    reopened = lab.cell_output(2).locator(".jt-root.jt-saved .jt-review")
    expect(_item(reopened, "Inserted").locator(".jt-review-state")).to_have_text(
        f"Kept by {user}", timeout=WAIT
    )
    expect(_item(reopened, "Deleted").locator(".jt-review-state")).to_have_text(f"Undone by {user}")
    assert lab.unexpected_page_errors() == []
