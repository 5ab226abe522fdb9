"""WidgetSink's draft: one copy of each unfinished block, handed to its event by block index."""

from __future__ import annotations

import asyncio
from typing import Any

from jupyter_turns import Chat, tool
from jupyter_turns.model.events import (
    Finished,
    Flush,
    Message,
    MessageDelta,
    Part,
    Reasoning,
    ReasoningDelta,
    ToolCallRequest,
    ToolInputDelta,
)
from jupyter_turns.model.interrupt import InterruptAction
from jupyter_turns.model.prompter import PolicyPrompter
from jupyter_turns.model.sink import Appended
from jupyter_turns.providers.scripted import Gate, ScriptedProvider, cycle, message, tool_call
from jupyter_turns.widget.renderer import WidgetSink

from .helpers import PageComm, page_widget, until


class _Page:
    """What a view makes of the kernel's messages: draft blocks by index, blocks handed over
    by event id, every event that was drawn before its block was handed to it, and what each
    draft tool card names (tool name, call id)."""

    def __init__(self) -> None:
        self.blocks: dict[int, tuple[str, str]] = {}
        self.cards: dict[int, tuple[str, str]] = {}
        self.handed: dict[str, tuple[str, str]] = {}
        self.drawn_first: list[str] = []
        self.drafts = 0

    def replay(self, comm: PageComm) -> _Page:
        events: set[str] = set()
        for data in comm.sent:
            if data.get("method") == "update" and "events" in data.get("state", {}):
                events = {e["id"] for e in data["state"]["events"]}
                continue
            if data.get("method") != "custom":
                continue
            message = data["content"]
            if message["type"] == "delta":
                for index, kind, text, *call in message["parts"]:
                    old = self.blocks.get(index, (kind, ""))[1]
                    self.blocks[index] = (kind, old + text)
                    if call:
                        self.cards[index] = (call[0], call[1])
            elif message["type"] == "draft":
                self.drafts += 1
                self.blocks = {index: (kind, text) for index, kind, text, *_ in message["blocks"]}
            elif message["type"] == "released":
                for index, event in message["blocks"]:
                    block = self.blocks.pop(index)
                    if event is not None:
                        self.handed[event] = block
                        if event in events:
                            self.drawn_first.append(event)
            elif message["type"] == "draft_clear":
                self.blocks = {}
        return self


def _text_events(widget: Any) -> dict[str, tuple[str, str]]:
    return {
        e["id"]: (e["kind"], e["content"])
        for e in widget.events
        if e["kind"] in ("message", "reasoning")
    }


async def test_a_block_that_ends_while_another_streams_is_handed_to_its_event() -> None:
    gate = Gate()
    script = [
        Part(0, ReasoningDelta("Let me ")),
        Part(1, MessageDelta("Hel")),
        Part(0, ReasoningDelta("think.")),
        Flush(0, {"signature": "sig"}),  # the reasoning is done, the answer goes on
        gate,
        Part(1, MessageDelta("lo")),
        Flush(1),
        Finished("end_turn"),
    ]
    widget, comm = page_widget()
    sink = WidgetSink(widget)
    task = asyncio.create_task(Chat(provider=ScriptedProvider([script]), sink=sink).send("hi"))
    await until(lambda: gate.reached)
    sink.flush()
    page = _Page().replay(comm)
    assert list(page.handed.values()) == [("reasoning", "Let me think.")]
    assert page.blocks == {1: ("message", "Hel")}
    assert sink.live_drafts() == [(1, "message", "Hel")]
    gate.open()
    await task
    sink.flush()
    page = _Page().replay(comm)
    assert page.handed == _text_events(widget)
    assert page.blocks == {} and page.drafts == 0 and page.drawn_first == []
    assert sink.live_drafts() == []


async def test_stopped_blocks_are_handed_to_their_partial_events_and_empty_ones_dropped() -> None:
    gate = Gate()
    script = [
        Part(0, ReasoningDelta("")),  # opened, never written, never finished
        Part(1, ReasoningDelta("")),
        Flush(1, {"signature": "s"}),  # an empty reasoning block that is an event
        Part(2, MessageDelta("Half an ")),
        Part(2, MessageDelta("answer")),
        gate,
        Finished("end_turn"),
    ]
    widget, comm = page_widget()
    sink = WidgetSink(widget)
    chat = Chat(provider=ScriptedProvider([script]), sink=sink)
    task = asyncio.create_task(chat.send("hi"))
    await until(lambda: gate.reached)
    chat.interrupt(InterruptAction.STOP)
    turn = await task
    sink.flush()
    page = _Page().replay(comm)
    assert [type(e) for e in turn if isinstance(e, Message | Reasoning)] == [Reasoning, Message]
    assert page.handed == _text_events(widget)
    assert ("message", "Half an answer") in page.handed.values()
    assert page.blocks == {}


