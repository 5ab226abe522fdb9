"""``%chat serve``: this kernel hosts an MCP server for terminal agents (:mod:`..serve`).

``%chat serve [--tools read|edit|all] [--builtins python]`` starts it (awaited, like ``%chat
mcp``), ``%chat serve`` again shows its status, ``%chat serve stop`` ends it; it ends with the
kernel. Only a cell starts it: nothing in a notebook's saved settings does. The cell that
started it shows how to connect (with the token: in a widget, whose state is not saved) and
the session's widget (each call's card, approvals, Undo), which becomes the session's record
when the server stops; the record is saved like a chat turn and continued when the cell runs
``%chat serve`` again after a restart (a new token).
"""

from __future__ import annotations

import asyncio
import atexit
import html
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.display import display, update_display

from ..kernel_tools.builtin import DEFAULT, READ_ONLY
from ..model.conversation import parse_events
from ..model.events import ConversationEvent, Who, new_id
from ..model.prompter import PolicyPrompter
from ..record.format import META_KEY, RECORD_MIME, turn_record
from ..record.notebook import find_notebook, session_paths
from ..redaction import remember
from ..text import plural
from ..tools.executor import ExecutionSettings
from .front import has_frontend, keep_live, metadata_writer, notebook_state
from .persist import MetadataWriter, Recorder
from .threads import namespace_tools

if TYPE_CHECKING:
    from ..serve.calls import ServeSession
    from ..serve.server import McpHost
    from ..widget.buttons import WidgetPrompter
    from ..widget.chat_widget import ChatWidget
    from ..widget.renderer import WidgetSink
    from .session import CellSettings, Session

__all__ = ["serve_command"]

TOOL_SETS = {"read": READ_ONLY, "edit": DEFAULT, "all": DEFAULT}
NO_PAGE = (
    "declined: no notebook page is open to approve it (open the notebook in JupyterLab or "
    "Notebook 7; a headless kernel declines every call that asks)"
)
USAGE = "usage: %chat serve [--tools read|edit|all] [--builtins python] | %chat serve stop"


@dataclass
class _Serving:
    """The running server and what shows it in its cell."""

    host: McpHost
    session: ServeSession
    widget: ChatWidget
    recorder: Recorder
    runtime_file: Path
    connect_id: str  # the display of the connection commands
    tools: str
    served_in: Session  # the kernel's session, which lists the calls for undo
    cells: _CellWatch


class _CellWatch:
    """Whether the kernel runs a cell now (IPython's ``pre_run_cell`` / ``post_run_cell``): a
    call made meanwhile waits behind it, so the server streams its answer, with progress. Set
    and cleared on the kernel's thread, read from the server's."""

    def __init__(self) -> None:
        from IPython import get_ipython

        self.running = True  # the serve cell, which starts it
        self._events = getattr(get_ipython(), "events", None)
        if self._events is not None:
            self._events.register("pre_run_cell", self._started)
            self._events.register("post_run_cell", self._ended)

    def _started(self, info: Any) -> None:
        self.running = True

    def _ended(self, result: Any) -> None:
        self.running = False

    def close(self) -> None:
        if self._events is not None:
            self._events.unregister("pre_run_cell", self._started)
            self._events.unregister("post_run_cell", self._ended)


_serving: _Serving | None = None
_exit_hooked = False


def serve_command(session: Session, settings: CellSettings, args: list[str]) -> Any:
    """``%chat serve ...``: a coroutine the cell_hooks transformer awaits."""
    return _serve(session, settings, args)


async def _serve(session: Session, settings: CellSettings, args: list[str]) -> None:
    if args == ["stop"]:
        print(_stop() if _serving is not None else "No MCP server runs in this kernel.")
        return
    tools, builtins = _options(args)
    if _serving is not None:
        if args:
            raise UsageError("an MCP server already runs here; %chat serve stop first")
        print(_status(_serving))
        return
    await _start(session, settings, tools, builtins)


def _options(args: list[str]) -> tuple[str, set[str]]:
    tools, builtins = "edit", set()
    words = list(args)
    while words:
        word = words.pop(0)
        if word == "--tools" and words and words[0] in TOOL_SETS:
            tools = words.pop(0)
        elif word == "--builtins" and words and words[0] == "python":
            builtins.add(words.pop(0))
        else:
            raise UsageError(USAGE)
    return tools, builtins


