"""What the status line and the tool cards say, as a person sees them: who the turn waits for,
whose decision let a call run, a Skip that is not an error, what an edited call really ran,
who skipped or edited (the page's user, in the card and after reopening), and a Stop that stops
with one click.

A scripted turn calls the `calc` tool (ask mode) four times; the person answers each prompt by
clicking in the widget. A second turn runs a slow tool and is stopped with one click.
"""

from __future__ import annotations

import textwrap

import pytest
from playwright.sync_api import expect

from .chat import LOAD, SETUP, chat_cell, run_setup, start_chat, wait_turn_end
from .lab import Lab

pytestmark = pytest.mark.browser

TOOLS = textwrap.dedent(
    '''\
    @tool
    def calc(expr: str) -> str:
        """Evaluate an arithmetic expression."""
        return str(eval(expr, {}))

    @tool(run="unattended")
    async def nap(seconds: float) -> str:
        """Sleep."""
        await asyncio.sleep(seconds)
        return "rested"

    script = [
        cycle(tool_call("calc", {"expr": "1+1"}, call_id="c1")),
        cycle(tool_call("calc", {"expr": "2+2"}, call_id="c2")),
        cycle(message("Done."))]
    skip = [
        cycle(tool_call("add", {"a": 1, "b": 2}, call_id="s1")),
        cycle(tool_call("add", {"a": 3, "b": 4}, call_id="s2")),
        cycle(message("Done."))]
    sleepy = [cycle(tool_call("nap", {"seconds": 60}, call_id="n1")), cycle(message("never"))]
    '''
)


def test_status_and_cards_say_what_really_happens(lab: Lab) -> None:
    lab.write_notebook(
        "honest.ipynb",
        [
            LOAD,
            SETUP,
            TOOLS,
            chat_cell("Compute."),
            chat_cell("Add.", script="skip"),
            chat_cell("Rest.", script="sleepy"),
        ],
    )
    lab.open("honest.ipynb")
    run_setup(lab, 3)

    # (1) a prompt up: the status says the turn waits for the person, not "Running tools…"
    root = start_chat(lab, 3)
    first = root.locator('.jt-tool[data-call-id="c1"]')
    prompt = first.locator(".jt-prompt-approval")
    expect(prompt).to_be_visible()
    expect(root.locator(".jt-statusbar .jt-state")).to_have_text("Waiting for your approval")
    prompt.get_by_role("button", name="Always allow this tool in this thread").click()

    # (2) the next call ran because of the person's own Always allow: it says so
    second = root.locator('.jt-tool[data-call-id="c2"]')
    expect(second.locator(".jt-decisions")).to_have_text("always allowed by you in this thread")
    expect(second).not_to_contain_text("policy")
    wait_turn_end(root)
    lab.wait_cell_idle(3)

    # (3) Skip: a neutral "skipped" and whose Skip it was (the page's user), no red Error
    name = lab.user_name()
    root = start_chat(lab, 4)
    skipped = root.locator('.jt-tool[data-call-id="s1"]')
    skipped.locator(".jt-prompt-approval").get_by_role("button", name="Skip").click()
    expect(skipped).to_have_attribute("data-status", "skipped")
    expect(skipped.locator(".jt-tool-result summary")).to_contain_text("Not run")
    expect(skipped.locator(".jt-result-error")).to_have_count(0)
    expect(skipped.locator(".jt-decisions")).to_have_text(f"skipped by {name}")
    assert "Error" not in skipped.inner_text()

    # (4) Edit arguments: the card shows what ran, who edited it, the original folded
    edited = root.locator('.jt-tool[data-call-id="s2"]')
    asking = edited.locator(".jt-prompt-approval")
    asking.get_by_role("button", name="Edit arguments").click()
    asking.locator("textarea[data-role=arguments]").fill('{"a": 30, "b": 12}')
    asking.get_by_role("button", name="Run with these arguments").click()
    expect(edited.locator(".jt-tool-result pre")).to_contain_text("42")
    head = edited.locator(".jt-tool-head")
    expect(head.locator(".jt-tool-preview")).to_have_text('({"a":30,"b":12})')
    expect(head.locator(".jt-edited")).to_have_text(f"edited by {name}")
    expect(head.locator(".jt-edited")).to_be_visible()
    original = edited.locator(".jt-original-args")
    expect(original.locator("summary")).to_have_text("The model's original arguments")
    expect(original).not_to_have_attribute("open", "")
    expect(original.locator("pre")).to_be_hidden()  # folded
    assert '"a": 3,' in original.locator("pre").text_content()
    wait_turn_end(root)
    lab.wait_cell_idle(4)
    _says_who_in_the_record(lab, 4, name)

    # (5) Stop while a tool runs: one click stops (no menu to click through)
    root = start_chat(lab, 5)
    napping = root.locator('.jt-tool[data-call-id="n1"]')
    expect(napping).to_have_attribute("data-status", "running")
    expect(root.locator(".jt-interrupt-menu")).to_be_visible()  # the other choices, one click
    root.locator(".jt-stop").click()
    lab.wait_cell_idle(5)
    saved = lab.cell_output(5).locator(".jt-root.jt-saved")
    expect(saved.locator('.jt-tool[data-call-id="n1"]')).to_have_attribute(
        "data-status", "cancelled"
    )
    expect(saved.locator(".jt-notice")).to_contain_text(  # who clicked Stop, as the page says
        f"Stopped by {lab.user_name()} while tools were running."
    )
    expect(lab.cell_output(5).locator(".jt-prompt-interrupt")).to_have_count(0)
    lab.screenshot("honest-status.png")
    assert lab.unexpected_page_errors() == []
    lab.save()
    lab.close_and_reopen("honest.ipynb")  # the saved file, drawn again: the names stay
    _says_who_in_the_record(lab, 4, name)


def _says_who_in_the_record(lab: Lab, index: int, name: str) -> None:
    """The saved record of cell `index` names who skipped the first call and edited the
    second."""
    saved = lab.cell_output(index).locator(".jt-root.jt-saved")
    skipped = saved.locator('.jt-tool[data-call-id="s1"]')
    expect(skipped.locator(".jt-decisions")).to_have_text(f"skipped by {name}")
    edited = saved.locator('.jt-tool[data-call-id="s2"]')
    expect(edited.locator(".jt-tool-head .jt-edited")).to_have_text(f"edited by {name}")
