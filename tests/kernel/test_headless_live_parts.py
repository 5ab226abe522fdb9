"""Headless (nbclient, papermill, nbval, ``jupyter execute``), a long turn's live record is
saved as it grows without resending what it already saved: each save adds an output with only
what is new; a kernel killed mid-turn leaves a file that loads as one conversation; a turn that
ends adds one last output with what the finished record adds, its transcript and summary,
and sends none of the text again."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_turns.record.notebook import load
from tests.support.kernels import execute_notebook

from .kernel import RECORD_MIME, KernelDriver, notebook_from

pytestmark = pytest.mark.kernel

PARAGRAPHS = [f"Paragraph {k}: " + "the answer goes on and on. " * 6 + "\n\n" for k in range(100)]
SHORT = 25  # paragraphs: 2 s of streaming, 4.5 KB in its parts (under KEEP_PARTS)
LONG = 100  # 8 s, 18 KB: its parts stay


def _script(then: str, count: int = 60) -> str:
    """``count`` paragraphs (180 characters each), one every 0.08 s (60: about 5 s of
    streaming, 11 KB), then ``then``."""
    return (
        "from jupyter_turns.model.events import MessageDelta, Part\n"
        "from jupyter_turns.providers.scripted import Delay\n"
        f"PARAGRAPHS = {PARAGRAPHS[:count]!r}\n"
        "script = [[x for p in PARAGRAPHS for x in (Part(0, MessageDelta(p)), Delay(0.08))]"
        f" + {then}]"
    )


def _run_headless(script: str) -> nbformat.NotebookNode:
    """Execute the extension, ``script`` and a chat cell playing it in nbclient; the notebook."""
    cells = [
        "%load_ext jupyter_turns",
        script,
        "%%chat --provider scripted --script script\nWrite it out",
    ]
    notebook = new_notebook(cells=[new_code_cell(source) for source in cells])
    return execute_notebook(notebook)


def _record_bytes(kernel: KernelDriver, msg_id: str) -> list[int]:
    """The size of every record the cell's messages carried, in order (display and update)."""
    return [
        len(json.dumps(m["content"]["data"][RECORD_MIME]))
        for m in kernel.cells[msg_id].messages
        if m["msg_type"] in ("display_data", "update_display_data")
        and RECORD_MIME in m["content"].get("data", {})
    ]


def test_a_killed_headless_turn_keeps_its_streamed_paragraphs_sent_once(tmp_path: Path) -> None:
    kernel = KernelDriver()  # no session: headless, nothing draws the widget
    try:
        kernel.run("%load_ext jupyter_turns")
        kernel.run(_script("[Delay(3600)]"))
        source = "%%chat --provider scripted --script script\nWrite it out"
        cell = kernel.execute(source)

        def saved_text() -> str:
            records = cell.records()
            events = records[-1]["events"] if records else []
            return "".join(e.get("content", "") for e in events if e["kind"] == "message")

        kernel.wait(lambda: PARAGRAPHS[45] in saved_text(), 60, "paragraph 45 saved")
        kernel.km.shutdown_kernel(now=True)  # SIGKILL while the answer still streams
        sizes = _record_bytes(kernel, cell.msg_id)
        path = tmp_path / "crashed.ipynb"
        nbformat.write(notebook_from([(source, cell.outputs)]), path)
    finally:
        kernel.kc.stop_channels()
    # each save after the first carried about a second of new paragraphs, never all of them
    assert len(sizes) >= 4
    assert max(sizes[1:]) < 4 * 1024, sizes
    assert sum(sizes) < 2 * len("".join(PARAGRAPHS[:46]))
    conversation = load(path)["main"]
    _request, answer = conversation.events
    assert answer.kind == "message" and answer.metadata.get("partial")  # type: ignore[union-attr]
    text = answer.content  # type: ignore[union-attr]
    assert PARAGRAPHS[45] in text and "".join(PARAGRAPHS).startswith(text)
    conversation.check_sendable()