async def test_the_next_cycles_block_at_a_reused_index_never_joins_the_released_one() -> None:
    widget, comm = page_widget()
    sink = WidgetSink(widget)
    first = Message(content="first")
    sink.part(Part(0, MessageDelta("fir")))
    sink.part(Part(0, MessageDelta("st")))
    sink.update(Appended((first,), (0,)))
    sink.part(Part(0, MessageDelta("second")))  # the next cycle's block 0, before any flush
    sink.flush()
    page = _Page().replay(comm)
    assert page.handed == {first.id: ("message", "first")}
    assert page.blocks == {0: ("message", "second")}
    assert [m["type"] for m in comm.custom()] == ["delta", "released", "delta"]


async def test_a_view_that_renders_late_gets_the_whole_draft_once() -> None:
    widget, comm = page_widget()
    sink = WidgetSink(widget)
    sink.part(Part(0, ReasoningDelta("thinking")))
    sink.update(Appended((Reasoning(content="thinking"),), (0,)))
    sink.part(Part(1, MessageDelta("Hello ")))
    sink.flush()
    sink.part(Part(1, MessageDelta("world")))
    widget._dispatch({"type": "ready"})
    [draft] = comm.custom("draft")
    assert draft["blocks"] == [(1, "message", "Hello world")]
    assert comm.custom()[-1] is draft  # the new text went out before the draft
    assert _Page().replay(comm).blocks == {1: ("message", "Hello world")}


async def test_tool_turns_hand_every_cycles_blocks_to_their_events() -> None:
    @tool(run="unattended")
    def look() -> str:
        """Looks."""
        return "seen"

    provider = ScriptedProvider(
        [
            cycle(message("Let me look."), tool_call("look", {})),
            cycle(message("Found it.")),
        ]
    )
    widget, comm = page_widget()
    sink = WidgetSink(widget)
    chat = Chat(provider=provider, tools=[look], sink=sink, prompter=PolicyPrompter("allow"))
    await chat.send("go")
    sink.flush()
    page = _Page().replay(comm)
    assert page.handed == _text_events(widget) and len(page.handed) == 2
    assert page.blocks == {} and page.drawn_first == []


async def test_a_sub_agents_text_streams_as_its_own_draft_marked_with_its_call() -> None:
    from jupyter_turns import subagent

    nested = ScriptedProvider([cycle(message("Nested words arrive."))])
    researcher = subagent("researcher", "x", provider=nested, run="unattended")
    parent = ScriptedProvider(
        [cycle(message("Top."), tool_call("researcher", {"request": "go"}, call_id="toolu_sub")),
         cycle(message("Done."))]
    )  # fmt: skip
    widget, comm = page_widget()
    sink = WidgetSink(widget)
    await Chat(parent, tools=[researcher], sink=sink).send("hi")
    sink.flush()
    custom = [d["content"] for d in comm.sent if d.get("method") == "custom"]
    nested_deltas = [m for m in custom if m["type"] == "delta" and m.get("parent") == "toolu_sub"]
    assert "".join(t for m in nested_deltas for _, _, t in m["parts"]) == "Nested words arrive."
    top = [m for m in custom if m["type"] == "delta" and "parent" not in m]
    assert "".join(t for m in top for _, _, t in m["parts"]) == "Top.Done."
    handed = [m for m in custom if m["type"] == "released" and m.get("parent") == "toolu_sub"]
    nested_message = next(
        e for e in widget.events if e.get("parent") == "toolu_sub" and e["kind"] == "message"
    )
    assert [[0, nested_message["id"]]] == [list(b) for m in handed for b in m["blocks"]]
    # the sub-agent's usage per cycle reached its card's live status
    assert widget.tools["toolu_sub"]["subagent"]["cycles"] == 1

    draft = sink.nested("toolu_sub")
    draft.part(Part(0, MessageDelta("abandoned")))
    draft.discard()  # a nested Abort tells the page
    assert comm.sent[-1]["content"] == {"type": "draft_clear", "parent": "toolu_sub"}


def _gated(items: list[Any], gate: Gate, after: int) -> list[Any]:
    """``items`` held at ``gate`` after the ``after``-th argument piece."""
    pieces = [i for i, item in enumerate(items) if isinstance(getattr(item, "content", None),
              ToolInputDelta)]  # fmt: skip
    at = pieces[after - 1] + 1
    return [*items[:at], gate, *items[at:]]


