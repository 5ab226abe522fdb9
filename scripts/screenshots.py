"""Regenerate the docs' screenshots from the cells their text shows, in headless Chromium.

Run ``python scripts/screenshots.py [TAKE ...]`` from the repo root, in the project's venv
(after the front end is built), whenever the widget's look changes (no TAKE: all of them). It
starts an isolated JupyterLab as the browser tests do (tests/browser/server.py), copies
examples/ into it, and writes to docs/:

- getting-started.png  docs/getting-started.md's own code cells, run in order up to the
                   picture (tests/support/doc_cells.py), its python call approved
- widget.png       examples/notebook-context.ipynb: a turn that reads the notebook, finished
- approval.png     examples/tools-and-approval.ipynb: a tool call waiting for your approval
- record.png       examples/quickstart.ipynb reopened without a kernel: a saved conversation
- edit-diff.png    notebook-context.ipynb plus a scripted ``edit_cell`` fixing its failing
                   cell: the approval shows the line diff
- ask-chat.png     notebook-context.ipynb's failing cell, its traceback and the Ask chat
                   button under it

Images are reduced to a 256-colour palette, so each stays small. Nothing reaches the network.
docs/screenshots.json records, for each picture, where its cells come from, the cells run and
the picture's SHA-256: tests/docs/test_doc_pictures.py checks that each picture is the one taken
from the cells its page shows.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import nbformat  # noqa: E402
from nbformat.v4 import new_code_cell  # noqa: E402
from PIL import Image  # noqa: E402
from playwright.sync_api import FloatRect, Locator, expect, sync_playwright  # noqa: E402

from tests.browser.chat import start_chat, wait_turn_end  # noqa: E402
from tests.browser.lab import Lab, browser_context  # noqa: E402
from tests.browser.server import launch_chromium, start_lab_server  # noqa: E402
from tests.support.doc_cells import GETTING_STARTED, cells_before_image  # noqa: E402

DOCS = REPO / "docs"
MANIFEST = DOCS / "screenshots.json"
expect.set_options(timeout=30_000)  # a first render on a busy two-core machine can be slow
WIDTH = 900

# The scripted model reads notebook-context.ipynb's failing cell (index 3) and proposes `FIXED`.
FIX = """\
from jupyter_turns.providers.scripted import cycle, message, tool_call

fixer = [
    cycle(tool_call("notebook_cells", {{"start": 3, "end": 3}})),
    cycle(
        message("The column is `rain_mm`; this edit fixes cell [3]."),
        tool_call("edit_cell", {{"index": 3, "source": {fixed!r}}}),
    ),
    cycle(message("Cell [3] now reads `rain_mm`.")),
]"""


def main(names: list[str]) -> None:
    takes = [t for t in (getting_started, widget_and_edit, approval, record) if t.__name__ in names]
    if not names:
        takes = [getting_started, widget_and_edit, approval, record]
    elif len(takes) != len(names):
        raise SystemExit(f"unknown take among {names}: getting_started, widget_and_edit, ...")
    with tempfile.TemporaryDirectory(prefix="jt-screens-") as tmp:
        server = start_lab_server(Path(tmp) / "lab")
        try:
            with sync_playwright() as playwright:
                browser = launch_chromium(playwright)
                for take in takes:
                    with browser_context(browser) as page:
                        page.set_viewport_size({"width": WIDTH, "height": 1400})
                        lab = Lab(server, page, take.__name__)
                        for notebook in (REPO / "examples").glob("*.ipynb"):
                            _copy(notebook, lab.dir, saved=take is record)
                        take(lab)
                        lab.close()
                browser.close()
        finally:
            server.stop()


def _copy(notebook: Path, folder: Path, *, saved: bool) -> None:
    """Copy an example; unless `saved`, as a reader who runs it afresh has it: no outputs and no
    saved conversation (else the first turn restores the saved threads and says so)."""
    if saved:
        shutil.copy(notebook, folder / notebook.name)
        return
    nb = nbformat.read(notebook, as_version=4)
    nb.metadata.pop("jupyter_turns", None)
    for cell in nb.cells:
        cell.metadata.pop("jupyter_turns", None)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(nb, folder / notebook.name)


def getting_started(lab: Lab) -> None:
    """getting-started.png: the page's cells, typed as it says, its python call approved."""
    cells = cells_before_image(GETTING_STARTED, "getting-started.png")
    lab.write_notebook("getting-started.ipynb", cells)
    lab.open("getting-started.ipynb")
    last = len(cells) - 1
    for index in range(last):
        lab.run_cell(index, timeout=60)
    root = start_chat(lab, last)
    root.locator(".jt-prompt-approval").get_by_role("button", name="Approve", exact=True).click()
    lab.wait_cell_idle(last, timeout=60)
    wait_turn_end(root)
    expect(root.locator(".jt-tool .jt-tool-result")).to_contain_text("42")
    expect(root.locator(".jt-message").last).to_have_text("The total is 42.")
    made_from = {"from": GETTING_STARTED.relative_to(REPO).as_posix(), "cells": cells}
    _shoot(lab, last, root, DOCS / "getting-started.png", made_from)


