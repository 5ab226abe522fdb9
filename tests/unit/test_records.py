"""Every record the package writes carries the schema version from one place."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jupyter_turns.kernel.persist import MetadataWriter, Recorder
from jupyter_turns.model import conversation, events
from jupyter_turns.model.conversation import Conversation, parse_events
from jupyter_turns.model.events import ChatRequest, ErrorEvent, Message
from jupyter_turns.record.format import RECORD_MIME, joined_records, turn_record


class _Page:
    """What the kernel sends: each display and update with its display id, and the metadata."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, Any]] = []  # (display | update, display id, bundle)
        self.metadata: list[Any] = []

    def recorder(self, clock: Any = None) -> Recorder:
        def display(bundle: Any, **kwargs: Any) -> None:
            self.sent.append(("display", kwargs["display_id"], bundle))

        def update(bundle: Any, **kwargs: Any) -> None:
            self.sent.append(("update", kwargs["display_id"], bundle))

        def clear(wait: bool = False) -> None:
            self.sent.append(("clear", "", wait))

        class _Comm:
            def send(comm, message: dict[str, Any]) -> None:
                self.metadata.append(message.get("value") or message)

        return Recorder(
            thread="main",
            cell_id="cell-1",
            metadata=MetadataWriter(_Comm),
            notebook_state=dict,
            call_later=lambda delay, callback: None,
            display=display,
            update_display=update,
            clear_output=clear,
            **({"clock": clock} if clock else {}),
        )


def test_turn_records_and_the_final_output_share_the_schema_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(events, "SCHEMA_VERSION", 7)
    monkeypatch.setattr(conversation, "SCHEMA_VERSION", 7)  # the reader: the final output parses
    monkeypatch.setattr(conversation, "READABLE_VERSIONS", (7,))
    turn = [ChatRequest(content="hi"), Message(content="hello")]
    page = _Page()
    recorder = page.recorder()
    recorder.save(lambda: turn_record("c1", "main", turn))
    recorder.finish(turn_record("c1", "main", turn))
    live, final = (bundle[RECORD_MIME] for _, _, bundle in page.sent)

    written = [live, final, Conversation(turn).to_record()]
    assert [record["version"] for record in written] == [7, 7, 7]


def test_without_a_page_the_live_record_is_the_one_output_and_becomes_the_final_one() -> None:
    turn = [ChatRequest(content="hi"), Message(content="hello")]
    page = _Page()
    recorder = page.recorder()
    recorder.save(lambda: turn_record("c1", "main", turn[:1]))
    recorder.finish(turn_record("c1", "main", turn))

    (first, first_id, live), (then, then_id, final) = page.sent
    assert (first, then) == ("display", "update") and first_id == then_id
    assert live[RECORD_MIME]["live"] is True and "live" not in final[RECORD_MIME]
    assert sorted(final) == [RECORD_MIME, "text/html", "text/plain"]
    assert "hello" in final["text/html"] and "<details" not in final["text/html"]


