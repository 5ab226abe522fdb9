"""B2 — bytes to the frontend: every message the kernel sends for one streamed 100 KB answer.

A real kernel (``tests/kernel/kernel.py``'s KernelDriver) runs ``%%chat --provider scripted`` on
the 100 KB answer as 2,000 deltas at 100 deltas/s, in two set-ups. *With a page*, the driver
plays JupyterLab's part: the kernel has a session (``JPY_SESSION_NAME``), the execute request
carries a ``cellId`` (so cell metadata is written, as under JupyterLab), the view's ``ready``
is sent once the widget opens, and the metadata comm's messages are answered as the lab
extension answers them on a server with the package's server extension (``html_on_save``: the
server adds the HTML transcript when it saves; the saved-file figure applies that hook).
*Headless*, it plays nbclient's (papermill, nbval, ``jupyter execute``): no session, no cell
id, nothing answers the widget. A raw ZMQ subscriber on the kernel's IOPub port
(:mod:`tests.bench.wire`) counts every frame of every message from the execute request to the
cell's idle status — identities, signature, header, parent header, metadata, content — plus
the execute_reply on the shell channel (re-serialized with the kernel's Session: same key and
HMAC scheme). The package runs with its defaults (draft messages at most
``ChatMagics.max_rate`` = 10/s, 5/s after one that carried a full message). Baseline, same
kernel, same pace: one ``update_display(Markdown(text_so_far))`` per delta.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import nbformat

from jupyter_turns.server_extension import add_transcripts
from tests.kernel.kernel import Cell, KernelDriver

from .common import REPO, Dist, Figure, Settings, judge_max, judge_min
from .wire import IOPubTap, WireMessage, breakdown

SIZE_GOAL = 3.0  # with a page (issue 43: 4.39x before, 7.08x before that)
HEADLESS_GOAL = 3.0  # (3.53x before)
BASELINE_GOAL = 100.0
SAVED_GOAL = 2.5  # the saved .ipynb for that answer (record + HTML transcript + metadata)

_SETUP = """
import sys, asyncio
sys.path.insert(0, {repo!r})
from tests.bench.common import answer, deltas
from tests.bench.scripts import paced_provider, paced_sleep
BENCH_TEXT = answer({size})
BENCH_DELTAS = deltas(BENCH_TEXT, {count})
"""

_OURS = """%%chat --new --provider scripted --script {name}
Write the report."""

_BASELINE = """
from IPython.display import Markdown, display, update_display
_sleep = paced_sleep()
_text = ""
display(Markdown(_text), display_id="bench-baseline")
for _delta in BENCH_DELTAS:
    _text += _delta
    update_display(Markdown(_text), display_id="bench-baseline")
    await _sleep({pause})
