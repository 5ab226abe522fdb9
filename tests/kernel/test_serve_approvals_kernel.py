"""A terminal agent's calls through ``%chat serve`` ask in the page, as a ``%%chat`` turn's do:
the card names the client, Approve inserts and runs the cell through the page (stamped "from
Claude Code · call 2"), ``%chat undo`` takes it back, Skip and ■ Stop tell the agent it was
declined, a cell changed since it was read is refused with its current text, progress keeps a
waiting client informed, a cancelled ``run_cell`` is interrupted, and a headless kernel
declines what would ask. The kernel plays against the real ``mcp`` SDK client over HTTP; the
test plays the page (tests/support/fake_page.py answers what the extension answers)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import ClientSession

from jupyter_turns.serve.runtime import find
from tests.support.fake_page import FakePage

from .kernel import KernelDriver, ready_chat
from .serving import PagePlayer, call, in_background, run_agent, start_serving, text_of

pytestmark = pytest.mark.kernel


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    return tmp_path / "runtime"


def _lab(tmp_path: Path, runtime: Path) -> KernelDriver:
    env = {"JPY_SESSION_NAME": str(tmp_path / "nb.ipynb"), "JUPYTER_RUNTIME_DIR": str(runtime)}
    kernel = KernelDriver(env=env)
    kernel.run("%load_ext jupyter_turns")
    return kernel


def _serve(kernel: KernelDriver, page: FakePage, runtime: Path, line: str = "%chat serve") -> Any:
    cell = kernel.execute(line, cell_id=page.chat_id)
    kernel.wait(lambda: cell.done, 60, "%chat serve")
    servers = find(runtime).servers
    assert len(servers) == 1, cell.outputs
    return servers[0], ready_chat(kernel)


def _click(kernel: KernelDriver, widget: Any, prompt: dict[str, Any], action: str) -> None:
    kernel.send_custom(
        widget,
        {"type": "approval", "prompt_id": prompt["id"], "action": action, "who": {"name": "Ada"}},
    )


def test_an_approved_insert_runs_in_the_page_is_stamped_recorded_and_undone(
    tmp_path: Path, runtime: Path
) -> None:
    page = FakePage("import math", "%chat serve", "print('mine')", chat=1)
    kernel = _lab(tmp_path, runtime)
    try:
        player = PagePlayer(kernel, page)
        info, widget = _serve(kernel, page, runtime)

        async def agent(session: ClientSession) -> list[types.CallToolResult]:
            cells = await session.call_tool("notebook_cells", {})
            made = await session.call_tool(
                "insert_cell", {"source": "answer = 6 * 7\nanswer", "run": True}
            )
            return [cells, made]

        future = in_background(info, agent)
        prompt = kernel.wait(lambda: kernel.prompt(widget, "approval"), 60, "the approval")
        _click(kernel, widget, prompt, "approved")
        kernel.wait(future.done, 60, "the agent's results")
        cells, made = future.result()
        inserted = dict(page.cells[2])
        undone = kernel.run("%chat undo").stdout()
        after_undo = page.sources()
        record = kernel.wait(
            lambda: _has_undo(player.records.get(page.chat_id)), 30, "the undo in the record"
        )
    finally:
        kernel.close()
    assert prompt["asker"] == "Claude Code · call 2"
    assert prompt["name"] == "insert_cell" and prompt["builtin"] is True
    assert "print('mine')" in text_of(cells)
    assert not made.is_error, text_of(made)
    assert "Inserted a code cell, the 3rd cell (index 2), and ran it" in text_of(made)
    assert "42" in text_of(made)
    assert inserted["source"] == "answer = 6 * 7\nanswer"
    assert inserted["outputs"][-1]["data"]["text/plain"] == "42"
    stamp = inserted["provenance"]
    assert (stamp["client"], stamp["call"], stamp["tool"]) == ("Claude Code", 2, "insert_cell")
    assert stamp["thread"] == "serve" and stamp["who"] == {"name": "Ada", "username": ""}
    assert undone.startswith("Undid insert_cell"), undone
    assert after_undo == ["import math", "%chat serve", "print('mine')"]
    kinds = [e["kind"] for e in record["events"]]
    assert kinds == [
        "tool_call_request",
        "tool_call_response",
        "tool_call_request",
        "tool_call_response",
        "undo",
    ]
    request = record["events"][2]
    assert request["metadata"] == {"client": "Claude Code", "call": 2}
    decision = record["events"][3]["decisions"][0]
    assert decision["action"] == "approved" and decision["who"]["name"] == "Ada"
    assert record["serve"]["clients"] == ["Claude Code"] and record["serve"]["calls"] == 2


def _has_undo(record: dict[str, Any] | None) -> dict[str, Any] | None:
    if record and any(e["kind"] == "undo" for e in record["events"]):
        return record
    return None


def test_skip_and_stop_tell_the_agent_it_was_declined_and_a_stale_edit_is_refused(
    tmp_path: Path, runtime: Path
) -> None:
    page = FakePage("x = 1", "%chat serve", "print(x)", chat=1)
    kernel = _lab(tmp_path, runtime)
    try:
        PagePlayer(kernel, page)
        info, widget = _serve(kernel, page, runtime)
        read = run_agent(kernel, info, call("notebook_cells"))
        skipped = in_background(info, call("edit_cell", {"index": 2, "source": "print(x + 1)"}))
        prompt = kernel.wait(lambda: kernel.prompt(widget, "approval"), 60, "the edit's card")
        _click(kernel, widget, prompt, "skipped")
        kernel.wait(skipped.done, 60, "the skipped call")
        stopped = in_background(info, call("run_cell", {"index": 2}))
        kernel.wait(lambda: kernel.prompt(widget, "approval"), 60, "the run's card")
        kernel.send_custom(widget, {"type": "interrupt_request", "action": "stop"})
        kernel.wait(stopped.done, 60, "the stopped call")
        page.cells[2]["source"] = "print(x * 100)  # the user typed this"
        stale = run_agent(kernel, info, call("edit_cell", {"index": 2, "source": "print(2)"}))
        prompts_left = kernel.prompt(widget, "approval")
    finally:
        kernel.close()
    assert "print(x)" in text_of(read)
    assert prompt["diff" if "diff" in prompt else "preview"] is not None
    declined = skipped.result()
    assert declined.is_error and "the user declined the call in the notebook" in text_of(declined)
    halted = stopped.result()
    assert halted.is_error
    assert "declined by the user in the notebook before it ran" in text_of(halted)
    assert stale.is_error and "print(x * 100)  # the user typed this" in text_of(stale)
    assert prompts_left is None  # the stale edit never asked
    assert page.sources()[2] == "print(x * 100)  # the user typed this"


def test_progress_while_it_waits_and_a_cancelled_run_cell_is_interrupted(
    tmp_path: Path, runtime: Path
) -> None:
    slow = "import time\nfor step in range(3000):\n    time.sleep(0.01)\nprint('finished')"
    page = FakePage("%chat serve", slow, chat=0)
    kernel = _lab(tmp_path, runtime)
    approved = threading.Event()
    progress: list[str] = []

    async def agent(session: ClientSession) -> str:
        await session.call_tool("notebook_cells", {})

        async def noted(value: float, total: float | None, message: str | None) -> None:
            progress.append(message or "")

        running = asyncio.ensure_future(
            session.call_tool("run_cell", {"index": 1}, progress_callback=noted)
        )
        await asyncio.to_thread(approved.wait, 60)
        await asyncio.sleep(2)  # the cell's loop runs now
        running.cancel()
        try:
            await running
        except asyncio.CancelledError:
            return "cancelled"
        return "not cancelled"

    try:
        player = PagePlayer(kernel, page)
        info, widget = _serve(kernel, page, runtime)
        outcome = in_background(info, agent)
        prompt = kernel.wait(lambda: kernel.prompt(widget, "approval"), 60, "the run's card")
        kernel.wait(lambda: progress, 30, "a progress notification while it waits")
        waiting = list(progress)
        _click(kernel, widget, prompt, "approved")
        started = time.monotonic()
        approved.set()
        kernel.wait(outcome.done, 60, "the agent's cancel")
        record = kernel.wait(
            lambda: _response(player.records.get(page.chat_id), "run_cell"), 30, "the response"
        )
        took = time.monotonic() - started
        after = kernel.run("print(step < 2999)").stdout().strip()
    finally:
        kernel.close()
    assert waiting[0] == "waiting for the user's approval in the notebook"
    assert outcome.result() == "cancelled"
    assert record["status"] == "cancelled" and record["is_error"] is True
    assert "cancelled by Claude Code" in record["content"]
    assert took < 25  # the loop alone takes 30 s: it was interrupted
    assert after == "True"  # stopped part way, and the kernel answers
    assert "finished" not in str(page.cells[1]["outputs"])


def test_a_headless_kernel_declines_what_would_ask_and_still_reads(
    tmp_path: Path, runtime: Path
) -> None:
    kernel = KernelDriver(env={"JUPYTER_RUNTIME_DIR": str(runtime)})
    try:
        kernel.run("%load_ext jupyter_turns")
        kernel.run("secret_sauce = 'ketchup'")
        info = start_serving(kernel, runtime, "%chat serve --builtins python")
        ran = run_agent(kernel, info, call("python", {"code": "print(1)"}))
        read = run_agent(kernel, info, call("inspect", {"name": "secret_sauce"}))
    finally:
        kernel.close()
    assert ran.is_error and "no notebook page is open to approve it" in text_of(ran)
    assert "ketchup" in text_of(read)


def _response(record: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    if not record:
        return None
    calls = {e["call_id"] for e in record["events"] if e.get("name") == name}
    return next(
        (
            e
            for e in record["events"]
            if e["kind"] == "tool_call_response" and e["call_id"] in calls
        ),
        None,
    )


_PICTURE = (
    "import io\n"
    "from IPython.display import Image, display\n"
    "from PIL import Image as Picture\n"
    "png = io.BytesIO()\n"
    "Picture.new('RGB', (12, 8), (0, 120, 200)).save(png, format='PNG')\n"
    "display(Image(data=png.getvalue()))"
)


def _next_prompt(kernel: KernelDriver, widget: Any, answered: list[str], what: str) -> Any:
    """The first approval card not answered yet (an answered one leaves the state soon)."""
    prompt = kernel.wait(
        lambda: next(
            (
                p
                for p in widget.state.get("prompts", [])
                if p["type"] == "approval" and p["id"] not in answered
            ),
            None,
        ),
        60,
        what,
    )
    answered.append(prompt["id"])
    return prompt


def test_edit_always_allow_images_moves_and_deletes_over_mcp(tmp_path: Path, runtime: Path) -> None:
    """Edit runs what the person wrote (the record says who edited); the image a cell shows
    comes back as MCP image content; "Always allow" of move_cell stops its cards for the rest
    of the session while delete_cell still asks."""
    page = FakePage("import math", "%chat serve", "print('mine')", chat=1)
    kernel = _lab(tmp_path, runtime)
    results: dict[str, types.CallToolResult] = {}

    async def agent(session: ClientSession) -> None:
        steps = [
            ("insert", "insert_cell", {"source": "print('draft')", "run": True}),
            ("output", "cell_output", {"index": 2}),
            ("cells", "notebook_cells", {}),
            ("move", "move_cell", {"index": 2, "to": 0}),
            ("move again", "move_cell", {"index": 3, "to": 1}),
            ("delete", "delete_cell", {"index": 1}),
        ]
        for key, name, arguments in steps:
            results[key] = await session.call_tool(name, arguments)

    try:
        player = PagePlayer(kernel, page)
        info, widget = _serve(kernel, page, runtime)
        future = in_background(info, agent)
        answered: list[str] = []
        insert = _next_prompt(kernel, widget, answered, "the insert's card")
        kernel.send_custom(
            widget,
            {
                "type": "approval",
                "prompt_id": insert["id"],
                "action": "edited",
                "arguments": {"source": _PICTURE, "run": True},
                "who": {"name": "Ada"},
            },
        )
        move = _next_prompt(kernel, widget, answered, "the move's card")
        _click(kernel, widget, move, "always_allowed")
        delete = _next_prompt(kernel, widget, answered, "the delete's card")  # not the 2nd move
        _click(kernel, widget, delete, "approved")
        kernel.wait(future.done, 60, "the agent's calls")
        future.result()
        record = kernel.wait(
            lambda: _response(player.records.get(page.chat_id), "delete_cell"), 30, "the record"
        )
        events = player.records[page.chat_id]["events"]
    finally:
        kernel.close()
    assert [p["name"] for p in (insert, move, delete)] == [
        "insert_cell",
        "move_cell",
        "delete_cell",
    ]
    assert all(not r.is_error for r in results.values()), {
        k: text_of(r) for k, r in results.items()
    }
    # the edited arguments ran, and the record says who edited them
    decisions: dict[str, list[Any]] = {
        e["name"]: [] for e in events if e["kind"] == "tool_call_request"
    }
    names = {e["call_id"]: e["name"] for e in events if e["kind"] == "tool_call_request"}
    for e in events:
        if e["kind"] == "tool_call_response":
            decisions[names[e["call_id"]]].append(e["decisions"])
    edited = decisions["insert_cell"][0][0]
    assert edited["action"] == "edited" and edited["by"] == "user"
    assert edited["who"]["name"] == "Ada" and "Picture.new" in edited["detail"]
    assert "print('draft')" not in str(page.sources())
    # the image the cell shows, as MCP image content
    images = [c for c in results["output"].content if isinstance(c, types.ImageContent)]
    assert len(images) == 1 and images[0].mime_type == "image/png"
    assert images[0].data.startswith("iVBORw0KGgo")  # PNG, base64
    assert "image 1 attached" in text_of(results["output"])
    # always allow: the second move ran without a card, recorded as the user's standing choice
    first_move, second_move = decisions["move_cell"]
    assert first_move[0]["action"] == "always_allowed" and first_move[0]["who"]["name"] == "Ada"
    assert [(d["action"], d["by"], d.get("detail")) for d in second_move] == [
        ("approved", "user", "always allowed by you in this thread")
    ]
    assert decisions["delete_cell"][0][0]["action"] == "approved"
    assert record["status"] == "done"
    # moved to the top, the user's cell moved below it, then deleted: what is left
    assert page.sources() == [_PICTURE, "import math", "%chat serve"]