def test_a_long_headless_turn_ends_its_parts_without_sending_its_text_again(
    tmp_path: Path,
) -> None:
    notebook = _run_headless(_script("[]", LONG))
    outputs = notebook.cells[2].outputs
    assert {o.output_type for o in outputs} == {"display_data"} and len(outputs) >= 4
    head, *parts, end = (o.data for o in outputs)
    # the live record no longer says it runs; the parts hold the text; the last output ends
    # them with what the finished record adds, the transcript and the summary
    assert head[RECORD_MIME]["live"] is True and head["text/plain"] == ""
    assert all(p[RECORD_MIME]["live"] is True and p["text/plain"] == "" for p in parts)
    assert sorted(end) == [RECORD_MIME, "text/html", "text/plain"]
    assert "live" not in end[RECORD_MIME] and end[RECORD_MIME]["turn"]["outcome"] != "running"
    assert end["text/plain"].startswith("Conversation · thread main · ")
    assert "Paragraph 0:" in end["text/html"] and f"Paragraph {LONG - 1}:" in end["text/html"]
    answer = "".join(PARAGRAPHS[:LONG])
    records = [len(json.dumps(d[RECORD_MIME])) for d in (head, *parts, end)]
    assert sum(records) < 1.5 * len(answer)  # the text once (twice: over 2x), and ids, settings
    path = tmp_path / "done.ipynb"
    nbformat.write(notebook, path)
    answers = [e for e in load(path)["main"].events if e.kind == "message"]
    assert [a.content.strip() for a in answers] == [answer.strip()]  # type: ignore[union-attr]


def test_what_prints_to_the_cell_during_a_long_headless_turn_stays_in_it() -> None:
    """A long answer's parts stay: nothing clears the cell's outputs at the end, and a notice
    printed while the turn ran (here by the script, as a provider's or a library's would)
    stays where it printed, once."""
    say = (
        "from jupyter_turns.providers.scripted import Gate\n"
        "class Say(Gate):\n"
        "    def __init__(self, text):\n"
        "        super().__init__()\n"
        "        self.text = text\n"
        "        self.open()\n"
        "    async def wait(self):\n"
        "        print(self.text, flush=True)\n"
        "        await super().wait()\n"
    )
    script = _script("[]", LONG).replace(
        "script = [[", "script = [[Say('a notice mid-turn')] + [", 1
    )
    assert "Say(" in script
    outputs = _run_headless(say + script).cells[2].outputs
    printed = [o.text for o in outputs if o.output_type == "stream"]
    assert printed == ["a notice mid-turn\n"], outputs
    assert "text/html" in outputs[-1].data and "live" not in outputs[-1].data[RECORD_MIME]


def test_a_shorter_headless_turn_leaves_the_one_final_record_output(tmp_path: Path) -> None:
    """Parts that hold less than KEEP_PARTS go at the end: the one output is the record."""
    notebook = _run_headless(_script("[]", SHORT))
    outputs = notebook.cells[2].outputs
    assert [o.output_type for o in outputs] == ["display_data"]
    data = outputs[0].data
    assert sorted(data) == [RECORD_MIME, "text/html", "text/plain"]
    assert "live" not in data[RECORD_MIME]
    assert data["text/plain"].startswith("Conversation · thread main · ")
    assert "running" not in data["text/plain"] and f"Paragraph {SHORT - 1}" in data["text/html"]
    path = tmp_path / "done.ipynb"
    nbformat.write(notebook, path)
    answers = [e for e in load(path)["main"].events if e.kind == "message"]
    assert [a.content.strip() for a in answers] == ["".join(PARAGRAPHS[:SHORT]).strip()]  # type: ignore[union-attr]


def test_what_prints_to_the_cell_during_a_headless_turn_whose_parts_go_stays_in_it() -> None:
    """The parts' clear at the end takes the cell's other outputs too: a notice printed while
    the turn ran (here by the script, as a provider's or a library's would) is printed again."""
    say = (
        "from jupyter_turns.providers.scripted import Gate\n"
        "class Say(Gate):\n"
        "    def __init__(self, text):\n"
        "        super().__init__()\n"
        "        self.text = text\n"
        "        self.open()\n"
        "    async def wait(self):\n"
        "        print(self.text, flush=True)\n"
        "        await super().wait()\n"
    )
    script = _script("[]", SHORT).replace(
        "script = [[", "script = [[Say('a notice mid-turn')] + [", 1
    )
    assert "Say(" in script
    outputs = _run_headless(say + script).cells[2].outputs
    assert [o.output_type for o in outputs] == ["stream", "display_data"], outputs
    assert outputs[0].text == "a notice mid-turn\n"
    assert RECORD_MIME in outputs[1].data and "live" not in outputs[1].data[RECORD_MIME]
