"""Harness checks of every control: the message each button, key and form sends, once."""

from __future__ import annotations

from typing import Any

from harness_lib import check, conversation, mount, root, sent_after, verify
from playwright.sync_api import Page, expect


def _fresh(page: Page, prompts: list[Any], status: str = "executing") -> tuple[int, str]:
    state = conversation()
    state["prompts"] = prompts
    state["status"] = {"state": status, "retry": None}
    i = mount(page, state)
    page.evaluate("harness.frame()")
    return i, root(i)


def check_buttons(page: Page) -> None:
    i, r = _fresh(page, conversation()["prompts"])  # type: ignore[arg-type]
    prompt = page.locator(f"{r} .jt-prompt-approval")
    approve = prompt.get_by_role("button", name="Approve")
    approve.click()
    verify("buttons disabled after a click", lambda: expect(approve).to_be_disabled())
    approve.click(force=True)
    prompt.get_by_role("button", name="Skip").click(force=True)
    msgs = sent_after(page, i, 1)
    check(msgs == [{"type": "approval", "action": "approved", "prompt_id": "p1"}], "approve sends once; buttons disabled after", msgs)

    approval = conversation()["prompts"][0]  # type: ignore[index]
    for label, expected in [("Skip", "skipped"), ("Always allow this tool in this thread", "always_allowed")]:
        j, r = _fresh(page, [approval])
        page.locator(f"{r} .jt-prompt").get_by_role("button", name=label, exact=True).click()
        got = sent_after(page, j, 1)
        check(got == [{"type": "approval", "action": expected, "prompt_id": "p1"}], f"approval {expected}", got)

    _check_edit(page, approval)

    # Enter on the focused prompt approves
    j, r = _fresh(page, [approval])
    page.locator(f"{r} .jt-prompt").focus()
    page.keyboard.press("Enter")
    got = sent_after(page, j, 1)
    check(got == [{"type": "approval", "action": "approved", "prompt_id": "p1"}], "Enter approves the focused prompt", got)

    result = {"id": "p2", "type": "result", "call_id": "c2", "name": "run_python", "content": "42", "is_error": False}
    for label, expected in [("Deliver", {"action": "delivered"}), ("Don't deliver", {"action": "withheld"})]:
        j, r = _fresh(page, [result])
        page.locator(f"{r} .jt-prompt").get_by_role("button", name=label, exact=True).click()
        got = sent_after(page, j, 1)
        check(got == [{"type": "result", "prompt_id": "p2", **expected}], f"result {label}", got)
    j, r = _fresh(page, [result])
    p = page.locator(f"{r} .jt-prompt")
    p.get_by_role("button", name="Edit", exact=True).click()
    p.locator("textarea").fill("43")
    p.get_by_role("button", name="Deliver edited result").click()
    got = sent_after(page, j, 1)
    check(got == [{"type": "result", "action": "result_edited", "content": "43", "prompt_id": "p2"}], "result edit", got)

    j, r = _fresh(page, [{"id": "p3", "type": "inquiry", "call_id": "c2", "question": "Which?", "choices": ["red", "blue"]}])
    page.locator(f"{r} .jt-prompt").get_by_role("button", name="blue").click()
    got = sent_after(page, j, 1)
    check(got == [{"type": "inquiry", "answer": "blue", "prompt_id": "p3"}], "inquiry choice", got)
    j, r = _fresh(page, [{"id": "p4", "type": "inquiry", "call_id": "c2", "question": "Name?", "choices": None}])
    page.locator(f"{r} .jt-prompt textarea").fill("Ada")
    page.locator(f"{r} .jt-prompt").get_by_role("button", name="Answer").click()
    got = sent_after(page, j, 1)
    check(got == [{"type": "inquiry", "answer": "Ada", "prompt_id": "p4"}], "inquiry free text", got)

    _check_menus(page)


