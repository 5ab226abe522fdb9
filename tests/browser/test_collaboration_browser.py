"""Real-time collaboration (issue 32, point 1): two people on one notebook, a shared document.

With jupyter-collaboration the notebook is one Y.js document that every page edits and the
server saves. Two browser contexts (two users, each with the name JupyterLab gives them) open
the same notebook and kernel: the second page sees the turn stream and the inserted cell as
they happen, a prompt answered in one page closes in the other, what both type in other cells
during the turn is kept, and the saved file holds each record, cell and metadata entry once —
also after the kernel is killed mid-turn. Skipped where jupyter-collaboration is not installed.
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_output
from playwright.sync_api import Browser, Locator, expect

from .chat import LOAD, RECORD_MIME, SETUP, chat_cell, print_cell, run_setup, start_chat
from .chat import wait_widget as widget_of
from .lab import Lab, browser_context

pytestmark = pytest.mark.browser

# A streamed answer, held after its first words until the test drops `typed` (the user cells
# below the chat cell are typed into while the turn runs), then a cell to insert.
_SHARED = "() => window.__jt.panel.context.model.collaborative === true"
_USERNAME = "() => window.jupyterapp.serviceManager.user.identity.username"
SCRIPT = (
    "turn = cycle(message('Both pages see this' + ' word' * 120),"
    " tool_call('insert_cell', {'source': 'total = 1 + 2', 'run': False}))\n"
    "script = [[*turn[:6], FileGate('typed'), *turn[6:]], cycle(message('Inserted.'))]"
)


@pytest.fixture
def second(lab: Lab, browser: Browser) -> Iterator[Lab]:
    """A second user: a browser context of their own on the same server and folder."""
    if not lab.server.collaborative:
        pytest.skip("real-time collaboration needs jupyter-collaboration (the test extra)")
    with browser_context(browser) as page:
        other = Lab(lab.server, page, lab.folder)
        try:
            yield other
        finally:
            other.close()


def _type_at_end(lab: Lab, index: int, text: str) -> None:
    """Click into cell `index`'s editor and type `text` at the end of its last line."""
    lab.page.bring_to_front()
    lab.cell(index).locator(".cm-content").click()
    lab.page.keyboard.press("Control+End")
    lab.page.keyboard.type(text)


def _source(lab: Lab, index: int) -> Locator:
    return lab.cell(index).locator(".jp-InputArea .cm-content")


def _records(nb: NotebookNode) -> list[dict[str, Any]]:
    """Every chat record the file holds in an output, in cell order."""
    return [
        output["data"][RECORD_MIME]
        for cell in nb.cells
        for output in cell.get("outputs", [])
        if RECORD_MIME in output.get("data", {})
    ]


def _once(record: dict[str, Any]) -> None:
    """Each event of the record is there once."""
    counts = Counter(event["id"] for event in record["events"])
    assert [i for i, n in counts.items() if n > 1] == [], record["events"]


