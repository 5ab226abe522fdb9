"""Drive the built widget.js in a plain page (fake model) with headless Chromium.

Run from the repo root after `npm run build:widget` (in js/):
    python js/dev/check_harness.py [--realtime] [--screenshot PATH]

Each check prints PASS or FAIL; the exit status is 1 if any failed. Checks that follow an
action wait for its visible result (see harness_lib.py), so they hold on a loaded machine.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

from corpus import HOSTILE, markdown_answer, split_deltas
from harness_buttons import check_buttons
from harness_lib import (
    CHROMIUM_ARGS,
    FAILURES,
    ROOT,
    TIMEOUT_MS,
    attrs,
    check,
    conversation,
    mount,
    root,
    sent,
    serve,
    settle,
    verify,
)
from playwright.sync_api import Page, expect, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError


def check_conversation(page: Page, screenshot: Path | None) -> None:
    i = mount(page, conversation())
    page.evaluate("harness.frame()")
    r = root(i)
    verify("chat_request renders", lambda: expect(page.locator(f"{r} .jt-request")).to_have_count(1))
    verify("reasoning (full) renders open", lambda: expect(page.locator(f"{r} .jt-reasoning details[open]")).to_have_count(1))
    verify("two tool cards", lambda: expect(page.locator(f"{r} .jt-tool")).to_have_count(2))
    card = page.locator(f'{r} .jt-tool[data-call-id="c1"]')
    verify("card c1 badge done", lambda: expect(card.locator(".jt-badge")).to_have_text("done"))
    verify("card c1 elapsed", lambda: expect(card.locator(".jt-elapsed")).to_have_text("0.4 s"))
    verify("inquiry shown in card", lambda: expect(card.locator(".jt-inquiries")).to_contain_text("Include the header?"))
    verify("decision chips", lambda: expect(card.locator(".jt-chip")).to_have_count(2))
    verify("markdown table", lambda: expect(page.locator(f"{r} table")).to_have_count(1))
    verify("opaque block line", lambda: expect(page.locator(f"{r} .jt-opaque")).to_have_text("redacted reasoning block"))
    verify("approval prompt inside its card", lambda: expect(page.locator(f'{r} .jt-tool[data-call-id="c2"] .jt-prompt-approval')).to_have_count(1))
    verify("no stray null text in prompts", lambda: expect(page.locator(f"{r} .jt-prompt")).not_to_contain_text("null"))
    verify("Stop visible while executing", lambda: expect(page.locator(f"{r} .jt-stop")).to_be_visible())
    verify("usage footer", lambda: expect(page.locator(f"{r} .jt-footer")).to_contain_text("$0.0123"))
    # render() sends `ready` synchronously: it is there when mount() returns
    check(sent(page, i)[:1] == [{"type": "ready"}], "ready sent from render", sent(page, i)[:1])
    if screenshot:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        page.locator(f".mount:nth-child({i + 1})").screenshot(path=str(screenshot))
        print(f"screenshot: {screenshot}")


def check_stream(page: Page, realtime: bool) -> None:
    text = markdown_answer(100_000)
    deltas = split_deltas(text, 2000)
    i = mount(page, {"status": {"state": "streaming", "retry": None}})
    view = page.locator(root(i))
    per_tick = 1 if realtime else 50
    interval = 10 if realtime else 0
    started = time.time()
    page.evaluate(
        """async ([i, deltas, perTick, interval]) => {
             const m = harness.view(i).model;
             for (let k = 0; k < deltas.length; k += perTick) {
               m.custom({type: 'delta', parts: deltas.slice(k, k + perTick).map(d => [0, 'message', d])});
               await new Promise(r => setTimeout(r, interval));
             }
           }""",
        [i, deltas, per_tick, interval],
    )
    elapsed = time.time() - started
    verify("all deltas received", lambda: expect(view).to_have_attribute("data-deltas", "2000"))
    live = attrs(page, i)
    # The same text saved as an event, in a fresh view: the reference block count and DOM.
    ref = mount(page, {"events": [{"kind": "message", "id": "m", "content": text, "metadata": {}}]})
    expected_blocks = attrs(page, ref)["blocks-parsed"]
    print(f"stream: {len(text)} chars, {len(deltas)} deltas in {elapsed:.1f}s; live counters {live}; reference blocks {expected_blocks}")
    check(live["blocks-parsed"] == expected_blocks - 1, "each finished block parsed exactly once while streaming (all but the tail)", (live["blocks-parsed"], expected_blocks))
    check(live["frames"] < 2000 and live["tail-renders"] <= live["frames"], "deltas batched per frame", (live["frames"], live["tail-renders"]))
    # Each frame lexes only the unfinished tail (< 2 KB here), never the whole text.
    budget = len(text) + live["frames"] * 2000
    check(live["chars-lexed"] <= budget, "lexing stays linear in the text (no whole-text re-render per delta)", (live["chars-lexed"], budget))
    check(live["fallbacks"] == 0, "no lexer fallbacks")
    # The kernel flushes: block 0 is released to event m, then the event arrives. The DOM is
    # handed over, not re-parsed.
    page.evaluate(
        """([i, text]) => { const m = harness.view(i).model;
             m.custom({type: 'released', blocks: [[0, 'm']]});
             m.set('events', [{kind: 'message', id: 'm', content: text, metadata: {}}]);
             m.set('status', {state: 'complete', retry: null}); }""",
        [i, text],
    )
    verify("the view shows the turn complete", lambda: expect(view).to_have_attribute("data-state", "complete"))
    after = attrs(page, i)  # one frame applies all three changes: the counters are final
    check(after["adopted"] == 1 and after["blocks-parsed"] == expected_blocks, "draft DOM adopted by the saved event (tail finished once, nothing re-parsed)", after)
    same = page.evaluate(
        """([a, b]) => harness.view(a).root.querySelector('.jt-transcript').innerHTML === harness.view(b).root.querySelector('.jt-transcript').innerHTML""",
        [i, ref],
    )
    check(same, "live and saved conversation draw the same DOM")
    verify("draft empty after the handover", lambda: expect(view.locator(".jt-draft > *")).to_have_count(0))


def check_draft_protocol(page: Page) -> None:
    i = mount(page, {"status": {"state": "streaming", "retry": None}, "settings": {"reasoning": "progress"}})
    page.evaluate(
        """(i) => { const m = harness.view(i).model;
             m.custom({type: 'delta', parts: [[0, 'reasoning', 'one two '], [0, 'reasoning', 'three']]});
             m.custom({type: 'delta', parts: [[1, 'message', 'Hello *wor']]}); }""",
        i,
    )
    r = root(i)
    reasoning = page.locator(f"{r} .jt-draft .jt-reasoning")
    verify("progress mode counts words live", lambda: expect(reasoning).to_have_text("thinking… 3 words", use_inner_text=True))
    page.evaluate("(i) => harness.view(i).model.custom({type: 'draft', blocks: [[0, 'reasoning', 'one two three four'], [1, 'message', 'Hello *world*']]})", i)
    verify("draft message replaces the draft", lambda: expect(page.locator(f"{r} .jt-draft em")).to_have_text("world"))
    verify("draft extends reasoning", lambda: expect(reasoning).to_have_text("thinking… 4 words", use_inner_text=True))
    page.evaluate("(i) => harness.view(i).model.custom({type: 'draft_clear'})", i)
    verify("draft_clear drops the draft (abort)", lambda: expect(page.locator(f"{r} .jt-draft > *")).to_have_count(0))
    verify("nothing of an aborted draft remains", lambda: expect(page.locator(f"{r} .jt-transcript > *")).to_have_count(0))

    # released in one frame, the events in a later one: the blocks wait in the draft, then
    # their events take them over
    j = mount(page, {"status": {"state": "streaming", "retry": None}, "settings": {"reasoning": "full"}})
    page.evaluate(
        """async (j) => { const m = harness.view(j).model;
             m.custom({type: 'delta', parts: [[0, 'reasoning', 'Think *hard*.'], [1, 'message', 'Para one.\\n\\nPara two.']]});
             await harness.frame();
             m.custom({type: 'released', blocks: [[0, 'r'], [1, 'm']]});
             await harness.frame(); }""",
        j,
    )
    r = root(j)
    verify("released blocks stay shown until their events arrive", lambda: expect(page.locator(f"{r} .jt-draft > *")).to_have_count(2))
    page.evaluate(
        """(j) => harness.view(j).model.set('events', [
             {kind: 'reasoning', id: 'r', content: 'Think *hard*.', metadata: {signature: 's'}},
             {kind: 'message', id: 'm', content: 'Para one.\\n\\nPara two.', metadata: {partial: true}}])""",
        j,
    )
    verify("the draft is handed over", lambda: expect(page.locator(f"{r} .jt-draft > *")).to_have_count(0))
    a = attrs(page, j)
    check(a["adopted"] == 2, "reasoning and message handed to their events", a)
    verify("the adopted message keeps both paragraphs", lambda: expect(page.locator(f"{r} .jt-transcript .jt-message p")).to_have_count(2))
    verify("partial message marked; no duplicate left in the draft", lambda: expect(page.locator(f"{r} .jt-partial")).to_have_text("answer stopped here"))

    # reasoning ends while the answer streams: the reasoning block goes to its event, the
    # answer keeps streaming in the draft
    k = mount(page, {"status": {"state": "streaming", "retry": None}, "settings": {"reasoning": "full"}})
    page.evaluate(
        """async (k) => { const m = harness.view(k).model;
             m.custom({type: 'delta', parts: [[0, 'reasoning', 'Plan *first*.'], [1, 'message', 'Hel']]});
             await harness.frame();
             m.custom({type: 'delta', parts: [[1, 'message', 'lo']]});
             m.custom({type: 'released', blocks: [[0, 'r']]});
             m.set('events', [{kind: 'reasoning', id: 'r', content: 'Plan *first*.', metadata: {}}]); }""",
        k,
    )
    r = root(k)
    verify("the answer goes on streaming in the draft", lambda: expect(page.locator(f"{r} .jt-draft")).to_have_text("Hello"))
    verify("the reasoning is in the transcript", lambda: expect(page.locator(f"{r} .jt-transcript .jt-reasoning em")).to_have_text("first"))
    a = attrs(page, k)
    check(a["adopted"] == 1 and a["blocks-parsed"] == 1, "finished reasoning handed over while the answer streams (its tail finished once, not parsed again)", a)

    # the event was drawn before the handover arrived: the block is let go, never shown twice
    n = mount(page, {"status": {"state": "streaming", "retry": None}, "settings": {"reasoning": "full"}})
    page.evaluate(
        """async (n) => { const m = harness.view(n).model;
             m.custom({type: 'delta', parts: [[0, 'message', 'Once.']]});
             await harness.frame();
             m.set('events', [{kind: 'message', id: 'm', content: 'Once.', metadata: {}}]);
             await harness.frame();
             m.custom({type: 'released', blocks: [[0, 'm']]}); }""",
        n,
    )
    r = root(n)
    verify("an event drawn before its handover leaves no draft", lambda: expect(page.locator(f"{r} .jt-draft > *")).to_have_count(0))
    verify("an event drawn before its handover is shown once", lambda: expect(page.locator(f"{r} .jt-message")).to_have_count(1))


def check_reasoning_modes(page: Page) -> None:
    content = "Alpha beta gamma delta epsilon. " * 5
    ev = [{"kind": "reasoning", "id": "r", "content": content, "metadata": {}}]
    expectations: dict[str, str | re.Pattern[str]] = {
        "full": re.compile("Alpha beta gamma"),
        "hidden": "reasoning hidden",
        "truncate:12": "Alpha beta g…",
        "progress": "Thought · 25 words",
        "static": "Reasoned",
    }
    i = 0
    for mode, expected in expectations.items():
        i = mount(page, {"events": ev, "settings": {"reasoning": mode}})
        reasoning = page.locator(f"{root(i)} .jt-reasoning")
        verify(f"reasoning mode {mode}", lambda: expect(reasoning).to_have_text(expected, use_inner_text=True))
    # The last view is "static": the text is filled in when the reader opens the fold.
    reasoning = page.locator(f"{root(i)} .jt-reasoning")
    reasoning.locator("summary").click()
    verify("static reasoning expands on click", lambda: expect(reasoning).to_contain_text("Alpha beta gamma delta epsilon."))
    page.evaluate("(i) => harness.view(i).model.set('settings', {reasoning: 'hidden'})", i)
    verify("mode change re-renders reasoning", lambda: expect(reasoning).to_have_text("reasoning hidden", use_inner_text=True))


def check_timers(page: Page) -> None:
    state = conversation()
    state["prompts"] = []
    # Times relative to the page's clock, read in the same task as the mount that draws them.
    shown = page.evaluate(
        """(s) => { const i = harness.mount({...s,
             tools: {c2: {status: 'running', started_at: Date.now() - 1500, ended_at: null, progress: ['step 1']}},
             status: {state: 'executing', retry: {attempt: 2, max_attempts: 5, delay_s: 8, reason: 'rate limited', until: Date.now() + 8000}}});
             const r = harness.view(i).root;
             return {i, elapsed: r.querySelector('.jt-tool[data-call-id="c2"] .jt-elapsed').textContent,
                     retry: r.querySelector('.jt-retry').textContent}; }""",
        state,
    )
    i, first = shown["i"], shown["elapsed"]
    r = root(i)
    card = page.locator(f'{r} .jt-tool[data-call-id="c2"]')
    check(re.fullmatch(r"1\.\d s", first) is not None, "running tool shows its elapsed time", first)
    check(shown["retry"].startswith("rate limited — retrying in 8 s"), "retry countdown starts at the server's delay", shown["retry"])
    page.evaluate("(i) => harness.view(i).model.set('tools', {c2: {...harness.view(i).model.get('tools').c2, progress: ['step 1', 'step 2']}})", i)
    verify("streamed progress lines", lambda: expect(card.locator(".jt-progress")).to_have_text(re.compile(r"^step 1\nstep 2\n?$")))
    # What a person sees about a second later: the timer has moved on, the countdown reads 7 s.
    try:
        page.wait_for_function(
            "([sel, before]) => parseFloat(document.querySelector(sel).textContent) > before",
            arg=[f'{r} .jt-tool[data-call-id="c2"] .jt-elapsed', float(first.split()[0]) if first else 0.0],
            timeout=TIMEOUT_MS,
        )
        check(True, "running tool timer ticks")
    except PlaywrightTimeoutError:
        check(False, "running tool timer ticks", (first, card.locator(".jt-elapsed").inner_text()))
    verify("retry countdown", lambda: expect(page.locator(f"{r} .jt-retry")).to_contain_text("retrying in 7 s"))


def check_hostile(page: Page) -> None:
    joined = "\n\n".join(HOSTILE)
    t = "2025-01-01T00:00:00Z"
    events = [
        {"kind": "chat_request", "id": "h1", "timestamp": t, "content": joined},
        {"kind": "reasoning", "id": "h2", "timestamp": t, "content": joined, "metadata": {}},
        {"kind": "message", "id": "h3", "timestamp": t, "content": joined, "metadata": {"partial": True}},
        {"kind": "tool_call_request", "id": "h4", "timestamp": t, "call_id": HOSTILE[0], "name": HOSTILE[1], "arguments": {"x": HOSTILE[0], HOSTILE[2]: HOSTILE[4]}},
        {"kind": "inquiry_request", "id": "h5", "timestamp": t, "inquiry_id": "q", "call_id": HOSTILE[0], "question": HOSTILE[0], "choices": None},
        {"kind": "inquiry_response", "id": "h6", "timestamp": t, "inquiry_id": "q", "call_id": HOSTILE[0], "answer": HOSTILE[0], "by": "user"},
        {"kind": "tool_call_response", "id": "h7", "timestamp": t, "call_id": HOSTILE[0], "content": joined, "is_error": True, "status": "error", "decisions": [{"action": HOSTILE[0], "by": "user", "detail": HOSTILE[1]}], "elapsed": 1},
        {"kind": "notice", "id": "h8", "timestamp": t, "level": "info", "text": HOSTILE[0]},
        {"kind": "error", "id": "h9", "timestamp": t, "message": joined, "error_type": HOSTILE[0]},
        {"kind": "block", "id": "h10", "timestamp": t, "metadata": {"raw_block": {"type": HOSTILE[0]}}},
        {"kind": HOSTILE[0], "id": "h11", "timestamp": t},
    ]
    prompts = [
        {"id": "x1", "type": "approval", "call_id": "nope", "name": HOSTILE[0], "arguments": {"a": HOSTILE[0]}, "schema": {}, "edit_first": True, "error": HOSTILE[0]},
        {"id": "x2", "type": "result", "call_id": "nope", "name": HOSTILE[1], "content": joined, "is_error": False},
        {"id": "x3", "type": "inquiry", "call_id": "nope", "question": HOSTILE[0], "choices": HOSTILE[:3]},
        {"id": "x4", "type": "interrupt", "context": "streaming", "stream_alive": True, "reason": HOSTILE[0]},
    ]
    i = mount(page, {"events": events, "prompts": prompts, "tools": {HOSTILE[0]: {"status": "done", "started_at": 0, "ended_at": 5, "progress": HOSTILE}}, "settings": {"reasoning": "full", "model": HOSTILE[0], "thread": HOSTILE[1]}, "usage": {}})
    # ...and streamed, with payloads split across deltas
    page.evaluate(
        """([i, text]) => { const m = harness.view(i).model; const n = 7;
             for (let k = 0; k < text.length; k += n) m.custom({type: 'delta', parts: [[0, 'message', text.slice(k, k + n)], [1, 'reasoning', text.slice(k, k + n)]]}); }""",
        [i, joined],
    )
    r = root(i)
    verify("every streamed delta arrived", lambda: expect(page.locator(r)).to_have_attribute("data-deltas", str(2 * -(-len(joined) // 7))))
    # click every link in the view (javascript: ones would fire here)
    for link in page.locator(f"{r} a").all():
        link.click(modifiers=["Control"], no_wait_after=True)
    settle(page)  # handlers queued by the rendering and the clicks have run
    pwned = page.evaluate("() => window.pwned")
    check(pwned is None, "hostile payloads executed nothing", pwned)
    bad = page.evaluate(
        """(i) => { const root = harness.view(i).root; const out = [];
             for (const el of root.querySelectorAll('*')) {
               for (const a of el.getAttributeNames()) if (a.startsWith('on') || a === 'style' || a === 'formaction' || a === 'srcdoc') out.push(el.tagName + ' ' + a);
               if (['SCRIPT', 'IFRAME', 'OBJECT', 'EMBED', 'SVG', 'MATH', 'FORM', 'STYLE', 'VIDEO', 'BODY'].includes(el.tagName.toUpperCase())) out.push(el.tagName);
               const href = el.getAttribute('href') || el.getAttribute('src') || '';
               if (/^\\s*(javascript|data:text)/i.test(href)) out.push(el.tagName + ' ' + href);
             }
             for (const a of root.querySelectorAll('a[href]')) if (a.rel !== 'noopener noreferrer' || a.target !== '_blank') out.push('link without rel/target');
             return out; }""",
        i,
    )
    check(bad == [], "no script, handler, style or javascript: URL reached the DOM", bad[:10])
    check(page.evaluate("() => document.getElementById('jt-root') === null"), "no DOM clobbering by id")


def check_saved_record(page: Page) -> None:
    """The shared fixture record (tests/fixtures/record_all_kinds.json, also drawn by the Python
    transcript tests) through renderRecord, the saved-record view the lab extension uses."""
    page.evaluate(
        """async () => {
          const { renderRecord } = await import("/jupyter_turns/static/widget.js");
          const record = await (await fetch("/tests/fixtures/record_all_kinds.json")).json();
          const el = document.createElement("div");
          el.id = "saved-record";
          document.getElementById("app").appendChild(el);
          renderRecord(record, el);
        }"""
    )
    r = "#saved-record .jt-root.jt-saved"
    verify("saved: the opaque blocks by their type", lambda: expect(page.locator(f"{r} .jt-opaque")).to_have_text(["redacted reasoning block", "server_tool_use block", "web_search_tool_result block"]))
    verify("saved: the compaction summary, folded, with its sizes", lambda: expect(page.locator(f"{r} .jt-compaction > summary")).to_have_text("Earlier conversation summarized: 182,000 tokens → a summary of ≈ 30 tokens"))
    verify("saved: the answers open", lambda: expect(page.locator(f"{r} .jt-message").first).to_contain_text("Paris has about 2.1 million people."))
    verify("saved: the partial answer marked", lambda: expect(page.locator(f"{r} .jt-message .jt-partial")).to_have_count(1))
    verify("saved: one card per tool call", lambda: expect(page.locator(f"{r} .jt-tool .jt-tool-name")).to_have_text(["lookup", "fetch", "python", "insert_cell", "edit_cell", "researcher", "lookup"]))
    insert = page.locator(f"{r} .jt-tool").filter(has=page.locator(".jt-tool-name", has_text="insert_cell"))
    verify("saved: the inserted cell", lambda: expect(insert.locator(".jt-cell-code").first).to_have_text("total = df['a'].sum()\ntotal"))
    verify("saved: the inserted cell highlighted", lambda: expect(insert.locator(".jt-cell-code .hljs-string").first).to_have_text("'a'"))
    verify("saved: the edit's diff, its script as text", lambda: expect(page.locator(f"{r} .jt-diff-add")).to_have_text(["+x = 2", "+<script>alert(1)</script>"]))
    verify("saved: what undo did and did not", lambda: expect(page.locator(f"{r} .jt-undo")).to_contain_text(["Undone: removed total, restored x, restored tmp", "Undone by Ada Lovelace: restored the edited cell's earlier text"]))
    verify("saved: what undo could not", lambda: expect(page.locator(f"{r} .jt-undo:not(.jt-rewind) .jt-undo-kept")).to_have_text(["Not undone: the in-place changes to df; files written and other side effects of the code, if any"]))
    verify("saved: what a rewind could not", lambda: expect(page.locator(f"{r} .jt-rewind .jt-undo-kept")).to_have_text(["Not undone: python call c9: files written and other side effects of the code, if any"]))
    nested = page.locator(f"{r} .jt-nested:visible")  # every card has one; a sub-agent's shows
    verify("saved: the sub-agent's transcript inside its card", lambda: expect(nested.locator(".jt-tool .jt-tool-name")).to_have_text(["lookup"]))
    verify("saved: the sub-agent's stats", lambda: expect(nested.locator(":scope > summary")).to_have_text(["Sub-agent · 2 cycles · 160 tokens · $0.0003"]))
    verify("saved: tool error and denial", lambda: expect(page.locator(f"{r} .jt-tool-result")).to_contain_text(["2,102,650", "ConnectionError: refused", "Not run: denied by policy."]))
    verify("saved: the inquiries and their answers", lambda: expect(page.locator(f"{r} .jt-inquiry")).to_have_count(2))
    verify("saved: notices and the error", lambda: expect(page.locator(f"{r} .jt-notice")).to_contain_text(["Stopped by the user.", "ping_v2"]))
    verify("saved: the error event", lambda: expect(page.locator(f"{r} .jt-error")).to_contain_text("the API is busy"))
    verify("saved: no buttons but Copy (no page actions here)", lambda: expect(page.locator(f"{r} button")).to_have_text(["Copy cell"]))
    reasoning = page.locator(f"{r} .jt-reasoning details").first
    verify("saved: reasoning folded", lambda: expect(reasoning).not_to_have_attribute("open", ""))
    reasoning.locator("summary").click()
    verify("saved: reasoning opens on click", lambda: expect(reasoning).to_contain_text("The user wants a number; search first."))
    verify("saved: the footer", lambda: expect(page.locator(f"{r} .jt-footer")).to_contain_text("thread main"))


def check_crafted_cards(page: Page) -> None:
    """A crafted record's cards, drawn with page actions as the lab extension draws them: what
    each shows beside a button that inserts or copies text is that text (the call's arguments),
    never the record's own ``preview`` (which could show one thing beside a button that
    inserts another)."""
    t = "2025-01-01T00:00:00Z"
    harmless = "print('harmless')"
    evil = "import os\nos.remove('data.csv')"
    diff = "--- current\n+++ proposed\n@@ -1 +1 @@\n-x = 1\n+x = 2"
    events = [
        {"kind": "chat_request", "id": "c1", "timestamp": t, "content": "go"},
        {"kind": "tool_call_request", "id": "c2", "timestamp": t, "call_id": "p", "name": "python", "arguments": {"code": evil}},
        {"kind": "tool_call_response", "id": "c3", "timestamp": t, "call_id": "p", "content": "ok", "status": "done", "preview": {"kind": "insert", "cell_type": "code", "source": harmless}},
        {"kind": "tool_call_request", "id": "c4", "timestamp": t, "call_id": "i", "name": "insert_cell", "arguments": {"source": evil, "cell_type": "code"}},
        {"kind": "tool_call_response", "id": "c5", "timestamp": t, "call_id": "i", "content": "Inserted", "status": "done", "preview": {"kind": "insert", "cell_type": "code", "source": harmless}},
        {"kind": "tool_call_request", "id": "c6", "timestamp": t, "call_id": "e1", "name": "edit_cell", "arguments": {"index": 1, "source": "x = 2"}},
        {"kind": "tool_call_response", "id": "c7", "timestamp": t, "call_id": "e1", "content": "Edited", "status": "done", "preview": {"kind": "edit", "index": 1, "diff": diff}},
        {"kind": "tool_call_request", "id": "c8", "timestamp": t, "call_id": "e2", "name": "edit_cell", "arguments": {"index": 1, "source": evil}},
        {"kind": "tool_call_response", "id": "c9", "timestamp": t, "call_id": "e2", "content": "Edited", "status": "done", "preview": {"kind": "edit", "index": 1, "diff": diff}},
        {"kind": "tool_call_request", "id": "c10", "timestamp": t, "call_id": "o", "name": "lookup", "arguments": {"q": "x"}},
        {"kind": "tool_call_response", "id": "c11", "timestamp": t, "call_id": "o", "content": "found", "status": "done", "preview": {"kind": "insert", "cell_type": "code", "source": harmless}, "decisions": [{"action": "skipped", "by": "policy", "detail": "recorded, not run"}]},
    ]
    page.evaluate(
        """async (events) => {
          const { renderRecord } = await import("/jupyter_turns/static/widget.js");
          const el = document.createElement("div");
          el.id = "crafted-record";
          document.getElementById("app").appendChild(el);
          const actions = { undo: async () => ({ ok: true }), addCell: async () => ({ ok: true }) };
          renderRecord({ events, thread: "main" }, el, actions);
        }""",
        events,
    )
    r = "#crafted-record .jt-root.jt-saved"
    card = lambda call: page.locator(f"{r} .jt-tool[data-call-id='{call}']")  # noqa: E731
    verify("crafted: no card shows the record's harmless preview", lambda: expect(page.locator(r)).not_to_contain_text("harmless"))
    verify("crafted: the python card's arguments show the code Add to notebook adds", lambda: expect(card("p").locator(".jt-code-arg[data-arg='code'] .jt-cell-code")).to_have_text(evil))
    verify("crafted: the python card offers Add to notebook", lambda: expect(card("p").get_by_role("button", name="Add to notebook")).to_have_count(1))
    verify("crafted: an insert shows the text Copy cell copies", lambda: expect(card("i").locator(".jt-cell-code").first).to_have_text(evil))
    verify("crafted: a diff that is the call's text is shown", lambda: expect(card("e1").locator(".jt-diff-add")).to_have_text(["+x = 2"]))
    verify("crafted: a diff that is not the call's text gives way to that text", lambda: expect(card("e2").locator(".jt-cell-preview")).to_contain_text("The cell's new text:"))
    verify("crafted: ...and no diff", lambda: expect(card("e2").locator(".jt-diff")).to_have_count(0))
    verify("crafted: another tool's card draws no cell preview", lambda: expect(card("o").locator(".jt-cell-preview")).to_have_count(0))
    verify("a result answered from a recording says so", lambda: expect(card("o").locator(".jt-chip")).to_have_text(["recorded, not run"]))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--realtime", action="store_true", help="stream at 100 deltas/s (20 s)")
    parser.add_argument("--screenshot", type=Path, default=ROOT / "test-artifacts" / "harness.png")
    parser.add_argument("--dark", action="store_true")
    args = parser.parse_args()
    server, base = serve()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 900, "height": 1200}, device_scale_factor=1)
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
            page.goto(f"{base}/js/dev/harness.html")
            page.wait_for_function("window.harnessReady === true")
            if args.dark:
                page.evaluate("document.body.classList.add('dark')")
            for name, run in [
                ("conversation", lambda: check_conversation(page, args.screenshot)),
                ("buttons", lambda: check_buttons(page)),
                ("draft protocol", lambda: check_draft_protocol(page)),
                ("reasoning modes", lambda: check_reasoning_modes(page)),
                ("timers", lambda: check_timers(page)),
                ("stream", lambda: check_stream(page, args.realtime)),
                ("hostile", lambda: check_hostile(page)),
                ("saved record", lambda: check_saved_record(page)),
                ("crafted cards", lambda: check_crafted_cards(page)),
            ]:
                print(f"--- {name}")
                run()
            check(errors == [], "no page errors or dialogs", errors[:5])
            print("global stats:", json.dumps(page.evaluate("() => { const s = {...window.__jupyter_turns_stats}; delete s.reset; return s; }")))
            browser.close()
    finally:
        server.shutdown()
    print(f"{len(FAILURES)} failed" if FAILURES else "all checks passed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
