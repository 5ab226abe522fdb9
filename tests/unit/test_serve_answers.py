"""Which POSTs ``%chat serve`` answers in one JSON body (``serve/answers.quick_call``): only a
``tools/call`` of a read, asking for no progress, while no cell runs; anything else, however
malformed, keeps the SSE stream (and the SDK answers what is wrong with it)."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_turns.serve.answers import quick_call

READS = frozenset({"inspect", "variables"})


def _call(name: Any = "inspect", **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": name, **params}}


def test_a_read_asking_for_no_progress_while_no_cell_runs_is_quick() -> None:
    assert quick_call(_call(arguments={"name": "df"}), READS, lambda: False)
    assert quick_call(_call("variables", _meta={"other": 1}), READS, lambda: False)


@pytest.mark.parametrize(
    ("message", "why"),
    [
        (_call("insert_cell"), "a tool that may ask"),
        (_call("Inspect"), "no tool of that name"),
        (_call(["inspect"]), "a name that is no name"),
        (_call(_meta={"progressToken": 0}), "progress asked for (a token of 0 is a token)"),
        (_call(_meta={"progressToken": "t"}), "progress asked for"),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, "not a call"),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}, "no params"),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "inspect"}, "odd params"),
        ([_call()], "a batch"),
        (None, "a body that is no JSON"),
        ("tools/call", "a string"),
    ],
)
def test_anything_else_keeps_the_stream(message: Any, why: str) -> None:
    assert not quick_call(message, READS, lambda: False), why


def test_a_read_while_a_cell_runs_keeps_the_stream() -> None:
    asked: list[bool] = []

    def busy() -> bool:
        asked.append(True)
        return True

    assert not quick_call(_call(), READS, busy)
    assert asked == [True]