def test_without_a_page_each_save_adds_only_what_is_new_and_the_end_sends_no_text_again() -> None:
    request = ChatRequest(content="hi")
    draft = "x" * 5000  # streaming text: one id while it grows
    now = [0.0]
    page = _Page()
    recorder = page.recorder(clock=lambda: now[0])
    for k in range(1, 21):  # 20 s of streaming, saved every second
        text = Message(id="draft-1", content=draft * k, metadata={"partial": True})
        recorder.save(lambda text=text: turn_record("c1", "main", [request, text]), metadata=False)
        now[0] += 1.0
    answer = Message(content=draft * 20)
    recorder.save(lambda: turn_record("c1", "main", [request, answer]))
    head, *parts = [bundle for kind, _, bundle in page.sent]
    sizes = [len(json.dumps(part)) for part in parts]
    assert len(parts) == 20 and max(sizes) < 6000  # each save: the new 5,000 characters, not all
    joined = joined_records([head[RECORD_MIME], *(p[RECORD_MIME] for p in parts)])
    assert [e["content"] for e in joined[0]["events"]] == ["hi", draft * 20]
    saved = [
        joined_records([head[RECORD_MIME], *(p[RECORD_MIME] for p in parts[:k])]) for k in (1, 5)
    ]
    assert [s[0]["events"][-1]["content"] for s in saved] == [draft * 2, draft * 6]

    page.sent.clear()
    final = turn_record("c1", "main", [request, answer], turn={"outcome": "complete"})
    recorder.finish(final)
    # the live record stops saying it runs; one more output ends the parts: what the finished
    # record adds (here nothing of the answer's text: the parts hold all of it), with the
    # transcript and the summary
    (update, head_id, head_now), (shown, end_id, end) = page.sent
    assert (update, head_id, head_now) == (
        "update",
        recorder.display_id,
        {RECORD_MIME: head[RECORD_MIME], "text/plain": ""},
    )
    assert (shown, end_id) == ("display", f"{recorder.display_id}-end")
    assert sorted(end) == [RECORD_MIME, "text/html", "text/plain"]
    assert len(json.dumps(end[RECORD_MIME])) < 1000 and draft * 20 in end["text/html"]
    assert end["text/plain"] == "Conversation · thread main · 2 events"
    outputs = [head[RECORD_MIME], *(p[RECORD_MIME] for p in parts), end[RECORD_MIME]]
    assert joined_records(outputs) == [final]


def test_with_a_page_the_widget_is_the_output_until_the_record_replaces_it() -> None:
    turn = [ChatRequest(content="hi"), Message(content="hello")]
    page = _Page()
    recorder = page.recorder()
    widget = object()
    recorder.show(widget)
    recorder.save(lambda: turn_record("c1", "main", turn[:1]))
    recorder.finish(turn_record("c1", "main", turn))

    assert [(kind, bundle is widget) for kind, _, bundle in page.sent] == [
        ("display", True),
        ("update", False),
    ]
    assert len({display_id for _, display_id, _ in page.sent}) == 1
    # the turn so far went to the cell's metadata, marked live, for the page to show if the
    # kernel dies; at the end it points at the record in the output (not sent twice)
    cells = [value for value in page.metadata if value and "events" in value]
    assert [(c.get("live"), len(c["events"])) for c in cells] == [(True, 1)]
    copy = {"cell_id": "cell-1", "key": "jupyter_turns", "in_output": RECORD_MIME}
    assert copy in page.metadata
    # the page that showed the widget has the record in the output: it is not sent twice
    assert not [m for m in page.metadata if m.get("request") == "show_record"]


def test_a_page_opened_during_the_turn_gets_the_final_record_too() -> None:
    turn = [ChatRequest(content="hi"), Message(content="hello")]
    page = _Page()
    recorder = page.recorder()
    recorder.show(object())
    recorder.save(lambda: turn_record("c1", "main", turn[:1]))
    recorder.metadata.reopen()  # a page reloaded (or a second tab opened) mid-turn
    recorder.finish(turn_record("c1", "main", turn))
    shown = [m for m in page.metadata if m.get("request") == "show_record"]
    assert [(m["cell_id"], m["bundle"]) for m in shown] == [("cell-1", page.sent[-1][2])]


