"""A terminal agent in the live notebook through ``%chat serve``, in JupyterLab and Notebook 7, as
a person sees it: the agent's edit shows its diff in the serve cell, Approve applies it (the
cell says "edited from Claude Code · call 2"), the card's Undo reverts it, and what the user
typed meanwhile in another cell stays. And the real Claude Code CLI (print mode, against the
local Messages API server) reads the notebook, inserts and runs a cell that a person approves
in the page; the cell, its output, its badge and the serve cell's record are on the page and in
the saved file."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from playwright.sync_api import Browser, Locator, expect

from jupyter_turns.serve.runtime import RuntimeInfo, find
from tests.kernel.serving import in_background, text_of
from tests.support.anthropic_server import AnthropicTestServer, Reply
from tests.support.anthropic_sse import sse_text_response, sse_tool_use_response

from .chat import (
    LOAD,
    PAGES,
    RECORD_MIME,
    cell_source,
    open_page,
    reload_page,
    run_setup,
    tool_card,
    wait_widget,
)
from .lab import Lab, browser_context

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
AGENTS = ROOT / "tests" / "agents"  # package.json: the pinned CLI; ./dev.sh test installs it


def _served(lab: Lab, name: str, timeout: float = 60) -> RuntimeInfo:
    """The server the notebook's kernel started, from the runtime folder (its token is there)."""
    runtime, wanted = Path(lab.server.env["JUPYTER_RUNTIME_DIR"]), lab.path(name).resolve()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for info in find(runtime).servers:
            if info.notebook and Path(info.notebook).resolve() == wanted:
                return info
        lab.page.wait_for_timeout(100)
    raise AssertionError(f"no server for {wanted} in {runtime}")


async def _edit(session: ClientSession) -> Any:
    await session.call_tool("notebook_cells", {})
    return await session.call_tool("edit_cell", {"index": 2, "source": "rate = 0.5"})


async def _edit_again(session: ClientSession) -> Any:
    await session.call_tool("notebook_cells", {})
    return await session.call_tool("edit_cell", {"index": 2, "source": "rate = 0.9"})


@pytest.mark.parametrize("page", PAGES)
def test_an_agents_edit_is_a_diff_card_approved_in_the_page_and_undone(lab: Lab, page: str) -> None:
    lab.write_notebook("served.ipynb", [LOAD, "%chat serve", "rate = 0.1", "notes = 'draft'"])
    open_page(lab, page, "served.ipynb")
    run_setup(lab, 2)
    root = wait_widget(lab, 1)
    info = _served(lab, "served.ipynb")
    # the user types in another cell, and does not save
    editor = lab.cell(3).locator(".cm-content")
    editor.click()
    lab.page.keyboard.press("Control+End")
    lab.page.keyboard.type("  # mine")
    lab.page.keyboard.press("Escape")

    edited = in_background(info, _edit)
    card = tool_card(root, "edit_cell")
    expect(card.locator(".jt-prompt-asker")).to_have_text("Claude Code · call 2 wants to:")
    expect(card.locator(".jt-prompt-title")).to_have_text("Edit the 3rd cell?")
    expect(card.locator(".jt-diff-del")).to_have_text("-rate = 0.1")
    expect(card.locator(".jt-diff-add")).to_have_text("+rate = 0.5")
    card.get_by_role("button", name="Apply edit").click()
    expect(cell_source(lab, 2)).to_have_text("rate = 0.5")
    badge = lab.cell(2).locator(".jt-provenance-badge")
    expect(badge).to_have_text("edited from Claude Code · call 2")
    result = edited.result(timeout=60)
    assert not result.is_error, text_of(result)
    expect(card.locator(".jt-tool-asker")).to_have_text("Claude Code · call 2")

    card.get_by_role("button", name="Undo").click()
    expect(cell_source(lab, 2)).to_have_text("rate = 0.1")
    expect(badge).to_have_count(0)
    expect(card.locator(".jt-undo")).to_contain_text("restored the edited cell's earlier text")
    expect(editor).to_have_text("notes = 'draft'  # mine")  # the user's typing is kept
    assert lab.unexpected_page_errors() == []


def _live(lab: Lab, index: int) -> Locator:
    """The live chat view of cell ``index`` (not a saved record), once it rendered."""
    root = lab.cell_output(index).locator(".jt-root:not(.jt-saved)")
    expect(root).to_have_count(1)
    return root


