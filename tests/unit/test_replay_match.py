"""Replay's matching: which saved turn a running cell replays, and why none when none does."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from IPython.core.error import UsageError

from jupyter_turns import Chat, TurnResult
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message
from jupyter_turns.replay import SavedIndex, choose, find_saved

from .helpers import record_of, write_notebook


async def _turn(request: str, answer: str) -> TurnResult:
    return await Chat(ScriptedProvider([cycle(message(answer))])).send(request)


def _answer(found: Any) -> str:
    return str(found.turn.events[-1].content)


def _choose(index: SavedIndex, request: str, namespace: dict[str, Any] | None = None) -> Any:
    session = SimpleNamespace(saved=index, namespace=namespace or {}, cell_id=None)
    return choose(session, "on", "anthropic", request, pace=0.0, strict=False)


async def test_a_cell_is_matched_by_id_else_by_request_in_cell_order(tmp_path: Path) -> None:
    first, second = await _turn("Double 21", "42"), await _turn("Double 22", "44")
    path = write_notebook(tmp_path / "a.ipynb", ("c1", record_of(first)), ("c2", record_of(second)))
    own = {"__session__": str(path)}
    index = SavedIndex()
    found = find_saved(index, own, None, "Double 21")
    assert _answer(found) == "42" and found.source == "a.ipynb" and found.change is None
    assert find_saved(index, own, None, "Double 21").turn is None  # used: cell order goes on
    changed = find_saved(index, own, None, "Double 23")  # the next saved turn is Double 22
    assert changed.change is not None and "-Double 22" in changed.change
    assert "+Double 23" in changed.change and "its request changed" in changed.why()
    assert _answer(find_saved(index, own, "c2", "Double 22")) == "44"


async def test_a_cell_re_run_before_saving_replays_its_current_run(tmp_path: Path) -> None:
    old, new = await _turn("Double 21", "40, said the first run"), await _turn("Double 21", "42")
    earlier = record_of(old)
    for event in earlier["events"]:  # the first run was earlier, as a displaced run is
        event["timestamp"] = "2020-01-02T03:04:05.000+00:00"
    current = record_of(new)
    current["displaced"] = [earlier]  # what a re-run cell's record carries
    write_notebook(tmp_path / "a.ipynb", (None, current))
    found = find_saved(SavedIndex(), {"__session__": str(tmp_path / "a.ipynb")}, None, "Double 21")
    assert _answer(found) == "42"


async def test_a_kernel_replays_only_its_own_notebook_when_it_is_named(tmp_path: Path) -> None:
    write_notebook(tmp_path / "other.ipynb", (None, record_of(await _turn("Double 21", "42"))))
    mine = write_notebook(tmp_path / "mine.ipynb", (None, record_of(await _turn("Hi", "Hello"))))
    own = {"__session__": str(mine)}
    index = SavedIndex()
    assert find_saved(index, own, None, "Double 21").turn is None  # not another notebook's
    assert _answer(find_saved(index, own, None, "Hi")) == "Hello"


async def test_without_its_notebook_named_only_the_one_notebook_holding_the_request_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # nbval and nbclient start the kernel in the notebook's folder
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    for name in ("a", "b"):
        write_notebook(
            tmp_path / f"{name}.ipynb",
            (None, record_of(await _turn(f"Only in {name}", name))),
            (None, record_of(await _turn("Double 21", f"42 from {name}"))),
        )
    index = SavedIndex()
    both = find_saved(index, {}, None, "Double 21")
    assert both.turn is None and both.candidates == ["a.ipynb", "b.ipynb"]
    with pytest.raises(
        UsageError, match=r"2 notebooks in .* hold this request \(a.ipynb, b.ipynb\)"
    ):
        _choose(index, "Double 21")
    only_b = find_saved(index, {}, None, "Only in b")
    assert _answer(only_b) == "b" and only_b.source == "b.ipynb"
    # the kernel runs b.ipynb, then: a's turns are never replayed here
    assert find_saved(index, {}, None, "Only in a").turn is None
    assert _answer(find_saved(index, {}, None, "Double 21")) == "42 from b"


async def test_a_damaged_saved_turn_is_named_when_no_turn_matches(tmp_path: Path) -> None:
    damaged = record_of(await _turn("Double 21", "42"))
    damaged["events"][1]["content"] = {"not": "text"}  # a message whose content is no string
    path = write_notebook(tmp_path / "a.ipynb", (None, damaged))
    with pytest.raises(UsageError) as failed:
        _choose(SavedIndex(), "Double 21", {"__session__": str(path)})
    message_text = str(failed.value)
    assert "no saved turn matches it" in message_text
    assert (
        "Saved turns that cannot be read: a.ipynb: cell 1: saved event #1 is not valid: "
        "content: Input should be a valid string" in message_text
    )
