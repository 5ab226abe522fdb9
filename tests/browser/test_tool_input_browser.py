"""A tool call's arguments show in a draft card while the model writes them.

The scripted model writes a call's arguments in pieces and is held (a Gate) after the second
one, until the test drops a file next to the notebook. The page must show the draft card with
exactly the text written so far, as text, and no approval yet; once the rest is written the
call's own card, with its approval prompt and the full arguments, takes the draft's place.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from playwright.sync_api import expect

from .chat import LOAD, SETUP, chat_cell, run_setup, start_chat, wait_turn_end
from .lab import Lab

pytestmark = pytest.mark.browser

HOSTILE = "<img src=x onerror=window.__jtPwned=1>"
ARGUMENTS = {"text": HOSTILE}
PIECES = 4

SCRIPT = textwrap.dedent(
    f'''\
    import pathlib, threading, time
    from jupyter_turns import ToolInputDelta
    from jupyter_turns.providers.scripted import Gate

    @tool
    def shout(text: str) -> str:
        """Says it louder."""
        return text.upper()

    gate = Gate()

    def _open_when_told():
        while not pathlib.Path("go-on").exists():
            time.sleep(0.05)
        gate.open()

    threading.Thread(target=_open_when_told, daemon=True).start()
    first = cycle(message("Let me shout it."),
                  tool_call("shout", {ARGUMENTS!r}, call_id="call_shout", chunks={PIECES}))
    pieces = [i for i, item in enumerate(first)
              if isinstance(getattr(item, "content", None), ToolInputDelta)]
    first.insert(pieces[1] + 1, gate)
    script = [first, cycle(message("Done."))]
    '''
)


def test_arguments_stream_into_a_draft_card_before_the_approval_card(lab: Lab) -> None:
    lab.write_notebook("args.ipynb", [LOAD, SETUP, SCRIPT, chat_cell("Shout it")])
    lab.open("args.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)

    text = json.dumps(ARGUMENTS)
    size = -(-len(text) // PIECES)
    written = text[: 2 * size]  # the two pieces before the gate
    draft = root.locator(".jt-tool-draft")
    expect(draft.locator(".jt-tool-args-draft")).to_have_text(written)
    expect(draft.locator(".jt-tool-head")).to_contain_text("⚙ shout")
    expect(draft.locator(".jt-tool-head")).to_contain_text("preparing arguments…")
    expect(root.locator(".jt-prompt-approval")).to_have_count(0)
    expect(root.locator(".jt-tool")).to_have_count(0)
    expect(draft.locator("img")).to_have_count(0)  # the model's text is never HTML

    lab.path("go-on").write_text("")  # the model writes the rest
    card = root.locator('.jt-tool[data-call-id="call_shout"]')
    prompt = card.locator(".jt-prompt-approval")
    expect(prompt).to_contain_text("Run shout?")
    expect(card.locator(".jt-tool-args pre")).to_have_text(json.dumps(ARGUMENTS, indent=2))
    expect(root.locator(".jt-tool-draft")).to_have_count(0)  # the card took the draft's place

    prompt.get_by_role("button", name="Approve", exact=True).click()
    expect(card.locator(".jt-tool-result pre")).to_have_text(HOSTILE.upper())
    lab.wait_cell_idle(3)
    wait_turn_end(root)
    assert root.locator("img").count() == 0
    assert lab.page.evaluate("() => window.__jtPwned") is None
    assert lab.unexpected_page_errors() == []