def _approve_in(pages: tuple[Lab, ...], by: Lab, source: str) -> None:
    """The waiting edit's card shows in every page; ``by`` applies it; every page then sees
    the edited cell and the card answered."""
    for each in pages:
        each.page.bring_to_front()
        card = tool_card(_live(each, 1), "edit_cell").last
        expect(card.locator(".jt-prompt-title")).to_have_text("Edit the 3rd cell?")
        expect(card.locator(".jt-diff-add")).to_have_text(f"+{source}")
    by.page.bring_to_front()
    tool_card(_live(by, 1), "edit_cell").last.get_by_role("button", name="Apply edit").click()
    for each in pages:
        each.page.bring_to_front()
        expect(cell_source(each, 2)).to_have_text(source)
        expect(_live(each, 1).locator(".jt-prompt")).to_have_count(0)


@pytest.mark.both_collaboration_modes
def test_a_second_page_and_a_reloaded_one_follow_the_serve_session_to_its_record(
    lab: Lab, browser: Browser
) -> None:
    lab.write_notebook("two.ipynb", [LOAD, "%chat serve", "rate = 0.1", "%chat serve stop"])
    lab.open("two.ipynb")
    run_setup(lab, 2)
    wait_widget(lab, 1)
    info = _served(lab, "two.ipynb")
    lab.save()  # the file holds the serve cell's widget and its live record
    with browser_context(browser) as tab:  # a second window, opened while the server runs
        second = Lab(lab.server, tab, lab.folder)
        try:
            reload_page(second, "notebook7", "two.ipynb")
            wait_widget(second, 1)
            _live(second, 1)  # not the live record, as a turn that did not finish
            edited = in_background(info, _edit)
            _approve_in((lab, second), second, "rate = 0.5")  # answered in the second page
            result = edited.result(timeout=60)
            assert not result.is_error, text_of(result)
            lab.save()  # without collaboration each page has its copy: the reload reads this
            lab.reload("two.ipynb")  # the page that ran %chat serve is loaded again
            wait_widget(lab, 1)
            asker = tool_card(_live(lab, 1), "edit_cell").locator(".jt-tool-asker")
            expect(asker).to_have_text("Claude Code · call 2")  # the calls so far
            edited = in_background(info, _edit_again)
            _approve_in((lab, second), lab, "rate = 0.9")  # answered in the reloaded page
            result = edited.result(timeout=60)
            assert not result.is_error, text_of(result)
            expect(lab.run_cell(3)).to_contain_text("The MCP server stopped after 4 calls.")
            for each in (lab, second):  # both end with the same record, as the kernel has it
                each.page.bring_to_front()
                saved = each.cell_output(1).locator(".jt-root.jt-saved")
                expect(saved).to_have_count(1)
                expect(tool_card(saved, "edit_cell")).to_have_count(2)
                expect(tool_card(saved, "notebook_cells")).to_have_count(2)
                expect(each.cell_output(1).locator(".jt-root:not(.jt-saved)")).to_have_count(0)
                assert "did not finish" not in each.cell(1).inner_text()
            assert lab.unexpected_page_errors() == [] and second.unexpected_page_errors() == []
        finally:
            second.close()
    lab.page.bring_to_front()
    lab.save()
    saved_file = lab.read_notebook("two.ipynb")
    (record,) = [  # the serve record, once in the file, finished
        o["data"][RECORD_MIME]
        for cell in saved_file.cells
        for o in cell.get("outputs", [])
        if RECORD_MIME in o.get("data", {})
    ]
    assert record.get("live") is not True and record["serve"]["calls"] == 4, record["serve"]
    ids = [e["id"] for e in record["events"]]
    assert len(ids) == len(set(ids)) == 8, record["events"]  # each call's request and response
    assert saved_file.cells[2].source == "rate = 0.9"


def _claude() -> Path:
    found = AGENTS / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
    if not found.exists():  # not a reason to skip: ./dev.sh test installs it
        raise AssertionError(f"{found} is missing: run `npm install` in {AGENTS}")
    return found


CODE = "answer = 6 * 7\nanswer"


def _replies() -> list[Reply]:
    """What the scripted model answers Claude Code, cycle by cycle."""
    cells = sse_tool_use_response("mcp__jupyter__notebook_cells", {}, tool_id="toolu_read")
    insert = sse_tool_use_response(
        "mcp__jupyter__insert_cell", {"source": CODE, "run": True}, tool_id="toolu_insert"
    )
    done = sse_text_response(["Inserted and ran the cell: 42."])
    return [Reply.sse(body) for body in (cells, insert, done)]