async def _start(session: Session, settings: CellSettings, tools: str, extra: set[str]) -> None:
    """Build the session (tools, widget, prompter, record), start the server, show the cell."""
    global _serving, _exit_hooked
    from ..serve.calls import ServeSession
    from ..serve.protocol import mcp_tool
    from ..serve.runtime import RuntimeInfo, write
    from ..serve.server import McpHost

    loop = asyncio.get_running_loop()
    offered = namespace_tools(
        session.namespace,
        None if tools == "all" else [],
        [*TOOL_SETS[tools], *sorted(extra)],
        session.reader,
    )
    widget, sink, prompter, recorder = _front(session, settings, loop)
    earlier_id, earlier = _earlier(session)
    cells = _CellWatch()
    serve = ServeSession(
        offered,
        conversation_id=earlier_id or new_id(),
        prompter=prompter,
        sink=sink,
        settings=ExecutionSettings(default_run="ask"),
        earlier=earlier,
        cell_id=session.cell_id,
        cell_running=lambda: cells.running,
    )
    host = McpHost([mcp_tool(t) for t in offered], serve, loop)
    try:
        host.start()
    except BaseException:
        cells.close()
        raise
    remember(host.token)  # never in an output, a result or the record
    session.served.append(serve.log)  # %chat undo and a card's Undo find its calls
    notebook = _notebook_path(session)
    runtime_file = write(
        RuntimeInfo(host.url, host.token, _pid(), str(notebook) if notebook else None, tools)
    )
    if not _exit_hooked:
        atexit.register(_at_exit)  # once: it ends whichever server runs at exit
        _exit_hooked = True
    connect_id = f"jupyter-turns-serve-{new_id()}"
    _show_connection(host, notebook, connect_id, [t.name for t in offered])
    serving = _serving = _Serving(
        host, serve, widget, recorder, runtime_file, connect_id, tools, session, cells
    )
    serve.on_change = lambda: recorder.save(lambda: _record_of(serving, live=True))
    widget.handle("interrupt_request", _on_stop)
    widget.status = {"state": "serving", "retry": None}
    if has_frontend(session.namespace):
        keep_live(session.cell_id, widget)  # every page draws it, also one opened later
        recorder.show(widget)
    recorder.save(lambda: _record_of(serving, live=True))


def _front(
    session: Session, settings: CellSettings, loop: asyncio.AbstractEventLoop
) -> tuple[ChatWidget, WidgetSink, WidgetPrompter, Recorder]:
    """The serve cell's widget, its sink and prompter (declining where nobody can click: no
    page, a headless kernel) and the recorder of its one output."""
    from ..widget.buttons import WidgetPrompter
    from ..widget.chat_widget import ChatWidget
    from ..widget.renderer import WidgetSink

    widget = ChatWidget(
        thread="serve", settings={"thread": "serve", "model": "MCP server", "serve": True}
    )
    widget.bind(loop)
    sink = WidgetSink(widget, max_rate=settings.max_rate)
    frontend = has_frontend(session.namespace)

    async def interactive() -> bool:
        if settings.headless != "auto" or not frontend:
            return False
        return widget.ready or await widget.wait_ready(settings.view_timeout)

    prompter = WidgetPrompter(
        widget,
        PolicyPrompter("deny", deny_reason=NO_PAGE),
        interactive=interactive,
        before_prompt=sink.flush,
    )
    recorder = Recorder(
        thread="serve",
        cell_id=session.cell_id,
        metadata=metadata_writer() if frontend else MetadataWriter(lambda: None),
        notebook_state=lambda: notebook_state(session),
        printed=session.cell_prints,
        parts=False,
    )
    return widget, sink, prompter, recorder


def _on_stop(message: dict[str, Any]) -> None:
    """■ Stop in the serve cell: waiting calls are declined, running ones stopped."""
    if _serving is not None and message.get("action") == "stop":
        _serving.session.stop(Who.from_page(message.get("who")))


def _stop() -> str:
    """End the server: the open calls are stopped, the record replaces the widget."""
    global _serving
    serving, _serving = _serving, None
    assert serving is not None
    serving.session.stop()
    serving.host.stop()
    serving.cells.close()
    if serving.session.log in serving.served_in.served:
        serving.served_in.served.remove(serving.session.log)
    from ..serve.runtime import remove

    remove(serving.runtime_file)
    keep_live(serving.recorder.cell_id, None)
    serving.recorder.finish(_record_of(serving, live=False))
    serving.widget.prompts = []
    serving.widget.close()
    update_display(
        {"text/plain": "The MCP server stopped (%chat serve starts a new one, with a new token)."},
        raw=True,
        display_id=serving.connect_id,
    )
    calls = serving.session.calls
    return f"The MCP server stopped after {plural(calls, 'call')}."


