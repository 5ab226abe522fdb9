"""``--edits review``: the model's cell changes are made without asking (never a run of code),
and the review panel's Keep / Undo answers are saved in the turn's record (against a page that
answers like the extension)."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_turns import Chat
from jupyter_turns.editing.control import _act
from jupyter_turns.editing.page import NotebookEditor
from jupyter_turns.engine.config import ThreadConfig
from jupyter_turns.kernel.session import Session
from jupyter_turns.kernel.threads import Threads
from jupyter_turns.kernel_tools.builtin import BUILTINS, DEFAULT
from jupyter_turns.model.events import ToolCallResponse
from jupyter_turns.model.prompter import PolicyPrompter
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call
from jupyter_turns.record.thread_settings import UserDefaults, parse_settings, split_settings
from jupyter_turns.tools.policy import REVIEWED
from tests.support.fake_page import FakePage
from tests.unit.test_cell_tools import User, _setup

ADA = {"name": "Ada Lovelace", "username": "ada"}


async def _review_turn(page: FakePage, *calls: Any) -> tuple[Session, User, list[Any]]:
    """A turn with ``edits="review"`` in a notebook session whose record the page shows."""
    space: dict[str, Any] = {}
    reader = _setup(page, space)
    threads = Threads(lambda: Chat(ScriptedProvider([]), config=ThreadConfig(edits="review")))
    session = Session(threads, space, reader=reader)
    thread, user = threads.get("main"), User()
    thread.chat.provider = ScriptedProvider([cycle(*calls), cycle(message("Done."))])
    thread.chat.tools = {n: make(reader) for n, make in BUILTINS.items()}  # python too
    thread.chat.prompter = PolicyPrompter(user)
    events = list(await thread.chat.send("go"))
    record = {"version": 2, "conversation_id": "c", "thread": "main",
              "events": [e.model_dump(mode="json") for e in events]}  # fmt: skip
    session.shown_records[page.chat_id] = record
    return session, user, events


def _responses(events: list[Any]) -> dict[str, ToolCallResponse]:
    return {e.call_id: e for e in events if isinstance(e, ToolCallResponse)}


def _saved(page: FakePage) -> dict[str, Any]:
    chat = next(c for c in page.cells if c["id"] == page.chat_id)
    return chat["outputs"][0]["data"]["application/vnd.jupyter-turns+json"]


async def test_review_makes_inserts_edits_deletes_and_moves_without_asking() -> None:
    page = FakePage("%%chat\ngo", "a = 1", "b = 2", "c = 3", chat=0)
    _, user, events = await _review_turn(
        page,
        tool_call("notebook_cells", {}, call_id="read"),
        tool_call("edit_cell", {"index": 1, "source": "a = 10"}, call_id="edit"),
        tool_call("delete_cell", {"index": 2}, call_id="del"),
        tool_call("move_cell", {"index": 2, "to": 1}, call_id="move"),
        tool_call("insert_cell", {"source": "# Notes", "cell_type": "markdown"}, call_id="ins"),
    )
    assert user.shown == []  # nobody was asked
    assert page.sources() == ["%%chat\ngo", "# Notes", "c = 3", "a = 10"]
    responses = _responses(events)
    for call_id in ("edit", "del", "move", "ins"):
        response = responses[call_id]
        assert response.status == "done", response.content
        assert [(d.action, d.by, d.detail) for d in response.decisions] == [
            ("approved", "policy", REVIEWED)
        ]


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("run_cell", {"index": 1}),
        ("edit_cell", {"index": 1, "source": "a = 5", "run": True}),
        ("insert_cell", {"source": "z = 1", "run": True}),
        ("python", {"code": "z = 2"}),
    ],
)
async def test_review_still_asks_before_running_code(name: str, arguments: Any) -> None:
    page = FakePage("%%chat\ngo", "a = 1", chat=0)
    _, user, events = await _review_turn(
        page,
        tool_call("notebook_cells", {}, call_id="r"),
        tool_call(name, arguments, call_id="run"),
    )
    assert [r.name for r in user.shown] == [name]  # asked, then approved
    assert [d.by for d in _responses(events)["run"].decisions] == ["user"]


async def test_ask_is_the_default_and_asks_for_every_change() -> None:
    assert ThreadConfig().edits == "ask"
    page = FakePage("%%chat\ngo", "a = 1", chat=0)
    reader, user = _setup(page), User()
    provider = ScriptedProvider([
        cycle(tool_call("insert_cell", {"source": "# x", "cell_type": "markdown"})),
        cycle(message("Done.")),
    ])  # fmt: skip
    tools = [BUILTINS[name](reader) for name in DEFAULT]
    await Chat(provider, tools=tools, prompter=PolicyPrompter(user)).send("go")
    assert [r.name for r in user.shown] == ["insert_cell"]


async def test_keep_one_and_undo_the_other_are_saved_in_the_record_with_who_clicked() -> None:
    page = FakePage("%%chat\ngo", "a = 1", chat=0)
    session, _, _ = await _review_turn(
        page,
        tool_call("insert_cell", {"source": "# kept", "cell_type": "markdown"}, call_id="one"),
        tool_call("insert_cell", {"source": "# undone", "cell_type": "markdown"}, call_id="two"),
    )
    editor = NotebookEditor(session.reader.page)  # type: ignore[union-attr]
    assert page.sources() == ["%%chat\ngo", "# kept", "# undone", "a = 1"]

    [kept] = await _act(session, editor, {"request": "keep", "call_ids": ["one"], "who": ADA})
    assert kept == "Kept by Ada Lovelace: the change of this turn (one)"
    [undone] = await _act(session, editor, {"request": "undo", "call_id": "two", "who": ADA})
    assert undone.startswith("Undid insert_cell call two: removed the inserted cell")
    assert page.sources() == ["%%chat\ngo", "# kept", "a = 1"]

    saved = _saved(page)["events"]
    assert saved[-2]["kind"] == "review" and saved[-2]["kept"] == ["one"]
    assert saved[-2]["who"] == {"name": "Ada Lovelace", "username": "ada"}
    assert saved[-1]["kind"] == "undo" and saved[-1]["call_id"] == "two"
    thread = session.threads.get("main").chat.conversation.events
    assert [e.kind for e in thread[-2:]] == ["review", "undo"]
    with pytest.raises(Exception, match="kept or undone already"):
        await _act(session, editor, {"request": "keep", "call_ids": ["one", "two"]})


async def test_undo_all_undoes_every_change_still_to_review_newest_first() -> None:
    page = FakePage("%%chat\ngo", "a = 1", chat=0)
    session, _, _ = await _review_turn(
        page,
        tool_call("notebook_cells", {}, call_id="read"),
        tool_call("edit_cell", {"index": 1, "source": "a = 2"}, call_id="edit"),
        tool_call("insert_cell", {"source": "# x", "cell_type": "markdown"}, call_id="ins"),
    )
    editor = NotebookEditor(session.reader.page)  # type: ignore[union-attr]
    lines = await _act(session, editor, {"request": "undo", "call_ids": ["edit", "ins"]})
    assert [line.split(":")[0] for line in lines] == [
        "Undid insert_cell call ins",
        "Undid edit_cell call edit",
    ]
    assert page.sources() == ["%%chat\ngo", "a = 1"]
    assert [e["call_id"] for e in _saved(page)["events"] if e["kind"] == "undo"] == ["ins", "edit"]


def test_a_notebook_cannot_turn_review_on_without_this_users_grant() -> None:
    saved = parse_settings({"edits": "review", "run_mode": "ask"})
    harmless, guarded = split_settings(saved.values, UserDefaults(max_cycles=25))
    assert guarded == {"edits": "review"} and harmless == {"run_mode": "ask"}
    harmless, guarded = split_settings({"edits": "ask"}, UserDefaults(max_cycles=25))
    assert harmless == {"edits": "ask"} and guarded == {}
