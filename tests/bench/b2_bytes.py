"""B2 — bytes to the frontend: every message the kernel sends for one streamed 100 KB answer.

A real kernel (``tests/kernel/kernel.py``'s KernelDriver) runs ``%%chat --provider scripted``
on the 100 KB answer as 2,000 deltas at 100 deltas/s. The driver plays JupyterLab's part: the
execute request carries a ``cellId`` (so cell metadata is written, as under JupyterLab) and the
view's ``ready`` is sent once the widget opens. A raw ZMQ subscriber on the kernel's IOPub port
(:mod:`tests.bench.wire`) counts every frame of every message from the execute request to the
cell's idle status — identities, signature, header, parent header, metadata, content — plus the
execute_reply on the shell channel (re-serialized with the kernel's Session: same key and HMAC
scheme). The package runs with its defaults (draft messages at most ``ChatMagics.max_rate`` =
10/s). Baseline, same kernel, same pace: one ``update_display(Markdown(text_so_far))`` per delta.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import nbformat

from tests.kernel.kernel import Cell, KernelDriver

from .common import REPO, Dist, Figure, Settings, judge_max, judge_min
from .wire import IOPubTap, WireMessage, breakdown

SIZE_GOAL = 5.0
BASELINE_GOAL = 100.0
SAVED_GOAL = 3.2  # the saved .ipynb for that answer (record + HTML fallback + cell metadata)

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


class _Bench:
    def __init__(self) -> None:
        self.driver = KernelDriver(env={"JPY_SESSION_NAME": str(REPO / "bench-b2.ipynb")})
        self.tap = IOPubTap(dict(self.driver.km.get_connection_info()), self.driver.kc.session)
        time.sleep(0.5)  # let the subscription reach the kernel's PUB socket
        self.driver.run("%load_ext jupyter_turns")

    def close(self) -> None:
        self.tap.close()
        self.driver.close()

    def cell(self, code: str, *, ready: bool = False, timeout: float = 180) -> dict[str, Any]:
        """Run ``code`` as a JupyterLab cell: every kernel message of it, and its duration."""
        driver = self.driver
        mark = self.tap.mark()
        msg = driver.kc.session.msg(
            "execute_request",
            {
                "code": code,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": True,
            },
            metadata={"cellId": f"bench-{uuid.uuid4().hex[:8]}"},
        )
        cell = driver.cells[msg["header"]["msg_id"]] = Cell(msg["header"]["msg_id"])
        start = time.time()
        driver.kc.shell_channel.send(msg)
        said_ready = not ready
        deadline = time.monotonic() + timeout
        while not self._idle(mark, cell.msg_id):
            if time.monotonic() > deadline:
                raise TimeoutError("the benchmark cell did not finish")
            driver.pump(0.02)
            if not said_ready and self._widget(driver):
                driver.send_custom(self._widget(driver), {"type": "ready"})
                said_ready = True
        elapsed = time.time() - start
        driver.wait(lambda: cell.reply is not None, 10, "execute_reply")
        messages = [m for m in self.tap.since(mark) if m.at >= start - 0.001]
        reply = driver.kc.session.msg("execute_reply", cell.reply, parent=msg["header"])
        reply_bytes = sum(len(f) for f in driver.kc.session.serialize(reply, [b"x" * 5]))
        errors = [m.msg["content"] for m in messages if m.msg_type == "error"]
        if errors:
            raise RuntimeError(f"benchmark cell failed: {errors[0].get('evalue')}")
        return {"messages": messages, "reply_bytes": reply_bytes, "elapsed": elapsed}

    def _idle(self, mark: int, msg_id: str) -> bool:
        return any(
            m.msg_type == "status"
            and m.parent == msg_id
            and m.msg["content"].get("execution_state") == "idle"
            for m in self.tap.since(mark)
        )

    @staticmethod
    def _widget(driver: KernelDriver) -> Any:
        widgets = [
            w
            for w in driver.widgets.values()
            if w.state.get("_anywidget_id") == "jupyter_turns.widget.chat_widget.ChatWidget"
        ]
        return widgets[-1] if widgets else None


def _total(run: dict[str, Any]) -> int:
    messages: list[WireMessage] = run["messages"]
    return sum(m.total for m in messages) + int(run["reply_bytes"])


def _saved_notebook_bytes(messages: list[WireMessage], source: str) -> int:
    """The .ipynb a page saves for the cell: its one output as the last update left it, the
    extension's pointer to it in the cell's metadata, the notebook metadata."""
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
    return len(nbformat.writes(notebook).encode())


def _rows(messages: list[WireMessage], reply_bytes: int) -> dict[str, dict[str, int]]:
    rows = breakdown(messages)
    rows["execute_reply (shell, re-serialized)"] = {
        "bytes": reply_bytes,
        "content": 0,
        "count": 1,
    }
    return rows


def run(settings: Settings) -> list[Figure]:
    size = settings.pick(100_000, 25_000)
    count = settings.pick(2_000, 500)
    rate = settings.pick(100.0, 200.0)
    repeats = settings.pick(2, 1)
    bench = _Bench()
    try:
        bench.driver.run(_SETUP.format(repo=str(REPO), size=size, count=count), timeout=60)
        answer_bytes = int(bench.driver.run("print(len(BENCH_TEXT.encode()))").stdout())
        ours = []
        for k in range(repeats):
            name = f"BENCH_SCRIPT_{k}"
            bench.driver.run(f"{name} = paced_provider(BENCH_DELTAS, {rate})")
            ours.append(bench.cell(_OURS.format(name=name), ready=True))
        baseline = bench.cell(_BASELINE.format(pause=1.0 / rate))
    finally:
        bench.close()

    totals = [_total(r) for r in ours]
    ratio = Dist.of([t / answer_bytes for t in totals])
    base_total = _total(baseline)
    below = Dist.of([base_total / t for t in totals])
    last = ours[-1]
    rows = _rows(last["messages"], last["reply_bytes"])
    feed = f"{count} deltas at {rate:g}/s, {answer_bytes / 1000:.0f} KB answer"
    details = {
        "answer_bytes": answer_bytes,
        "ours_bytes": totals,
        "ours_messages": len(last["messages"]) + 1,
        "ours_seconds": [round(r["elapsed"], 2) for r in ours],
        "breakdown": rows,
    }
    met, margin = judge_max(ratio.median, SIZE_GOAL)
    figures = [
        Figure(
            "B2",
            f"kernel bytes for the turn / answer size ({feed})",
            ratio.median,
            "x answer",
            ratio,
            f"≤ {SIZE_GOAL:g}x",
            met,
            margin,
            details=details,
        )
    ]
    saved = _saved_notebook_bytes(last["messages"], _OURS.format(name="BENCH_SCRIPT_0"))
    met, margin = judge_max(saved / answer_bytes, SAVED_GOAL)
    figures.append(
        Figure(
            "B2",
            "saved .ipynb for that answer (one output + cell metadata) / answer size",
            saved / answer_bytes,
            "x answer",
            Dist.of([saved / answer_bytes]),
            f"≤ {SAVED_GOAL:g}x",
            met,
            margin,
            details={"saved_bytes": saved},
        )
    )
    met, margin = judge_min(below.median, BASELINE_GOAL)
    figures.append(
        Figure(
            "B2",
            "baseline update_display(Markdown) per delta / ours",
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
    )
    return figures
