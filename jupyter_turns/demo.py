"""``python -m jupyter_turns.demo``: run the quickstart notebook offline and print its chats.

Executes ``examples/quickstart.ipynb`` with nbclient (scripted provider: no network, no API
key), saves the executed copy to ``test-artifacts/quickstart.ipynb`` and prints every saved
conversation as markdown, read back from that file. ``--headless-turn`` instead runs one
scripted turn with two parallel tools in plain Python and prints it as it streams.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
from pathlib import Path

from .engine.chat import Chat
from .model.prompter import PolicyPrompter
from .model.sink import PrintSink
from .providers.scripted import ScriptedProvider, cycle, message, reasoning, tool_call
from .text import plural
from .tools import tool

__all__ = ["main"]

ROOT = Path(__file__).resolve().parent.parent


@tool
async def mean(values: list[float]) -> float:
    """The arithmetic mean of ``values``."""
    await asyncio.sleep(0.2)
    return statistics.fmean(values)


@tool
async def spread(values: list[float]) -> float:
    """The population standard deviation of ``values``."""
    await asyncio.sleep(0.1)
    return statistics.pstdev(values)


async def headless_turn() -> None:
    data = {"values": [3, 5, 8, 13]}
    provider = ScriptedProvider(
        [
            cycle(
                reasoning("The user wants a summary; I need the mean and the spread."),
                message("I'll compute both statistics in parallel."),
                tool_call("mean", data, call_id="call_mean"),
                tool_call("spread", data, call_id="call_spread"),
            ),
            cycle(message("The mean is **7.25** and the standard deviation is about **3.77**.")),
        ]
    )
    chat = Chat(
        provider=provider, tools=[mean, spread], prompter=PolicyPrompter("allow"), sink=PrintSink()
    )
    turn = await chat.send("Summarize 3, 5, 8 and 13.")
    print(
        f"\n--- turn {turn.outcome} after {plural(turn.cycles, 'cycle')}: {' → '.join(turn.kinds)}"
    )


def run_quickstart() -> None:
    import nbformat
    from nbclient import NotebookClient

    from .record.notebook import load

    source = ROOT / "examples" / "quickstart.ipynb"
    notebook = nbformat.read(source, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    print(f"Executing {source.relative_to(ROOT)} offline (scripted provider)...")
    NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(source.parent)}},
    ).execute()
    target = ROOT / "test-artifacts" / "quickstart.ipynb"
    target.parent.mkdir(exist_ok=True)
    nbformat.write(notebook, target)
    from .record.transcript import to_markdown

    for name, conversation in load(target).items():
        print(f"\n===== thread {name!r}: {plural(len(conversation), 'event')} =====\n")
        print(to_markdown(conversation.events))
    print(f"Saved the executed notebook to {target.relative_to(ROOT)}.")
    print("Open it interactively with: ./dev.sh lab")


def main() -> None:
    if "--headless-turn" in sys.argv[1:]:
        asyncio.run(headless_turn())
    else:
        run_quickstart()


if __name__ == "__main__":
    main()
