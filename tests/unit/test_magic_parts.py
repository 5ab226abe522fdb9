"""Pieces of the magic that need no kernel: the await transformer and the ipykernel check."""

from __future__ import annotations

import types

import pytest

from jupyter_turns.kernel.cell_hooks import await_chat_cells
from jupyter_turns.kernel.cell_hooks import check_ipykernel as _check_ipykernel


def test_chat_cells_become_awaited() -> None:
    lines = ["get_ipython().run_cell_magic('chat', '--new', 'hello\\n')\n"]
    assert await_chat_cells(lines) == [
        "await get_ipython().run_cell_magic('chat', '--new', 'hello\\n')\n"
    ]


@pytest.mark.parametrize(
    "line",
    [
        "get_ipython().run_cell_magic('chatter', '', 'x')\n",
        "get_ipython().run_cell_magic('time', '', 'x')\n",
        "x = 1\n",
    ],
)
def test_other_cells_are_left_alone(line: str) -> None:
    assert await_chat_cells([line]) == [line]


def test_an_old_ipykernel_gets_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        __import__("sys").modules, "ipykernel", types.SimpleNamespace(__version__="7.3.2")
    )
    with pytest.raises(ImportError, match=r"ipykernel >= 7.4 \(this kernel has 7.3.2\)"):
        _check_ipykernel()
    monkeypatch.setitem(
        __import__("sys").modules, "ipykernel", types.SimpleNamespace(__version__="7.4.0")
    )
    _check_ipykernel()
