"""The browser harness itself: a real JupyterLab and Chromium, a widget round trip, save, reload."""

from __future__ import annotations

import json
import stat
import sys
import time
from pathlib import Path

import pytest
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_output
from playwright.sync_api import expect

from .lab import Lab
from .server import ARTIFACTS, LabServer

pytestmark = pytest.mark.browser

STDOUT = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stdout"]'

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

CHANNELS = ("shell", "iopub", "stdin", "control", "hb")  # a kernel's five sockets

# A trivial anywidget: the page sends each click as a custom message (docs/architecture.md, "Facts
# the design depends on": never model.set + save_changes from the page); the kernel counts it in a
# synced trait, which the view shows — one full page -> kernel -> page round trip. Comm handlers may
# run on a subshell thread, so the handler hands the change to the kernel's loop.
CLICKER = '''\
import asyncio

import anywidget
import traitlets

class Clicker(anywidget.AnyWidget):
    _esm = """
    export default {
      render({ model, el }) {
        const button = document.createElement("button");
        button.className = "smoke-button";
        button.textContent = "Click me";
        button.addEventListener("click", () => model.send({ type: "click" }));
        const label = document.createElement("span");
        label.className = "smoke-label";
        const show = () => { label.textContent = `clicks: ${model.get("clicks")}`; };
        show();
        model.on("change:clicks", show);
        el.append(button, label);
        return () => model.off("change:clicks", show);
      },
    };
    """
    clicks = traitlets.Int(0).tag(sync=True)

loop = asyncio.get_running_loop()

def on_msg(widget, content, buffers):
    if content.get("type") == "click":
        loop.call_soon_threadsafe(lambda: setattr(widget, "clicks", widget.clicks + 1))

w = Clicker()
w.on_msg(on_msg)
w
'''


def test_widget_click_reaches_the_kernel_and_the_output_is_saved(lab: Lab) -> None:
    lab.write_notebook(
        "smoke.ipynb",
        ["import sys\nprint(sys.prefix)", CLICKER, "print('kernel saw', w.clicks, 'clicks')"],
    )
    lab.open("smoke.ipynb")

    expect(lab.run_cell(0)).to_have_text(sys.prefix)  # the kernel runs in this virtualenv
    widget = lab.run_cell(1)
    label = widget.locator(".smoke-label")
    expect(label).to_have_text("clicks: 0")
    widget.locator(".smoke-button").click()
    expect(label).to_have_text("clicks: 1")
    widget.locator(".smoke-button").click()
    expect(label).to_have_text("clicks: 2")
    expect(lab.run_cell(2)).to_have_text("kernel saw 2 clicks")
    (ARTIFACTS / "smoke-widget.png").unlink(missing_ok=True)
    assert lab.screenshot("smoke-widget.png").stat().st_size > 0

    lab.save()
    saved = lab.read_notebook("smoke.ipynb")
    widget_outputs = [o for o in saved.cells[1].outputs if WIDGET_MIME in o.get("data", {})]
    assert len(widget_outputs) == 1
    assert saved.cells[2].outputs[0].text == "kernel saw 2 clicks\n"
    assert saved.cells[2].execution_count == 3
    assert lab.unexpected_page_errors() == []
    assert lab.failed_requests == []


def test_jupyter_turns_lab_extension_is_loaded(lab: Lab) -> None:
    # The page config lists what the server found on its labextensions path (what
    # `jupyter labextension list` would print in that environment, without its 6 s start-up).
    lab.write_notebook("ext.ipynb", ["1 + 1"])
    lab.open("ext.ipynb")
    config = json.loads(lab.page.locator("#jupyter-config-data").text_content() or "{}")
    served = {ext["name"]: ext for ext in config["federated_extensions"]}
    assert "jupyter_turns" in served
    if lab.server.labextension is not None:  # this checkout's build is the one served
        built = json.loads((lab.server.labextension / "package.json").read_text())
        assert served["jupyter_turns"]["load"] == built["jupyterlab"]["_build"]["load"]
    assert lab.page.evaluate("() => window.jupyterapp.isPluginActivated('jupyter_turns:metadata')")