def test_two_users_follow_one_turn_and_keep_their_edits(lab: Lab, second: Lab) -> None:
    lab.write_notebook(
        "shared.ipynb",
        [LOAD, SETUP, SCRIPT, chat_cell("Insert a sum."), "a = 1", "b = 2"],
    )
    lab.open("shared.ipynb")
    assert lab.page.evaluate(_SHARED)  # one shared document, kept by the server
    second.open("shared.ipynb", workspace="second-user")
    for page in (lab, second):  # each sees the other on the notebook: clicks carry the names
        page.page.wait_for_function("() => !!window.__jupyter_turns_user?.()", timeout=30_000)
    names = (lab.user_name(), second.user_name())
    # two people (their anonymous display names may happen to be the same: their ids are not)
    assert len({page.page.evaluate(_USERNAME) for page in (lab, second)}) == 2
    lab.page.bring_to_front()
    run_setup(lab, 3)
    expect(second.prompt(2)).to_have_text("[3]:")  # the runs show in the other page
    root_a = start_chat(lab, 3)

    # the other page draws the same turn as it streams, from the shared document
    second.page.bring_to_front()
    root_b = widget_of(second, 3, timeout=90)
    expect(root_b.locator(".jt-draft .jt-message")).to_contain_text("Both pages see this word")
    # both type in their own cell while the answer streams (held where it stands)
    _type_at_end(second, 5, "  # from B")
    _type_at_end(lab, 4, "  # from A")
    lab.path("typed").write_text("")  # the rest of the answer, then the proposal

    # the proposal shows in both; the second user answers it, and it closes in the first
    second.page.bring_to_front()
    insert_b = root_b.get_by_role("button", name="Insert", exact=True)
    expect(insert_b).to_be_visible()
    insert_b.click()
    lab.page.bring_to_front()
    saved_a = lab.cell_output(3).locator(".jt-root.jt-saved")
    expect(saved_a.locator(".jt-message").last).to_have_text("Inserted.")
    expect(saved_a.locator(".jt-chip-approved")).to_have_text(f"approved by {names[1]}")
    expect(root_a.locator(".jt-prompt")).to_have_count(0)
    lab.wait_cell_idle(3)

    sources = ["total = 1 + 2", "a = 1  # from A", "b = 2  # from B"]
    for page in (lab, second):  # one inserted cell, both edits kept, in both pages
        page.page.bring_to_front()
        expect(page.cells()).to_have_count(7)
        for offset, text in enumerate(sources):
            expect(_source(page, 4 + offset)).to_have_text(text)
        expect(page.cell_output(3).locator(".jp-OutputArea-output")).to_have_count(1)

    second.save()  # the server writes its document: what both pages show
    nb = lab.read_notebook("shared.ipynb")
    assert [cell.source for cell in nb.cells[4:]] == sources
    assert [len(cell.get("outputs", [])) for cell in nb.cells[3:4]] == [1]
    (record,) = _records(nb)
    _once(record)
    assert [e["kind"] for e in record["events"]].count("tool_call_response") == 1
    assert [i for i, c in enumerate(nb.cells) if "jupyter_turns" in c.metadata] == [3, 4]
    assert nb.cells[3].metadata["jupyter_turns"]["in_output"] == RECORD_MIME
    assert list(nb.cells[4].metadata["jupyter_turns"]) == ["provenance"]  # the inserted cell
    assert lab.unexpected_page_errors() == [] and second.unexpected_page_errors() == []


# Two finished cycles (each a message and a quick tool), then a third whose tool never ends.
CYCLES = (
    "import os\n"
    "@tool(run='unattended')\n"
    "def step(n: int) -> int:\n"
    "    '''Returns n.'''\n"
    "    return n\n"
    "@tool(run='unattended')\n"
    "async def slow_lookup(q: str) -> str:\n"
    "    '''Takes forever.'''\n"
    "    await asyncio.sleep(3600)\n"
    "    return 'never'\n"
    "script = [cycle(message('One.'), tool_call('step', {'n': 1})),"
    " cycle(message('Two.'), tool_call('step', {'n': 2})),"
    " cycle(message('Three.'), tool_call('slow_lookup', {'q': 'x'})),"
    " cycle(message('never reached'))]\n"
    "print(os.getpid())"
)
KINDS = ["chat_request"] + ["message", "tool_call_request", "tool_call_response"] * 2
KINDS += ["message", "tool_call_request"]
_EVENTS = (
    "(n) => window.__jt.panel.content.widgets[3].model.getMetadata('jupyter_turns')"
    "?.events?.length === n"
)


def _shows_the_finished_cycles(lab: Lab) -> None:
    saved = lab.cell_output(3).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-message")).to_have_text(["One.", "Two.", "Three."])
    expect(saved.locator(".jt-tool-name")).to_have_text(["step", "step", "slow_lookup"])
    expect(saved.locator(".jt-notice")).to_contain_text("did not finish")
    expect(lab.cell_output(3).locator(".jp-OutputArea-output")).to_have_count(1)


