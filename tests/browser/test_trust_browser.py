"""Trust in a real JupyterLab: the settings a user's kernel saves are signed with their own
jupyter_turns key, so a restarted kernel keeps its "Always allow"; the same conversation in a
notebook whose settings someone else's jupyter_turns signed restores its talk but asks again
before any tool runs."""

from __future__ import annotations

import nbformat
import pytest
from playwright.sync_api import expect

from jupyter_turns.kernel.trust import SettingsKey

from .chat import LOAD, SETUP, chat_cell, final_record, print_cell, run_setup, start_chat
from .lab import Lab

pytestmark = pytest.mark.browser

FIRST = "script = [cycle(tool_call('add', {'a': 2, 'b': 3})), cycle(message('The sum is 5.'))]"
LATER = (
    "from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call\n"
    "script2 = ScriptedProvider([cycle(tool_call('add', {'a': 4, 'b': 5})),"
    " cycle(message('The sum is 9.'))])"
)
CELLS = [
    LOAD,
    SETUP,
    FIRST,
    chat_cell("Add 2 and 3"),
    LATER,
    chat_cell("Add 4 and 5", script="script2"),
    "print(ran)",
]


def _second_turn(lab: Lab) -> None:
    """After a restart: load, define the tool again, play the second script."""
    lab.run_cell(0)
    lab.run_cell(1)
    lab.run_cell(4)


def test_my_notebook_keeps_always_allow_and_one_from_someone_else_does_not(lab: Lab) -> None:
    lab.write_notebook("mine.ipynb", CELLS)
    lab.open("mine.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)
    root.get_by_role("button", name="Always allow this tool in this thread").click()
    expect(root.locator(".jt-decisions")).to_contain_text("always allowed")
    lab.wait_cell_idle(3)
    lab.save()
    saved = lab.read_notebook("mine.ipynb")
    mine = SettingsKey.of_user(lab.server.data_dir)  # the key the server's kernels sign with
    record = final_record(saved.cells[3])
    assert mine.verifies(record["settings"], record["conversation_id"])
    assert mine.verifies(
        saved.metadata["jupyter_turns"]["threads"]["main"], record["conversation_id"]
    )

    # someone else's copy: the same conversation and settings, signed by their jupyter_turns
    theirs = nbformat.from_dict(saved)
    colleague = SettingsKey(b"c" * 64)
    for settings in (
        final_record(theirs.cells[3])["settings"],
        theirs.metadata["jupyter_turns"]["threads"]["main"],
    ):
        settings.update(colleague.sign(settings, record["conversation_id"]))
    nbformat.write(theirs, lab.path("theirs.ipynb"))

    lab.restart_kernel()
    _second_turn(lab)
    root = start_chat(lab, 5)
    lab.wait_cell_idle(5)
    expect(root.locator(".jt-message").last).to_have_text("The sum is 9.")
    # the Always allow the user's own signed notebook brought back is the user's choice
    expect(root.locator(".jt-decisions").last).to_contain_text("always allowed by you")
    output = lab.cell_output(5)
    expect(output).to_contain_text("Restored thread 'main': 4 events from mine.ipynb")
    expect(output).not_to_contain_text("not applied")
    assert print_cell(lab, 6) == "[(4, 5)]"  # SETUP ran again after the restart

    lab.open("theirs.ipynb")
    _second_turn(lab)
    root = start_chat(lab, 5)
    expect(lab.cell_output(5)).to_contain_text("asks for thread 'main': always allow `add`")
    expect(lab.cell_output(5)).to_contain_text(
        "— not applied: these settings were not saved by your own jupyter_turns"
    )
    expect(root.get_by_text("Run add?")).to_be_visible()  # it asks again
    root.get_by_role("button", name="Skip", exact=True).click()
    lab.wait_cell_idle(5)
    expect(root.locator(".jt-tool .jt-badge").last).to_have_text("skipped")
    assert print_cell(lab, 6) == "[]"
