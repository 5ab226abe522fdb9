"""Sub-agents in JupyterLab: the nested turn streams into the calling tool card, its `add` call
asks inside that card and is approved by a click there; Stop on the caller while another
sub-agent writes ends both, keeping its partial answer in its card; the saved records draw the
same nested transcripts, after each turn and again in the reopened notebook without a kernel.
(One notebook and kernel for both turns: a browser test's setup is its slowest part.)"""

from __future__ import annotations

import textwrap

import pytest
from playwright.sync_api import Locator, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from .chat import LOAD, SETUP, chat_cell, final_record, run_setup, start_chat
from .lab import Lab

pytestmark = pytest.mark.browser

THINKING = "Let me add them up, one by one, carefully."
AGENT = textwrap.dedent(
    f"""\
    from jupyter_turns import subagent

    helper = ScriptedProvider([
        slow(cycle(message({THINKING!r}), tool_call('add', {{'a': 2, 'b': 3}})), 0.15),
        cycle(message('The sum is **5**.')),
    ])
    researcher = subagent('researcher', 'Does sums.', tools=[add], provider=helper,
                          run='unattended')
    script = ScriptedProvider([
        cycle(tool_call('researcher', {{'request': 'Add 2 and 3'}}, call_id='toolu_sub')),
        cycle(message('The researcher says 5.')),
    ])
    """
)
CARD = '.jt-tool[data-call-id="toolu_sub"]'
NESTED = f"{CARD} > details.jt-nested"

# A second sub-agent that writes slowly (about 30 s in all), stopped after a few words.
STOP_WORDS = " ".join(f"s{i:03d}" for i in range(300))
WRITER = textwrap.dedent(
    f"""    writer_model = ScriptedProvider([slow(cycle(message({STOP_WORDS!r})), 0.1)])
    writer = subagent('writer', 'Writes at length.', provider=writer_model, run='unattended')
    script2 = ScriptedProvider([
        cycle(tool_call('writer', {{'request': 'Write'}}, call_id='toolu_writer')),
    ])
    """
)
WRITER_CARD = '.jt-tool[data-call-id="toolu_writer"]'

# One look at the page: the live draft in the researcher card's nested transcript shows the
# beginning of the sub-agent's text but not its end yet, and no Approve button is anywhere in
# the cell. This cannot hold if the text were only drawn once the sub-agent's cycle was over.
# (Checked in the page every 50 ms: the partial text lasts about a second.)
_PART_STREAMED = """
({ index, nested }) => {
  const cell = window.__jt.panel.content.widgets[index];
  const output = cell && cell.node.querySelector(".jp-OutputArea");
  if (!output) return false;
  const approve = [...output.querySelectorAll("button")].some(
    (b) => b.textContent.trim() === "Approve",
  );
  const drafts = output.querySelectorAll(nested + " > .jt-draft .jt-message");
  const texts = [...drafts].map((m) => m.textContent);
  return !approve && texts.some((t) => t.includes("Let me") && !t.includes("carefully"));
}
"""


def _nested(root: Locator) -> Locator:
    """The researcher card's nested transcript (every card has one; the sub-agent's shows)."""
    return root.locator(NESTED)


def _words(text: str) -> str:
    return " ".join(text.split())


