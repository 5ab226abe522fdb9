"""What a python run did to the namespace, and undoing it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jupyter_turns.tools.builtin import run_code
from jupyter_turns.tools.state_diff import MAX_ELEMENTS, UndoLog, diff, snapshot


def _run(space: dict, code: str, log: UndoLog, call_id: str = "call"):  # type: ignore[no-untyped-def,type-arg]
    before, previous = snapshot(space), dict(space)
    run_code(code, space)
    state = diff(before, space)
    log.record(call_id, previous, state)
    return state


def test_created_rebound_deleted_and_changed_in_place_are_told_apart() -> None:
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

    lines = log.undo(space)
    assert space["x"] == 1 and space["tmp"] == "gone soon" and "new" not in space
    assert "cannot undo the in-place changes to df, items" in lines[0]
    assert space["items"] == [1, 2, 3]  # an in-place change stays, as said


def test_undo_goes_newest_first_and_refuses_more_than_there_is() -> None:
    space: dict = {"x": 0}  # type: ignore[type-arg]
    log = UndoLog()
    _run(space, "x = 1", log, "first")
    _run(space, "x = 2", log, "second")
    with pytest.raises(ValueError, match="2 python runs to undo in this kernel, not 3"):
        log.undo(space, 3)
    assert log.undo(space)[0].startswith("Undid python call second: restored x")
    assert space["x"] == 1
    log.undo(space)
    assert space["x"] == 0 and log.steps == []


def test_big_objects_are_not_fingerprinted() -> None:
    space = {"big": np.zeros(MAX_ELEMENTS + 1, dtype=np.int8)}
    log = UndoLog()
    state = _run(space, "big[0] = 1", log)
    assert not state  # too big to compare cheaply: not reported as changed