def test_a_page_opened_since_gets_a_fresh_comm() -> None:
    """A reloaded page never got the comm's open: the writer opens a new one, and closes the
    old one only at the next reopen (a page that held a comm of the target always holds one:
    JupyterLab deletes the target's subshell with a page's last comm of it)."""
    opened: list[Any] = []

    class _Comm:
        def __init__(self) -> None:
            self.sent: list[Any] = []
            self.closed = False
            self.on_closed: Any = None
            opened.append(self)

        def send(self, message: Any) -> None:
            self.sent.append(message)

        def close(self) -> None:
            self.closed = True

        def on_close(self, callback: Any) -> None:
            self.on_closed = callback

    writer = MetadataWriter(_Comm)
    writer.cell("c", {"events": []})
    writer.reopen()
    writer.show_live("c", "model-1")
    assert [len(c.sent) for c in opened] == [1, 1] and not opened[0].closed
    shown = opened[1].sent[0]
    assert shown["request"] == "show_live" and shown["model_id"] == "model-1"
    opened[0].on_closed()  # a page closing the old one leaves the one in use alone
    writer.reopen()
    writer.reopen()  # nothing opened since: the pages' last comm stays open
    writer.cell("c", {"events": []})
    assert [c.closed for c in opened] == [True, False, False] and len(opened[2].sent) == 1


def test_with_a_page_new_text_alone_is_left_to_the_page() -> None:
    page = _Page()
    recorder = page.recorder()
    recorder.show(object())
    recorder.save(lambda: turn_record("c1", "main", [ChatRequest(content="hi")]))
    recorder.save(lambda: turn_record("c1", "main", []), metadata=False)
    assert recorder.writes == 1 and len(page.metadata) == 2  # the request: cell + notebook


def test_a_cell_whose_turn_never_began_is_left_with_an_empty_output() -> None:
    page = _Page()
    recorder = page.recorder()
    recorder.show(object())
    recorder.abandon()
    assert [(kind, bundle) for kind, _, bundle in page.sent][1] == ("update", {"text/plain": ""})


def test_a_turn_record_reads_back_as_its_events() -> None:
    turn = [ChatRequest(content="hi"), Message(content="hello")]
    record = turn_record("c1", "main", turn, settings={"model": "m"})
    assert (record["conversation_id"], record["thread"]) == ("c1", "main")
    assert parse_events(record) == turn


async def test_a_page_that_closes_the_comm_answers_no_at_once() -> None:
    """Without the extension, JupyterLab closes a comm to an unknown target: the kernel's
    question gets None then, not after its whole wait."""
    import asyncio

    class _Refused:
        def __init__(self) -> None:
            self.closed: Any = None
            self.opened = 0

        def on_msg(self, callback: Any) -> None:
            pass

        def on_close(self, callback: Any) -> None:
            self.closed = callback

        def send(self, message: Any) -> None:
            asyncio.get_running_loop().call_later(0.01, self.closed, {})

    comms: list[_Refused] = []

    def open_comm() -> _Refused:
        comms.append(_Refused())
        return comms[-1]

    writer = MetadataWriter(open_comm)
    # an hour's wait: without the close answering it, this test would hang until its timeout
    assert await asyncio.wait_for(writer.ask({"request": "cells"}, 3600.0), 60) is None
    writer.cell("c1", {"x": 1})  # the next write opens a new comm
    assert len(comms) == 2


def _answer_on(recorder: Recorder, client: str, data: dict[str, Any]) -> None:
    """The page of kernel client ``client`` answers a metadata write with ``data``."""
    recorder.metadata._on_msg({"header": {"session": client}, "content": {"data": data}})


def test_the_page_whose_server_adds_the_transcript_gets_the_final_record_without_it() -> None:
    turn = [ChatRequest(content="hi"), Message(content="hello")]
    sent: dict[str, dict[str, Any]] = {}
    for case, runner, widget in [
        ("says so", "page-a", True),
        ("another page says so", "page-b", True),
        ("headless", "page-a", False),
    ]:
        page = _Page()
        recorder = page.recorder()
        if widget:
            recorder.show(object())
        recorder.save(lambda: turn_record("c1", "main", turn[:1]))
        _answer_on(recorder, "page-a", {"ok": True, "html_on_save": True})
        _answer_on(recorder, "page-b", {"ok": True, "html_on_save": "yes"})  # only True counts
        recorder.finish(turn_record("c1", "main", turn), runner=runner)
        sent[case] = page.sent[-1][2]
    assert sorted(sent["says so"]) == [RECORD_MIME, "text/plain"]
    assert sent["says so"]["text/plain"] == sent["headless"]["text/plain"]
    assert "hello" in sent["another page says so"]["text/html"]
    assert "hello" in sent["headless"]["text/html"]  # nothing draws it: nothing adds it


