"""Drive the built widget.js in a plain page (fake model) with headless Chromium.

Run from the repo root after `npm run build:widget` (in js/):
    python js/dev/check_harness.py [--realtime] [--screenshot PATH]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import sys
import threading
import time
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

sys.path.insert(0, str(Path(__file__).parent))
from corpus import HOSTILE, markdown_answer, split_deltas  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run",
]
FAILURES: list[str] = []


def check(ok: bool, what: str, detail: object = "") -> None:
    print(("PASS " if ok else "FAIL ") + what + (f"  [{detail}]" if detail != "" else ""))
    if not ok:
        FAILURES.append(what)


def serve() -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(QuietHandler, directory=str(ROOT))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def now_ms() -> int:
    return int(time.time() * 1000)


def conversation() -> dict[str, object]:
    """A saved conversation with one of everything."""
    t = "2025-01-01T00:00:00Z"
    events = [
        {"kind": "chat_request", "id": "e1", "timestamp": t, "content": "What is in **data.csv**?"},
        {"kind": "reasoning", "id": "e2", "timestamp": t, "content": "The user wants a summary. I should *read* the file first.", "metadata": {"signature": "sig"}},
        {"kind": "message", "id": "e3", "timestamp": t, "content": "Let me look at the file.", "metadata": {}},
        {"kind": "tool_call_request", "id": "e4", "timestamp": t, "call_id": "c1", "name": "read_csv", "arguments": {"path": "data.csv", "rows": 5}, "metadata": {}},
        {"kind": "inquiry_request", "id": "e5", "timestamp": t, "inquiry_id": "q1", "call_id": "c1", "question": "Include the header?", "choices": ["yes", "no"]},
        {"kind": "inquiry_response", "id": "e6", "timestamp": t, "inquiry_id": "q1", "call_id": "c1", "answer": "yes", "by": "user"},
        {"kind": "tool_call_response", "id": "e7", "timestamp": t, "call_id": "c1", "content": "a,b\n1,2\n3,4", "is_error": False, "status": "done", "decisions": [{"action": "approved", "by": "user", "detail": None}, {"action": "delivered", "by": "policy", "detail": None}], "elapsed": 0.42},
        {"kind": "block", "id": "e8", "timestamp": t, "metadata": {"type": "redacted_thinking"}},
        {"kind": "message", "id": "e9", "timestamp": t, "content": "The file has two columns:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\nNext I will plot it.", "metadata": {}},
        {"kind": "tool_call_request", "id": "e10", "timestamp": t, "call_id": "c2", "name": "run_python", "arguments": {"code": "df.plot()"}, "metadata": {}},
        {"kind": "notice", "id": "e11", "timestamp": t, "level": "warning", "text": "run_python asks before running"},
    ]
    return {
        "events": events,
        "tools": {"c2": {"status": "waiting", "started_at": None, "ended_at": None, "progress": []}},
        "prompts": [{"id": "p1", "type": "approval", "call_id": "c2", "name": "run_python", "arguments": {"code": "df.plot()"}, "schema": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}, "edit_first": False, "error": None}],
        "status": {"state": "executing", "retry": None},
        "usage": {"input_tokens": 1234, "output_tokens": 567, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 0, "cost_usd": 0.0123},
        "settings": {"reasoning": "full", "thread": "main", "model": "claude-sonnet-4-5"},
    }


def mount(page: Page, state: dict[str, object]) -> int:
    return int(page.evaluate("(s) => harness.mount(s)", state))


def attrs(page: Page, i: int) -> dict[str, int]:
    return page.evaluate(
        """(i) => { const r = harness.view(i).root; const out = {};
             for (const a of r.getAttributeNames()) if (a.startsWith('data-') && a !== 'data-state') out[a.slice(5)] = Number(r.getAttribute(a));
             return out; }""",
        i,
    )


def sent(page: Page, i: int) -> list[dict[str, object]]:
    return page.evaluate("(i) => harness.view(i).model.sent", i)


def test_conversation(page: Page, screenshot: Path | None) -> None:
    i = mount(page, conversation())
    page.evaluate("harness.frame()")
    root = f".mount:nth-child({i + 1}) .jt-root"
    check(page.locator(f"{root} .jt-request").count() == 1, "chat_request renders")
    check(page.locator(f"{root} .jt-reasoning details[open]").count() == 1, "reasoning (full) renders open")
    check(page.locator(f"{root} .jt-tool").count() == 2, "two tool cards")
    card = page.locator(f'{root} .jt-tool[data-call-id="c1"]')
    check(card.locator(".jt-badge").inner_text() == "done", "card c1 badge done")
    check(card.locator(".jt-elapsed").inner_text() == "0.4 s", "card c1 elapsed", card.locator(".jt-elapsed").inner_text())
    check("Include the header?" in card.locator(".jt-inquiries").inner_text(), "inquiry shown in card")
    check(card.locator(".jt-chip").count() == 2, "decision chips")
    check(page.locator(f"{root} table").count() == 1, "markdown table")
    check(page.locator(f"{root} .jt-opaque").inner_text() == "redacted reasoning block", "opaque block line")
    check(page.locator(f'{root} .jt-tool[data-call-id="c2"] .jt-prompt-approval').count() == 1, "approval prompt inside its card")
    check("null" not in page.locator(f"{root} .jt-prompt").inner_text(), "no stray null text in prompts")
    check(page.locator(f"{root} .jt-stop").is_visible(), "Stop visible while executing")
    check("$0.0123" in page.locator(f"{root} .jt-footer").inner_text(), "usage footer")
    check(sent(page, i)[:1] == [{"type": "ready"}], "ready sent from render", sent(page, i)[:1])
    if screenshot:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        page.locator(f".mount:nth-child({i + 1})").screenshot(path=str(screenshot))
        print(f"screenshot: {screenshot}")


def test_buttons(page: Page) -> None:
    state = conversation()
    i = mount(page, state)
    page.evaluate("harness.frame()")
    root = f".mount:nth-child({i + 1}) .jt-root"
    prompt = page.locator(f"{root} .jt-prompt-approval")
    prompt.get_by_role("button", name="Approve").click()
    prompt.get_by_role("button", name="Approve").click(force=True)
    prompt.get_by_role("button", name="Skip").click(force=True)
    msgs = [m for m in sent(page, i) if m["type"] != "ready"]
    check(msgs == [{"type": "approval", "action": "approved", "prompt_id": "p1"}], "approve sends once; buttons disabled after", msgs)

    def fresh(prompts: list[dict[str, object]], status: str = "executing") -> tuple[int, str]:
        s = conversation()
        s["prompts"] = prompts
        s["status"] = {"state": status, "retry": None}
        j = mount(page, s)
        page.evaluate("harness.frame()")
        return j, f".mount:nth-child({j + 1}) .jt-root"

    approval = conversation()["prompts"][0]  # type: ignore[index]
    for label, expected in [("Skip", "skipped"), ("Always allow this tool in this thread", "always_allowed")]:
        j, r = fresh([approval])
        page.locator(f"{r} .jt-prompt").get_by_role("button", name=label, exact=True).click()
        got = [m for m in sent(page, j) if m["type"] != "ready"]
        check(got == [{"type": "approval", "action": expected, "prompt_id": "p1"}], f"approval {expected}", got)

    j, r = fresh([approval])
    p = page.locator(f"{r} .jt-prompt")
    p.get_by_role("button", name="Edit arguments").click()
    area = p.locator("textarea")
    run = p.get_by_role("button", name="Run with these arguments")
    area.fill("{not json")
    check(run.is_disabled() and "not valid JSON" in p.locator(".jt-validation").inner_text(), "edit: invalid JSON blocks sending")
    area.fill('{"code": 5}')
    check(run.is_disabled() and "expected string" in p.locator(".jt-validation").inner_text(), "edit: schema type check")
    area.fill("{}")
    check(run.is_disabled() and 'missing required "code"' in p.locator(".jt-validation").inner_text(), "edit: required check")
    area.fill('{"code": "df.head()"}')
    run.click()
    got = [m for m in sent(page, j) if m["type"] != "ready"]
    check(got == [{"type": "approval", "action": "edited", "arguments": {"code": "df.head()"}, "prompt_id": "p1"}], "edit sends parsed arguments", got)

    # kernel rejects the edit: same id, error set -> rebuilt, enabled, typed text kept
    page.evaluate("""(j) => { const m = harness.view(j).model; m.set('prompts', [{...m.get('prompts')[0], error: 'code must not be empty'}]); }""", j)
    page.evaluate("harness.frame()")
    check(p.locator(".jt-prompt-error").inner_text() == "code must not be empty" and not p.get_by_role("button", name="Approve").is_disabled(), "rejected edit reopens prompt with error")
    check(page.locator(f"{r} .jt-prompt textarea").input_value() == '{"code": "df.head()"}', "rejected edit keeps the typed arguments")

    # Enter on the focused prompt approves
    j, r = fresh([approval])
    page.locator(f"{r} .jt-prompt").focus()
    page.keyboard.press("Enter")
    got = [m for m in sent(page, j) if m["type"] != "ready"]
    check(got == [{"type": "approval", "action": "approved", "prompt_id": "p1"}], "Enter approves the focused prompt", got)

    result = {"id": "p2", "type": "result", "call_id": "c2", "name": "run_python", "content": "42", "is_error": False}
    for label, expected in [("Deliver", {"action": "delivered"}), ("Don't deliver", {"action": "withheld"})]:
        j, r = fresh([result])
        page.locator(f"{r} .jt-prompt").get_by_role("button", name=label, exact=True).click()
        got = [m for m in sent(page, j) if m["type"] != "ready"]
        check(got == [{"type": "result", "prompt_id": "p2", **expected}], f"result {label}", got)
    j, r = fresh([result])
    p = page.locator(f"{r} .jt-prompt")
    p.get_by_role("button", name="Edit", exact=True).click()
    p.locator("textarea").fill("43")
    p.get_by_role("button", name="Deliver edited result").click()
    got = [m for m in sent(page, j) if m["type"] != "ready"]
    check(got == [{"type": "result", "action": "result_edited", "content": "43", "prompt_id": "p2"}], "result edit", got)

    j, r = fresh([{"id": "p3", "type": "inquiry", "call_id": "c2", "question": "Which?", "choices": ["red", "blue"]}])
    page.locator(f"{r} .jt-prompt").get_by_role("button", name="blue").click()
    got = [m for m in sent(page, j) if m["type"] != "ready"]
    check(got == [{"type": "inquiry", "answer": "blue", "prompt_id": "p3"}], "inquiry choice", got)
    j, r = fresh([{"id": "p4", "type": "inquiry", "call_id": "c2", "question": "Name?", "choices": None}])
    page.locator(f"{r} .jt-prompt textarea").fill("Ada")
    page.locator(f"{r} .jt-prompt").get_by_role("button", name="Answer").click()
    got = [m for m in sent(page, j) if m["type"] != "ready"]
    check(got == [{"type": "inquiry", "answer": "Ada", "prompt_id": "p4"}], "inquiry free text", got)

    streaming_menu = {"id": "m1", "type": "interrupt", "context": "streaming", "stream_alive": False, "reason": "Stop button"}
    for label, expected in [("Stop", {"action": "stop"}), ("Abort", {"action": "abort"}), ("Continue", {"action": "continue"})]:
        j, r = fresh([streaming_menu], "interrupted_streaming")
        page.locator(f"{r} .jt-prompt").get_by_role("button", name=label, exact=True).click()
        got = [m for m in sent(page, j) if m["type"] != "ready"]
        check(got == [{"type": "interrupt", "prompt_id": "m1", **expected}], f"menu (streaming) {label}", got)
    j, r = fresh([streaming_menu], "interrupted_streaming")
    check(page.locator(f"{r} .jt-stop").is_disabled(), "Stop disabled while the menu is open")
    page.locator(f"{r} .jt-prompt textarea").fill("Shorter, please")
    page.locator(f"{r} .jt-prompt").get_by_role("button", name="Reply", exact=True).click()
    got = [m for m in sent(page, j) if m["type"] != "ready"]
    check(got == [{"type": "interrupt", "action": "reply", "text": "Shorter, please", "prompt_id": "m1"}], "menu reply with text", got)
    tool_menu = {"id": "m2", "type": "interrupt", "context": "tool", "stream_alive": False, "reason": None}
    for label, expected in [("Stop", "stop"), ("Restart", "restart"), ("Continue", "continue")]:
        j, r = fresh([tool_menu], "interrupted_tool")
        page.locator(f"{r} .jt-prompt").get_by_role("button", name=label, exact=True).click()
        got = [m for m in sent(page, j) if m["type"] != "ready"]
        check(got == [{"type": "interrupt", "action": expected, "prompt_id": "m2"}], f"menu (tool) {label}", got)

    j, r = fresh([], "streaming")
    page.locator(f"{r} .jt-stop").click()
    page.locator(r).focus()
    page.keyboard.press("Escape")
    got = [m for m in sent(page, j) if m["type"] != "ready"]
    check(got == [{"type": "interrupt_request"}] * 2, "Stop button and Esc send the interrupt request", got)
    j, r = fresh([], "complete")
    check(not page.locator(f"{r} .jt-stop").is_visible(), "no Stop button when the turn is complete")


def test_stream(page: Page, realtime: bool) -> None:
    text = markdown_answer(100_000)
    deltas = split_deltas(text, 2000)
    i = mount(page, {"status": {"state": "streaming", "retry": None}})
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
             await harness.frame();
           }""",
        [i, deltas, per_tick, interval],
    )
    elapsed = time.time() - started
    live = attrs(page, i)
    # The same text saved as an event, in a fresh view: the reference block count and DOM.
    ref = mount(page, {"events": [{"kind": "message", "id": "m", "content": text, "metadata": {}}]})
    page.evaluate("harness.frame()")
    expected_blocks = attrs(page, ref)["blocks-parsed"]
    print(f"stream: {len(text)} chars, {len(deltas)} deltas in {elapsed:.1f}s; live counters {live}; reference blocks {expected_blocks}")
    check(live["deltas"] == 2000, "all deltas received", live["deltas"])
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
    page.evaluate("harness.frame()")
    after = attrs(page, i)
    check(after["adopted"] == 1 and after["blocks-parsed"] == expected_blocks, "draft DOM adopted by the saved event (tail finished once, nothing re-parsed)", after)
    same = page.evaluate(
        """([a, b]) => harness.view(a).root.querySelector('.jt-transcript').innerHTML === harness.view(b).root.querySelector('.jt-transcript').innerHTML""",
        [i, ref],
    )
    check(same, "live and saved conversation draw the same DOM")
    check(page.evaluate("(i) => harness.view(i).root.querySelector('.jt-draft').childElementCount", i) == 0, "draft empty after the handover")


