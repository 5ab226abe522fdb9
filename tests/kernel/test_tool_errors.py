"""A tool that raises inside a library call, in a real kernel: the record shows the exception,
the line of the user's own cell it came through and the full traceback (folded in the card);
the model reads the exception and the user's line, not a location deep inside pandas."""

from __future__ import annotations

import json
import textwrap

import pytest

from .kernel import KernelDriver

pytestmark = pytest.mark.kernel

LOADER = textwrap.dedent(
    """
    import pandas as pd
    from jupyter_turns import tool
    from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call

    @tool(run="unattended")
    def load_table(path: str) -> str:
        '''Load a CSV file.'''
        df = pd.read_csv(path)
        return df.to_string()

    script = ScriptedProvider([
        cycle(tool_call('load_table', {'path': 'missing.csv'}, call_id='c1')),
        cycle(message('It is missing.')),
    ])
    """
)


def test_a_tool_raising_in_pandas_names_the_users_line_and_keeps_the_traceback(
    kernel: KernelDriver,
) -> None:
    kernel.run(LOADER)
    cell = kernel.run("%%chat --provider scripted --script script\nLoad it.")
    (response,) = [e for e in cell.records()[-1]["events"] if e["kind"] == "tool_call_response"]
    content = response["content"]
    assert content.startswith("The tool raised FileNotFoundError: [Errno 2] No such file")
    assert "missing.csv" in content
    # the user's own line (the cell), not pandas' get_handle
    assert "(at notebook cell, line 8, in load_table: df = pd.read_csv(path))" in content
    assert "get_handle" not in content and "site-packages" not in content
    assert response["is_error"] and response["status"] == "error"
    # the full traceback is saved for the card, from the tool's own frame down into pandas
    (error,) = response["outputs"]
    assert (error["output_type"], error["ename"]) == ("error", "FileNotFoundError")
    traceback = "\n".join(error["traceback"])
    assert traceback.startswith("Traceback (most recent call last):")
    assert "in load_table" in traceback and "in get_handle" in traceback
    assert "jupyter_turns" not in traceback  # the machinery that called the tool is left out
    # the model got the concise text (exception + the user's line), not the traceback
    shown = kernel.run("import json; print(json.dumps(script.requests[1].events[-1].content))")
    assert json.loads(shown.stdout()) == content
