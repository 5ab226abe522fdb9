"""A python run's namespace diff and its undo in a real kernel, kept across save and restart."""

from __future__ import annotations

from pathlib import Path

import nbformat

from tests.support.notebook_code import SETUP

from .kernel import KernelDriver, notebook_from

CHANGE = 'df.loc[0, "a"] = 10\\nx = 2\\ndel tmp\\nnew = [1, 2, 3]'


def test_a_python_runs_diff_and_its_undo_are_told_saved_and_restored(tmp_path: Path) -> None:
    kernel = KernelDriver()
    sources = [
        "%load_ext jupyter_turns",
        SETUP,
        "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})\nx = 1\ntmp = 'old'",
        f"script = [cycle(tool_call('python', {{'code': '{CHANGE}'}})), cycle(message('ok'))]\n"
        "later = ScriptedProvider([cycle(message('Noted.'))])",
        "%chat allow python",
        "%%chat --provider scripted --script script --builtins python\nchange",
        "%chat undo",
        "print(x, tmp, 'new' in dir(), df.loc[0, 'a'])",
        "%chat undo",
        "%%chat --script later\nWhat changed?",
    ]
    try:
        cells = [kernel.run(source) for source in sources]
        told = kernel.run("print(later.requests[0].events[-1].attachments[0].text)").stdout()
    finally:
        kernel.close()
    chat, undone, check, refused = cells[5:9]
    response = next(e for e in chat.records()[-1]["events"] if e["kind"] == "tool_call_response")
    assert response["state"] == {
        "created": [{"name": "new", "summary": "list[3]"}],
        "rebound": [{"name": "x", "summary": "2"}],
        "deleted": ["tmp"],
        "changed": [{"name": "df", "summary": "DataFrame 2×1 · a: int64"}],
    }
    assert "kernel state: created new (list[3]); rebound x (2); deleted tmp" in response["content"]
    line = undone.stdout().strip()
    assert line.startswith("Undid python call ")
    assert "removed new, restored x, restored tmp; not undone: the in-place changes to df" in line
    assert check.stdout().strip() == "1 old False 10"  # bindings back; the in-place change stays
    assert "there are 0 steps to undo in this kernel, not 1" in "".join(
        o.get("text", "") or o.get("evalue", "") for o in refused.outputs
    )
    # the model hears of the undo in its next request
    assert told.startswith("The user undid your python call ")
    assert "not undone: the in-place changes to df" in told

    # saved, then a new kernel restores the thread: the diff and the undo note come back
    notebook = notebook_from([(s, c.outputs) for s, c in zip(sources, cells, strict=True)])
    path = tmp_path / "undo.ipynb"
    nbformat.write(notebook, path)
    restarted = KernelDriver()
    try:
        restarted.run("%load_ext jupyter_turns")
        assert "Restored thread 'main'" in restarted.run(f"%chat restore {path}").stdout()
        shown = restarted.run(
            "from jupyter_turns.kernel.magic import ChatMagics\n"
            "m = get_ipython().magics_manager.registry['ChatMagics']\n"
            "events = m.session.threads.by_name['main'].chat.conversation.events\n"
            "print([getattr(e, 'state', None) is not None for e in events "
            "if e.kind == 'tool_call_response'])\n"
            "print(events[-2].attachments[0].text.startswith('The user undid your python call'))"
        ).stdout()
        again = restarted.run("%chat undo")
    finally:
        restarted.close()
    assert shown.split() == ["[True]", "True"]
    assert "there are 0 steps to undo in this kernel" in str(again.outputs)
