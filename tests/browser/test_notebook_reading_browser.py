"""Reading the notebook in JupyterLab: `notebook_cells` answers from the page as it is now, so
the model sees an edit the user typed but neither saved nor ran; `cell_output` hands the model a
cell's plot, which the tool card shows, live and in the saved record."""

from __future__ import annotations

import base64
import json
import re

import pytest
from playwright.sync_api import expect

from .chat import (
    LOAD,
    SETUP,
    chat_cell,
    final_record,
    run_setup,
    start_chat,
    wait_turn_end,
    wait_widget,
)
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


PLOT = (
    "%matplotlib inline\n"
    "import matplotlib.pyplot as plt\n"
    "fig, ax = plt.subplots(figsize=(3, 2), dpi=50)\n"
    "_ = ax.plot([1, 3, 2])"
)
# The record replaces the live widget when the turn ends: `add` asks first, so the live widget
# stays until the test approves, after it saw cell_output's image.
PLOT_SCRIPT = (
    "script = [cycle(tool_call('cell_output', {'index': 2})),"
    " cycle(message('A line.'), tool_call('add', {'a': 1, 'b': 2})), cycle(message('Done.'))]"
)


def _png_width(src: str) -> int:
    """The pixel width in the header of a `data:image/png;base64,…` URL."""
    return int.from_bytes(base64.b64decode(src.split(",", 1)[1])[16:20], "big")


def test_cell_output_shows_a_plot_live_and_in_the_reopened_record(lab: Lab) -> None:
    lab.write_notebook("plot.ipynb", [LOAD, SETUP + "\n" + PLOT_SCRIPT, PLOT, chat_cell("Plot?")])
    lab.open("plot.ipynb")
    lab.run_all(wait=False)
    live = wait_widget(lab, 3, timeout=60)
    card = live.locator(".jt-tool", has=lab.page.locator(".jt-tool-name", has_text="cell_output"))
    image = card.locator("img.jt-image")
    expect(live.locator(".jt-message")).to_have_text("A line.", timeout=30_000)
    expect(image).to_be_visible()
    expect(live).not_to_have_class(re.compile(r"\bjt-saved\b"))  # still the live widget
    src = image.get_attribute("src") or ""
    assert src.startswith("data:image/png;base64,") and _png_width(src) > 0
    expect(image).to_have_js_property("naturalWidth", _png_width(src))  # decoded
    live.get_by_role("button", name="Approve", exact=True).click()
    expect(live.locator(".jt-message")).to_have_text(["A line.", "Done."], timeout=30_000)
    lab.wait_cell_idle(3)
    wait_turn_end(live)
    lab.save()

    lab.close_and_reopen("plot.ipynb")
    saved = lab.cell_output(3).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-message")).to_have_text(["A line.", "Done."])
    shown = saved.locator(".jt-tool img.jt-image")
    expect(shown).to_have_count(1)
    expect(shown).to_be_visible()
    expect(shown).to_have_attribute("src", src)
    expect(shown).to_have_js_property("naturalWidth", _png_width(src))
    # the file holds the image once in the chat cell: in the record, not in the HTML fallback
    cell = lab.read_notebook("plot.ipynb").cells[3]
    data = src.split(",", 1)[1]
    assert (json.dumps(cell.outputs) + json.dumps(cell.metadata)).count(data) == 1
    response = next(e for e in final_record(cell)["events"] if e["kind"] == "tool_call_response")
    assert response["images"][0]["data"] == data
    assert lab.unexpected_page_errors() == []