def widget_and_edit(lab: Lab) -> None:
    """widget.png: the notebook-reading turn; edit-diff.png: the edit's approval; ask-chat.png:
    the failing cell's Ask chat button."""
    source = nbformat.read(lab.dir / "notebook-context.ipynb", as_version=4)
    assert "columns['rain']" in source.cells[3].source, "notebook-context.ipynb's cell 3 moved"
    fixed = source.cells[3].source.replace("'rain']", "'rain_mm']")
    script = new_code_cell(FIX.format(fixed=fixed))
    source.cells += [script, new_code_cell("%%chat --new --script fixer\nFix cell [3].")]
    nbformat.write(source, lab.dir / "edit.ipynb")
    lab.open("edit.ipynb")
    for index in range(1, 6):  # cell 3 raises, as in the example
        lab.run_cell(index, timeout=60)
    expect(lab.cell(3).get_by_role("button", name="Ask chat")).to_be_visible()
    run = [c.source for c in source.cells[:6] if c.cell_type == "code"]
    made_from = {"from": "examples/notebook-context.ipynb", "cells": run}
    _shoot(lab, 3, lab.cell(3), DOCS / "ask-chat.png", made_from)
    root = start_chat(lab, 6)
    lab.wait_cell_idle(6, timeout=60)
    wait_turn_end(root)
    expect(root.locator(".jt-message").last).to_contain_text("rain_mm")
    made_from = {"from": "examples/notebook-context.ipynb", "cells": [*run, source.cells[6].source]}
    _shoot(lab, 6, root, DOCS / "widget.png", made_from)
    lab.run_cell(len(source.cells) - 2)
    root = start_chat(lab, len(source.cells) - 1)
    expect(root.locator(".jt-prompt-approval .jt-diff")).to_contain_text("rain_mm")
    added = [source.cells[-2].source, source.cells[-1].source]
    made_from = {"from": "examples/notebook-context.ipynb", "cells": [*run, *added]}
    _shoot(lab, len(source.cells) - 1, root, DOCS / "edit-diff.png", made_from)


def approval(lab: Lab) -> None:
    """approval.png: tools-and-approval.ipynb's `mean` call waits for a click."""
    lab.open("tools-and-approval.ipynb")
    for index in range(1, 4):
        lab.run_cell(index, timeout=60)
    root = start_chat(lab, 4)
    prompt = root.locator(".jt-prompt-approval")
    expect(prompt.get_by_role("button", name="Approve", exact=True)).to_be_visible()
    expect(root.locator(".jt-tool").last).to_contain_text("done")  # the unattended countdown
    notebook = nbformat.read(lab.dir / "tools-and-approval.ipynb", as_version=4)
    run = [c.source for c in notebook.cells[:5] if c.cell_type == "code"]
    _shoot(
        lab,
        4,
        root,
        DOCS / "approval.png",
        {"from": "examples/tools-and-approval.ipynb", "cells": run},
    )


def record(lab: Lab) -> None:
    """record.png: quickstart.ipynb reopened with no kernel, its saved turns drawn again."""
    lab.open("quickstart.ipynb", kernel=False)
    saved = lab.cell_output(9).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-message table")).to_be_visible()
    saved.locator(".jt-reasoning summary").first.click()  # opened, as a reader would
    saved_by = {"from": "examples/quickstart.ipynb", "cells": []}  # as saved, run by nobody
    _shoot(lab, 9, saved, DOCS / "record.png", saved_by)


def _shoot(lab: Lab, index: int, root: Locator, target: Path, made_from: dict[str, object]) -> None:
    """Screenshot cell `index` from its top to the bottom of `root`, with no cell selected,
    reduce it to a palette PNG, and note in the manifest what it was `made_from` (the page or
    notebook, the cells run) with its SHA-256."""
    lab.page.evaluate("() => { window.__jt.panel.content.activeCellIndex = 0; }")
    lab.page.evaluate("() => document.activeElement && document.activeElement.blur()")
    lab.cell(index).scroll_into_view_if_needed()
    cell, widget = lab.cell(index).bounding_box(), root.bounding_box()
    assert cell is not None and widget is not None
    height = widget["y"] + widget["height"] - cell["y"] + 6
    clip: FloatRect = {"x": cell["x"], "y": cell["y"], "width": cell["width"], "height": height}
    lab.page.screenshot(path=str(target), clip=clip)
    image = Image.open(target).convert("RGB")
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(target, optimize=True)
    print(f"{target.relative_to(REPO)}: {image.width}×{image.height}, {target.stat().st_size:,} B")
    manifest = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {}
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    manifest[target.name] = {**made_from, "sha256": digest}
    MANIFEST.write_text(json.dumps(dict(sorted(manifest.items())), indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
