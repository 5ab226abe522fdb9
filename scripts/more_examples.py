"""The example notebooks of the notebook-reading and sub-agent features (see make_examples.py)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

from nbformat.v4 import new_code_cell, new_markdown_cell

SWITCH = (
    "> **Talk to Claude instead:** set `ANTHROPIC_API_KEY` in the environment before starting "
    "Jupyter, or run `%chat key` (a hidden prompt), or put it in a `.env` file next to the "
    "notebook — never in a cell, whose source is saved. Then use `%%chat --provider anthropic` "
    '(optionally `--model claude-sonnet-5-5`) or `%config ChatMagics.provider = "anthropic"`.'
)

CONTEXT = [
    new_markdown_cell(
        "# Chatting with the notebook\n\n"
        "The model reads the notebook through read-only tools offered by default: "
        "`notebook_cells` (an outline of every cell), `cell_output` (one cell's outputs, "
        "images included), `variables` and `inspect`. They never ask and every call shows as "
        "a tool card. `@name` in a request attaches a variable. Here a scripted model reads a "
        "DataFrame, a failing cell and a plot. Code cells come one after another so that each "
        "cell's position is also its execution count: the script's indexes then fit whether "
        "the cells are read from the page (JupyterLab) or from the kernel's history (nbclient, "
        "nbval).\n\n" + SWITCH
    ),
    new_code_cell(
        '%load_ext jupyter_turns\n%config ChatMagics.provider = "scripted"\n%matplotlib inline'
    ),
    new_code_cell(
        "import pandas as pd\n\n"
        "rain = pd.DataFrame({'city': ['Oslo', 'Lima', 'Pune'], 'rain_mm': [76.0, 1.2, 722.5]})\n"
        "rain"
    ),
    new_code_cell(
        "def mean_rain(frame):\n    columns = dict(frame.items())\n"
        "    return columns['rain'].mean()\n\nmean_rain(rain)",
        metadata={"tags": ["raises-exception"]},  # it fails on purpose; nbval expects that
    ),
    new_code_cell(
        "import matplotlib.pyplot as plt\n\n"
        "fig, ax = plt.subplots(figsize=(4, 2.5), dpi=60)\n"
        "ax.bar(rain.city, rain.rain_mm)\n_ = ax.set_ylabel('rain (mm)')"
    ),
    new_code_cell(
        "# What the scripted model does: list the cells and variables, read the outputs of\n"
        "# the cells at indexes 3 and 4 (shown as [3] and [4] when run from the top).\n"
        "from jupyter_turns.providers.scripted import cycle, message, tool_call\n\n"
        "reader = [\n"
        "    cycle(tool_call('notebook_cells', {}), tool_call('variables', {})),\n"
        "    cycle(tool_call('cell_output', {'index': 3}), "
        "tool_call('cell_output', {'index': 4})),\n"
        "    cycle(message(\"Cell [3] fails with `KeyError: 'rain'`: the column is `rain_mm`. \"\n"
        "                  'The plot in cell [4] shows Pune far wetter than Oslo and Lima.')),\n"
        "]"
    ),
    new_code_cell("%%chat --script reader\nWhy does cell [3] fail, and what does the plot show?"),
    new_code_cell("%%chat --new\nWhich city is wettest in @rain?"),
]


RAINFALL = '''\
from jupyter_turns import subagent, tool
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, reasoning, tool_call

@tool(run="ask")  # asks before every call, inside a sub-agent too
def rainfall(city: str) -> str:
    """Yearly rainfall of a city."""
    return {"Oslo": "763 mm", "Lima": "16 mm", "Pune": "722 mm"}[city]

analyst = ScriptedProvider([
    cycle(reasoning("I need the number."), message("Looking up Lima."),
          tool_call("rainfall", {"city": "Lima"})),
    cycle(message("Lima gets about **16 mm** a year: one of the driest capitals.")),
])
researcher = subagent("researcher", "Looks up climate facts.", tools=[rainfall],
                      provider=analyst, run="unattended")

script = [
    cycle(tool_call("researcher", {"request": "How dry is Lima?"})),
    cycle(message("The researcher found that Lima is very dry: about 16 mm a year.")),
]'''

SUBAGENTS = [
    new_markdown_cell(
        "# Sub-agents\n\n"
        "A tool can itself be an agent: `subagent(name, description, tools=..., model=..., "
        "system=...)` makes a tool whose call runs a nested turn with its own model, system "
        "prompt and tools. Its work is not a black box: its reasoning, text and tool calls "
        "stream into the calling tool card as a nested transcript, its tool calls ask for "
        "approval with the same buttons, Stop reaches it, and the calling model receives only "
        "its final answer. Here both models are scripted.\n\n" + SWITCH
    ),
    new_code_cell('%load_ext jupyter_turns\n%config ChatMagics.provider = "scripted"'),
    new_code_cell(RAINFALL),
    new_markdown_cell(
        "In JupyterLab the nested `rainfall` call waits for your **Approve** inside the "
        "researcher's card. A headless run (nbclient, nbval) has nobody to click: "
        "`--tools unattended` lets its policy approve (never `python`)."
    ),
    new_code_cell("%%chat --script script --tools unattended\nHow dry is Lima?"),
]

TABLE_TOOL = '''\
from jupyter_turns import tool

@tool(run="unattended")
def make_table(rows: int) -> str:
    """Make a table of squares with `rows` rows (kept in the variable `table`)."""
    global table
    table = [(n, n * n) for n in range(1, rows + 1)]
    return f"made {rows} rows: {table}"'''

REPLAY = [
    new_markdown_cell(
        "# Replay: a chat notebook that re-runs offline\n\n"
        "This notebook was recorded against the Anthropic API (here: the project's local test "
        "server) — a turn with reasoning and a tool call. Every event is saved in the notebook, "
        "so it re-runs **without the API, a key or money**: with replay on, each `%%chat` "
        "cell plays its saved turn through the same pipeline, **runs its tools again for "
        "real** (the next cell uses the variable the tool created) and compares their results "
        "with the recorded ones.\n\n"
        '* `%config ChatMagics.replay = "auto"` (the default) replays Anthropic cells when no '
        'API key is set; `"on"` replays every chat cell and fails a cell whose request '
        'changed; `"off"` never replays. In CI set `JUPYTER_TURNS_REPLAY=on`: the variable '
        "wins, so the notebook runs unchanged.\n"
        "* `--replay-tools saved` uses the saved results instead of running the tools; "
        '`%config ChatMagics.replay_check = "strict"` fails a cell whose tool now answers '
        "differently (the default warns in the tool card)."
    ),
    new_code_cell("%load_ext jupyter_turns"),
    new_code_cell(TABLE_TOOL),
    new_code_cell(
        "%%chat --provider anthropic --model claude-haiku-4-5\nMake a table of squares with 4 rows."
    ),
    new_code_cell("print(table[-1])  # made by the tool, again, when the notebook is replayed"),
]


@contextlib.contextmanager
def recording(name: str) -> Iterator[dict[str, str]]:
    """The environment a notebook is recorded in: for the replay example, a key and the local
    test API server playing a turn with reasoning and a tool call; for the providers example, the
    Anthropic and OpenAI test servers (provider_example.py); for the others nothing."""
    if name == "providers.ipynb":
        from provider_example import provider_recording

        with provider_recording() as env:
            yield env
        return
    if name != "replay.ipynb":
        yield {}
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.support.anthropic_server import AnthropicTestServer, Reply
    from tests.support.anthropic_sse import ToolUse, sse_text_response, sse_thinking_response

    with AnthropicTestServer() as server:
        server.enqueue(
            Reply.sse(
                sse_thinking_response(
                    ["A table of squares: the tool makes it."],
                    ["I'll make the table."],
                    tool=ToolUse("make_table", {"rows": 4}, id="toolu_example_table"),
                    stop_reason="tool_use",
                )
            ),
            Reply.sse(sse_text_response(["Done: the table has **4 rows**, ", "up to 4² = 16."])),
        )
        yield {"ANTHROPIC_API_KEY": "sk-example-not-a-key", "ANTHROPIC_BASE_URL": server.url}
        server.assert_all_served()
