"""Half the bytes again (issue 43): what the kernel leaves out, the file still holds.

With a page of JupyterLab or Notebook 7 whose server runs the package's server extension, the
kernel sends a finished turn's record without its HTML transcript (the answer again, rendered:
the largest part of what it sent): the page draws the record, and the server adds the
transcript as it saves, the very one the kernel would have sent, once, also in a shared
document. Watched from outside: a subscriber on the real kernel's IOPub socket sees the
record go without it. And a headless turn that kept its live parts (a long answer streamed
under nbclient) opens in JupyterLab as one output, the conversation drawn, nothing "unfinished".
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.session import Session
from nbconvert import HTMLExporter
from nbformat.v4 import new_code_cell, new_notebook
from playwright.sync_api import expect

from jupyter_turns.record.format import record_html
from jupyter_turns.server_extension import PAGE_SETTING
from tests.bench.wire import IOPubTap, WireMessage
from tests.support.kernels import execute_notebook

from .chat import (
    LOAD,
    RECORD_MIME,
    SETUP,
    chat_cell,
    final_record,
    run_setup,
    start_chat,
    wait_turn_end,
)
from .lab import Lab
from .server import LabServer

pytestmark = pytest.mark.browser

TURN = (
    "@tool(run='unattended')\n"
    "def area(width: int, height: int) -> int:\n"
    '    """A rectangle\'s area."""\n'
    "    return width * height\n"
    "script = [\n"
    "    cycle(reasoning('Measure first.'), tool_call('area', {'width': 3, 'height': 4})),\n"
    # about 3 s of streaming: the kernel hears from the page long before the turn ends
    "    slow(cycle(message("
    "'| side | cm |\\n|---|---:|\\n| width | 3 |\\n\\nThe area is 12 cm².')), 0.2),\n"
    "]"
)
PROBE = "print('tapped')"
ANSWER = "The area is 12 cm²."


@contextmanager
def _tap(server: LabServer, folder: str) -> Iterator[IOPubTap]:
    """A subscriber on the IOPub socket of the folder's one kernel, from outside the page."""
    (session,) = server.sessions(folder + "/")
    runtime = Path(server.env["JUPYTER_RUNTIME_DIR"])
    connection = json.loads((runtime / f"kernel-{session['kernel']['id']}.json").read_text())
    signing = Session(
        key=connection["key"].encode(), signature_scheme=connection["signature_scheme"]
    )
    tap = IOPubTap(connection, signing)
    try:
        yield tap
    finally:
        tap.close()


def _wait_for(tap: IOPubTap, what: str, found: Any, timeout: float = 60) -> list[WireMessage]:
    """Every message the tap has seen, once one of them is ``found``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen = tap.since(0)
        if any(found(m) for m in seen):
            return seen
        time.sleep(0.05)
    raise AssertionError(f"the kernel's IOPub never carried {what}")


def _until_live(lab: Lab, tap: IOPubTap, attempts: int = 10) -> None:
    """Run the probe cell until the tap sees its output. A SUB socket's subscription reaches
    the kernel some time after it connects (and the kernel, which already has a subscriber for
    every topic, sends it no welcome), so the first probe may go out before: run it again."""
    for _ in range(attempts):
        lab.run_cell(3)  # waits until the page shows it idle
        try:
            _wait_for(tap, "the probe's output", lambda m: m.msg_type == "stream", timeout=5)
            return
        except AssertionError:
            continue  # published before the subscription arrived: probe again
    raise AssertionError(f"the kernel's IOPub never reached the tap in {attempts} probes")


def _run_turn(lab: Lab, name: str) -> dict[str, Any]:
    """Run the chat cell of notebook ``name`` (open, its setup run) while watching the kernel's
    IOPub; the final record output the kernel sent."""
    with _tap(lab.server, lab.folder) as tap:
        _until_live(lab, tap)
        root = start_chat(lab, 4)
        wait_turn_end(root)
        lab.wait_cell_idle(4)
        messages = _wait_for(tap, "the final record", _final)
    (data,) = [m.msg["content"]["data"] for m in messages if _final(m)]
    return data


def _final(message: WireMessage) -> bool:
    data = message.msg["content"].get("data") or {}
    record = data.get(RECORD_MIME)
    return (
        message.msg_type == "update_display_data"
        and isinstance(record, dict)
        and not (record.get("live"))
    )


def _saved_output(lab: Lab, name: str) -> dict[str, Any]:
    """The chat cell's one saved output; nbconvert reads the transcript in it."""
    saved = lab.read_notebook(name)
    outputs = saved.cells[4].outputs
    assert [o.output_type for o in outputs] == ["display_data"], outputs
    page, _ = HTMLExporter().from_notebook_node(saved)
    assert ANSWER in page
    data: dict[str, Any] = outputs[0].data
    return data


