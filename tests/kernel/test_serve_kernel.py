"""``%chat serve`` in a real kernel, reached by the real ``mcp`` SDK's client over HTTP: the tools
it lists and their annotations, a read call, who gets in (the token, Host, Origin), the kernel
usable while it listens, and its status and stop."""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types
import nbformat
import pytest
from mcp import ClientSession
from nbformat.v4 import new_code_cell, new_notebook, new_output

from jupyter_turns.model.events import ChatRequest, Message
from jupyter_turns.record.format import record_bundle, turn_record
from jupyter_turns.serve.calls import BEHIND_A_CELL
from jupyter_turns.serve.runtime import find

from .kernel import Cell, KernelDriver
from .serving import CODEX, call, start_serving, text_of, with_client

pytestmark = pytest.mark.kernel


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    return tmp_path / "runtime"


@pytest.fixture
def serving_kernel(tmp_path: Path, runtime: Path):  # type: ignore[no-untyped-def]
    kernel = KernelDriver(env={"JUPYTER_RUNTIME_DIR": str(runtime)})
    kernel.run("%load_ext jupyter_turns")
    yield kernel
    kernel.close()


def test_the_server_lists_the_notebook_tools_with_truthful_annotations_and_reads(
    serving_kernel: KernelDriver, runtime: Path
) -> None:
    kernel = serving_kernel
    kernel.run("import pandas as pd\nsales = pd.DataFrame({'region': ['n', 's'], 'x': [1, 2]})")
    info = start_serving(kernel, runtime)
    assert info.url.startswith("http://127.0.0.1:") and info.url.endswith("/mcp")
    file = next(runtime.glob("jupyter_turns-mcp-*.json"))
    assert file.stat().st_mode & 0o777 == 0o600

    async def use(session: ClientSession) -> tuple[types.ListToolsResult, types.CallToolResult]:
        return await session.list_tools(), await session.call_tool("inspect", {"name": "sales"})

    listed, inspected = with_client(info, use)
    tools = {t.name: t for t in listed.tools}
    assert sorted(tools) == sorted(
        [
            "notebook_cells",
            "cell_output",
            "variables",
            "inspect",
            "insert_cell",
            "edit_cell",
            "run_cell",
            "delete_cell",
            "move_cell",
        ]
    )  # python only with --builtins python
    read = tools["notebook_cells"].annotations
    assert read is not None and read.read_only_hint is True and read.idempotent_hint is True
    edit = tools["edit_cell"].annotations
    assert edit is not None and edit.read_only_hint is False and edit.destructive_hint is True
    insert = tools["insert_cell"].annotations
    assert insert is not None and insert.destructive_hint is False
    assert tools["insert_cell"].input_schema["required"] == ["source"]
    assert not inspected.is_error
    assert "DataFrame" in text_of(inspected) and "region" in text_of(inspected)


