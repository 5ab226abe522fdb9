"""The chat widget in a real JupyterLab: streaming, Approve, the interrupt menu, a 100 KB answer.

Each test plays a ScriptedProvider through `%%chat --provider scripted --script script` and
watches the widget's DOM; the kernel side of the same scenarios is tests/kernel/test_chat_cell.py.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import FloatRect, expect

from .chat import (
    LOAD,
    RECORD_MIME,
    SETUP,
    chat_cell,
    final_record,
    message_text,
    print_cell,
    run_setup,
    start_chat,
    wait_turn_end,
)
from .lab import Lab
from .server import ARTIFACTS

pytestmark = pytest.mark.browser

# Sixty words: streamed one word per part with a pause, the answer takes seconds to arrive.
WORDS = " ".join(f"w{i:02d}" for i in range(60))


def _kinds(record: dict[str, Any]) -> list[str]:
    return [event["kind"] for event in record["events"]]


def _wait_text(lab: Lab, index: int, chars: int, timeout: float = 20) -> None:
    """Wait until cell `index`'s widget shows at least `chars` characters of answer."""
    lab.page.wait_for_function(
        """({ index, chars }) => {
          const cell = window.__jt.panel.content.widgets[index];
          const mds = cell.node.querySelectorAll(".jt-root .jt-message .jt-md");
          return [...mds].reduce((n, md) => n + md.textContent.trim().length, 0) >= chars;
        }""",
        arg={"index": index, "chars": chars},
        timeout=timeout * 1000,
        polling=20,
    )


def _words(text: str) -> str:
    return " ".join(text.split())


# Records the answer's length after every DOM change of a cell, with the cell's prompt then.
_RECORD_GROWTH = """
(index) => {
  const cell = window.__jt.panel.content.widgets[index];
  const samples = (window.__jtGrowth = []);
  const measure = () => {
    const mds = cell.node.querySelectorAll(".jt-root .jt-message .jt-md");
    const length = [...mds].reduce((n, md) => n + md.textContent.trim().length, 0);
    const last = samples[samples.length - 1];
    if (!last || last.length !== length) {
      const prompt = cell.node.querySelector(".jp-InputArea-prompt")?.textContent ?? "";
      samples.push({ length, prompt });
    }
  };
  new MutationObserver(measure).observe(cell.node, {
    subtree: true, childList: true, characterData: true, attributes: true,
  });
}
"""


def test_the_answer_grows_in_the_widget_while_the_cell_is_busy(lab: Lab) -> None:
    lab.write_notebook(
        "stream.ipynb",
        [LOAD, SETUP, f"script = [slow(cycle(message({WORDS!r})), 0.04)]", chat_cell("Count.")],
    )
    lab.open("stream.ipynb")
    run_setup(lab, 3)
    lab.page.evaluate(_RECORD_GROWTH, 3)
    root = start_chat(lab, 3)
    lab.wait_cell_idle(3, timeout=40)
    wait_turn_end(root)
    expect(lab.prompt(3)).to_have_text(re.compile(r"^\[\d+\]:$"))

    samples = lab.page.evaluate("() => window.__jtGrowth")
    lengths = [s["length"] for s in samples]
    assert lengths == sorted(lengths), f"the answer shrank while streaming: {lengths}"
    growing = [s for s in samples if 0 < s["length"] < len(WORDS)]
    assert len(growing) >= 5, f"the answer did not arrive progressively: {samples}"
    assert all(s["prompt"].strip() == "[*]:" for s in growing), samples
    assert _words(message_text(root)) == WORDS
    assert lab.unexpected_page_errors() == []


