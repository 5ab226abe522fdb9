"""Grants in a real JupyterLab: the user's kernel records what it wrote and what the user granted
each thread in that notebook (their own store, nothing in the file), so after JupyterLab saved
the notebook and the kernel restarted, the thread keeps its "Always allow" and its history is
still the user's (the digests of the events survive JupyterLab's save); the same notebook copied
to another folder restores its talk but asks first, naming where the user granted it."""

from __future__ import annotations

import shutil

import pytest
from playwright.sync_api import expect

from jupyter_turns.kernel.grants import UserStore

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


def test_my_notebook_keeps_always_allow_and_a_copy_elsewhere_asks_first(lab: Lab) -> None:
    lab.write_notebook("mine.ipynb", CELLS)
    lab.open("mine.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)
    root.get_by_role("button", name="Always allow this tool in this thread").click()
    expect(root.locator(".jt-decisions")).to_contain_text("always allowed")
    lab.wait_cell_idle(3)
    lab.save()
    saved = lab.read_notebook("mine.ipynb")
    record = final_record(saved.cells[3])
    assert "signature" not in record["settings"]  # nothing in the file vouches for anything
    mine = str(lab.path("mine.ipynb").resolve())
    store = UserStore.of_user(lab.server.data_dir)  # the store the server's kernels write
    assert store.grants(record["conversation_id"])[mine].settings["always_allow"] == ["add"]
    copied = lab.path("elsewhere/mine.ipynb")
    copied.parent.mkdir()
    shutil.copy(lab.path("mine.ipynb"), copied)  # the same notebook, handed on

    lab.restart_kernel()
    _second_turn(lab)
    root = start_chat(lab, 5)
    lab.wait_cell_idle(5)
    expect(root.locator(".jt-message").last).to_have_text("The sum is 9.")
    # the Always allow the user granted in this notebook is back, and the talk is theirs
    expect(root.locator(".jt-decisions").last).to_contain_text("always allowed by you")
    output = lab.cell_output(5)
    expect(output).to_contain_text("Restored thread 'main': 4 events from mine.ipynb")
    expect(output).not_to_contain_text("not applied")
    expect(output).not_to_contain_text("written elsewhere")
    assert print_cell(lab, 6) == "[(4, 5)]"  # SETUP ran again after the restart

    lab.open("elsewhere/mine.ipynb")
    _second_turn(lab)
    root = start_chat(lab, 5)
    expect(lab.cell_output(5)).to_contain_text("asks for thread 'main': always allow `add`")
    expect(lab.cell_output(5)).to_contain_text(
        f"— not applied: you granted them to this thread in the notebook at {mine}, not here"
    )
    expect(lab.cell_output(5)).not_to_contain_text("written elsewhere")  # still the user's talk
    expect(root.get_by_text("Run add?")).to_be_visible()  # it asks first
    root.get_by_role("button", name="Skip", exact=True).click()
    lab.wait_cell_idle(5)
    expect(root.locator(".jt-tool .jt-badge").last).to_have_text("skipped")
    assert print_cell(lab, 6) == "[]"
