"""``jupyter turns mcp``: the stdio bridge to a notebook's ``%chat serve``, spawned by the real
``mcp`` SDK's stdio client as a terminal agent spawns it; it reaches the one running server,
or the one of the notebook it is named, and says plainly when none runs."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from .kernel import KernelDriver
from .serving import CLAUDE, start_serving, text_of

pytestmark = pytest.mark.kernel


def _bridge(runtime: Path, *args: str) -> StdioServerParameters:
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime)}
    command = [sys.executable, "-m", "jupyter_turns.serve.bridge", "mcp", *args]
    return StdioServerParameters(command=command[0], args=command[1:], env=env)


async def _through(params: StdioServerParameters) -> tuple[list[str], types.CallToolResult]:
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, client_info=CLAUDE) as session,
    ):
        await session.initialize()
        listed = await session.list_tools()
        result = await session.call_tool("variables", {"pattern": "bridged*"})
        return [t.name for t in listed.tools], result


def test_the_bridge_relays_to_the_running_server_and_names_the_notebook(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    notebook = tmp_path / "analysis.ipynb"
    kernel = KernelDriver(
        env={"JUPYTER_RUNTIME_DIR": str(runtime), "JPY_SESSION_NAME": str(notebook)}
    )
    try:
        kernel.run("%load_ext jupyter_turns")
        kernel.run("bridged_total = 1234")
        info = start_serving(kernel, runtime, "%chat serve --tools read")
        names, result = asyncio.run(_through(_bridge(runtime)))
        named, _ = asyncio.run(_through(_bridge(runtime, "--notebook", str(notebook))))
        status = kernel.run("%chat serve").stdout()
        wrong = subprocess.run(
            _command(runtime, "--notebook", str(tmp_path / "other.ipynb")),
            capture_output=True, text=True, timeout=120, env=_env(runtime),
        )  # fmt: skip
    finally:
        kernel.close()
    assert info.notebook == str(notebook) and info.tools == "read"
    assert sorted(names) == ["cell_output", "inspect", "notebook_cells", "variables"]
    assert sorted(named) == sorted(names)
    assert not result.is_error and "1234" in text_of(result)
    assert "Claude Code (2 calls)" in status
    assert wrong.returncode == 1
    assert f"no notebook server runs for {tmp_path / 'other.ipynb'}" in wrong.stderr
    assert str(notebook) in wrong.stderr  # it names what does run


def test_with_nothing_serving_the_bridge_says_so_and_exits(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    (runtime / "jupyter_turns-mcp-1-2.json").write_text("{}")  # another user's? too open
    (runtime / "jupyter_turns-mcp-1-2.json").chmod(0o644)
    done = subprocess.run(
        _command(runtime), capture_output=True, text=True, timeout=120, env=_env(runtime)
    )
    assert done.returncode == 1
    assert "no notebook is serving: run `%chat serve` in a notebook cell first" in done.stderr
    assert "jupyter_turns-mcp-1-2.json: others can read it (mode 644)" in done.stderr
    assert done.stdout == ""  # nothing a client would read as a message


def test_jupyter_finds_the_bridge_as_a_subcommand() -> None:
    jupyter = shutil.which("jupyter", path=str(Path(sys.executable).parent))
    assert jupyter is not None
    shown = subprocess.run(
        [jupyter, "turns", "mcp", "--help"], capture_output=True, text=True, timeout=120
    )
    assert shown.returncode == 0, shown.stderr
    assert "--notebook" in shown.stdout


def _env(runtime: Path) -> dict[str, str]:
    return {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime)}


def _command(runtime: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "jupyter_turns.serve.bridge", "mcp", *args]