def test_draft_protocol(page: Page) -> None:
    i = mount(page, {"status": {"state": "streaming", "retry": None}, "settings": {"reasoning": "progress"}})
    page.evaluate(
        """(i) => { const m = harness.view(i).model;
             m.custom({type: 'delta', parts: [[0, 'reasoning', 'one two '], [0, 'reasoning', 'three']]});
             m.custom({type: 'delta', parts: [[1, 'message', 'Hello *wor']]}); }""",
        i,
    )
    page.evaluate("harness.frame()")
    root = harness_root(i)
    check(page.locator(f"{root} .jt-draft .jt-reasoning").inner_text() == "thinking… 3 words", "progress mode counts words live", page.locator(f"{root} .jt-draft .jt-reasoning").inner_text())
    page.evaluate("(i) => harness.view(i).model.custom({type: 'draft', blocks: [[0, 'reasoning', 'one two three four'], [1, 'message', 'Hello *world*']]})", i)
    page.evaluate("harness.frame()")
    check(page.locator(f"{root} .jt-draft em").inner_text() == "world", "draft message replaces the draft")
    check(page.locator(f"{root} .jt-draft .jt-reasoning").inner_text() == "thinking… 4 words", "draft extends reasoning")
    page.evaluate("(i) => harness.view(i).model.custom({type: 'draft_clear'})", i)
    page.evaluate("harness.frame()")
    check(page.locator(f"{root} .jt-draft > *").count() == 0, "draft_clear drops the draft (abort)")
    check(page.locator(f"{root} .jt-transcript > *").count() == 0, "nothing of an aborted draft remains")

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
    r = harness_root(j)
    check(page.locator(f"{r} .jt-draft > *").count() == 2, "released blocks stay shown until their events arrive")
    page.evaluate(
        """async (j) => { const m = harness.view(j).model;
             m.set('events', [{kind: 'reasoning', id: 'r', content: 'Think *hard*.', metadata: {signature: 's'}},
                              {kind: 'message', id: 'm', content: 'Para one.\\n\\nPara two.', metadata: {partial: true}}]);
             await harness.frame(); }""",
        j,
    )
    a = attrs(page, j)
    check(a["adopted"] == 2 and page.locator(f"{r} .jt-transcript .jt-message p").count() == 2, "reasoning and message handed to their events", a)
    check(page.locator(f"{r} .jt-draft > *").count() == 0 and page.locator(f"{r} .jt-partial").inner_text() == "answer stopped here", "partial message marked; no duplicate left in the draft")

    # reasoning ends while the answer streams: the reasoning block goes to its event, the
    # answer keeps streaming in the draft
    k = mount(page, {"status": {"state": "streaming", "retry": None}, "settings": {"reasoning": "full"}})
    page.evaluate(
        """async (k) => { const m = harness.view(k).model;
             m.custom({type: 'delta', parts: [[0, 'reasoning', 'Plan *first*.'], [1, 'message', 'Hel']]});
             await harness.frame();
             m.custom({type: 'delta', parts: [[1, 'message', 'lo']]});
             m.custom({type: 'released', blocks: [[0, 'r']]});
             m.set('events', [{kind: 'reasoning', id: 'r', content: 'Plan *first*.', metadata: {}}]);
             await harness.frame(); }""",
        k,
    )
    a = attrs(page, k)
    r = harness_root(k)
    check(a["adopted"] == 1 and a["blocks-parsed"] == 1, "finished reasoning handed over while the answer streams (its tail finished once, not parsed again)", a)
    check(page.locator(f"{r} .jt-draft").inner_text() == "Hello", "the answer goes on streaming in the draft", page.locator(f"{r} .jt-draft").inner_text())

    # the events were drawn before the handover arrived: the block is let go, never shown twice
    n = mount(page, {"status": {"state": "streaming", "retry": None}, "settings": {"reasoning": "full"}})
    page.evaluate(
        """async (n) => { const m = harness.view(n).model;
             m.custom({type: 'delta', parts: [[0, 'message', 'Once.']]});
             await harness.frame();
             m.set('events', [{kind: 'message', id: 'm', content: 'Once.', metadata: {}}]);
             await harness.frame();
             m.custom({type: 'released', blocks: [[0, 'm']]});
             await harness.frame(); }""",
        n,
    )
    r = harness_root(n)
    check(page.locator(f"{r} .jt-draft > *").count() == 0 and page.locator(f"{r} .jt-message").count() == 1, "an event drawn before its handover is shown once")