@pytest.mark.parametrize("via", ["command", "toolbar"])
def test_interrupt_stops_a_running_cell(lab: Lab, via: str) -> None:
    lab.write_notebook(
        "interrupt.ipynb",
        ["import time\nprint('sleeping', flush=True)\ntime.sleep(60)", "print('next')"],
    )
    lab.open("interrupt.ipynb")
    out = lab.run_cell(0, wait=False)
    expect(out).to_contain_text("sleeping")  # the kernel is inside the cell now
    expect(lab.prompt(0)).to_have_text("[*]:")
    lab.save()  # while the cell is busy: what arrived so far is written
    assert lab.read_notebook("interrupt.ipynb").cells[0].outputs[0].text == "sleeping\n"

    lab.interrupt_kernel(via=via)
    lab.wait_cell_idle(0, timeout=15)
    expect(out).to_contain_text("KeyboardInterrupt")
    expect(lab.run_cell(1)).to_have_text("next")


def test_restart_clears_the_namespace(lab: Lab) -> None:
    lab.write_notebook("restart.ipynb", ["x = 41", "print('x' in globals())"])
    lab.open("restart.ipynb")
    lab.run_cell(0)
    expect(lab.run_cell(1)).to_have_text("True")

    lab.restart_kernel()
    # its stdout only: under load ipykernel may add a RuntimeWarning of its own on stderr
    lab.run_cell(1)
    expect(lab.cell_output(1).locator(STDOUT)).to_have_text("False")
    expect(lab.prompt(1)).to_have_text("[1]:")


def test_saved_outputs_come_back_without_a_kernel(lab: Lab) -> None:
    lab.write_notebook("reopen.ipynb", ["a = 20", "print(a + 22)"])
    lab.open("reopen.ipynb")
    lab.run_all()
    expect(lab.cell_output(1)).to_have_text("42")
    lab.save()

    lab.close_and_reopen("reopen.ipynb")
    assert lab.kernel_status() is None
    expect(lab.cell_output(1)).to_have_text("42")
    expect(lab.prompt(1)).to_have_text("[2]:")
    assert lab.server.sessions(under=lab.folder + "/") == []  # reopening started no kernel
    assert lab.unexpected_page_errors() == []


def test_trusted_notebook_runs_scripts_in_saved_html(lab: Lab) -> None:
    html = '<p class="trust-probe">untrusted</p><script>'
    html += 'document.querySelector(".trust-probe").textContent = "trusted";</script>'

    def cell() -> NotebookNode:
        out = new_output("display_data", data={"text/html": html, "text/plain": "probe"})
        return new_code_cell("", outputs=[out])

    lab.write_notebook("signed.ipynb", [cell()], trust=True)
    lab.write_notebook("unsigned.ipynb", [cell()])

    lab.open("signed.ipynb", kernel=False)
    expect(lab.cell_output(0).locator(".trust-probe")).to_have_text("trusted")
    lab.open("unsigned.ipynb", kernel=False)
    expect(lab.cell_output(0).locator(".trust-probe")).to_have_text("untrusted")


def test_widget_state_is_saved_when_the_setting_is_on(lab: Lab) -> None:
    lab.set_settings("@jupyter-widgets/jupyterlab-manager:plugin", {"saveState": True})
    lab.write_notebook("state.ipynb", [CLICKER])
    lab.open("state.ipynb")
    widget = lab.run_cell(0)
    widget.locator(".smoke-button").click()
    expect(widget.locator(".smoke-label")).to_have_text("clicks: 1")

    lab.save()
    state = lab.read_notebook("state.ipynb").metadata["widgets"]
    models = state["application/vnd.jupyter.widget-state+json"]["state"]
    assert [m["state"]["clicks"] for m in models.values() if "clicks" in m["state"]] == [1]


def test_the_servers_kernels_listen_on_socket_files_not_tcp_ports(lab_server: LabServer) -> None:
    """tests/support/kernels.py: a TCP port the server picks can be taken by another process
    before its kernel binds it; a socket file in the server's own runtime directory cannot."""
    kernel = lab_server.api("POST", "/api/kernels", {"name": "python3"})
    try:
        runtime = Path(lab_server.env["JUPYTER_RUNTIME_DIR"])
        connection = json.loads((runtime / f"kernel-{kernel['id']}.json").read_text())
        assert connection["transport"] == "ipc"
        sockets = [f"{connection['ip']}-{connection[f'{c}_port']}" for c in CHANNELS]
        deadline = time.monotonic() + 60
        while not all(Path(s).exists() for s in sockets) and time.monotonic() < deadline:
            time.sleep(0.1)  # the kernel binds them as it starts
        for path in sockets:
            assert len(path.encode()) <= 107, path  # a Unix socket's path limit on Linux
            assert stat.S_ISSOCK(Path(path).stat().st_mode), path
    finally:
        lab_server.api("DELETE", f"/api/kernels/{kernel['id']}", timeout=30)