@pytest.mark.both_collaboration_modes
def test_the_server_adds_the_transcript_the_kernel_left_out_once(lab: Lab) -> None:
    name = "transcript.ipynb"
    lab.write_notebook(name, [LOAD, SETUP, TURN, PROBE, chat_cell("How big is it?")])
    lab.open(name)
    assert lab.page.evaluate(
        f"() => JSON.parse(document.getElementById('jupyter-config-data').textContent)"
        f"[{PAGE_SETTING!r}]"
    )
    run_setup(lab, 3)
    sent = _run_turn(lab, name)
    assert sorted(sent) == [RECORD_MIME, "text/plain"]  # no transcript on the wire
    # the page draws the record, and its copy of the notebook holds what the kernel sent
    root = lab.cell_output(4).locator(".jt-root.jt-saved")
    expect(root.locator(".jt-message").last).to_contain_text(ANSWER)
    shown = lab.page.evaluate(
        "() => Object.keys(window.__jt.panel.content.widgets[4].model.outputs.get(0).data).sort()"
    )
    assert shown == [RECORD_MIME, "text/plain"]

    lab.save()
    data = _saved_output(lab, name)
    assert sorted(data) == [RECORD_MIME, "text/html", "text/plain"]
    # the very transcript the kernel would have sent: made from its record, keys in its order
    assert data["text/html"] == record_html(sent[RECORD_MIME])
    assert data["text/plain"] == sent["text/plain"]
    assert final_record(lab.read_notebook(name).cells[4])["events"] == sent[RECORD_MIME]["events"]


def test_notebook7_saves_the_transcript_the_kernel_left_out(lab: Lab) -> None:
    name = "transcript7.ipynb"
    lab.write_notebook(name, [LOAD, SETUP, TURN, PROBE, chat_cell("How big is it?")])
    lab.open_in_notebook7(name)
    run_setup(lab, 3)
    sent = _run_turn(lab, name)
    assert sorted(sent) == [RECORD_MIME, "text/plain"]
    lab.save()
    data = _saved_output(lab, name)
    assert data["text/html"] == record_html(sent[RECORD_MIME])


LONG_TURN = (  # 8 s of streaming, 18 KB: its parts stay (kernel/persist.py, KEEP_PARTS)
    "PARAGRAPHS = [f'Paragraph {k}: ' + 'the answer goes on and on. ' * 6 + '\\n\\n'"
    " for k in range(100)]\n"
    "script = [slow(cycle(message(''.join(PARAGRAPHS), chunks=100)), 0.08)]"
)


@pytest.mark.both_collaboration_modes
def test_a_headless_turn_that_kept_its_parts_opens_as_one_output(lab: Lab) -> None:
    """nbclient ran a long answer: its file holds the live record, the parts and the output
    ending them. JupyterLab shows the one finished conversation, at once and without a kernel;
    a page of its own keeps the document as clean as the file left it."""
    cells = [LOAD, SETUP, LONG_TURN, chat_cell("Write it out")]
    ran = execute_notebook(new_notebook(cells=[new_code_cell(c) for c in cells]))
    kept = ran.cells[3].outputs
    assert len(kept) > 3 and "text/html" in kept[-1].data  # the parts stayed
    lab.write_notebook("headless.ipynb", list(ran.cells))
    lab.open("headless.ipynb", kernel=False)
    output = lab.cell_output(3)
    expect(output.locator(".jp-OutputArea-child")).to_have_count(1)
    root = output.locator(".jt-root.jt-saved")
    expect(root).to_have_attribute("data-state", "complete")
    expect(root.locator(".jt-message")).to_contain_text("Paragraph 99:")
    expect(root).not_to_contain_text("This turn did not finish")
    if not lab.server.collaborative:
        assert lab.page.evaluate("() => window.__jt.panel.context.model.dirty") is False
    joined = lab.page.evaluate(
        "() => window.__jt.panel.content.widgets[3].model.outputs.get(0).data"
    )
    assert joined["text/html"] == kept[-1].data["text/html"]
    assert (
        "".join(e.get("content", "") for e in joined[RECORD_MIME]["events"]).count("Paragraph 99:")
        == 1
    )