def harness_root(i: int) -> str:
    return f".mount:nth-child({i + 1}) .jt-root"


def test_reasoning_modes(page: Page) -> None:
    content = "Alpha beta gamma delta epsilon. " * 5
    ev = [{"kind": "reasoning", "id": "r", "content": content, "metadata": {}}]
    expectations = {
        "full": lambda t: "Alpha beta gamma" in t,
        "hidden": lambda t: t == "reasoning hidden",
        "truncate:12": lambda t: t == "Alpha beta g…",
        "progress": lambda t: t == "Thought · 25 words",
        "static": lambda t: t == "Reasoned",
    }
    for mode, ok in expectations.items():
        i = mount(page, {"events": ev, "settings": {"reasoning": mode}})
        page.evaluate("harness.frame()")
        t = page.locator(f"{harness_root(i)} .jt-reasoning").inner_text().strip()
        check(ok(t), f"reasoning mode {mode}", t)
    summary = page.locator(f"{harness_root(i)} .jt-reasoning summary")
    summary.click()
    check("Alpha beta" in page.locator(f"{harness_root(i)} .jt-reasoning").inner_text(), "static reasoning expands on click")
    page.evaluate("(i) => harness.view(i).model.set('settings', {reasoning: 'hidden'})", i)
    page.evaluate("harness.frame()")
    check(page.locator(f"{harness_root(i)} .jt-reasoning").inner_text().strip() == "reasoning hidden", "mode change re-renders reasoning")