def _run_claude(info: RuntimeInfo, api: AnthropicTestServer, home: Path) -> subprocess.Popen[str]:
    config = home / "mcp.json"
    server = {"type": "http", "url": info.url, "headers": {"Authorization": f"Bearer {info.token}"}}
    config.write_text(json.dumps({"mcpServers": {"jupyter": server}}))
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "sk-ant-test-key",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "MCP_TOOL_TIMEOUT": "600000",
    }
    command = [
        str(_claude()),
        "-p",
        "Add a cell that computes the answer, and run it.",
        "--output-format",
        "json",
        "--mcp-config",
        str(config),
        "--allowedTools",
        "mcp__jupyter__notebook_cells mcp__jupyter__insert_cell",
    ]
    return subprocess.Popen(
        command, cwd=home, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_claude_code_reads_inserts_and_runs_a_cell_a_person_approves(
    lab: Lab, tmp_path: Path
) -> None:
    lab.write_notebook("agent.ipynb", [LOAD, "%chat serve", "total = 40", "%chat serve stop"])
    lab.open("agent.ipynb")
    run_setup(lab, 3)
    root = wait_widget(lab, 1)
    info = _served(lab, "agent.ipynb")
    home = tmp_path / "home"
    home.mkdir()
    with AnthropicTestServer() as api:
        api.enqueue(*_replies())
        claude = _run_claude(info, api, home)
        try:
            card = tool_card(root, "insert_cell")
            expect(card.locator(".jt-prompt-asker")).to_have_text(
                "Claude Code · call 2 wants to:", timeout=120_000
            )
            card.get_by_role("button", name="Insert", exact=True).click()
            out, err = claude.communicate(timeout=180)
        finally:
            if claude.poll() is None:
                claude.kill()
        requests = [r.body for r in api.requests if r.path.startswith("/v1/messages")]
    assert claude.returncode == 0, (out, err)
    answer = json.loads(out)
    assert answer["result"] == "Inserted and ran the cell: 42."
    read = _tool_result(requests, "toolu_read")
    assert "total = 40" in read and "%chat serve" in read
    inserted_result = _tool_result(requests, "toolu_insert")
    assert "Inserted a code cell, the 3rd cell (index 2), and ran it" in inserted_result

    expect(cell_source(lab, 2)).to_have_text("answer = 6 * 7answer")  # one .cm-line per line
    expect(lab.cell_output(2).locator(".jp-OutputArea-output")).to_have_text("42")
    expect(lab.cell(2).locator(".jt-provenance-badge")).to_have_text("from Claude Code · call 2")
    expect(tool_card(root, "notebook_cells").locator(".jt-tool-asker")).to_have_text(
        "Claude Code · call 1"
    )
    expect(lab.run_cell(4)).to_contain_text("The MCP server stopped after 2 calls.")
    expect(lab.cell_output(1).locator(".jt-root.jt-saved")).to_have_count(1)  # the record
    lab.save()
    saved = lab.read_notebook("agent.ipynb")
    inserted = saved.cells[2]
    assert inserted.source == CODE
    stamp = inserted.metadata["jupyter_turns"]["provenance"]
    assert (stamp["client"], stamp["call"], stamp["tool"]) == ("Claude Code", 2, "insert_cell")
    record = next(
        o["data"][RECORD_MIME] for o in saved.cells[1].outputs if RECORD_MIME in o.get("data", {})
    )
    requests_saved = [e for e in record["events"] if e["kind"] == "tool_call_request"]
    assert [(e["name"], e["metadata"]["client"]) for e in requests_saved] == [
        ("notebook_cells", "Claude Code"),
        ("insert_cell", "Claude Code"),
    ]
    approved = next(
        e
        for e in record["events"]
        if e["kind"] == "tool_call_response" and e["call_id"] == requests_saved[1]["call_id"]
    )
    assert (
        approved["decisions"][0]["action"] == "approved"
        and approved["decisions"][0]["by"] == "user"
    )
    assert info.token not in json.dumps(saved)  # the token is never saved
    assert lab.unexpected_page_errors() == []


def _tool_result(requests: list[Any], tool_id: str) -> str:
    for body in requests:
        for message in body.get("messages", []):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_id:
                    inner = block.get("content")
                    if isinstance(inner, list):
                        return "".join(part.get("text", "") for part in inner)
                    return str(inner)
    raise AssertionError(f"no tool_result for {tool_id} in {len(requests)} requests")