def test_approve_click_runs_the_tool_and_the_card_shows_its_result(lab: Lab) -> None:
    script = (
        "script = [cycle(message('Let me add them.'), tool_call('add', {'a': 2, 'b': 3})),"
        " cycle(message('2 + 3 = **5**.'))]"
    )
    lab.write_notebook(
        "approve.ipynb", [LOAD, SETUP, script, chat_cell("Add 2 and 3"), "print(ran)"]
    )
    lab.open("approve.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)

    card = root.locator(".jt-tool")
    prompt = card.locator(".jt-prompt-approval")
    expect(prompt).to_contain_text("Run add?")
    expect(card.locator(".jt-tool-result")).to_be_empty()
    expect(lab.prompt(3)).to_have_text("[*]:")  # the turn holds the cell while it waits
    prompt.get_by_role("button", name="Approve", exact=True).click()

    expect(card.locator(".jt-tool-result pre")).to_have_text("5")
    expect(card).to_have_attribute("data-status", "done")
    expect(card.locator(".jt-decisions")).to_have_text(re.compile(r"^approved by \S.*$"))  # who
    expect(prompt).to_have_count(0)
    expect(root.locator(".jt-message").last).to_have_text("2 + 3 = 5.")
    lab.wait_cell_idle(3)
    wait_turn_end(root)
    assert print_cell(lab, 4) == "[(2, 3)]"  # ran once, in the kernel, because of the click
    assert lab.unexpected_page_errors() == []


def test_stop_then_abort_discards_the_streaming_cycle(lab: Lab) -> None:
    lab.write_notebook(
        "abort.ipynb",
        [LOAD, SETUP, f"script = [slow(cycle(message({WORDS!r})), 0.1)]", chat_cell("Count.")],
    )
    lab.open("abort.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)
    _wait_text(lab, 3, 10)

    root.locator(".jt-interrupt-menu").click()  # Stop stops; the menu is one click away
    menu = root.locator(".jt-prompt-interrupt")
    expect(menu).to_be_visible()
    partial = message_text(root).strip()
    assert partial and WORDS.startswith(partial)
    menu.get_by_role("button", name="Abort", exact=True).click()
    lab.wait_cell_idle(3)
    wait_turn_end(root, "aborted")

    expect(root.locator(".jt-message")).to_have_count(0)
    expect(root.locator(".jt-notice")).to_contain_text("Aborted")
    expect(root).not_to_contain_text("w00")
    lab.save()
    cell = lab.read_notebook("abort.ipynb").cells[3]
    assert _kinds(final_record(cell)) == ["chat_request", "notice"]
    record = final_record(cell)
    assert cell.metadata["jupyter_turns"]["in_output"] == RECORD_MIME  # points at the record
    assert cell.metadata["jupyter_turns"]["conversation_id"] == record["conversation_id"]


def test_reply_keeps_the_partial_answer_and_starts_a_new_request(lab: Lab) -> None:
    script = (
        f"script = ScriptedProvider([slow(cycle(message({WORDS!r})), 0.1),"
        " cycle(message('Un, deux, trois.'))])"
    )
    check = (
        "print(len(script.requests))\n"
        "print(script.requests[1].last_user_text)\n"
        "print([e.kind for e in script.requests[1].events])"
    )
    lab.write_notebook("reply.ipynb", [LOAD, SETUP, script, chat_cell("Count."), check])
    lab.open("reply.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)
    _wait_text(lab, 3, 10)

    root.locator(".jt-interrupt-menu").click()  # Stop stops; the menu is one click away
    menu = root.locator(".jt-prompt-interrupt")
    menu.locator("textarea[data-role=reply]").fill("In French, please.")
    menu.get_by_role("button", name="Reply", exact=True).click()

    requests = root.locator(".jt-request")
    expect(requests).to_have_count(2)
    expect(requests.nth(1)).to_contain_text("In French, please.")
    expect(root.locator(".jt-message").last).to_have_text("Un, deux, trois.")
    lab.wait_cell_idle(3)
    wait_turn_end(root)
    first = root.locator(".jt-message").first
    expect(first.locator(".jt-partial")).to_have_text("answer stopped here")
    kept = _words(first.locator(".jt-md").inner_text())
    assert kept and WORDS.startswith(kept) and kept != WORDS

    assert print_cell(lab, 4).splitlines() == [
        "2",
        "In French, please.",
        "['chat_request', 'message', 'chat_request']",
    ]


def test_kernel_interrupt_opens_the_menu_and_stop_keeps_the_partial_text(lab: Lab) -> None:
    lab.write_notebook(
        "interrupt.ipynb",
        [
            LOAD,
            SETUP,
            f"script = [slow(cycle(message({WORDS!r})), 0.1)]",
            chat_cell("Count."),
            "print('next cell ran')",
        ],
    )
    lab.open("interrupt.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)
    _wait_text(lab, 3, 10)

    lab.interrupt_kernel(via="toolbar")
    menu = root.locator(".jt-prompt-interrupt")
    expect(menu).to_contain_text("Interrupted")
    menu.get_by_role("button", name="Stop", exact=True).click()
    lab.wait_cell_idle(3)
    wait_turn_end(root)

    message = root.locator(".jt-message")
    expect(message).to_have_count(1)
    expect(message.locator(".jt-partial")).to_have_text("answer stopped here")
    kept = _words(message.locator(".jt-md").inner_text())
    assert kept and WORDS.startswith(kept) and kept != WORDS
    expect(lab.cell_output(3)).not_to_contain_text("KeyboardInterrupt")
    expect(lab.prompt(3)).to_have_text(re.compile(r"^\[\d+\]:$"))
    assert print_cell(lab, 4) == "next cell ran"
    lab.save()
    saved = [e for e in final_record(lab.read_notebook("interrupt.ipynb").cells[3])["events"]]
    assert [e["kind"] for e in saved] == ["chat_request", "message", "notice"]
    assert _words(saved[1]["content"]) == kept and saved[1]["metadata"] == {"partial": True}


# A short, realistic conversation, screenshotted (the docs' pictures: scripts/screenshots.py).
SHOWCASE = '''\
import time

@tool
def run_sql(query: str) -> str:
    """Run a read-only SQL query on the sales database."""
    time.sleep(0.4)
    return (
        "region   | revenue   | vs_q2\\n"
        "---------+-----------+------\\n"
        "West     | 1,420,310 | +12%\\n"
        "East     | 1,184,905 |  +3%\\n"
        "Central  |   961,442 |  -4%"
    )

QUERY = "SELECT region, SUM(revenue) FROM sales WHERE quarter = 'Q3' GROUP BY 1"
ANSWER = """**West** had the highest revenue in Q3, ahead of East; Central fell slightly.

| Region | Q3 revenue | vs Q2 |
| --- | ---: | ---: |
| West | $1.42M | +12% |
| East | $1.18M | +3% |
| Central | $0.96M | -4% |

To reproduce it with pandas:

```python
q3 = sales[sales.quarter == "Q3"]
q3.groupby("region").revenue.sum().sort_values(ascending=False)
```
"""
script = [
    cycle(
        reasoning("The user wants Q3 revenue by region. The sales table has region, "
                  "quarter and revenue columns, so one grouped query answers it."),
        message("I'll total the Q3 revenue per region."),
        tool_call("run_sql", {"query": QUERY}),
        usage=Usage(input_tokens=1840, output_tokens=96),
    ),
    cycle(message(ANSWER), usage=Usage(input_tokens=2012, output_tokens=182)),
]
'''


def test_screenshot_of_a_finished_turn_for_the_readme(lab: Lab) -> None:
    lab.page.set_viewport_size({"width": 900, "height": 1200})
    lab.write_notebook(
        "showcase.ipynb",
        [
            LOAD,
            SETUP,
            SHOWCASE,
            "%%chat --script script\nWhich region had the highest revenue in Q3?",
        ],
    )
    lab.open("showcase.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)
    root.locator(".jt-prompt-approval").get_by_role("button", name="Approve", exact=True).click()
    lab.wait_cell_idle(3)
    wait_turn_end(root)

    # the saved view folds the reasoning: open it, as a reader would
    root.locator(".jt-reasoning summary").click()
    expect(root.locator(".jt-reasoning details[open]")).to_contain_text("Q3 revenue by region")
    expect(root.locator(".jt-message table td").first).to_have_text("West")
    expect(root.locator(".jt-message pre code")).to_contain_text("groupby")
    expect(root.locator(".jt-tool-result pre")).to_contain_text("West     | 1,420,310")
    expect(root.locator(".jt-footer")).to_contain_text("3,852 in")
    # Another cell active: no selection bar or cell toolbar on the chat cell.
    lab.page.evaluate("() => { window.__jt.panel.content.activeCellIndex = 2; }")
    lab.page.evaluate("() => document.activeElement && document.activeElement.blur()")
    # Only the chat cell: its input and the widget (not the folded record below it).
    lab.cell(3).scroll_into_view_if_needed()
    box = lab.cell(3).bounding_box()
    widget = root.bounding_box()
    assert box is not None and widget is not None
    clip: FloatRect = {
        "x": box["x"],
        "y": box["y"],
        "width": box["width"],
        "height": widget["y"] + widget["height"] - box["y"] + 4,
    }
    target = ARTIFACTS / "widget.png"
    target.parent.mkdir(parents=True, exist_ok=True)
    lab.page.screenshot(path=str(target), clip=clip)
    assert target.stat().st_size > 10_000
    assert lab.unexpected_page_errors() == []


def _long_markdown(size: int) -> list[str]:
    """Top-level markdown blocks (headings, prose, lists, code, tables, quotes) of about
    `size` characters in all; joined by blank lines, each stays one block for the lexer."""
    blocks: list[str] = []
    total = 0
    i = 0
    while total < size:
        kind = i % 8
        if kind == 0:
            block = f"## Section {i // 8 + 1}: results of run {i}"
        elif kind in (1, 3):
            block = " ".join(
                f"Sentence {j} of paragraph {i} has **bold**, `code {j}` and a "
                f"[reference](https://example.org/{i}/{j})."
                for j in range(6)
            )
        elif kind == 2:
            block = "\n".join(f"- item {j} of list {i}, *with emphasis*" for j in range(4))
        elif kind == 4:
            lines = [f"def step_{i}(x):", f"    return x * {i} + 1", "", f"print(step_{i}(2))"]
            block = "```python\n" + "\n".join(lines) + "\n```"
        elif kind == 5:
            rows = [f"| {j} | run {i} | {j * i} |" for j in range(4)]
            block = "| n | name | value |\n| --- | --- | ---: |\n" + "\n".join(rows)
        elif kind == 6:
            block = f"> Note {i}: the measurement was repeated\n> three times, all agree."
        else:
            block = "\n".join(f"{j + 1}. ordered step {j} of {i}" for j in range(3))
        blocks.append(block)
        total += len(block) + 2
        i += 1
    return blocks


# The answer in exactly 2,000 deltas, ten per 10 ms pause (about 2 s in all).
STREAM_2000 = """\
from jupyter_turns.model.events import Finished, Flush, MessageDelta, Part
text = open("answer.md").read()
cuts = [round(k * len(text) / 2000) for k in range(2001)]
parts = [Part(0, MessageDelta(text[a:b])) for a, b in zip(cuts, cuts[1:])]
script = [slow([*parts, Flush(0), Finished("end_turn")], 0.01, every=10)]
print(len(parts))
"""

_KEEP_LIVE_COUNTERS = """
(index) => {
  const cell = window.__jt.panel.content.widgets[index];
  const names = ["blocksParsed", "tailRenders", "charsLexed", "deltas", "frames", "adopted",
                 "fallbacks"];
  const keep = () => {
    const live = cell.node.querySelector(".jt-root:not(.jt-saved)");
    if (!live) return;
    window.__jtLive = Object.fromEntries(names.map((name) => [name, Number(live.getAttribute(
      "data-" + name.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase())))]));
  };
  new MutationObserver(keep).observe(cell.node, { subtree: true, attributes: true });
}
"""

_COUNTERS = """
(root) => Object.fromEntries(
  ["blocksParsed", "tailRenders", "charsLexed", "deltas", "frames", "adopted", "fallbacks"]
    .map((name) => [name, Number(root.getAttribute(
      "data-" + name.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase())))])
)
"""


def test_a_100kb_streamed_answer_parses_each_finished_block_once(lab: Lab) -> None:
    blocks = _long_markdown(100_000)
    text = "\n\n".join(blocks) + "\n"
    lab.write_notebook(
        "long.ipynb",
        [
            LOAD,
            SETUP,
            STREAM_2000,
            chat_cell("Write the long report."),
        ],
    )
    (lab.dir / "answer.md").write_text(text)
    lab.open("long.ipynb")
    run_setup(lab, 2)
    deltas = int(print_cell(lab, 2))
    lab.page.evaluate(_KEEP_LIVE_COUNTERS, 3)
    root = start_chat(lab, 3)
    lab.wait_cell_idle(3, timeout=60)
    wait_turn_end(root)
    expect(root.locator(".jt-transcript .jt-message")).to_have_count(1)  # the saved answer
    # the live widget's counters as it last drew, before the record replaced it
    live = lab.page.evaluate("() => window.__jtLive")
    saved = root.evaluate(_COUNTERS)

    # A fresh view of the same widget draws the saved events in one go (no draft to adopt).
    lab.page.evaluate("() => { window.__jt.panel.content.activeCellIndex = 3; }")
    lab.command("notebook:create-output-view")
    fresh_root = lab.page.locator(".jp-LinkedOutputView .jt-root")
    wait_turn_end(fresh_root)
    expect(fresh_root.locator(".jt-transcript .jt-message")).to_have_count(1)
    fresh = fresh_root.evaluate(_COUNTERS)

    expected = len(blocks) + 1  # the answer's blocks and the one paragraph of the request
    figures = {
        "answer_chars": len(text),
        "answer_blocks": len(blocks),
        "provider_deltas": deltas,
        "live": live,
        "saved_view": saved,
        "fresh_view": fresh,
    }
    print(figures)
    (ARTIFACTS / "streaming-100kb.json").write_text(json.dumps(figures, indent=1))
    assert deltas == 2000
    assert _words(message_text(root)) == _words(message_text(fresh_root))
    assert fresh["blocksParsed"] == expected, figures
    # live, each finished block is parsed at most once; the record replaces the widget as the
    # turn ends, so the widget's last frames (the final blocks) may never be drawn: a stream
    # this fast comes in a dozen messages (after a full one the next waits twice as long), so
    # the last one or two can hold a fifth of the answer
    assert expected // 2 <= live["blocksParsed"] <= expected, figures
    assert saved["blocksParsed"] == expected, figures  # the record view: each block once
    assert live["fallbacks"] == 0, figures  # (the handover of a draft to its event: harness)
    assert live["tailRenders"] <= live["frames"], figures
    assert live["tailRenders"] <= live["deltas"] + 1, figures
    longest = max(len(block) for block in blocks) + 2
    assert live["charsLexed"] <= len(text) + live["tailRenders"] * 2 * longest, figures
    assert lab.unexpected_page_errors() == []
