"""An OpenAI turn looks like a Claude one: the same question, answered the same way by the
Anthropic Messages API and by the OpenAI Responses API, draws the same widget — reasoning, an
approval card, the tool's result, the markdown answer, a footer naming the model and where the
requests went — live, once saved, and again after the page is reloaded from the saved file.

Each API is a local test server chosen in the kernel's environment (``ANTHROPIC_BASE_URL``,
``OPENAI_BASE_URL``), as a user's would be; the real SDKs stream from them.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Locator, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.support.anthropic_server import AnthropicTestServer, Reply
from tests.support.anthropic_sse import Thinking, ToolUse, sse_message, sse_text_response
from tests.support.openai_sse import Call, Reasoning, Text, for_responses, responses_body

from .chat import LOAD, final_record, run_setup, start_chat, wait_turn_end
from .lab import Lab

pytestmark = pytest.mark.browser

NAME = "providers.ipynb"
THOUGHT = ["The user wants Oslo's rainfall: ", "the tool has it."]
ANSWER = ["| city | rain per year |\n|---|---|\n", "| Oslo | 763 mm |\n\n", "Oslo gets **763 mm**."]
TOOL = '''\
from jupyter_turns import tool

@tool
def rainfall(city: str) -> str:
    """Average yearly rainfall of a city."""
    return {"Oslo": "763 mm"}[city]'''
QUESTION = "How much rain does Oslo get? Use the tool."
CLAUDE, GPT = 3, 4  # the chat cells
MODELS = {CLAUDE: "claude-haiku-4-5", GPT: "gpt-5-mini"}
THREADS = {CLAUDE: "claude", GPT: "gpt"}
REASONING = ["jt-reasoning.jt-reasoning-full"]
USAGE = {
    "input_tokens": 412,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 96,
    "output_tokens_details": {"reasoning_tokens": 64},
    "total_tokens": 508,
}

# What a person sees of one widget, top to bottom: each block of its transcript (the jt-*
# classes saying what it is, the visible elements inside it, and its visible text: innerText
# leaves out folded details). A tool card's running time is left out: it is a clock, not the
# turn. The footer, which names the model and the endpoint, is checked on its own.
_SEEN = """
(root) => [...root.querySelectorAll(":scope > .jt-transcript > *")].map((el) => {
  let text = el.innerText;
  for (const clock of el.querySelectorAll(".jt-elapsed")) text = text.replace(clock.innerText, "");
  const classes = (e) => [...e.classList].filter((c) => c.startsWith("jt-")).sort().join(".");
  const inner = [...el.querySelectorAll("[class*='jt-'], table, strong, details, button")]
    .filter((e) => e.offsetParent !== null)
    .map((e) => e.tagName.toLowerCase() + "." + classes(e));
  return { kinds: classes(el), text: text.trim(), inner };
})
"""

# Cell `index`'s widget (`selector`: the live one or the saved one) shows `expected`.
_SHOWS = (
    "({ index, selector, expected }) => {"
    "  const root = window.__jt.panel.content.widgets[index]?.node.querySelector(selector);"
    "  return !!root && JSON.stringify((" + _SEEN + ")(root)) === JSON.stringify(expected);"
    "}"
)
LIVE = ".jt-root:not(.jt-saved)"
SAVED = ".jt-root.jt-saved"
NOT_DIRTY = "() => !window.__jt.panel.context.model.dirty"


def _seen(lab: Lab, index: int, selector: str) -> list[dict[str, Any]]:
    root = lab.cell_output(index).locator(selector)
    seen: list[dict[str, Any]] = root.evaluate(_SEEN)
    return seen


def _wait_shows(lab: Lab, index: int, selector: str, expected: list[dict[str, Any]]) -> None:
    """Wait until cell `index`'s widget shows what `expected` says; else fail with both."""
    try:
        lab.page.wait_for_function(
            _SHOWS, arg={"index": index, "selector": selector, "expected": expected}, polling=100
        )
    except PlaywrightTimeoutError:
        actual = _seen(lab, index, selector)
        raise AssertionError(f"cell {index} shows\n{actual}\nnot\n{expected}") from None


def _servers_env(claude: AnthropicTestServer, gpt: AnthropicTestServer) -> str:
    """The kernel's environment, as a user's shell would set it (never in a real notebook)."""
    values = {
        "ANTHROPIC_BASE_URL": claude.url,
        "ANTHROPIC_API_KEY": "sk-ant-api03-browser-test-key-000000",
        "OPENAI_BASE_URL": f"{gpt.url}/v1",
        "OPENAI_API_KEY": "sk-proj-browser-test-key-0000000000",
    }
    return "import os\n" + "\n".join(f"os.environ[{k!r}] = {v!r}" for k, v in values.items())


def _enqueue(claude: AnthropicTestServer, gpt: AnthropicTestServer) -> None:
    """Both models think, call `rainfall` for Oslo, then answer with the same table."""
    tool = ToolUse("rainfall", {"city": "Oslo"}, id="toolu_browser_oslo")
    claude.enqueue(
        Reply.sse(sse_message([Thinking(THOUGHT), tool], stop_reason="tool_use")),
        Reply.sse(sse_text_response(ANSWER)),
    )
    call = Call("rainfall", ['{"city":', ' "Oslo"}'], call_id="call_browser_oslo")
    gpt.enqueue(
        for_responses(Reply.sse(responses_body([Reasoning(THOUGHT), call], usage=USAGE))),
        for_responses(Reply.sse(responses_body([Text(ANSWER)], usage=USAGE))),
    )