def test_only_the_token_of_this_server_gets_in_from_this_server_address(
    tmp_path: Path, runtime: Path
) -> None:
    kernels = [KernelDriver(env={"JUPYTER_RUNTIME_DIR": str(runtime / str(i))}) for i in (1, 2)]
    try:
        infos = []
        for i, kernel in enumerate(kernels, 1):
            kernel.run("%load_ext jupyter_turns")
            infos.append(start_serving(kernel, runtime / str(i)))
        first, second = infos
        base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "probe", "version": "1"},
            },
        }
        port = first.url.split(":")[2].split("/")[0]

        def post(headers: dict[str, str]) -> httpx.Response:
            return httpx.post(first.url, json=body, headers={**base, **headers}, timeout=30)

        bearer = {"Authorization": f"Bearer {first.token}"}
        answers = {
            "missing": post({}),
            "wrong": post({"Authorization": "Bearer " + "x" * len(first.token)}),
            "another server's": post({"Authorization": f"Bearer {second.token}"}),
            "basic": post({"Authorization": f"Basic {first.token}"}),
            "bad host": post({**bearer, "Host": f"evil.example:{port}"}),
            "bad origin": post({**bearer, "Origin": "http://evil.example"}),
            "other port origin": post({**bearer, "Origin": "http://127.0.0.1:8888"}),
            "right": post(bearer),
            "right from localhost": post(
                {**bearer, "Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}
            ),
        }
    finally:
        for kernel in kernels:
            kernel.close()
    codes = {name: answer.status_code for name, answer in answers.items()}
    assert codes == {
        "missing": 401,
        "wrong": 401,
        "another server's": 401,
        "basic": 401,
        "bad host": 421,
        "bad origin": 403,
        "other port origin": 403,
        "right": 200,
        "right from localhost": 200,
    }
    assert answers["missing"].headers["www-authenticate"] == "Bearer"
    assert "jupyter" in answers["right"].text  # the server's name in its initialize result


def test_the_kernel_stays_usable_while_it_serves_and_the_status_counts_calls(
    serving_kernel: KernelDriver, runtime: Path
) -> None:
    kernel = serving_kernel
    info = start_serving(kernel, runtime)
    assert kernel.run("x = 21 * 2\nprint(x)").stdout().strip() == "42"
    result = with_client(info, call("variables", {"pattern": "x"}))
    assert "x" in text_of(result) and "42" in text_of(result)
    status = kernel.run("%chat serve").stdout()
    assert info.url in status
    assert "Claude Code (1 call)" in status and "Calls: 1." in status
    assert "already runs" in str(kernel.run("%chat serve --tools read").outputs)
    stopped = kernel.run("%chat serve stop").stdout()
    assert stopped.strip() == "The MCP server stopped after 1 call."
    assert not list(runtime.glob("jupyter_turns-mcp-*.json"))
    with pytest.raises(httpx.ConnectError):
        httpx.post(info.url, json={}, timeout=5)
    assert kernel.run("print(x + 1)").stdout().strip() == "43"


def test_a_call_waits_behind_a_running_cell_and_the_client_is_told(
    serving_kernel: KernelDriver, runtime: Path
) -> None:
    kernel = serving_kernel
    info = start_serving(kernel, runtime)
    progress: list[str] = []

    async def noted(value: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    busy = kernel.execute("import time\ntime.sleep(12)\nslept = 'yes'")
    kernel.wait(lambda: busy.busy, 30, "the cell to start")
    read = with_client(info, call("variables", {"pattern": "slept"}, progress_callback=noted))
    kernel.wait(lambda: busy.done, 60, "the cell to end")
    assert "slept" in text_of(read)  # it ran once the cell had ended
    assert progress and progress[0] == BEHIND_A_CELL


def test_a_quick_read_is_answered_in_one_body_over_a_kept_connection(
    serving_kernel: KernelDriver, runtime: Path
) -> None:
    """A read that asks for no progress, with no cell running, gets one JSON body (the SDK's
    client then keeps its connection); a call that may ask, one that asks for progress, and
    one made while a cell runs get the SSE stream, which carries progress (issue 40, B14)."""
    kernel = serving_kernel
    kernel.run("rate = 0.5")
    info = start_serving(kernel, runtime)
    answers: list[tuple[str, str, int]] = []  # (tool, content type, the client's local port)

    async def noted(response: Any) -> None:
        body = json.loads(response.request.content or b"null")
        if isinstance(body, dict) and body.get("method") == "tools/call":
            stream = response.extensions["network_stream"]
            port = stream.get_extra_info("client_addr")[1]
            kind = response.headers["content-type"].split(";")[0]
            answers.append((body["params"]["name"], kind, port))

    async def use(session: ClientSession) -> list[str]:
        texts = [text_of(await session.call_tool("inspect", {"name": "rate"})) for _ in range(6)]
        texts.append(text_of(await session.call_tool("notebook_cells", {})))
        await session.call_tool("inspect", {"name": "rate"}, progress_callback=_ignored)
        await session.call_tool("insert_cell", {"index": 0, "source": "1"})  # it may ask
        return texts

    texts = with_client(info, use, on_response=noted)
    assert all("0.5" in text for text in texts[:6])
    quick = answers[:7]
    assert [kind for _, kind, _ in quick] == ["application/json"] * 7, answers
    # one connection for them all (the first may still ride the one the session opened on)
    assert len({port for _, _, port in quick[1:]}) == 1, answers
    assert [(t, k) for t, k, _ in answers[7:]] == [
        ("inspect", "text/event-stream"),
        ("insert_cell", "text/event-stream"),
    ]
    answers.clear()
    busy = kernel.execute("import time\ntime.sleep(3)\nslept = 'yes'")
    kernel.wait(lambda: busy.busy, 30, "the cell to start")
    read = with_client(info, call("inspect", {"name": "slept"}), on_response=noted)
    kernel.wait(lambda: busy.done, 60, "the cell to end")
    assert "yes" in text_of(read)  # it ran once the cell had ended
    assert [(t, k) for t, k, _ in answers] == [("inspect", "text/event-stream")]


async def _ignored(value: float, total: float | None, message: str | None) -> None:
    pass


def _sse_result(text: str) -> Any:
    """The JSON-RPC message of an SSE answer's one ``message`` event."""
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    return json.loads(next(d for d in data if d))


def test_a_read_answered_directly_is_answered_as_the_sdk_answers_it(
    serving_kernel: KernelDriver, runtime: Path
) -> None:
    """A quick read is answered by the transport itself, past the SDK's dispatch (B14): the
    same call asking for progress (which the SDK answers, on the stream) gets the same result;
    what is not plainly well formed is left to the SDK, which says what is wrong; a request
    of another session is refused before any call (issue 40)."""
    kernel = serving_kernel
    kernel.run("rate = 0.5\nregions = ['n', 's']")
    info = start_serving(kernel, runtime)
    sent = {
        "Authorization": f"Bearer {info.token}",
        "Accept": "application/json, text/event-stream",
    }
    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    with httpx.Client(headers=sent, timeout=60) as http:
        opened = http.post(
            info.url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}
        )
        session = {
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        http.post(
            info.url,
            headers=session,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        )

        def post(params: dict[str, Any], request_id: int, **headers: str) -> httpx.Response:
            body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
            return http.post(info.url, headers={**session, **headers}, json=body)

        direct = post({"name": "inspect", "arguments": {"name": "regions"}}, 1)
        streamed = post(
            {"name": "inspect", "arguments": {"name": "regions"}, "_meta": {"progressToken": 7}},
            2,
        )
        malformed = post({"name": "inspect", "arguments": "regions"}, 3)
        elsewhere = post(
            {"name": "inspect", "arguments": {"name": "rate"}}, 4, **{"mcp-session-id": "f" * 32}
        )
    assert direct.headers["content-type"].startswith("application/json"), direct.text
    assert streamed.headers["content-type"].startswith("text/event-stream"), streamed.text
    answered, sdk = direct.json(), _sse_result(streamed.text)
    assert answered["id"] == 1 and sdk["id"] == 2
    assert answered["result"] == sdk["result"], (answered, sdk)
    assert "['n', 's']" in answered["result"]["content"][0]["text"]
    assert answered["result"]["isError"] is False
    assert malformed.json()["error"]["code"] == types.INVALID_PARAMS, malformed.text
    assert elsewhere.status_code == 404, elsewhere.text
    records = kernel.run("%chat serve").stdout()
    assert "raw (2 calls)" in records, records  # the malformed one never became a call


def test_the_cell_shows_how_to_connect_and_the_token_goes_nowhere_else(
    tmp_path: Path, runtime: Path
) -> None:
    kernel = KernelDriver(env={"JUPYTER_RUNTIME_DIR": str(runtime)})
    try:
        kernel.run("%load_ext jupyter_turns")
        cell = kernel.run("%chat serve")
        info = find(runtime).servers[0]
        shown = [str(w.state.get("value", "")) for w in kernel.widgets.values()]
        connection = html.unescape(next(v for v in shown if "claude mcp add" in v))
        # a user's cell that reads the token (here from the runtime file) into a variable
        kernel.run(
            "import glob, json\n"
            f"tok = json.load(open(glob.glob({str(runtime)!r} + '/jupyter_turns-mcp-*.json')[0]))"
            "['token']"
        )
        read = with_client(info, call("inspect", {"name": "tok"}))
        listed = with_client(info, call("variables", {"pattern": "tok"}))
        kernel.kc.stop_channels()
        kernel.km.shutdown_kernel(now=False)  # the kernel ends as a person's shutdown ends it
        left = list(runtime.glob("jupyter_turns-mcp-*.json"))
    finally:
        if kernel.km.is_alive():
            kernel.close()
    bearer = f"Authorization: Bearer {info.token}"
    assert f"claude mcp add --transport http jupyter {info.url} --header '{bearer}'" in connection
    assert (
        f'[mcp_servers.jupyter]\nurl = "{info.url}"\n'
        f'http_headers = {{ "Authorization" = "Bearer {info.token}" }}'
    ) in connection
    entry = re.search(r"\(mcp\.json\)</b><pre[^>]*>(.*?)</pre>", connection, re.S)
    assert entry is not None, connection
    generic = json.loads(entry.group(1))
    assert generic["mcpServers"]["jupyter"] == {
        "type": "http",
        "url": info.url,
        "headers": {"Authorization": f"Bearer {info.token}"},
    }
    assert info.token not in json.dumps(cell.outputs)  # what the notebook saves of the cell
    for result in (read, listed):
        assert info.token not in text_of(result) and "[redacted" in text_of(result)
    assert left == []  # the runtime file went with the kernel


def _record(cell: Cell) -> dict[str, Any]:
    records = [r for r in cell.raw_records() if "serve" in r]
    assert records, cell.outputs
    return records[-1]


def test_after_a_restart_the_cell_continues_its_record_with_a_new_token(
    tmp_path: Path, runtime: Path
) -> None:
    path = tmp_path / "served.ipynb"
    env = {"JPY_SESSION_NAME": str(path), "JUPYTER_RUNTIME_DIR": str(runtime)}
    first = KernelDriver(env=env)
    try:
        first.run("%load_ext jupyter_turns")
        first.run("n = 7")
        serve_cell = first.execute("%chat serve", cell_id="serve-cell")
        first.wait(lambda: serve_cell.done, 60, "%chat serve")
        before = find(runtime).servers[0]
        with_client(before, call("inspect", {"name": "n"}))
        first.run("%chat serve stop")
        saved = _record(serve_cell)
    finally:
        first.close()
    notebook = new_notebook()
    cell = new_code_cell("%chat serve")
    cell["id"] = "serve-cell"
    cell.outputs = [new_output("display_data", data=record_bundle(saved))]
    notebook.cells.append(cell)
    nbformat.write(notebook, path)
    assert not find(runtime).servers  # the first kernel's file went with its server

    second = KernelDriver(env=env)
    try:
        second.run("%load_ext jupyter_turns")
        second.run("m = 8")
        again = second.execute("%chat serve", cell_id="serve-cell")
        second.wait(lambda: again.done, 60, "%chat serve")
        after = find(runtime).servers[0]
        with_client(after, call("inspect", {"name": "m"}), client=CODEX)
        old_token = {"Authorization": f"Bearer {before.token}"}
        refused = httpx.post(after.url, json={}, headers=old_token, timeout=30).status_code
        second.run("%chat serve stop")
        continued = _record(again)
        restored = second.run(f"%chat restore {path}").stdout()
        threads = second.run("%chat threads").stdout()
    finally:
        second.close()
    assert refused == 401
    assert after.token != before.token
    assert continued["conversation_id"] == saved["conversation_id"]
    requests = [e for e in continued["events"] if e["kind"] == "tool_call_request"]
    assert [r["metadata"] for r in requests] == [
        {"client": "Claude Code", "call": 1},
        {"client": "Codex", "call": 2},
    ]
    assert continued["serve"]["calls"] == 2
    assert "serve" not in threads, (restored, threads)  # the calls are no thread to restore


def _listening(pid: int) -> set[int]:
    """The TCP ports process ``pid`` listens on (Linux: its socket inodes in /proc/net/tcp*)."""
    fds = Path(f"/proc/{pid}/fd")
    inodes = set()
    for fd in fds.iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def _crafted_serving_notebook(path: Path) -> None:
    """Someone else's notebook whose every saved place mentions serve: the thread settings in
    its metadata, a serve cell with a serve record, a chat record's own settings."""
    asks = {
        "serve": {"tools": "all", "builtins": ["python"], "port": 8765},
        "mcp_serve": True,
        "always_allow": ["python", "run_cell", "insert_cell"],
        "builtins": ["python"],
        "run_mode": "unattended",
    }
    served = turn_record("crafted-serve", "serve", [], turn={"outcome": "serving"})
    served["serve"] = {"calls": 3, "clients": ["Claude Code"], "tools": "all"}
    served["settings"] = asks
    chat = turn_record(
        "crafted-main",
        "main",
        [ChatRequest(content="Hello"), Message(content="Hi! Ask me anything.")],
    )
    chat["settings"] = {**asks, "thread": "serve"}
    notebook = new_notebook()
    notebook.metadata["jupyter_turns"] = {
        "version": 1,
        "current": "serve",
        "threads": {
            "serve": {**asks, "conversation_id": "crafted-serve"},
            "main": {**asks, "conversation_id": "crafted-main"},
        },
    }
    serve_cell = new_code_cell("%chat serve --tools all --builtins python")
    serve_cell.outputs = [new_output("display_data", data=record_bundle(served))]
    chat_cell = new_code_cell("%%chat\nHello")
    chat_cell.outputs = [new_output("display_data", data=record_bundle(chat))]
    notebook.cells = [new_code_cell("%load_ext jupyter_turns"), serve_cell, chat_cell]
    nbformat.write(notebook, path)


def test_a_notebook_that_asks_for_serve_never_starts_a_server_on_restore_or_trust(
    tmp_path: Path, runtime: Path
) -> None:
    path = tmp_path / "shared.ipynb"
    _crafted_serving_notebook(path)
    env = {"JPY_SESSION_NAME": str(path), "JUPYTER_RUNTIME_DIR": str(runtime)}
    kernel = KernelDriver(env=env)
    try:
        kernel.run("%load_ext jupyter_turns")
        pid = int(kernel.run("import os; print(os.getpid())").stdout())
        before = _listening(pid)
        said = [
            kernel.run(line).stdout()
            for line in (
                f"%chat restore {path}",
                "%chat trust",
                "%chat trust --apply",
                "%chat use serve",
                "%chat threads",
                f"%chat restore {path}",
            )
        ]
        threads = kernel.run("import threading\nprint([t.name for t in threading.enumerate()])")
        after = _listening(pid)
        files = list(runtime.glob("jupyter_turns-mcp-*.json"))
        # what the test would see if a server had started: the user's own %chat serve
        info = start_serving(kernel, runtime)
        serving = _listening(pid)
    finally:
        kernel.close()
    assert "Restored" in said[0], said  # the file was read: its talk restored
    assert "Applied" in said[2], said  # and the user applied what it asked
    assert after == before, (before, after)  # no port more than the kernel's own
    assert files == [] and "jupyter-turns-mcp" not in threads.stdout()
    assert serving == before | {int(info.url.split(":")[2].split("/")[0])}