def test_a_kernel_killed_mid_turn_leaves_the_finished_cycles_once(lab: Lab, second: Lab) -> None:
    lab.write_notebook("killed.ipynb", [LOAD, SETUP, CYCLES, chat_cell("Three steps.")])
    lab.open("killed.ipynb")
    second.open("killed.ipynb", workspace="second-user")
    lab.page.bring_to_front()
    run_setup(lab, 2)
    pid = int(print_cell(lab, 2))
    root = start_chat(lab, 3)
    expect(root.locator(".jt-tool[data-status='running']")).to_have_count(1)
    lab.page.wait_for_function(_EVENTS, arg=len(KINDS))  # two cycles and a call saved
    second.page.bring_to_front()
    second.page.wait_for_function(_EVENTS, arg=len(KINDS))
    os.kill(pid, signal.SIGKILL)

    for page in (lab, second):  # both pages put the saved turn in the widget's place
        page.page.bring_to_front()
        _shows_the_finished_cycles(page)
        dialog = page.page.locator(".jp-Dialog")
        expect(dialog).to_contain_text("appears to have died")
        dialog.get_by_role("button", name="Ok").click()
    lab.page.bring_to_front()
    lab.save()
    nb = lab.read_notebook("killed.ipynb")
    assert len(nb.cells) == 4 and len(nb.cells[3].outputs) == 1
    (record,) = _records(nb)
    _once(record)
    assert [e["kind"] for e in record["events"]] == KINDS
    second.close()

    lab.close_and_reopen("killed.ipynb")  # the file, as a user finds it later
    _shows_the_finished_cycles(lab)
    assert lab.unexpected_page_errors() == []


ADD = "script = [cycle(tool_call('add', {'a': 2, 'b': 3})), cycle(message('The sum is 5.'))]"


def test_notebook_7_and_jupyterlab_share_a_turn(lab: Lab, second: Lab) -> None:
    lab.write_notebook("nb7.ipynb", [LOAD, SETUP, ADD, chat_cell("Add 2 and 3.")])
    lab.open_in_notebook7("nb7.ipynb")
    assert lab.page.evaluate(_SHARED)  # Notebook 7's page edits the shared document too
    second.open("nb7.ipynb", workspace="second-user")
    lab.page.bring_to_front()
    run_setup(lab, 3)
    root = start_chat(lab, 3, timeout=90)  # two pages on one kernel: under load it draws late
    expect(root.get_by_role("button", name="Approve", exact=True)).to_be_visible()

    second.page.bring_to_front()  # the JupyterLab user answers the Notebook 7 user's prompt
    other = widget_of(second, 3, timeout=90)
    other.get_by_role("button", name="Approve", exact=True).click()
    for page in (second, lab):
        page.page.bring_to_front()
        saved = page.cell_output(3).locator(".jt-root.jt-saved")
        expect(saved.locator(".jt-message")).to_have_text("The sum is 5.")
        expect(saved.locator(".jt-chip-approved")).to_have_text(f"approved by {second.user_name()}")
        expect(page.cell_output(3).locator(".jp-OutputArea-output")).to_have_count(1)
    lab.wait_cell_idle(3)
    lab.save()
    (record,) = _records(lab.read_notebook("nb7.ipynb"))
    _once(record)
    assert lab.unexpected_page_errors() == [] and second.unexpected_page_errors() == []


FIRST = "script = [cycle(message('Paris is the capital.'))]"
SECOND = (
    "from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message\n"
    "script2 = ScriptedProvider([cycle(message('About 2.1 million people.'))])"
)
SEEN = "print([e.content for e in script2.requests[0].events if e.kind != 'chat_request'])"


