"""Replay's matching: which saved turn a running cell replays, and why none when none does."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from IPython.core.error import UsageError

from jupyter_turns import Chat, TurnResult
from jupyter_turns.kernel.replay import SavedIndex, choose, find_saved, replay_command
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message
from jupyter_turns.record.format import RECORD_MIME

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


async def test_a_named_cell_no_saved_turn_has_is_new_not_a_changed_request(
    tmp_path: Path,
) -> None:
    """JupyterLab names its cells: a new cell written after the recording is compared with no
    one's request (the next saved turn in cell order belongs to another cell)."""
    saved = await _turn("Load data.csv", "Loaded.")
    path = write_notebook(tmp_path / "a.ipynb", ("c1", record_of(saved)))
    found = find_saved(SavedIndex(), {"__session__": str(path)}, "c9", "Plot it")
    assert found.turn is None and found.change is None and found.unrecorded
    assert found.why() == (
        "this cell has no saved turn (it was never run with a model in this notebook)"
    )
    edited = find_saved(SavedIndex(), {"__session__": str(path)}, "c1", "Load data2.csv")
    assert edited.change is not None and "-Load data.csv" in edited.change


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


def _notebook(path: Path, *cells: tuple[str, dict[str, Any] | None]) -> Path:
    """A notebook of code cells (source, the chat record saved as its output, if any)."""
    written = []
    for source, record in cells:
        outputs = (
            []
            if record is None
            else [{"output_type": "display_data", "data": {RECORD_MIME: record}, "metadata": {}}]
        )
        written.append({"cell_type": "code", "source": source, "metadata": {}, "outputs": outputs})
    path.write_text(json.dumps({"cells": written, "metadata": {}, "nbformat": 4}))
    return path


def _kernel(ran: list[str]) -> SimpleNamespace:
    """The parts of a session replay reads: no frontend, and the kernel's log of what it ran."""
    history = SimpleNamespace(sources=lambda: list(ran))
    return SimpleNamespace(
        saved=SavedIndex(), namespace={}, cell_id=None, reader=SimpleNamespace(history=history)
    )


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """nbval and nbclient start the kernel in the notebook's folder and name no notebook."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return tmp_path


async def test_without_a_name_the_kernels_notebook_is_the_one_holding_every_cell_it_ran(
    folder: Path,
) -> None:
    for name in ("a", "b"):
        _notebook(
            folder / f"{name}.ipynb",
            (f"x = '{name}'", None),
            ("%%chat\nDouble 21", record_of(await _turn("Double 21", f"42 from {name}"))),
        )
    found = find_saved(SavedIndex(), {}, None, "Double 21", ["x = 'b'", "%%chat\nDouble 21"])
    assert _answer(found) == "42 from b" and found.source == "b.ipynb"
    both = find_saved(SavedIndex(), {}, None, "Double 21", ["%%chat\nDouble 21"])
    assert both.turn is None and both.candidates == ["a.ipynb", "b.ipynb"]
    assert "2 notebooks in" in both.why() and "hold every cell this kernel ran" in both.why()
    assert "%chat replay --from FILE" in both.why()
    for ran in (
        ["x = 'c'", "%%chat\nDouble 21"],  # a cell that no notebook holds
        ["%%chat\nDouble 21", "x = 'a'", "%%chat\nDouble 21"],  # a's cells, not in its order
        [],  # nothing known of what ran: no evidence
    ):
        none = find_saved(SavedIndex(), {}, None, "Double 21", ran)
        assert none.turn is None and none.unknown and none.recorded, ran
        assert "no notebook in" in none.why() and "holds, in order, every cell it ran" in none.why()
    with pytest.raises(UsageError, match=r"replay is on, but .* 2 notebooks in"):
        choose(_kernel(["%%chat\nDouble 21"]), "on", "anthropic", "Double 21", pace=0, strict=False)


async def test_a_recording_beside_the_kernels_unrecorded_notebook_is_never_replayed(
    folder: Path,
) -> None:
    attack = record_of(await _turn("Double 21", "the attacker's answer"))
    _notebook(folder / "attacker.ipynb", ("%%chat\nDouble 21", attack))
    _notebook(folder / "victim.ipynb", ("y = 1", None), ("%%chat\nDouble 21", None))
    ran = ["y = 1", "%%chat\nDouble 21"]
    found = find_saved(SavedIndex(), {}, None, "Double 21", ran)
    assert found.turn is None and not found.recorded  # the victim's notebook holds none
    # auto with no key: run live (the provider then says the key is missing), never replay
    assert choose(_kernel(ran), "auto", "anthropic", "Double 21", pace=0, strict=False) is None
    with pytest.raises(UsageError, match="cannot be replayed: no saved turn matches it"):
        choose(_kernel(ran), "on", "anthropic", "Double 21", pace=0, strict=False)


async def test_a_file_named_with_replay_from_is_the_only_source(folder: Path) -> None:
    _notebook(
        folder / "other.ipynb", ("%%chat\nDouble 21", record_of(await _turn("Double 21", "42")))
    )
    _notebook(folder / "mine.ipynb", ("%%chat\nDouble 21", None))
    index = SavedIndex()
    named = index.use(Path("other.ipynb"))
    assert [turn.events[0].content for turn in named.turns] == ["Double 21"]  # type: ignore[union-attr]
    own = {"__session__": str(folder / "mine.ipynb")}  # even where the frontend names another
    found = find_saved(index, own, None, "Double 21", [])
    assert _answer(found) == "42" and found.source == "other.ipynb"
    with pytest.raises(OSError):
        index.use(Path("missing.ipynb"))


async def test_papermills_injected_parameters_cell_is_in_no_file_and_is_not_needed(
    folder: Path,
) -> None:
    chat = ("%%chat\nDouble 21", record_of(await _turn("Double 21", "42")))
    _notebook(folder / "run.ipynb", ("%load_ext jupyter_turns", None), chat)
    ran = ["# Parameters\nrows = 3\n", "%%chat\nDouble 21"]
    assert _answer(find_saved(SavedIndex(), {}, None, "Double 21", ran)) == "42"


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


async def test_replay_from_says_what_it_replays_and_refuses_what_it_cannot_read(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _notebook(folder / "other.ipynb", ("%%chat\nHi", record_of(await _turn("Hi", "Hello"))))
    session = _kernel([])
    own = replay_command(session, "auto", [])
    assert own.startswith("Chat cells replay only from this kernel's own notebook")
    said = replay_command(session, "auto", ["--from", "other.ipynb"])
    assert said == (
        "Chat cells replay from other.ipynb from now on: 1 saved turn. A replayed turn's tool "
        "calls run your tools here, and ask like any call."
    )
    assert replay_command(session, "auto", []).startswith("Chat cells replay from other.ipynb")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    assert "cells run live" in replay_command(session, "auto", ["--from", "other.ipynb"])
    assert "Replay is off" in replay_command(session, "off", ["--from", "other.ipynb"])
    for wrong in (["--from"], ["other.ipynb"], ["--from", "a", "b"]):
        with pytest.raises(UsageError, match=r"usage: %chat replay \[--from FILE\]"):
            replay_command(session, "auto", wrong)
    with pytest.raises(UsageError, match=r"cannot read missing\.ipynb"):
        replay_command(session, "auto", ["--from", "missing.ipynb"])