def _at_exit() -> None:
    """The kernel exits: its server's runtime file goes (the thread ends with the process)."""
    from ..serve.runtime import remove

    if _serving is not None:
        remove(_serving.runtime_file)
        _serving.host.stop(wait=1.0)


def _record_of(serving: _Serving, *, live: bool) -> dict[str, Any]:
    """The session's record: every call, its arguments, its result, who approved it and which
    client asked (in each request's metadata); the clients and the count besides."""
    events = serving.session.events
    record = turn_record(
        serving.session.conversation_id,
        "serve",
        events,
        turn={"outcome": "serving" if live else "complete"},
    )
    record["serve"] = {**serving.session.summary(), "tools": serving.tools}
    return record


def _status(serving: _Serving) -> str:
    clients = serving.session.clients
    named = ", ".join(f"{name} ({plural(n, 'call')})" for name, n in clients.items()) or "none yet"
    return (
        f"The MCP server {serving.host.url} serves this notebook (tools: {serving.tools}).\n"
        f"Clients: {named}. Calls: {serving.session.calls}.\n"
        "%chat serve stop ends it."
    )


def _notebook_path(session: Session) -> Path | None:
    """The notebook's path as the frontend named it (saved or not yet)."""
    named = [Path(p) for p in session_paths(session.namespace) if p.endswith(".ipynb")]
    return named[0] if named else None


def _pid() -> int:
    import os

    return os.getpid()


def _earlier(session: Session) -> tuple[str | None, list[ConversationEvent]]:
    """The conversation id and events of the serve record this cell holds in the saved
    notebook (a restarted kernel continues it): none when the cell holds none, or it cannot
    be read."""
    path, cell_id = find_notebook(session.namespace), session.cell_id
    if path is None or cell_id is None:
        return None, []
    try:
        notebook = json.loads(Path(path).read_text(encoding="utf-8"))
        cell = next(c for c in notebook.get("cells", []) if c.get("id") == cell_id)
        saved = [o.get("data", {}).get(RECORD_MIME) for o in cell.get("outputs", [])]
        saved.append(cell.get("metadata", {}).get(META_KEY))  # a live one, if the kernel died
        record = next(r for r in saved if isinstance(r, dict) and "serve" in r)
        events = parse_events(record)
    except (OSError, ValueError, StopIteration, AttributeError, TypeError, KeyError):
        return None, []
    return str(record.get("conversation_id") or "") or None, list(events)


def _show_connection(
    host: McpHost, notebook: Path | None, display_id: str, tools: list[str]
) -> None:
    """How to connect, ready to copy, in a widget: its text (the token) is never saved."""
    import ipywidgets

    class _Connection(ipywidgets.HTML):  # type: ignore[misc]
        def __repr__(self) -> str:  # the saved text/plain: no token
            return "MCP server connection (shown while this kernel runs)"

    auth = f"Authorization: Bearer {host.token}"
    claude = f"claude mcp add --transport http jupyter {host.url} --header {shlex.quote(auth)}"
    codex = (
        "[mcp_servers.jupyter]\n"
        f'url = "{host.url}"\n'
        f'http_headers = {{ "Authorization" = "Bearer {host.token}" }}'
    )
    generic = json.dumps(
        {
            "mcpServers": {
                "jupyter": {
                    "type": "http",
                    "url": host.url,
                    "headers": {"Authorization": f"Bearer {host.token}"},
                }
            }
        },
        indent=2,
    )
    bridge = "jupyter turns mcp" + (f" --notebook {shlex.quote(str(notebook))}" if notebook else "")
    blocks = [
        ("Claude Code", claude),
        ("Codex (~/.codex/config.toml)", codex),
        ("Cursor and others (mcp.json)", generic),
        ("Clients that only start stdio servers", bridge),
    ]
    body = "".join(
        f"<div><b>{html.escape(title)}</b><pre style='user-select:all;white-space:pre-wrap'>"
        f"{html.escape(text)}</pre></div>"
        for title, text in blocks
    )
    header = (
        f"<p>This notebook serves MCP clients at <code>{html.escape(host.url)}</code> "
        f"(tools: {html.escape(', '.join(tools))}). Calls that change or run cells ask "
        "here. The token is shown only here and is not saved.</p>"
    )
    display(_Connection(value=header + body), display_id=display_id)