def test_timers(page: Page) -> None:
    s = conversation()
    s["tools"] = {"c2": {"status": "running", "started_at": now_ms() - 1500, "ended_at": None, "progress": ["step 1"]}}
    s["prompts"] = []
    s["status"] = {"state": "executing", "retry": {"attempt": 2, "max_attempts": 5, "delay_s": 8, "reason": "rate limited", "until": now_ms() + 8000}}
    i = mount(page, s)
    page.evaluate("harness.frame()")
    r = harness_root(i)
    card = page.locator(f'{r} .jt-tool[data-call-id="c2"]')
    first = card.locator(".jt-elapsed").inner_text()
    retry1 = page.locator(f"{r} .jt-retry").inner_text()
    page.evaluate("(i) => harness.view(i).model.set('tools', {c2: {...harness.view(i).model.get('tools').c2, progress: ['step 1', 'step 2']}})", i)
    page.wait_for_timeout(1300)
    second = card.locator(".jt-elapsed").inner_text()
    retry2 = page.locator(f"{r} .jt-retry").inner_text()
    check(first.endswith(" s") and float(second.split()[0]) > float(first.split()[0]), "running tool timer ticks", (first, second))
    check(retry1.startswith("rate limited — retrying in 8 s") and "retrying in 6 s" in retry2 or "retrying in 7 s" in retry2, "retry countdown", (retry1, retry2))
    check(card.locator(".jt-progress").inner_text().strip() == "step 1\nstep 2", "streamed progress lines", card.locator(".jt-progress").inner_text())


def test_hostile(page: Page) -> None:
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
        {"kind": "block", "id": "h10", "timestamp": t, "metadata": {"type": HOSTILE[0]}},
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
    page.evaluate("harness.frame()")
    r = harness_root(i)
    # click every link in the view (javascript: ones would fire here)
    for link in page.locator(f"{r} a").all():
        link.click(modifiers=["Control"], no_wait_after=True)
    page.wait_for_timeout(500)
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
            for name, test in [
                ("conversation", lambda: test_conversation(page, args.screenshot)),
                ("buttons", lambda: test_buttons(page)),
                ("draft protocol", lambda: test_draft_protocol(page)),
                ("reasoning modes", lambda: test_reasoning_modes(page)),
                ("timers", lambda: test_timers(page)),
                ("stream", lambda: test_stream(page, args.realtime)),
                ("hostile", lambda: test_hostile(page)),
            ]:
                print(f"--- {name}")
                test()
            check(errors == [], "no page errors or dialogs", errors[:5])
            print("global stats:", json.dumps(page.evaluate("() => { const s = {...window.__jupyter_turns_stats}; delete s.reset; return s; }")))
            browser.close()
    finally:
        server.shutdown()
    print(f"{len(FAILURES)} failed" if FAILURES else "all checks passed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
