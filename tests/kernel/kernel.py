"""A real IPython kernel driven through jupyter_client, acting as the frontend would.

``KernelDriver.execute(code)`` sends an execute request; ``pump()`` reads IOPub messages and
keeps each widget's synced state (``comm_open`` + ``update``), every custom message and every
display output, so tests can wait on observable state and answer with comm messages
(``send_custom``) while the cell is still busy.
"""

from __future__ import annotations

import os
import queue
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

from jupyter_turns.record.format import joined_records
from tests.support.kernels import IpcKernelManager

RECORD_MIME = "application/vnd.jupyter-turns+json"


@dataclass
class Widget:
    comm_id: str
    state: dict[str, Any]
    custom: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Cell:
    msg_id: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    outputs: list[dict[str, Any]] = field(default_factory=list)  # display / stream / error
    displays: dict[str, int] = field(default_factory=dict)  # display_id -> output index
    busy: bool = False
    done: bool = False
    reply: dict[str, Any] | None = None
    clear_pending: bool = False  # a clear_output(wait=True): cleared at the next output

    def stdout(self) -> str:
        return "".join(o.get("text", "") for o in self.outputs if o["output_type"] == "stream")

    def records(self) -> list[dict[str, Any]]:
        """The records the outputs hold, as a reader sees them (live parts joined)."""
        return joined_records(self.raw_records())

    def raw_records(self) -> list[dict[str, Any]]:
        return [o["data"][RECORD_MIME] for o in self.outputs if RECORD_MIME in o.get("data", {})]


