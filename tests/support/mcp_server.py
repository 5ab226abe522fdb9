"""A small MCP server for the tests, written with the SDK's ``MCPServer``.

Run as a script it serves stdio (the kernel starts it: ``python mcp_server.py``); in the test
process :class:`HttpServer` serves the same tools over streamable HTTP on 127.0.0.1. Every tool
writes what happened to it (``started``, ``cancelled``...) to the file named by the
environment variable ``MCP_TEST_LOG`` (passed to a stdio server with ``--env``), so a test can
see what the server saw.
"""

from __future__ import annotations

import hashlib
import io
import os
import socket
import sys
import threading
from pathlib import Path
from types import TracebackType

import anyio
from mcp.server.mcpserver import Context, Image, MCPServer

SCRIPT = Path(__file__).resolve()
server = MCPServer("testing", log_level="WARNING")


def log(event: str) -> None:
    path = os.environ.get("MCP_TEST_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(f"{event}\n")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    log(f"add {a} {b}")
    return a + b


@server.tool()
def pid() -> int:
    """The server's process id."""
    log("pid")
    return os.getpid()


@server.tool()
def parent() -> int:
    """The process id of the server's parent (a shell that started it, in one test)."""
    log("parent")
    return os.getppid()


@server.tool()
def picture(width: int = 40, height: int = 30) -> Image:
    """A red rectangle as a PNG."""
    from PIL import Image as PILImage

    log("picture")
    buffer = io.BytesIO()
    PILImage.new("RGB", (width, height), (200, 30, 30)).save(buffer, format="PNG")
    return Image(data=buffer.getvalue(), format="png")


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count to ``steps``, reporting progress at each step."""
    log(f"count {steps}")
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted to {steps}"


@server.tool()
async def wait(label: str = "") -> str:
    """Wait a minute (the tests cancel it)."""
    log(f"wait started {label}".strip())
    try:
        await anyio.sleep(60)
    except anyio.get_cancelled_exc_class():
        log(f"wait cancelled {label}".strip())
        raise
    return "waited"


@server.tool()
def crash() -> str:
    """Exit the server's process in the middle of the call."""
    log("crash")
    print("about to crash: the test asked for it", file=sys.stderr, flush=True)
    os._exit(3)


def leaked_tokens() -> list[str]:
    """Made-up tokens shaped like a GitHub and a Slack token (the same in every process)."""
    digest = hashlib.sha256(b"jupyter_turns mcp test").hexdigest()
    return [f"ghp_{digest[:36]}", f"xoxb-{digest[36:48]}-{digest[48:]}"]


@server.tool()
def config() -> str:
    """The server's configuration, as a careless server sends it: with its tokens."""
    log("config")
    github, slack = leaked_tokens()
    return f"github: {github}\nslack: {slack}\nregion: eu-north-1"


class HttpServer:
    """The same server over streamable HTTP on 127.0.0.1, in a thread of the test process.

    The socket is bound before the thread starts, so ``url`` works at once (connections wait
    in the listen queue until the server accepts them).
    """

    def __init__(self) -> None:
        import uvicorn

        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(64)
        port = self._socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/mcp"
        config = uvicorn.Config(server.streamable_http_app(), log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    def __enter__(self) -> HttpServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()


if __name__ == "__main__":
    server.run()
