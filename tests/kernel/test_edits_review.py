"""``--edits review`` in a real kernel: the option sticks to the thread and is saved in its
settings; ``%chat settings`` shows it; a notebook's ``edits: review`` is withheld unless the user
granted it (a mode that skips approvals is only ever the user's own choice)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.notebook_code import SETUP

from .kernel import KernelDriver
from .test_saved_settings import THREAD, crafted, sign_as_jupyterlab

pytestmark = pytest.mark.kernel

SCRIPT = "script = [cycle(message('one')), cycle(message('two'))]"


def test_the_option_sticks_to_the_thread_and_is_saved(tmp_path: Path) -> None:
    kernel = KernelDriver(env={"JUPYTER_DATA_DIR": str(tmp_path / "jupyter")})
    try:
        for source in ("%load_ext jupyter_turns", SETUP, SCRIPT):
            kernel.run(source)
        first = kernel.run("%%chat --provider scripted --script script --edits review\nhi")
        second = kernel.run("%%chat --script script\nagain")  # no --edits: the thread keeps review
        shown = next(
            o["data"]["text/plain"]
            for o in kernel.run("%chat settings").outputs
            if o["output_type"] == "display_data"
        )
        bad = kernel.run("%%chat --edits always\nhi")
    finally:
        kernel.close()
    for cell in (first, second):
        settings = cell.records()[-1]["settings"]
        assert settings["edits"] == "review" and "signature" not in settings
    row = next(line for line in shown.splitlines() if "cell changes" in line)
    assert row.split() == ["cell", "changes", "review", "cell", "option"]
    said = "".join(o.get("text", "") or o.get("evalue", "") for o in bad.outputs)
    assert "argument --edits: invalid choice: 'always'" in said, bad.outputs


def test_a_notebook_that_asks_for_review_gets_it_only_from_the_user(tmp_path: Path) -> None:
    data_dir = tmp_path / "jupyter"
    path = crafted(tmp_path / "shared.ipynb", {"edits": "review"}, store="cell")
    sign_as_jupyterlab(path, data_dir)  # Jupyter's signature grants nothing
    kernel = KernelDriver(env={"JUPYTER_DATA_DIR": str(data_dir)})
    try:
        kernel.run("%load_ext jupyter_turns")
        restored = kernel.run(f"%chat restore {path}").stdout()
        mode = kernel.run(f"print({THREAD}.chat.config.edits)").stdout().strip()
        kernel.run("%chat trust --apply")
        trusted = kernel.run(f"print({THREAD}.chat.config.edits)").stdout().strip()
    finally:
        kernel.close()
    assert "cell changes made without asking (--edits review) — not applied" in restored
    assert mode == "ask"
    assert trusted == "review"  # the user's own decision, after reading what it grants