class KernelDriver:
    def __init__(
        self,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        *,
        metadata_answer: dict[str, Any] | None = None,
    ) -> None:
        """``env`` is added to this process's environment; ``cwd``: the kernel's working
        directory (default: this process's). ``metadata_answer``: the driver answers every
        write on the metadata comm with it, as the lab extension does (e.g. ``{"ok": True,
        "html_on_save": True}``: its server adds the transcripts); None: no answer."""
        self.km = IpcKernelManager(kernel_name="python3")
        kernel_env = {**os.environ, **(env or {})}
        kernel_env.pop("JPY_SESSION_NAME", None)
        kernel_env.update(env or {})
        self.km.start_kernel(
            env=kernel_env, cwd=cwd, extra_arguments=["--HistoryManager.enabled=False"]
        )
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)
        self.cells: dict[str, Cell] = {}
        self.widgets: dict[str, Widget] = {}
        self.order: list[tuple[str, str]] = []  # (msg_id, "busy"|"idle") in arrival order
        self.comm_data: list[dict[str, Any]] = []  # comm messages that are not widget updates
        self.stderr: list[str] = []  # every stderr text on IOPub, whatever request it names
        # called with (comm id, data) for each such message: a test playing the page answers
        self.on_comm: Callable[[str, dict[str, Any]], None] | None = None
        self.metadata_answer = metadata_answer
        self._metadata_comms: set[str] = set()

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    # ---------------------------------------------------------------- sending

    def execute(self, code: str, cell_id: str | None = None) -> Cell:
        """Run ``code``; ``cell_id`` is sent as JupyterLab sends it (the cell's notebook id)."""
        if cell_id is None:
            msg_id = self.kc.execute(code)
        else:
            content = {
                "code": code,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": True,
            }
            msg = self.kc.session.msg("execute_request", content, metadata={"cellId": cell_id})
            self.kc.shell_channel.send(msg)
            msg_id = msg["header"]["msg_id"]
        cell = self.cells[msg_id] = Cell(msg_id)
        return cell

    def reply_comm(self, comm_id: str, data: dict[str, Any]) -> None:
        """Send ``data`` on comm ``comm_id``, as the page's extension answers the kernel."""
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.kc.shell_channel.send(msg)

    def send_custom(self, widget: Widget, content: dict[str, Any]) -> None:
        msg = self.kc.session.msg(
            "comm_msg",
            {"comm_id": widget.comm_id, "data": {"method": "custom", "content": content}},
        )
        self.kc.shell_channel.send(msg)

    # ---------------------------------------------------------------- reading

    def pump(self, timeout: float = 0.05) -> bool:
        """Handle one IOPub message if one arrives within ``timeout``."""
        try:
            msg = self.kc.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            self._drain_replies()
            return False
        self._handle(msg)
        self._drain_replies()
        return True

    def _drain_replies(self) -> None:
        while True:
            try:
                reply = self.kc.get_shell_msg(timeout=0)
            except queue.Empty:
                return
            parent = reply["parent_header"].get("msg_id")
            if parent in self.cells:
                self.cells[parent].reply = reply["content"]

    def _handle(self, msg: dict[str, Any]) -> None:
        kind = msg["msg_type"]
        content = msg["content"]
        parent = msg["parent_header"].get("msg_id")
        cell = self.cells.get(parent)
        if cell is not None:
            cell.messages.append(msg)
        if kind == "stream" and content.get("name") == "stderr":
            self.stderr.append(content.get("text", ""))
        if kind == "status" and cell is not None:
            state = content["execution_state"]
            self.order.append((parent, state))
            cell.busy = state == "busy"
            cell.done = state == "idle"
        elif kind == "comm_open":
            state = content.get("data", {}).get("state", {})
            self.widgets[content["comm_id"]] = Widget(content["comm_id"], dict(state))
            if content.get("target_name") == "jupyter_turns.metadata":
                self._metadata_comms.add(content["comm_id"])
        elif kind == "comm_msg":
            widget = self.widgets.get(content["comm_id"])
            data = content.get("data", {})
            if content["comm_id"] in self._metadata_comms:
                self._answer_metadata(content["comm_id"], data)
            if widget is not None:
                if data.get("method") == "update":
                    widget.state.update(data.get("state", {}))
                elif data.get("method") == "custom":
                    widget.custom.append(data["content"])
                elif "method" not in data:
                    self.comm_data.append(data)
                    if self.on_comm is not None:
                        self.on_comm(content["comm_id"], data)
        elif cell is not None and kind == "clear_output":  # as JupyterLab and nbclient do
            cell.clear_pending = bool(content.get("wait"))
            if not cell.clear_pending:
                cell.outputs.clear()
                cell.displays.clear()
        elif cell is not None and kind in ("display_data", "stream", "error", "execute_result"):
            if cell.clear_pending:
                cell.outputs.clear()
                cell.displays.clear()
                cell.clear_pending = False
            output = {"output_type": kind, **content}
            display_id = content.get("transient", {}).get("display_id")
            if display_id:
                cell.displays[display_id] = len(cell.outputs)
            cell.outputs.append(output)
        elif kind == "update_display_data":
            display_id = content.get("transient", {}).get("display_id")
            for owner in self.cells.values():
                if display_id in owner.displays:
                    index = owner.displays[display_id]
                    owner.outputs[index] = {**owner.outputs[index], "data": content["data"]}

    def _answer_metadata(self, comm_id: str, data: dict[str, Any]) -> None:
        """Answer a metadata write as the lab extension does (``metadata_answer``)."""
        if self.metadata_answer is not None and "key" in data:
            msg = self.kc.session.msg(
                "comm_msg", {"comm_id": comm_id, "data": dict(self.metadata_answer)}
            )
            self.kc.shell_channel.send(msg)

    def wait(self, condition: Callable[[], Any], timeout: float = 30.0, what: str = "") -> Any:
        """Pump messages until ``condition()`` is truthy; return its value."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = condition()
            if value:
                return value
            self.pump()
        value = condition()
        if value:
            return value
        raise AssertionError(f"timed out waiting for {what or condition}")

    def run(self, code: str, timeout: float = 60.0, cell_id: str | None = None) -> Cell:
        cell = self.execute(code, cell_id)
        self.wait(lambda: cell.done, timeout, f"cell {code[:40]!r} to finish")
        self.wait(lambda: cell.reply is not None, 30, "execute_reply")
        return cell

    def chat_widget(self) -> Widget:
        """The newest ChatWidget."""
        widgets = [
            w
            for w in self.widgets.values()
            if w.state.get("_anywidget_id") == "jupyter_turns.widget.chat_widget.ChatWidget"
        ]
        assert widgets, "no ChatWidget was created"
        return widgets[-1]

    def prompt(self, widget: Widget, kind: str) -> dict[str, Any] | None:
        for prompt in widget.state.get("prompts", []):
            if prompt["type"] == kind:
                return prompt  # type: ignore[no-any-return]
        return None


PYTHON = sys.executable


def ready_chat(kernel: KernelDriver) -> Widget:
    """Play the frontend: wait for the newest ChatWidget, and say its view rendered."""

    def newest() -> Widget | None:
        try:
            return kernel.chat_widget()
        except AssertionError:
            return None

    widget = kernel.wait(newest, 30, "a ChatWidget")
    kernel.send_custom(widget, {"type": "ready"})
    return widget


def notebook_from(cells: list[tuple[str, list[dict]]]) -> nbformat.NotebookNode:  # type: ignore[type-arg]
    """What a frontend would save: each cell's source with its final outputs."""
    notebook = new_notebook()
    for source, outputs in cells:
        cell = new_code_cell(source)
        cell.outputs = [
            new_output(
                o["output_type"], **{k: v for k, v in o.items() if k in ("data", "metadata")}
            )
            if o["output_type"] == "display_data"
            else new_output("stream", name=o.get("name", "stdout"), text=o.get("text", ""))
            for o in outputs
            if o["output_type"] in ("display_data", "stream")
        ]
        notebook.cells.append(cell)
    return notebook