def test_a_sub_agent_streams_asks_is_stopped_and_is_saved_inside_its_card(lab: Lab) -> None:
    lab.write_notebook(
        "agents.ipynb",
        [
            LOAD,
            SETUP + "\n" + AGENT + "\n" + WRITER,
            chat_cell("What is 2 + 3?"),
            chat_cell("Write at length.", script="script2"),
        ],
    )
    lab.open("agents.ipynb")
    run_setup(lab, 2)
    live = start_chat(lab, 2)

    # (1) the sub-agent's text streams into the researcher card, before its tool call asks
    try:
        lab.page.wait_for_function(
            _PART_STREAMED, arg={"index": 2, "nested": NESTED}, timeout=30_000, polling=50
        )
    except PlaywrightTimeoutError:
        shown = live.locator(NESTED).all_inner_texts()
        raise AssertionError(f"no part of the sub-agent's text streamed; card: {shown}") from None
    nested = _nested(live)
    expect(nested).to_be_visible()
    expect(live.locator(f"{CARD} > .jt-tool-head .jt-tool-name")).to_have_text("researcher")

    # (2) the nested `add` call asks inside the researcher card: the only Approve of the cell
    approve = nested.get_by_role("button", name="Approve", exact=True)
    expect(approve).to_be_visible(timeout=30_000)
    expect(live.get_by_role("button", name="Approve", exact=True)).to_have_count(1)
    button = lab.page.get_by_role("button", name="Approve", exact=True)
    expect(nested.locator(".jt-tool", has=button).locator(".jt-tool-name")).to_have_text("add")
    expect(nested.locator(".jt-message").first).to_have_text(THINKING)
    approve.click()

    # (3) the caller answers with what the sub-agent found; the saved view replaces the widget
    output = lab.cell_output(2)
    expect(output).to_contain_text("The researcher says 5.", timeout=30_000)
    lab.wait_cell_idle(2)
    saved = output.locator(".jt-root.jt-saved")
    expect(saved).to_have_count(1)
    expect(output.locator(".jt-root")).to_have_count(1)
    top_messages = saved.locator(".jt-message:not(.jt-nested .jt-message)")
    expect(top_messages).to_have_text(["The researcher says 5."])
    nested = _nested(saved)
    expect(nested).to_be_visible()
    expect(nested).to_have_attribute("open", "")
    summary = nested.locator(":scope > summary")
    expect(summary).to_contain_text("Sub-agent · 2 cycles")
    messages = nested.locator(".jt-message")
    expect(messages).to_have_text([THINKING, "The sum is 5."])
    expect(messages.last.locator("strong")).to_have_text("5")
    inner = nested.locator(".jt-tool")
    expect(inner.locator(".jt-tool-name")).to_have_text(["add"])
    expect(inner.locator(".jt-tool-result")).to_contain_text("5")
    expect(inner.locator(".jt-chip-approved")).to_be_visible()
    # the sub-agent's text is drawn only inside the researcher card
    expect(saved.locator(".jt-message", has_text="Let me add")).to_have_count(1)
    expect(nested.locator(".jt-message", has_text="Let me add")).to_have_count(1)
    expect(saved.locator(".jt-tool .jt-tool-name")).to_have_text(["researcher", "add"])
    # the saved card's only button is the turn's own Rewind (nothing inside the sub-agent's)
    expect(saved.get_by_role("button")).to_have_text(["Rewind to before this turn"])
    summary_text = summary.inner_text()
    message_texts = messages.all_inner_texts()
    lab.save()
    events = final_record(lab.read_notebook("agents.ipynb").cells[2])["events"]
    assert [e["kind"] for e in events if e.get("parent") == "toolu_sub"] == [
        "chat_request",
        "message",
        "tool_call_request",
        "tool_call_response",
        "message",
    ]

    # (4) Stop on the caller while the writer writes: both turns end, the partial text stays
    live = start_chat(lab, 3)
    writing = live.locator(f"{WRITER_CARD} > details.jt-nested > .jt-draft .jt-message")
    expect(writing).to_contain_text("s000 s001 s002", timeout=30_000)
    live.locator(".jt-stop").click()  # one click stops
    output = lab.cell_output(3)
    stopped = output.locator(".jt-root.jt-saved")
    expect(stopped).to_have_count(1, timeout=30_000)
    lab.wait_cell_idle(3)
    card = stopped.locator(WRITER_CARD)
    expect(card).to_have_attribute("data-status", "cancelled")
    writer_nested = card.locator(":scope > details.jt-nested")
    expect(writer_nested.locator(":scope > summary")).to_have_text("Sub-agent · stopped · 1 cycle")
    partial = writer_nested.locator(".jt-message")
    expect(partial).to_have_count(1)
    expect(partial.locator(".jt-partial")).to_have_text("answer stopped here")
    expect(writer_nested.locator(".jt-notice")).to_have_count(1)
    expect(writer_nested.locator(".jt-notice")).to_contain_text("Stopped by the user.")
    kept = _words(partial.locator(".jt-md").inner_text())
    assert kept.startswith("s000 s001 s002") and STOP_WORDS.startswith(kept), kept
    assert kept != STOP_WORDS  # the writer really was stopped mid-answer
    # the caller was not asked again: no answer of its own, its Stop notice after the card
    expect(stopped.locator(".jt-message:not(.jt-nested .jt-message)")).to_have_count(0)
    top_notices = stopped.locator(".jt-notice:not(.jt-nested .jt-notice)")
    expect(top_notices).to_have_count(1)
    stopper = lab.user_name()  # who clicked Stop, as the page says
    expect(top_notices).to_contain_text(f"Stopped by {stopper} while tools were running.")
    stopped_summary = writer_nested.locator(":scope > summary").inner_text()
    lab.save()
    record = final_record(lab.read_notebook("agents.ipynb").cells[3])
    assert record["turn"]["outcome"] == "stopped"
    writer_events = [e for e in record["events"] if e.get("parent") == "toolu_writer"]
    assert [e["kind"] for e in writer_events] == ["chat_request", "message", "notice"]
    assert writer_events[1]["metadata"] == {"partial": True}
    assert _words(writer_events[1]["content"]) == kept
    (outer,) = [e for e in record["events"] if e["kind"] == "tool_call_response"]
    assert outer["status"] == "cancelled" and "parent" not in outer
    assert (outer["subagent"]["outcome"], outer["subagent"]["cycles"]) == ("stopped", 1)

    # (5) reopened without a kernel: the same nested transcripts, drawn from the file
    lab.close_and_reopen("agents.ipynb")
    assert lab.kernel_status() is None
    reopened = lab.cell_output(2).locator(".jt-root.jt-saved")
    nested = _nested(reopened)
    expect(nested).to_be_visible()
    expect(nested.locator(":scope > summary")).to_have_text(summary_text)
    expect(nested.locator(".jt-message")).to_have_text(message_texts)
    expect(nested.locator(".jt-message strong")).to_have_text("5")
    expect(nested.locator(".jt-tool .jt-tool-name")).to_have_text(["add"])
    expect(nested.locator(".jt-tool .jt-chip-approved")).to_be_visible()
    expect(reopened.locator(".jt-message:not(.jt-nested .jt-message)")).to_have_text(
        ["The researcher says 5."]
    )
    expect(reopened.locator(".jt-message", has_text="Let me add")).to_have_count(1)
    writer_nested = lab.cell_output(3).locator(
        f".jt-root.jt-saved {WRITER_CARD} > details.jt-nested"
    )
    expect(writer_nested.locator(":scope > summary")).to_have_text(stopped_summary)
    partial = writer_nested.locator(".jt-message")
    expect(partial).to_have_count(1)
    expect(partial.locator(".jt-partial")).to_have_text("answer stopped here")
    expect(partial.locator(".jt-md")).to_have_text(kept)
    expect(writer_nested.locator(".jt-notice")).to_contain_text("Stopped by the user.")
    expect(lab.page.get_by_text("Error displaying widget")).to_have_count(0)
    lab.cell(2).scroll_into_view_if_needed()
    lab.screenshot("subagent-reopened.png")
    assert lab.unexpected_page_errors() == []
