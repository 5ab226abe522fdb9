"""Rewind a two-turn thread from a saved card, in JupyterLab and Notebook 7, clicked as a person
would: the card asks first, showing what will be undone; then the edited cell has its text and
outputs back, the variable the python runs set is back, both turns' cards say "Rewound", and
the next turn's request carries neither of them. A fork goes on another way from before a turn
while the original thread keeps its turns."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .chat import (
    LOAD,
    PAGES,
    SETUP,
    chat_cell,
    open_page,
    print_cell,
    run_setup,
    start_chat,
    tool_card,
    wait_turn_end,
)
from .lab import Lab

pytestmark = pytest.mark.browser

SCRIPT = (
    "v = 0\n"
    "script = [cycle(tool_call('python', {'code': 'v = 1'})), cycle(message('One.')),"
    " cycle(tool_call('notebook_cells', {})),"
    " cycle(tool_call('edit_cell', {'index': 4, 'source': \"print('new')\", 'run': True})),"
    " cycle(tool_call('python', {'code': 'v = 2'})), cycle(message('Two.'))]\n"
    "echo = ScriptedProvider()"  # no script: it answers with a tally of what it was sent
)
WAIT = 60_000  # ms: both cores may be busy


@pytest.mark.parametrize("page", PAGES)
def test_rewind_a_two_turn_thread_from_the_first_turns_card(lab: Lab, page: str) -> None:
    lab.write_notebook(
        "rewind.ipynb",
        [LOAD, SETUP + "\n" + SCRIPT, chat_cell("First.", options="--builtins python"),
         chat_cell("Second."), "print('old')", "print(v)", chat_cell("Third.", script="echo")],
    )  # fmt: skip
    open_page(lab, page, "rewind.ipynb")
    run_setup(lab, 2)
    expect(lab.run_cell(4)).to_have_text("old")

    first = start_chat(lab, 2)
    tool_card(first, "python").get_by_role("button", name="Approve").click()
    wait_turn_end(first)
    lab.wait_cell_idle(2)
    second = start_chat(lab, 3)
    tool_card(second, "edit_cell").get_by_role("button", name="Apply edit").click()
    expect(lab.cell_output(4)).to_have_text("new", timeout=WAIT)
    tool_card(second, "python").get_by_role("button", name="Approve").click()
    wait_turn_end(second)
    lab.wait_cell_idle(3)
    assert print_cell(lab, 5) == "2"

    saved = lab.cell_output(2).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-message")).to_have_text("One.", timeout=WAIT)
    saved.get_by_role("button", name="Rewind to before this turn").click()
    confirm = saved.locator(".jt-rewind-confirm")
    expect(confirm).to_contain_text(
        "Rewind thread 'main' to before turn 1: turns 1–2", timeout=WAIT
    )
    expect(confirm).to_contain_text("Undoes 3 steps, newest first: python call")
    expect(confirm).to_contain_text("Cannot be undone: files written")
    confirm.get_by_role("button", name="Rewind", exact=True).click()

    # the edited cell has its text and outputs back; both cards say Rewound, greyed
    expect(lab.cell(4).locator(".jp-InputArea .cm-content")).to_have_text(
        "print('old')", timeout=WAIT
    )
    expect(lab.cell_output(4)).to_have_text("old", timeout=WAIT)
    for index in (2, 3):
        card = lab.cell_output(index).locator(".jt-root.jt-saved.jt-rewound")
        expect(card.locator(".jt-rewound-label")).to_contain_text("Rewound", timeout=WAIT)
        expect(card.locator(".jt-rewind")).to_contain_text("turns 1–2, no longer sent")
    expect(
        lab.cell_output(2).get_by_role("button", name="Rewind to before this turn")
    ).to_have_count(0)
    assert print_cell(lab, 5) == "0"  # the variable is back to before turn 1

    # the next turn's request carries none of the rewound turns: only its own
    third = start_chat(lab, 6)
    wait_turn_end(third)
    expect(third.locator(".jt-message")).to_contain_text(
        "Sent with this request: 1 turn, 0 answers.", timeout=WAIT
    )
    assert lab.unexpected_page_errors() == []


FORK = "script = [cycle(message('One.')), cycle(message('Two.')), cycle(message('Three.'))]"


@pytest.mark.parametrize("page", PAGES)
def test_fork_a_thread_before_its_second_turn_and_go_on_another_way(lab: Lab, page: str) -> None:
    lab.write_notebook(
        "fork.ipynb",
        [LOAD, SETUP + "\n" + FORK, chat_cell("First."), chat_cell("Second."),
         "%chat fork alt --at 2", chat_cell("Another way."), "%chat history alt",
         "%chat history main"],
    )  # fmt: skip
    open_page(lab, page, "fork.ipynb")
    run_setup(lab, 2)
    for index, answer in ((2, "One."), (3, "Two.")):
        root = start_chat(lab, index)
        wait_turn_end(root)
        expect(root.locator(".jt-message")).to_have_text(answer, timeout=WAIT)
        lab.wait_cell_idle(index)

    expect(lab.run_cell(4)).to_contain_text(
        "New thread 'alt' is current: Forked from thread 'main' before turn 2", timeout=WAIT
    )
    expect(lab.cell_output(4)).to_contain_text("Thread 'main' is untouched.")
    fork = start_chat(lab, 5)
    wait_turn_end(fork)
    expect(fork.locator(".jt-message")).to_have_text("Three.", timeout=WAIT)
    expect(fork).to_contain_text("Forked from thread 'main' before turn 2")
    lab.wait_cell_idle(5)

    # the fork holds the first turn and its own; the original thread keeps both of its turns
    alt = lab.run_cell(6)
    for said in ("First.", "One.", "Another way.", "Three."):
        expect(alt).to_contain_text(said, timeout=WAIT)
    expect(alt).not_to_contain_text("Second.")
    main = lab.run_cell(7)
    for said in ("First.", "One.", "Second.", "Two."):
        expect(main).to_contain_text(said, timeout=WAIT)
    expect(main).not_to_contain_text("Another way.")
    assert lab.unexpected_page_errors() == []