def test_a_stopped_answer_ends_its_streaming_text_once_in_the_joined_record() -> None:
    """A stop saves the text so far as a partial message with an id of its own, after the
    error that stopped it: the turn's last part ends the streaming text with it (one message,
    not the text twice, where the record has it)."""
    request = ChatRequest(content="hi")
    page = _Page()
    now = [0.0]
    recorder = page.recorder(clock=lambda: now[0])
    story = "Once upon a time. " * 600  # 10 KB streamed: its parts stay (KEEP_PARTS)
    recorder.save(lambda: turn_record("c1", "main", [request]))
    now[0] += 1.0
    for text in (story[:5000], story):
        draft = Message(id="draft-0", content=text, metadata={"partial": True})
        recorder.save(lambda d=draft: turn_record("c1", "main", [request, d]), metadata=False)
        now[0] += 1.0
    # the stream broke: an error, then the text so far, cut short, as its own event
    broke = ErrorEvent(error_type="StreamBroken", message="the stream stopped")
    stopped = Message(content=story + "And there", metadata={"partial": True})
    final = turn_record("c1", "main", [request, broke, stopped], turn={"outcome": "stopped"})
    recorder.finish(final)
    records = [bundle[RECORD_MIME] for kind, _, bundle in page.sent if kind == "display"]
    end = records[-1]
    assert [e.get("content") for e in end["events"]] == [None, "And there"]
    assert joined_records(records) == [final]


def test_a_streaming_text_after_the_one_a_finished_message_ended_is_kept() -> None:
    """The finished message takes the place of the text it ends; a later streaming text under
    the same id (the next cycle's first block) is new text, not more of the ended one."""
    live = {"version": 2, "conversation_id": "c1", "thread": "main", "live": True}
    draft = {"kind": "message", "metadata": {"partial": True}}
    head = {
        **live,
        "events": [{"id": "r", "kind": "chat_request"}, {**draft, "id": "d0", "content": "A"}],
    }
    ended = {**live, "continues": "r", "extends": {"m1": "d0"}}
    ended["events"] = [{"id": "m1", "kind": "message", "content": " done."}]
    later = {**live, "continues": "r", "events": [{**draft, "id": "d0", "content": "Next"}]}
    joined = joined_records([head, ended, later])
    assert [(e["id"], e.get("content")) for e in joined[0]["events"]] == [
        ("r", None),
        ("m1", "A done."),
        ("d0", "Next"),
    ]


def test_without_a_page_a_few_parts_go_at_the_end_and_the_record_is_the_one_output() -> None:
    """Parts holding less than KEEP_PARTS (a short answer that took a few seconds) are cleared:
    the final record is the cell's one output, as it always was."""
    request = ChatRequest(content="hi")
    page = _Page()
    now = [0.0]
    recorder = page.recorder(clock=lambda: now[0])
    for k in (1, 2, 3):
        draft = Message(id="draft-1", content="word " * 100 * k, metadata={"partial": True})
        recorder.save(lambda d=draft: turn_record("c1", "main", [request, d]), metadata=False)
        now[0] += 1.0
    assert recorder.parts == 2
    page.sent.clear()
    recorder.finish(turn_record("c1", "main", [request, Message(content="word " * 300)]))
    (clear, _, wait), (shown, shown_id, final) = page.sent
    assert (clear, wait, shown, shown_id) == ("clear", True, "display", recorder.display_id)
    assert sorted(final) == [RECORD_MIME, "text/html", "text/plain"]
    assert "live" not in final[RECORD_MIME]
