"""What a python run did to the namespace, and undoing it (names, cells, the order)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from jupyter_turns.editing.page import PageError
from jupyter_turns.editing.undo import UndoLog, UndoRefused, describe
from jupyter_turns.kernel_tools.code_run import run_code
from jupyter_turns.kernel_tools.state_diff import MAX_ELEMENTS, StateDiff, diff, snapshot


def _run(space: dict[str, Any], code: str, log: UndoLog, call_id: str = "call") -> StateDiff:
    before, previous = snapshot(space), dict(space)
    run_code(code, space)
    state = diff(before, space)
    log.record(call_id, "python", previous, state)
    return state


async def _undo(log: UndoLog, space: dict[str, Any], **how: Any) -> list[str]:
    return [describe(await step.revert(space, None)) for step in log.take(**how)]


async def test_created_rebound_deleted_and_changed_in_place_are_told_apart() -> None:
    space = {
        "df": pd.DataFrame({"a": [1, 2]}),
        "items": [1, 2],
        "x": 1,
        "tmp": "gone soon",
        "np": np,  # a module: never part of the state
    }
    log = UndoLog()
    state = _run(
        space,
        "df.loc[0, 'a'] = 10\nitems.append(3)\nx = 2\ndel tmp\nnew = np.zeros((3, 4))",
        log,
    )
    assert [n for n, _ in state.created] == ["new"]
    assert state.created[0][1] == "ndarray (3, 4) float64"
    assert [n for n, _ in state.rebound] == ["x"]
    assert state.deleted == ["tmp"]
    assert sorted(n for n, _ in state.changed) == ["df", "items"]
    text = state.text()
    assert text.startswith("kernel state: created new (ndarray (3, 4) float64); rebound x (2)")
    assert "deleted tmp" in text and "changed in place" in text
    assert state.as_dict()["deleted"] == ["tmp"]

    [line] = await _undo(log, space)
    assert space["x"] == 1 and space["tmp"] == "gone soon" and "new" not in space
    assert line.startswith("Undid python call call: removed new, restored x, restored tmp")
    assert "not undone: the in-place changes to df, items" in line
    assert "files written and other side effects of the code" in line
    assert space["items"] == [1, 2, 3]  # an in-place change stays, as said


async def test_undo_goes_newest_first_and_refuses_an_earlier_step_or_more_than_there_is() -> None:
    space: dict[str, Any] = {"x": 0}
    log = UndoLog()
    _run(space, "x = 1", log, "first")
    _run(space, "x = 2", log, "second")
    with pytest.raises(UndoRefused, match="there are 2 steps to undo in this kernel, not 3"):
        log.take(count=3)
    with pytest.raises(UndoRefused, match=r"undo the later 1 step first \(python second\)"):
        log.take(call_id="first")
    assert (await _undo(log, space, call_id="second"))[0].startswith(
        "Undid python call second: restored x"
    )
    assert space["x"] == 1
    await _undo(log, space, call_id="first")
    assert space["x"] == 0 and log.steps == []
    with pytest.raises(UndoRefused, match="undone already, or the kernel restarted"):
        log.take(call_id="first")


class FakePage:
    """The page's answers to undo's cell changes: each cell's text, refusing a changed one."""

    def __init__(self, cells: dict[str, str]) -> None:
        self.cells = cells

    def _check(self, cell_id: str, expected: str) -> None:
        if self.cells.get(cell_id) != expected:
            raise PageError("the cell changed since")

    async def delete(self, cell_id: str, expected: str) -> None:
        self._check(cell_id, expected)
        del self.cells[cell_id]

    async def set_source(
        self, cell_id: str, source: str, expected: str, stamp: object = None
    ) -> int:
        self._check(cell_id, expected)
        self.cells[cell_id] = source
        return 0


async def test_cells_are_removed_and_restored_unless_the_user_changed_them() -> None:
    page = FakePage({"new": "print(1)", "old": "x = 2"})
    log = UndoLog()
    log.record(
        "ins", "insert_cell", {}, None, cell={"op": "insert", "cell_id": "new", "after": "print(1)"}
    )
    edit = {"op": "edit", "cell_id": "old", "before": "x = 1", "after": "x = 2"}
    log.record("ed", "edit_cell", {}, None, cell=edit)
    [edited] = log.take()
    undone = await edited.revert({}, page)
    assert undone.done == ["restored the edited cell's earlier text"] and not undone.not_undone
    assert page.cells["old"] == "x = 1"

    page.cells["new"] = "print(1)  # the user's own change"
    [inserted] = log.take()
    kept = await inserted.revert({}, page)
    assert kept.done == [] and kept.not_undone == ["the inserted cell (the cell changed since)"]
    assert "new" in page.cells  # the user's text is never thrown away


def test_big_objects_are_not_fingerprinted() -> None:
    space = {"big": np.zeros(MAX_ELEMENTS + 1, dtype=np.int8)}
    log = UndoLog()
    state = _run(space, "big[0] = 1", log)
    assert not state  # too big to compare cheaply: not reported as changed