def test_after_a_restart_by_the_other_user_the_thread_is_restored(lab: Lab, second: Lab) -> None:
    lab.write_notebook(
        "restart.ipynb",
        [LOAD, SETUP, FIRST, chat_cell("The capital of France?"), SECOND,
         chat_cell("How many people live there?", script="script2"), SEEN],
    )  # fmt: skip
    lab.open("restart.ipynb")
    second.open("restart.ipynb", workspace="second-user")
    lab.page.bring_to_front()
    run_setup(lab, 3)
    root = start_chat(lab, 3)
    lab.wait_cell_idle(3)
    expect(root.locator(".jt-message")).to_have_text("Paris is the capital.")
    lab.save()  # the server writes the shared document: what a restarted kernel reads

    second.page.bring_to_front()  # the other user restarts the kernel and goes on
    second.restart_kernel()
    second.run_cell(0)
    second.run_cell(4)
    follow = start_chat(second, 5)
    second.wait_cell_idle(5)
    expect(follow.locator(".jt-message")).to_have_text("About 2.1 million people.")
    assert print_cell(second, 6) == "['Paris is the capital.']"  # the thread, restored once
    lab.page.bring_to_front()
    expect(lab.cell_output(5).locator(".jt-root .jt-message")).to_have_text(
        "About 2.1 million people."
    )
    second.save()
    records = _records(lab.read_notebook("restart.ipynb"))
    assert [r["conversation_id"] for r in records] == [records[0]["conversation_id"]] * 2
    for record in records:
        _once(record)


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _saved_view(cell_id: str, model_id: str, text: str) -> NotebookNode:
    """A code cell whose saved output is a widget view of `model_id` (untrusted: the file is
    not signed), as a crafted notebook or another page's write holds it."""
    view = {"version_major": 2, "version_minor": 1, "model_id": model_id}
    output = new_output("display_data", data={WIDGET_VIEW: view, "text/plain": text})
    return new_code_cell("# a saved widget view", id=cell_id, outputs=[output])


# Two widgets live in the kernel under known model ids; the kernel vouches for one of them in
# the cell that shows it, and for the other in other cells only (trust_live, as before a turn).
VOUCH = (
    "import ipywidgets\n"
    "from jupyter_turns.kernel.front import metadata_writer\n"
    "shown = ipywidgets.Label('Drawn: the kernel vouched for it', model_id='jt-vouched')\n"
    "forged = ipywidgets.Label('Drawn without a vouch', model_id='jt-forged')\n"
    "writer = metadata_writer()\n"
    "writer.trust_live('vouch-cell', 'jt-forged')\n"
    "writer.trust_live('forged-view', 'jt-another')\n"
    "writer.trust_live('vouched-view', 'jt-vouched')"
)


@pytest.mark.both_collaboration_modes
def test_only_the_widget_view_the_kernel_vouches_for_is_drawn(lab: Lab) -> None:
    lab.write_notebook(
        "vouch.ipynb",
        [
            new_code_cell(VOUCH, id="vouch-cell"),
            _saved_view("vouched-view", "jt-vouched", "Label (vouched, as text)"),
            _saved_view("forged-view", "jt-forged", "Label (forged, as text)"),
        ],
    )
    lab.open("vouch.ipynb")
    for index, text in ((1, "vouched"), (2, "forged")):  # untrusted outputs: text only
        expect(lab.cell_output(index)).to_contain_text(f"Label ({text}, as text)")
    lab.run_cell(0)
    # drawn in the page, though the notebook still holds it untrusted
    expect(lab.cell_output(1)).to_contain_text("Drawn: the kernel vouched for it")
    expect(lab.cell_output(1)).not_to_contain_text("as text")
    # the vouches for the other cell came before: the forged view is still text
    expect(lab.cell_output(2)).to_contain_text("Label (forged, as text)")
    expect(lab.cell_output(2)).not_to_contain_text("Drawn without a vouch")
    lab.save()  # the page drew it without writing the notebook
    saved = lab.read_notebook("vouch.ipynb").cells[1].outputs
    assert [o["data"]["text/plain"] for o in saved] == ["Label (vouched, as text)"]
    assert lab.unexpected_page_errors() == []