def _check_edit(page: Page, approval: dict[str, Any]) -> None:
    """A code argument is edited as code (its own text area, sent exactly); other arguments as
    JSON, checked against the schema before anything is sent."""
    j, r = _fresh(page, [approval])
    p = page.locator(f"{r} .jt-prompt")
    p.get_by_role("button", name="Edit arguments").click()
    code = p.locator('textarea[data-role="code-arg:code"]')
    run = p.get_by_role("button", name="Run with these arguments")
    verify("edit: the code argument is its own text, not JSON", lambda: expect(code).to_have_value("df.plot()"))
    code.fill("df.head()\n  # kept exactly")
    run.click()
    got = sent_after(page, j, 1)
    sent = {"code": "df.head()\n  # kept exactly"}
    check(got == [{"type": "approval", "action": "edited", "arguments": sent, "prompt_id": "p1"}], "edit sends the code exactly", got)

    # kernel rejects the edit: same id, error set -> rebuilt, enabled, typed text kept
    page.evaluate("""(j) => { const m = harness.view(j).model; m.set('prompts', [{...m.get('prompts')[0], error: 'code must not be empty'}]); }""", j)
    verify(
        "rejected edit reopens prompt with error",
        lambda: (expect(p.locator(".jt-prompt-error")).to_have_text("code must not be empty"), expect(p.get_by_role("button", name="Approve")).to_be_enabled()),
    )
    verify("rejected edit keeps the typed arguments", lambda: expect(page.locator(f'{r} .jt-prompt textarea[data-role="code-arg:code"]')).to_have_value(sent["code"]))

    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    plain = {**approval, "id": "p5", "name": "read_file", "arguments": {"path": "a.csv"}, "schema": schema}
    j, r = _fresh(page, [plain])
    p = page.locator(f"{r} .jt-prompt")
    p.get_by_role("button", name="Edit arguments").click()
    area = p.locator("textarea").last
    run = p.get_by_role("button", name="Run with these arguments")
    validation = p.locator(".jt-validation")
    area.fill("{not json")
    verify("edit: invalid JSON blocks sending", lambda: (expect(validation).to_contain_text("not valid JSON"), expect(run).to_be_disabled()))
    area.fill('{"path": 5}')
    verify("edit: schema type check", lambda: (expect(validation).to_contain_text("expected string"), expect(run).to_be_disabled()))
    area.fill("{}")
    verify("edit: required check", lambda: (expect(validation).to_contain_text('missing required "path"'), expect(run).to_be_disabled()))
    area.fill('{"path": "b.csv"}')
    run.click()
    got = sent_after(page, j, 1)
    check(got == [{"type": "approval", "action": "edited", "arguments": {"path": "b.csv"}, "prompt_id": "p5"}], "edit sends parsed arguments", got)


def _check_menus(page: Page) -> None:
    streaming_menu = {"id": "m1", "type": "interrupt", "context": "streaming", "stream_alive": False, "reason": "Stop button"}
    for label, expected in [("Stop", {"action": "stop"}), ("Abort", {"action": "abort"}), ("Continue", {"action": "continue"})]:
        j, r = _fresh(page, [streaming_menu], "interrupted_streaming")
        page.locator(f"{r} .jt-prompt").get_by_role("button", name=label, exact=True).click()
        got = sent_after(page, j, 1)
        check(got == [{"type": "interrupt", "prompt_id": "m1", **expected}], f"menu (streaming) {label}", got)
    j, r = _fresh(page, [streaming_menu], "interrupted_streaming")
    verify("Stop stays one click away while the menu is open", lambda: expect(page.locator(f"{r} .jt-stop")).to_be_enabled())
    page.locator(f"{r} .jt-prompt textarea").fill("Shorter, please")
    page.locator(f"{r} .jt-prompt").get_by_role("button", name="Reply", exact=True).click()
    got = sent_after(page, j, 1)
    check(got == [{"type": "interrupt", "action": "reply", "text": "Shorter, please", "prompt_id": "m1"}], "menu reply with text", got)
    tool_menu = {"id": "m2", "type": "interrupt", "context": "tool", "stream_alive": False, "reason": None}
    for label, action in [("Stop", "stop"), ("Restart", "restart"), ("Continue", "continue")]:
        j, r = _fresh(page, [tool_menu], "interrupted_tool")
        page.locator(f"{r} .jt-prompt").get_by_role("button", name=label, exact=True).click()
        got = sent_after(page, j, 1)
        check(got == [{"type": "interrupt", "action": action, "prompt_id": "m2"}], f"menu (tool) {label}", got)

    j, r = _fresh(page, [], "streaming")
    page.locator(f"{r} .jt-stop").click()
    page.locator(r).focus()
    page.keyboard.press("Escape")
    got = sent_after(page, j, 2)
    stop_then_menu = [{"type": "interrupt_request", "action": "stop"}, {"type": "interrupt_request"}]
    check(got == stop_then_menu, "Stop stops in one click; Esc opens the menu", got)
    j, r = _fresh(page, [], "complete")
    verify("no Stop button when the turn is complete", lambda: expect(page.locator(f"{r} .jt-stop")).to_be_hidden())
    _check_budget(page)


def _check_budget(page: Page) -> None:
    text = "Spent $0.48 of $0.50 (this turn's budget); next call ≈ $0.06 — estimates from list prices."
    budget = {"id": "b1", "type": "budget", "scope": "turn", "spent": 0.48, "limit": 0.5, "next_cost": 0.06, "estimated_by": "token count", "text": text}
    for label, action in [("Continue", "continue"), ("Stop", "stop")]:
        j, r = _fresh(page, [budget], "budget_paused")
        prompt = page.locator(f"{r} .jt-prompt-budget")
        verify("the budget prompt says what was spent and what comes", lambda: expect(prompt).to_contain_text(text))
        prompt.get_by_role("button", name=label, exact=True).click()
        got = sent_after(page, j, 1)
        check(got == [{"type": "budget", "action": action, "prompt_id": "b1"}], f"budget {label}", got)
    state = conversation()
    state["usage"] = {"input_tokens": 120, "output_tokens": 40, "context": {"used": 184_000, "window": 200_000}}
    i = mount(page, state)
    page.evaluate("harness.frame()")
    gauge = page.locator(f"{root(i)} .jt-footer .jt-gauge")
    verify("the context gauge in the footer", lambda: expect(gauge).to_have_text("184k / 200k context"))
    verify("the gauge turns red near the window", lambda: expect(gauge).to_have_class("jt-gauge jt-gauge-full"))
