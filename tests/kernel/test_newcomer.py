"""What a newcomer meets in the first hour, in a real kernel: help that shows up under nbclient,
a readable plain-text history, counts with the right plural, no comm nobody listens to."""

from __future__ import annotations

import pytest

from .kernel import KernelDriver

pytestmark = pytest.mark.kernel


def _comm_targets(kernel: KernelDriver) -> list[str]:
    return [
        m["content"]["target_name"]
        for cell in kernel.cells.values()
        for m in cell.messages
        if m["msg_type"] == "comm_open"
    ]


@pytest.mark.parametrize("line", ["%chat?", "%%chat?", "%chat??", "%chat help"])
def test_help_is_a_cell_output_not_only_the_pager(kernel: KernelDriver, line: str) -> None:
    cell = kernel.run(line)
    assert "%%chat [options]" in cell.stdout()
    assert cell.reply is not None and not cell.reply.get("payload")


def test_history_has_a_plain_text_transcript(kernel: KernelDriver) -> None:
    kernel.run("%%chat --provider scripted\nWhat is 2 + 2?")
    [output] = [
        o for o in kernel.run("%chat history").outputs if o["output_type"] == "display_data"
    ]
    plain = output["data"]["text/plain"]
    assert "What is 2 + 2?" in plain and "Scripted echo" in plain
    assert "IPython.core.display" not in plain
    assert "<" in output["data"]["text/html"]


def test_counts_have_the_right_plural_and_the_first_new_thread_is_main(
    kernel: KernelDriver,
) -> None:
    kernel.run("%%chat --new --provider scripted\nhello")
    listing = kernel.run("%chat threads").stdout()
    assert listing.startswith("* main: 1 turn, 1 answer;")
    kernel.run("%chat new")
    kernel.run("%%chat --provider scripted\nagain")
    listing = kernel.run("%chat threads").stdout()
    assert "* thread-2: 1 turn, 1 answer;" in listing
    cell = kernel.run("%%chat --new --provider scripted\none")
    assert "1 turn, 0 answers." in str(cell.records()[-1])


def test_a_headless_run_opens_no_comm_to_the_lab_extension(kernel: KernelDriver) -> None:
    kernel.run("%%chat --provider scripted\nhello")
    targets = _comm_targets(kernel)
    assert "jupyter.widget" in targets  # the chat widget itself
    assert "jupyter_turns.metadata" not in targets  # "No handler found for comm target"


def test_under_a_notebook_frontend_the_metadata_comm_opens(lab_kernel: KernelDriver) -> None:
    lab_kernel.run("%%chat --provider scripted\nhello")
    assert "jupyter_turns.metadata" in _comm_targets(lab_kernel)