"""


class BenchKernel:
    def __init__(self, *, page: bool) -> None:
        self.page = page
        session = {"JPY_SESSION_NAME": str(REPO / "bench-b2.ipynb")} if page else {}
        # the lab extension's answer to the kernel's metadata writes: its server (the package's
        # server extension) adds a record's HTML transcript when it saves the notebook
        answer = {"ok": True, "html_on_save": True} if page else None
        self.driver = KernelDriver(env=session, metadata_answer=answer)
        self.tap = IOPubTap(dict(self.driver.km.get_connection_info()), self.driver.kc.session)
        time.sleep(0.5)  # let the subscription reach the kernel's PUB socket
        self.driver.run("%load_ext jupyter_turns")

    def close(self) -> None:
        self.tap.close()
        self.driver.close()

    def cell(
        self,
        code: str,
        *,
        ready: bool = False,
        timeout: float = 180,
        expressions: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """Run ``code`` as a JupyterLab cell (headless: as nbclient runs it, no cell id, no
        ``ready``): every kernel message of it, its duration, and its reply (with the values
        of ``expressions``, evaluated in the kernel after the cell)."""
        driver = self.driver
        mark = self.tap.mark()
        msg = driver.kc.session.msg(
            "execute_request",
            {
                "code": code,
                "silent": False,
                "store_history": True,
                "user_expressions": expressions or {},
                "allow_stdin": False,
                "stop_on_error": True,
            },
            metadata={"cellId": f"bench-{uuid.uuid4().hex[:8]}"} if self.page else {},
        )
        cell = driver.cells[msg["header"]["msg_id"]] = Cell(msg["header"]["msg_id"])
        start = time.time()
        driver.kc.shell_channel.send(msg)
        said_ready = not (ready and self.page)
        known = set(driver.widgets)  # the widgets of earlier runs
        deadline = time.monotonic() + timeout
        while not self._idle(mark, cell.msg_id):
            if time.monotonic() > deadline:
                raise TimeoutError("the benchmark cell did not finish")
            driver.pump(0.02)
            widget = None if said_ready else self._widget(driver, known)
            if widget is not None:
                driver.send_custom(widget, {"type": "ready"})
                said_ready = True
        elapsed = time.time() - start
        driver.wait(lambda: cell.reply is not None, 10, "execute_reply")
        messages = [m for m in self.tap.since(mark) if m.at >= start - 0.001]
        reply = driver.kc.session.msg("execute_reply", cell.reply, parent=msg["header"])
        reply_bytes = sum(len(f) for f in driver.kc.session.serialize(reply, [b"x" * 5]))
        errors = [m.msg["content"] for m in messages if m.msg_type == "error"]
        if errors:
            raise RuntimeError(f"benchmark cell failed: {errors[0].get('evalue')}")
        return {
            "messages": messages,
            "reply_bytes": reply_bytes,
            "elapsed": elapsed,
            "reply": cell.reply,
        }

    def _idle(self, mark: int, msg_id: str) -> bool:
        return any(
            m.msg_type == "status"
            and m.parent == msg_id
            and m.msg["content"].get("execution_state") == "idle"
            for m in self.tap.since(mark)
        )

    @staticmethod
    def _widget(driver: KernelDriver, known: set[str]) -> Any:
        """The chat widget this run opened, once it has."""
        widgets = [
            w
            for comm_id, w in driver.widgets.items()
            if comm_id not in known
            and w.state.get("_anywidget_id") == "jupyter_turns.widget.chat_widget.ChatWidget"
        ]
        return widgets[-1] if widgets else None


def _total(run: dict[str, Any]) -> int:
    messages: list[WireMessage] = run["messages"]
    return sum(m.total for m in messages) + int(run["reply_bytes"])


def _saved_notebook_bytes(messages: list[WireMessage], source: str) -> int:
    """The .ipynb a page saves for the cell: its one output as the last update left it (with
    the HTML transcript the server adds as it saves), the extension's pointer to it in the
    cell's metadata, the notebook metadata."""
    final = [m.msg["content"]["data"] for m in messages if m.msg_type == "update_display_data"]
    if not final:
        raise RuntimeError("the benchmark turn left no final record output")
    data = final[-1]
    notes = [
        m.msg["content"]["data"].get("value")
        for m in messages
        if m.msg_type == "comm_msg" and m.msg["content"]["data"].get("scope") == "notebook"
    ]
    cell = nbformat.v4.new_code_cell(source, execution_count=1)
    cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
    record = data["application/vnd.jupyter-turns+json"]
    cell.metadata["jupyter_turns"] = {  # the extension's pointer (js/labextension/turns.js)
        "version": record["version"],
        "conversation_id": record["conversation_id"],
        "thread": record.get("thread"),
        "in_output": "application/vnd.jupyter-turns+json",
    }
    notebook = nbformat.v4.new_notebook(cells=[cell])
    if notes:
        notebook.metadata["jupyter_turns"] = notes[-1]
    # what the server saves: its pre-save hook adds the transcript the kernel left out
    add_transcripts({"type": "notebook", "content": notebook})
    return len(nbformat.writes(notebook).encode())


def _saved_headless_bytes(messages: list[WireMessage], source: str) -> int:
    """The .ipynb nbclient writes for the cell: its outputs as the messages left them (each
    display added, each update applied to its display id)."""
    outputs: list[Any] = []
    where: dict[str, int] = {}
    for m in messages:
        content = m.msg["content"]
        display_id = (content.get("transient") or {}).get("display_id")
        if m.msg_type == "display_data":
            if display_id:
                where[display_id] = len(outputs)
            outputs.append(nbformat.v4.new_output("display_data", data=content["data"]))
        elif m.msg_type == "update_display_data" and display_id in where:
            outputs[where[display_id]]["data"] = content["data"]
    cell = nbformat.v4.new_code_cell(source, execution_count=1)
    cell.outputs = outputs
    return len(nbformat.writes(nbformat.v4.new_notebook(cells=[cell])).encode())