def _chat(index: int) -> str:
    provider = "anthropic" if index == CLAUDE else "openai"
    return (
        f"%%chat --thread {THREADS[index]} --provider {provider} --model {MODELS[index]} "
        f"--tools ask --reasoning full\n{QUESTION}"
    )


def _footer(index: int, endpoint: str) -> str:
    return f"{MODELS[index]} · via {endpoint} · thread {THREADS[index]}"


def _ask(lab: Lab, index: int, endpoint: str) -> Locator:
    """Run chat cell `index` up to its approval card: the reasoning shows in full
    (`--reasoning full`), the card names the tool and its arguments, the footer the model and
    the endpoint. Returns the Approve button."""
    live = start_chat(lab, index)
    expect(live.locator(".jt-reasoning details[open]")).to_contain_text("".join(THOUGHT))
    card = live.locator(".jt-tool")
    expect(card.locator(".jt-tool-name")).to_have_text("rainfall")
    expect(card.locator(".jt-tool-args")).to_contain_text('"city": "Oslo"')
    expect(live.locator(".jt-footer")).to_contain_text(_footer(index, endpoint))
    approve = card.locator(".jt-prompt-approval").get_by_role("button", name="Approve", exact=True)
    expect(approve).to_be_enabled()
    expect(live.locator(".jt-draft > *")).to_have_count(0)  # all drawn as events
    return approve


def _approve(lab: Lab, index: int, approve: Locator) -> Locator:
    """Approve, wait for the card's result and the answer: the saved widget."""
    approve.click()
    card = lab.cell_output(index).locator(".jt-tool")
    expect(card.locator(".jt-tool-result pre")).to_have_text("763 mm")
    lab.wait_cell_idle(index)
    saved = lab.cell_output(index).locator(SAVED)
    wait_turn_end(saved)
    expect(saved.locator(".jt-message td").last).to_have_text("763 mm")
    expect(saved.locator(".jt-message strong")).to_have_text("763 mm")
    return saved


def _saved_kinds(lab: Lab, index: int) -> list[str]:
    record = final_record(lab.read_notebook(NAME).cells[index])
    return [event["kind"] for event in record["events"]]


def test_an_openai_turn_draws_like_a_claude_turn_live_saved_and_reloaded(lab: Lab) -> None:
    with AnthropicTestServer() as claude, AnthropicTestServer() as gpt:
        endpoints = {CLAUDE: claude.url, GPT: f"{gpt.url}/v1"}
        _enqueue(claude, gpt)
        cells = [LOAD, _servers_env(claude, gpt), TOOL, _chat(CLAUDE), _chat(GPT)]
        lab.write_notebook(NAME, cells)
        lab.open(NAME)
        run_setup(lab, 3)

        # Claude asks: what a person sees then is the reference for the OpenAI turn
        approve = _ask(lab, CLAUDE, endpoints[CLAUDE])
        asking = _seen(lab, CLAUDE, LIVE)
        assert [block["kinds"] for block in asking] == ["jt-request", *REASONING, "jt-tool"]
        _approve(lab, CLAUDE, approve)
        finished = _seen(lab, CLAUDE, SAVED)
        assert [block["kinds"] for block in finished] == [
            "jt-request",
            "jt-reasoning.jt-reasoning-progress",
            "jt-tool",
            "jt-message",
        ]

        # the OpenAI turn shows the same, block for block, live and saved
        approve = _ask(lab, GPT, endpoints[GPT])
        _wait_shows(lab, GPT, LIVE, asking)
        _approve(lab, GPT, approve)
        _wait_shows(lab, GPT, SAVED, finished)
        claude.assert_all_served()
        gpt.assert_all_served()

    # Ctrl+S, as a person saves: both turns are in the file, with the same kinds of events
    lab.cell(0).click()
    lab.page.keyboard.press("Escape")  # command mode, as after a click on a cell's prompt
    lab.page.keyboard.press("Control+s")
    lab.page.wait_for_function(NOT_DIRTY)
    assert _saved_kinds(lab, GPT) == _saved_kinds(lab, CLAUDE)
    gpt_events = final_record(lab.read_notebook(NAME).cells[GPT])["events"]
    thought = next(event for event in gpt_events if event["kind"] == "reasoning")
    assert thought["metadata"]["api"] == "openai-responses"  # sent back to the OpenAI API only

    # reloaded from the file (no kernel): both widgets are drawn again from their records
    lab.close_and_reopen(NAME)
    for index in (CLAUDE, GPT):
        _wait_shows(lab, index, SAVED, finished)
        saved = lab.cell_output(index).locator(SAVED)
        expect(saved.locator(".jt-footer")).to_contain_text(_footer(index, endpoints[index]))
        saved.locator(".jt-reasoning summary").click()  # folded once saved: open it
        expect(saved.locator(".jt-reasoning details[open]")).to_contain_text("".join(THOUGHT))
    assert lab.unexpected_page_errors() == []
