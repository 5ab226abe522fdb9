"""Who clicked (issue 32, point 3), in JupyterLab with two pages on one notebook and its kernel:
an approval made in one page closes the prompt in the other, both cards say whose approval it
was, and the saved record keeps it. The name is the one the server knows; a name it makes up for
an anonymous user ("Anonymous Lysithea") is said as "you" while nobody else is on the notebook
(issue 45): here both pages are the same user's."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, expect

from .chat import LOAD, SETUP, chat_cell, final_record, run_setup, start_chat, wait_widget
from .lab import Lab

# two calls, each asking: the first card's chip is drawn while the second prompt still waits
TWO_CALLS = (
    "script = [cycle(tool_call('add', {'a': 2, 'b': 3})),"
    " cycle(tool_call('add', {'a': 5, 'b': 1})), cycle(message('Done.'))]"
)


def _approve(root: Locator) -> None:
    root.get_by_role("button", name="Approve", exact=True).click()


_REVERT = "() => window.__jt.panel.context.revert()"

# two pages: two copies of the notebook, or one shared document
pytestmark = [pytest.mark.browser, pytest.mark.both_collaboration_modes]


def test_an_approval_in_one_page_closes_the_prompt_in_the_other_and_says_who(lab: Lab) -> None:
    lab.write_notebook("who.ipynb", [LOAD, SETUP, TWO_CALLS, chat_cell("Add twice")])
    lab.open("who.ipynb")
    run_setup(lab, 3)
    # a second page on the same notebook and kernel, joined while the kernel is idle: it learns
    # of the chat widget from the kernel (a widget's comm is every connected page's)
    # (a page in the background draws nothing: each is brought to the front to be acted on)
    other = Lab(lab.server, lab.page.context.new_page(), lab.folder)
    other.page.bring_to_front()
    other.open("who.ipynb", workspace="second-page")
    lab.page.bring_to_front()
    page_a = start_chat(lab, 3)
    expect(page_a.get_by_role("button", name="Approve", exact=True)).to_be_visible()
    other.page.bring_to_front()
    if not lab.server.collaborative:
        # each page has its own copy: the second one loads the live widget's output from the
        # file (with collaboration the shared document has it already)
        lab.save()
        other.page.evaluate(_REVERT)
    page_b = wait_widget(other, 3, timeout=90)  # a second page under load draws late
    expect(page_b.get_by_role("button", name="Approve", exact=True)).to_be_visible()
    # the test server knows no names: JupyterLab's user is a made-up anonymous one, and the
    # person is alone (two pages, one user): their clicks are "you"'s
    assert re.fullmatch(r"Anonymous \S.*", lab.identity_name()), lab.identity_name()
    name = lab.user_name()
    assert name == "you"

    lab.page.bring_to_front()
    _approve(page_a)
    for page, root in ((lab.page, page_a), (other.page, page_b)):
        # the first prompt closed in both; the second one waits
        page.bring_to_front()
        chip = root.locator(".jt-tool .jt-chip-approved").first
        expect(chip).to_have_text(f"approved by {name}")
        expect(root.locator(".jt-prompt")).to_have_count(1)
        expect(root.locator(".jt-tool")).to_have_count(2)
    _approve(page_b)  # answered in the second page: it closes in the first
    lab.page.bring_to_front()
    expect(page_a.locator(".jt-prompt")).to_have_count(0)

    saved = lab.cell_output(3).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-message").last).to_have_text("Done.")
    expect(saved.locator(".jt-chip-approved")).to_have_text([f"approved by {name}"] * 2)
    lab.save()
    record = final_record(lab.read_notebook("who.ipynb").cells[3])
    decisions = [e["decisions"] for e in record["events"] if e["kind"] == "tool_call_response"]
    assert [[d.get("who", {}).get("name") for d in ds] for ds in decisions] == [[name], [name]]
    other.close()
    other.page.close()