def _rows(messages: list[WireMessage], reply_bytes: int) -> dict[str, dict[str, int]]:
    rows = breakdown(messages)
    rows["execute_reply (shell, re-serialized)"] = {
        "bytes": reply_bytes,
        "content": 0,
        "count": 1,
    }
    return rows


def _measure(page: bool, size: int, count: int, rate: float, repeats: int) -> dict[str, Any]:
    """``repeats`` runs of the turn in one kernel (with a page or headless), and with a page
    the baseline after them."""
    bench = BenchKernel(page=page)
    try:
        bench.driver.run(_SETUP.format(repo=str(REPO), size=size, count=count), timeout=60)
        answer_bytes = int(bench.driver.run("print(len(BENCH_TEXT.encode()))").stdout())
        ours = []
        for k in range(repeats):
            name = f"BENCH_SCRIPT_{k}"
            bench.driver.run(f"{name} = paced_provider(BENCH_DELTAS, {rate})")
            ours.append(bench.cell(_OURS.format(name=name), ready=True))
        baseline = bench.cell(_BASELINE.format(pause=1.0 / rate)) if page else None
    finally:
        bench.close()
    return {"answer_bytes": answer_bytes, "ours": ours, "baseline": baseline}


def _turn_figure(got: dict[str, Any], page: bool, feed: str) -> Figure:
    ours, answer_bytes = got["ours"], got["answer_bytes"]
    ratio = Dist.of([_total(r) / answer_bytes for r in ours])
    last = ours[-1]
    goal = SIZE_GOAL if page else HEADLESS_GOAL
    met, margin = judge_max(ratio.median, goal)
    where = "with a page" if page else "headless (nbclient, papermill, nbval)"
    return Figure(
        "B2",
        f"kernel bytes for the turn / answer size, {where} ({feed})",
        ratio.median,
        "x answer",
        ratio,
        f"≤ {goal:g}x",
        met,
        margin,
        details={
            "answer_bytes": answer_bytes,
            "ours_bytes": [_total(r) for r in ours],
            "ours_messages": len(last["messages"]) + 1,
            "ours_seconds": [round(r["elapsed"], 2) for r in ours],
            "breakdown": _rows(last["messages"], last["reply_bytes"]),
        },
    )


def _baseline_figure(got: dict[str, Any]) -> Figure:
    baseline = got["baseline"]
    base_total = _total(baseline)
    below = Dist.of([base_total / _total(r) for r in got["ours"]])
    met, margin = judge_min(below.median, BASELINE_GOAL)
    return Figure(
        "B2",
        "baseline update_display(Markdown) per delta / ours (with a page)",
        below.median,
        "x fewer bytes",
        below,
        f"≥ {BASELINE_GOAL:g}x",
        met,
        margin,
        details={
            "baseline_bytes": base_total,
            "baseline_messages": len(baseline["messages"]) + 1,
            "baseline_seconds": round(baseline["elapsed"], 2),
            "baseline_breakdown": _rows(baseline["messages"], baseline["reply_bytes"]),
        },
    )


def _saved_figure(got: dict[str, Any], page: bool) -> Figure:
    answer_bytes = got["answer_bytes"]
    last = got["ours"][-1]
    source = _OURS.format(name="BENCH_SCRIPT_0")
    if page:
        saved = _saved_notebook_bytes(last["messages"], source)
        what = "one output + cell metadata, the transcript added by the server as it saves"
    else:
        saved = _saved_headless_bytes(last["messages"], source)
        what = "headless: the live record, its parts and the output that ends them"
    met, margin = judge_max(saved / answer_bytes, SAVED_GOAL)
    return Figure(
        "B2",
        f"saved .ipynb for that answer ({what}) / answer size",
        saved / answer_bytes,
        "x answer",
        Dist.of([saved / answer_bytes]),
        f"≤ {SAVED_GOAL:g}x",
        met,
        margin,
        details={"saved_bytes": saved},
    )


def run(settings: Settings) -> list[Figure]:
    size = settings.pick(100_000, 5_000)
    count = settings.pick(2_000, 100)
    rate = settings.pick(100.0, 400.0)
    repeats = settings.pick(2, 1)
    feed = f"{count} deltas at {rate:g}/s, {size / 1000:.0f} KB answer"
    page = _measure(True, size, count, rate, repeats)
    headless = _measure(False, size, count, rate, repeats)
    return [
        _turn_figure(page, True, feed),
        _turn_figure(headless, False, feed),
        _saved_figure(page, True),
        _saved_figure(headless, False),
        _baseline_figure(page),
    ]