async def test_a_tool_calls_arguments_stream_into_a_draft_card_its_event_replaces() -> None:
    @tool(run="unattended")
    def add(a: int, b: int) -> int:
        """Adds."""
        return a + b

    gate = Gate()
    first = cycle(message("Adding."), tool_call("add", {"a": 2, "b": 3}, call_id="c1", chunks=4))
    provider = ScriptedProvider([_gated(first, gate, 2), cycle(message("5."))])
    widget, comm = page_widget()
    sink = WidgetSink(widget)
    chat = Chat(provider=provider, tools=[add], sink=sink, prompter=PolicyPrompter("allow"))
    task = asyncio.create_task(chat.send("add"))
    await until(lambda: gate.reached)
    sink.flush()
    page = _Page().replay(comm)
    text = '{"a": 2, "b": 3}'
    half = text[: 2 * -(-len(text) // 4)]
    assert page.blocks[1] == ("tool_input", half)  # the first two pieces, as they came
    assert page.cards == {1: ("add", "c1")}
    assert sink.live_drafts()[-1] == (1, "tool_input", half, "add", "c1")
    assert not any(e["kind"] == "tool_call_request" for e in widget.events)
    gate.open()
    turn = await task
    sink.flush()
    page = _Page().replay(comm)
    [call] = [e for e in turn if isinstance(e, ToolCallRequest)]
    assert page.handed[call.id] == ("tool_input", text)  # the call's card takes its place
    assert page.blocks == {} and page.drawn_first == []
    assert [e.kind for e in turn][-1] == "message" and ran_with(turn) == "5"


def ran_with(turn: Any) -> str:
    return next(str(e.content) for e in turn if e.kind == "tool_call_response")


async def test_a_stop_mid_arguments_drops_the_draft_card_and_the_call() -> None:
    gate = Gate()
    first = cycle(message("Adding."), tool_call("add", {"a": 2, "b": 3}, call_id="c1", chunks=4))
    widget, comm = page_widget()
    sink = WidgetSink(widget)
    chat = Chat(provider=ScriptedProvider([_gated(first, gate, 1)]), sink=sink)
    task = asyncio.create_task(chat.send("add"))
    await until(lambda: gate.reached)
    chat.interrupt(InterruptAction.STOP)
    turn = await task
    sink.flush()
    page = _Page().replay(comm)
    assert "tool_call_request" not in [e.kind for e in turn]
    assert page.blocks == {} and page.cards == {1: ("add", "c1")}
    assert list(page.handed.values()) == [("message", "Adding.")]  # the card had no event
    assert sink.live_drafts() == []


async def test_argument_pieces_are_sent_at_the_rate_cap_like_text() -> None:
    widget, comm = page_widget()
    sink = WidgetSink(widget)
    for number in range(200):
        sink.part(Part(0, ToolInputDelta(f"{number},", "c1", "add")))
    sink.flush()
    [delta] = comm.custom("delta")  # one message for the 200 pieces
    assert delta["parts"] == [(0, "tool_input", "".join(f"{n}," for n in range(200)), "add", "c1")]


async def test_nothing_goes_to_the_page_before_a_view_renders_and_its_ready_gets_it_all() -> None:
    widget, comm = page_widget(shown=False)  # nbclient, papermill: no view, ever
    comm.sent.clear()  # the comm's opening, with the state the widget starts with
    sink = WidgetSink(widget)
    sink.part(Part(0, ReasoningDelta("thinking")))
    sink.update(Appended((Reasoning(content="thinking"),), (0,)))
    sink.part(Part(1, MessageDelta("Hello ")))
    widget.status = {"state": "running", "retry": None}
    sink.flush()
    assert comm.sent == []  # neither trait updates nor draft messages
    widget._dispatch({"type": "ready"})  # a page opens the notebook, its view renders
    update, draft = comm.sent
    assert update["method"] == "update"
    assert [e["content"] for e in update["state"]["events"]] == ["thinking"]
    assert update["state"]["status"]["state"] == "running"
    assert draft["content"] == {"type": "draft", "blocks": [(1, "message", "Hello ")]}
    sink.part(Part(1, MessageDelta("world")))
    sink.flush()
    assert comm.custom()[-1] == {"type": "delta", "parts": [(1, "message", "world")]}


def test_a_closed_chat_widget_leaves_no_widget_open_in_the_kernel() -> None:
    """A long thread makes one widget per turn: closing it closes its layout widget too."""
    from ipywidgets.widgets.widget import _instances

    before = set(_instances)
    widget, _ = page_widget()
    assert set(_instances) - before  # the widget and its layout
    widget.close()
    assert set(_instances) == before
