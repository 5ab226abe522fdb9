"""The notebook served to terminal agents: ``%chat serve`` (docs/agents.md).

::

 protocol.py   the tools as MCP shows them (schemas, truthful annotations), results as content
 server.py     McpHost: Streamable HTTP on 127.0.0.1 from a thread of its own; the token, Host
               and Origin checks; each call handed to the kernel's loop, progress while it waits
 calls.py      ServeSession: the calls run like a turn's tool calls (executor, widget, record)
 runtime.py    the 0600 runtime file naming each server, for the bridge
 bridge.py     ``jupyter turns mcp``: a stdio server relaying to a running one

``runtime.py`` and ``bridge.py`` import no Jupyter; ``server.py`` and ``protocol.py`` need the
``mcp`` extra (``pip install 'jupyter_turns[mcp]'``). See docs/architecture.md, "The notebook
served to terminal agents".
"""

from __future__ import annotations
