"""The example notebook of MCP servers (see make_examples.py): examples/mcp.ipynb."""

from __future__ import annotations

from more_examples import SWITCH
from nbformat.v4 import new_code_cell, new_markdown_cell

MCP = [
    new_markdown_cell(
        "# MCP servers as tools\n\n"
        "Bring tools as [MCP](https://modelcontextprotocol.io) servers: a command the kernel "
        "starts (stdio) or a URL (streamable HTTP). Their tools are offered to the model like "
        "your own `@tool` functions: each call asks first, shows in a tool card with the "
        "server's progress, and Stop cancels it. This notebook starts `weather_server.py`, a "
        "small server next to it written with the MCP SDK's `MCPServer`, and talks to it "
        "through the scripted provider: offline, no key. MCP needs the extra: "
        "`pip install 'jupyter_turns[mcp]'`.\n\n" + SWITCH
    ),
    new_code_cell('%load_ext jupyter_turns\n%config ChatMagics.provider = "scripted"\nimport sys'),
    new_markdown_cell(
        "Add the server: a command after `--` (here this kernel's own Python running the "
        "server file), or `%chat mcp add NAME URL` for an HTTP server. Nothing starts yet: a "
        "server starts when a chat first uses it, and then serves every thread of the kernel."
    ),
    new_code_cell("%chat mcp add weather -- {sys.executable} weather_server.py\n%chat mcp list"),
    new_markdown_cell(
        "Its tools are named `mcp__weather__forecast` and `mcp__weather__chart` and carry the "
        "server's JSON schema. In JupyterLab each call waits for **Approve / Skip / Edit / "
        "Always allow**. This notebook also runs headless (nbclient, nbval), where nobody can "
        "click: the call is skipped by policy, and the model is told why."
    ),
    new_code_cell(
        "from jupyter_turns.providers.scripted import cycle, message, tool_call\n\n"
        "asked = [\n"
        "    cycle(tool_call('mcp__weather__forecast', {'city': 'Oslo', 'days': 3})),\n"
        "    cycle(message('Nobody could approve the forecast call, so I have no forecast.')),\n"
        "]"
    ),
    new_code_cell("%%chat --script asked\nWhat is the weather in Oslo?"),
    new_markdown_cell(
        "`--tools unattended` lets this cell's calls run without asking (`%chat mcp add "
        "weather --run unattended -- ...` would do it for every tool of the server). The "
        "forecast reports progress, one line per day in the tool card; the chart comes back as "
        "an image, which the model sees as an image block. Arguments are checked against the "
        "server's schema first: the third call never reaches the server."
    ),
    new_code_cell(
        "script = [\n"
        "    cycle(\n"
        "        tool_call('mcp__weather__forecast', {'city': 'Bergen', 'days': 3}),\n"
        "        tool_call('mcp__weather__chart', {'city': 'Bergen'}),\n"
        "        tool_call('mcp__weather__forecast', {'city': 'Bergen', 'days': 'many'}),\n"
        "    ),\n"
        "    cycle(message('Bergen stays wet: **22.5 mm** of rain on day 2, then it eases.')),\n"
        "]"
    ),
    new_code_cell("%%chat --tools unattended --script script\nAnd in Bergen? Show me the rain."),
    new_code_cell("%chat mcp list"),
    new_markdown_cell(
        "A server that crashes gives the model an error result and you a notice; the next call "
        "starts it again. `%chat mcp restart NAME` restarts it by hand, `%chat mcp remove NAME` "
        "closes it (so does the kernel's shutdown). `%config ChatMagics.mcp_servers = {...}`, "
        "also in `ipython_config.py`, configures servers for every session; the threads record "
        "which servers they used (names and commands, never secrets)."
    ),
    new_code_cell("%chat mcp remove weather"),
]
