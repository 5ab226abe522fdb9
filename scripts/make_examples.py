"""Build the example notebooks and store their outputs by executing them offline with nbclient.

Run: ``python scripts/make_examples.py [NAME.ipynb ...]`` from the repo root, in the project's
venv: every notebook, or only those named. Most notebooks use ScriptedProvider; replay.ipynb and
providers.ipynb are recorded against the project's local test API servers (``recording`` in
more_examples.py), so no network or API key is needed. nbval then checks that a fresh run
reproduces the stored outputs (``pytest --nbval examples/``).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent.parent / "examples"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from mcp_example import MCP  # noqa: E402
from more_examples import CONTEXT, REPLAY, SUBAGENTS, SWITCH, recording  # noqa: E402  (later features' notebooks)
from provider_example import PROVIDERS  # noqa: E402

QUICKSTART = [
    new_markdown_cell(
        "# jupyter_turns quickstart\n\n"
        "A `%%chat` cell runs one turn of a conversation: your request is the cell body, the "
        "answer streams in below, tool calls wait for your click, and everything is saved in "
        "the notebook. This notebook runs **offline** on the scripted provider, which answers "
        "with a deterministic echo, so you can see the whole pipeline without an API key.\n\n"
        + SWITCH
    ),
    new_code_cell('%load_ext jupyter_turns\n%config ChatMagics.provider = "scripted"'),
    new_markdown_cell("Ask something. The cell stays busy (`[*]`) until the turn ends."),
    new_code_cell("%%chat\nWhat can you do in a notebook?"),
    new_markdown_cell(
        "A later `%%chat` cell continues the same thread; `--new` starts a fresh one and "
        "`--thread NAME` picks one by name."
    ),
    new_code_cell("%%chat\nAnd how do I continue a conversation?"),
    new_code_cell("%chat threads"),
    new_markdown_cell(
        "Scripted answers can be anything you like: reasoning, markdown, tool calls. "
        "Give `--script` a notebook variable holding a list of cycles."
    ),
    new_code_cell(
        "from jupyter_turns.providers.scripted import cycle, message, reasoning\n\n"
        "story = [cycle(\n"
        "    reasoning('The user wants a short summary with a table.'),\n"
        "    message('Here is a **summary**:\\n\\n| step | what |\\n|---|---|\\n'\n"
        "            '| 1 | ask |\\n| 2 | read |\\n\\nThat is all.'),\n"
        ")]"
    ),
    new_code_cell("%%chat --script story --reasoning full\nSummarize the workflow in a table."),
    new_markdown_cell(
        "Use it from plain Python too: `Chat(provider=..., tools=[...], prompter=...)`."
    ),
    new_code_cell(
        "from jupyter_turns import Chat\n"
        "from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message\n\n"
        "chat = Chat(provider=ScriptedProvider([cycle(message('Hello from Python.'))]))\n"
        "turn = await chat.send('Hi')\n"
        "print(turn.outcome, turn.kinds, repr(turn.text))"
    ),
]

TOOLS = [
    new_markdown_cell(
        "# Tools and approval\n\n"
        "Decorate a function with `@tool`: its signature, type hints and docstring become the "
        "schema the model sees, and arguments are validated before every call. Every `@tool` "
        "in the notebook is offered to the model (restrict with `--use a,b`).\n\n"
        "In JupyterLab each call waits for **Approve / Skip / Edit arguments / Always allow**. "
        "In a headless run (nbclient, nbval, `jupyter execute`) nobody can click, so calls are "
        "denied with an explanation unless the cell says `--tools unattended`.\n\n" + SWITCH
    ),
    new_code_cell(
        "%load_ext jupyter_turns\n"
        '%config ChatMagics.provider = "scripted"\n\n'
        "import statistics\n"
        "from jupyter_turns import tool, ToolContext\n"
        "from jupyter_turns.providers.scripted import cycle, message, tool_call\n\n"
        "@tool\n"
        "def mean(values: list[float]) -> float:\n"
        '    """The arithmetic mean of the values."""\n'
        "    return statistics.fmean(values)\n\n"
        "@tool(run='unattended', timeout=10)\n"
        "async def countdown(n: int, ctx: ToolContext):\n"
        '    """Count down from n, reporting progress."""\n'
        "    for i in range(n, 0, -1):\n"
        "        yield f'{i}…'\n"
        "    yield 'lift-off'\n\n"
        "mean.schema"
    ),
    new_markdown_cell(
        "A turn with two tool calls. In this headless run the `ask` tool is denied by "
        "policy (its card says why); `countdown` is declared `unattended` and runs. Open the "
        "notebook in JupyterLab and re-run to click Approve yourself."
    ),
    new_code_cell(
        "script = [\n"
        "    cycle(message('Computing both.'),\n"
        "          tool_call('mean', {'values': [1, 2, 3, 4]}),\n"
        "          tool_call('countdown', {'n': 3})),\n"
        "    cycle(message('Done: the countdown finished; the mean needs your approval.')),\n"
        "]"
    ),
    new_code_cell("%%chat --script script\nAverage 1..4 and count down from 3."),
    new_markdown_cell(
        "With `--tools unattended`, tools without their own mode run without asking."
    ),
    new_code_cell(
        "script2 = [cycle(tool_call('mean', {'values': [2, 4, 9]})), "
        "cycle(message('The mean is **5**.'))]"
    ),
    new_code_cell("%%chat --script script2 --tools unattended\nAverage 2, 4 and 9."),
    new_markdown_cell(
        "Bad calls never crash the turn: an unknown tool, arguments that fail the schema or a "
        "tool that raises all become error results the model reads."
    ),
    new_code_cell(
        "@tool(run='unattended')\n"
        "def divide(a: float, b: float) -> float:\n"
        '    """a / b"""\n'
        "    return a / b\n\n"
        "script3 = [\n"
        "    cycle(tool_call('divide', {'a': 1, 'b': 0}),\n"
        "          tool_call('divide', {'a': 'one'}),\n"
        "          tool_call('no_such_tool', {})),\n"
        "    cycle(message('Three errors, all reported back to me.')),\n"
        "]"
    ),
    new_code_cell("%%chat --script script3\nTry some bad calls."),
    new_markdown_cell(
        "The read-only notebook tools (`notebook_cells`, `cell_output`, `variables`, `inspect`) "
        "are offered by default and never ask; `python` is opt-in (`--builtins python`) and "
        "always asks first."
    ),
    new_code_cell(
        "rain = {'Oslo': 76.0, 'Pune': 722.5}\n"
        "script4 = [cycle(tool_call('inspect', {'name': 'rain'})), "
        "cycle(message('`rain` maps two cities to their rainfall in mm.'))]"
    ),
    new_code_cell("%%chat --script script4\nWhat is in `rain`?"),
]

INTERRUPTS = [
    new_markdown_cell(
        "# Interrupts and retries\n\n"
        "While a turn streams, the **Stop** button (or the toolbar ■ / `Esc`) opens a menu: "
        "**Stop** keeps what arrived, **Abort** discards the current cycle, **Reply** says "
        "something now, **Continue** resumes (or, if the stream died, asks the model to "
        "continue from where it stopped). While tools run: Stop / Restart / Continue. A second "
        "kernel interrupt aborts the cell.\n\n"
        "Transient API errors (429, 529, 5xx, dropped connections) are retried with backoff "
        "while nothing of the answer has been shown; the wait is visible in the widget.\n\n"
        + SWITCH
    ),
    new_code_cell(
        "%load_ext jupyter_turns\n"
        '%config ChatMagics.provider = "scripted"\n'
        "import asyncio\n"
        "from jupyter_turns import Chat, PrintSink, ProviderError\n"
        "from jupyter_turns.providers.scripted import ScriptedProvider, Fail, Gate, cycle, message"
    ),
    new_markdown_cell(
        "A rate limit with `retry-after: 1` — the cell waits one second, visibly, then the "
        "answer arrives."
    ),
    new_code_cell(
        "rate_limited = Fail(ProviderError('rate limited', kind='rate_limit', retryable=True, "
        "retry_after=1, status=429))\n"
        "script = [rate_limited, cycle(message('Answered after one retry.'))]"
    ),
    new_code_cell("%%chat --script script\nHello?"),
    new_markdown_cell(
        "A stream that breaks after some text was shown is **not** retried silently: the text "
        "is kept and you are offered Continue. Headless, the policy stops and keeps it."
    ),
    new_code_cell(
        "words = cycle(message('This answer breaks off half way'))\n"
        "broken = [*words[:4], Fail(ProviderError('connection reset', kind='connection', "
        "retryable=True))]\n"
        "script2 = [broken]"
    ),
    new_code_cell("%%chat --script script2\nTell me a long story."),
    new_markdown_cell(
        "The same from Python: `chat.interrupt(...)` works from any thread (a button, a signal "
        "handler). Here a `Gate` holds the scripted stream so the Stop lands at a known point."
    ),
    new_code_cell(
        "gate = Gate()\n"
        "items = cycle(message('One two three four five six seven eight.'))\n"
        "chat = Chat(provider=ScriptedProvider([[*items[:4], gate, *items[4:]]]), "
        "sink=PrintSink())\n"
        "task = asyncio.create_task(chat.send('Count to eight'))\n"
        "while not gate.reached:\n"
        "    await asyncio.sleep(0.01)\n"
        "chat.interrupt('stop')\n"
        "gate.open()\n"
        "turn = await task\n"
        "print()\n"
        "print(turn.outcome, [e.kind for e in turn])\n"
        "print(repr(turn.text))"
    ),
]

PERSISTENCE = [
    new_markdown_cell(
        "# Persistence and restore\n\n"
        "Every conversation event is saved into the notebook:\n\n"
        "* an **output record** under each chat cell (mime `application/vnd.jupyter-turns+json`"
        " plus a folded markdown transcript), written at every cycle boundary;\n"
        "* the cell's and the notebook's **metadata** (`jupyter_turns`), written by the small "
        "JupyterLab / Notebook 7 extension this package ships;\n"
        "* the widget's state, when the frontend saves it.\n\n"
        "After a kernel restart the first `%%chat` finds the notebook file, rebuilds the "
        "threads and continues. `%chat restore PATH` does it by hand; "
        "`jupyter_turns.record.notebook.load(path)` reads a notebook without a kernel.\n\n" + SWITCH
    ),
    new_code_cell('%load_ext jupyter_turns\n%config ChatMagics.provider = "scripted"'),
    new_code_cell("%%chat --thread notes\nRemember: the meeting is on Tuesday."),
    new_markdown_cell(
        "Read the conversations saved in a notebook — here the copy of this notebook on disk "
        "(run the cell above, save, and run this again to see it change)."
    ),
    new_code_cell(
        "from jupyter_turns.record.notebook import load, export_markdown\n\n"
        "saved = load('persistence-and-restore.ipynb')\n"
        "for name, conversation in saved.items():\n"
        "    print(name, [e.kind for e in conversation.events])"
    ),
    new_code_cell("print(export_markdown('persistence-and-restore.ipynb', 'notes'))"),
    new_markdown_cell(
        "Restore threads into this kernel from the saved file (what a restarted kernel does by "
        "itself on the first `%%chat` in JupyterLab):"
    ),
    new_code_cell("%chat restore persistence-and-restore.ipynb\n%chat threads"),
]

NOTEBOOKS = {
    "quickstart.ipynb": QUICKSTART,
    "tools-and-approval.ipynb": TOOLS,
    "interrupts-and-retries.ipynb": INTERRUPTS,
    "persistence-and-restore.ipynb": PERSISTENCE,
    "notebook-context.ipynb": CONTEXT,
    "subagents.ipynb": SUBAGENTS,
    "replay.ipynb": REPLAY,
    "mcp.ipynb": MCP,
    "providers.ipynb": PROVIDERS,
}


def build(name: str, cells: list[object]) -> None:
    path = HERE / name
    # The restore example reads its own saved copy: run it twice, so the second run (whose
    # outputs are stored) finds the first run's records on disk.
    passes = 2 if name == "persistence-and-restore.ipynb" else 1
    for number in range(passes):
        notebook = new_notebook(cells=[nbformat.from_dict(cell) for cell in cells])
        notebook.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
        }
        notebook.metadata["language_info"] = {"name": "python"}
        client = NotebookClient(
            notebook,
            timeout=120,
            kernel_name="python3",
            allow_errors=number < passes - 1,
            resources={"metadata": {"path": str(HERE)}},
        )
        # the replay example talks to the local API server; a throwaway Jupyter data directory
        # signs the saved settings with a key nobody holds, so no example grants anything
        with recording(name) as env, tempfile.TemporaryDirectory() as data:
            client.km = client.create_kernel_manager()
            client.start_new_kernel(env={**os.environ, **env, "JUPYTER_DATA_DIR": data})
            client.execute()
        nbformat.write(notebook, path)
    print(f"wrote {path.relative_to(HERE.parent)}")


def main(names: list[str]) -> None:
    HERE.mkdir(exist_ok=True)
    unknown = sorted(set(names) - set(NOTEBOOKS))
    if unknown:
        raise SystemExit(
            f"no such example notebook: {', '.join(unknown)} (one of {', '.join(NOTEBOOKS)})"
        )
    for name, cells in NOTEBOOKS.items():
        if not names or name in names:
            build(name, cells)


if __name__ == "__main__":
    main(sys.argv[1:])
