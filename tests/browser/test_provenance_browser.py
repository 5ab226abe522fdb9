"""Provenance in JupyterLab and Notebook 7, as a person sees it: a cell the model inserted shows
"from chat · turn 1"; the card's "Go to cell" scrolls to the cell and, after a reload, the
cell's badge scrolls back to the card; copied into another notebook the cell says where it came
from; a crafted stamp shows as text or not at all; nbconvert's HTML shows none of it."""

from __future__ import annotations

import json
import re

import nbformat
import pytest
from nbconvert import HTMLExporter
from playwright.sync_api import Locator, expect

from .chat import (
    LOAD,
    PAGES,
    SETUP,
    chat_cell,
    open_page,
    reopen_page,
    run_setup,
    start_chat,
    tool_card,
    wait_turn_end,
)
from .lab import Lab

pytestmark = pytest.mark.browser

FILLERS = 24  # cells between the chat cell and the end: the card and the cell are far apart
FILLER = "\n".join(f"step_{i} = {i}" for i in range(8))
SCRIPT = (
    "script = [cycle(tool_call('insert_cell', {'source': 'total = 6 * 7', 'after': "
    f"{2 + FILLERS}}}, call_id='ins')), cycle(message('Added.'))]"
)


def _badge(lab: Lab, index: int) -> Locator:
    return lab.cell(index).locator(".jt-provenance-badge")


@pytest.mark.parametrize("page", PAGES)
def test_an_inserted_cell_and_its_card_lead_to_each_other_after_a_reload_and_a_copy(
    lab: Lab, page: str
) -> None:
    lab.write_notebook(
        "analysis.ipynb",
        [LOAD, SETUP + "\n" + SCRIPT, chat_cell("Add a total at the end."),
         *[FILLER] * FILLERS],
    )  # fmt: skip
    open_page(lab, page, "analysis.ipynb")
    run_setup(lab, 2)
    root = start_chat(lab, 2)
    tool_card(root, "insert_cell").get_by_role("button", name="Insert", exact=True).click()
    wait_turn_end(root)
    inserted = 3 + FILLERS
    expect(lab.cells()).to_have_count(inserted + 1)
    expect(_badge(lab, inserted)).to_have_text("from chat · turn 1")
    expect(_badge(lab, 2)).to_have_count(0)  # the chat cell and the user's cells: no badge
    expect(_badge(lab, 3)).to_have_count(0)

    # the card's link scrolls to the cell, far below
    saved = lab.cell_output(2).locator(".jt-root.jt-saved")
    go = tool_card(saved, "insert_cell").get_by_role("button", name="Go to cell")
    go.scroll_into_view_if_needed()
    expect(lab.cell(inserted)).not_to_be_in_viewport()
    go.click()
    expect(lab.cell(inserted).locator(".jp-InputArea")).to_be_in_viewport()

    # reopened from the file: the badge scrolls to the turn's card
    lab.save()
    reopen_page(lab, page, "analysis.ipynb")
    badge = _badge(lab, inserted)
    expect(badge).to_have_text("from chat · turn 1")
    expect(badge).to_have_attribute(
        "title", re.compile(r"^thread main · turn 1 · insert_cell ins · .*approved by .+ · 20")
    )
    badge.scroll_into_view_if_needed()
    card = lab.cell_output(2).locator(".jt-tool[data-call-id='ins']")
    expect(card).not_to_be_in_viewport()
    badge.click()
    expect(card).to_be_in_viewport()

    # nbconvert shows the cell and nothing of its stamp
    html, _ = HTMLExporter().from_filename(str(lab.path("analysis.ipynb")))
    assert "step_7" in html  # the notebook's cells are there
    assert "from chat" not in html and "jt-provenance" not in html

    # the cell copied into another notebook says where it came from
    stamped = lab.read_notebook("analysis.ipynb").cells[inserted]
    stamp = stamped.metadata["jupyter_turns"]["provenance"]
    assert stamp["notebook"] == f"{lab.folder}/analysis.ipynb" and stamp["turn"] == 1
    _write_copies(lab, stamped)
    reopen_page(lab, page, "report.ipynb")
    copied = _badge(lab, 1)
    expect(copied).to_have_text(f"from chat in {lab.folder}/analysis.ipynb · turn 1")
    copied.click()
    expect(lab.cell(1).locator(".jt-provenance-note")).to_have_text(
        f"That conversation is in {lab.folder}/analysis.ipynb, not in this notebook."
    )
    # crafted stamps: HTML in a stamp is text; a stamp of another shape shows nothing
    expect(_badge(lab, 2)).to_have_text(
        "from chat in <img src=x onerror=window.__pwned=1> · turn 2"
    )
    expect(_badge(lab, 2).locator("img")).to_have_count(0)
    expect(lab.cell(3)).to_contain_text("not_stamped = 1")
    expect(_badge(lab, 3)).to_have_count(0)
    assert lab.page.evaluate("window.__pwned") is None
    assert lab.unexpected_page_errors() == []


def _write_copies(lab: Lab, stamped: nbformat.NotebookNode) -> None:
    """report.ipynb: the copied cell, and two cells whose stamps a notebook's author crafted."""
    stamp = stamped.metadata["jupyter_turns"]["provenance"]
    crafted = nbformat.v4.new_code_cell("crafted = 1")
    crafted.metadata["jupyter_turns"] = {
        "provenance": {**stamp, "turn": 2, "notebook": "<img src=x onerror=window.__pwned=1>"}
    }
    odd = nbformat.v4.new_code_cell("not_stamped = 1")
    odd.metadata["jupyter_turns"] = {"provenance": {**stamp, "turn": "<b>3</b>"}}
    copy = nbformat.from_dict(json.loads(json.dumps(stamped)))
    copy["id"] = "copied-cell"
    lab.write_notebook("report.ipynb", ["print('report')", copy, crafted, odd])


NB7_SCRIPT = (
    "script = [cycle(tool_call('insert_cell', {'source': '## Findings', "
    "'cell_type': 'markdown'})), cycle(message('Added.'))]"
)


def test_notebook_7_shows_the_badge_of_an_inserted_cell(lab: Lab) -> None:
    lab.write_notebook("nb7.ipynb", [LOAD, SETUP + "\n" + NB7_SCRIPT, chat_cell("Add a heading.")])
    lab.open_in_notebook7("nb7.ipynb")
    run_setup(lab, 2)
    root = start_chat(lab, 2)
    tool_card(root, "insert_cell").get_by_role("button", name="Insert", exact=True).click()
    wait_turn_end(root)
    expect(lab.cell(3)).to_contain_text("Findings")
    expect(_badge(lab, 3)).to_be_visible()
    expect(_badge(lab, 3)).to_have_text("from chat · turn 1")
    assert lab.unexpected_page_errors() == []
