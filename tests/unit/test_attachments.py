"""``@name`` in a request attaches the variable as labeled data; a restarted kernel is said."""

from __future__ import annotations

import json

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from jupyter_turns import Chat
from jupyter_turns.model.events import ToolCallRequest, ToolCallResponse
from jupyter_turns.providers.anthropic_wire import anthropic_messages
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message
from jupyter_turns.reading.attach import attach, mentions
from jupyter_turns.reading.kernel_note import NOTE_LABEL, kernel_note, names_from_tool_calls


def _failed() -> ZeroDivisionError:
    try:
        1 / 0  # noqa: B018
    except ZeroDivisionError as exc:
        return exc
    raise AssertionError


def test_mentions_skip_code_emails_and_decorators() -> None:
    text = "Why is @df empty? See `@hidden` and\n```\n@decorator\n```\nmail a@b.com, @df.shape"
    assert mentions(text) == ["df", "df.shape"]


async def test_at_name_attaches_frames_errors_and_figures_and_notes_unknown_names() -> None:
    frame = pd.DataFrame({"city": ["Oslo", "Pune"], "rain_mm": [76.0, 722.5]})
    figure, axes = plt.subplots(figsize=(2, 1), dpi=50)
    axes.plot([1, 2])
    namespace = {"df": frame, "err": _failed(), "fig": figure}
    attached = attach("Explain @df, @err and @fig; what is @nothing?", namespace)
    plt.close(figure)
    by_label = {a.label: a for a in attached.attachments}
    assert list(by_label) == ["@df", "@err", "@fig"]
    assert "shape: (2, 2)" in by_label["@df"].text and "Pune" in by_label["@df"].text
    assert "ZeroDivisionError: division by zero" in by_label["@err"].text
    assert "Traceback" in by_label["@err"].text
    [image] = by_label["@fig"].images
    assert image.media_type == "image/png" and image.data.startswith("iVBORw0KGgo")
    assert image.width and 50 < image.width <= 110  # tight bounding box of a 100×50 figure
    assert attached.notes == [
        "@nothing: no variable named 'nothing' in the kernel; it was sent as plain text"
    ]

    provider = ScriptedProvider([cycle(message("Seen."))])
    events = await Chat(provider).send(
        "Explain @df, @err and @fig; what is @nothing?", attached.attachments, attached.notes
    )
    assert [e.kind for e in events][:2] == ["chat_request", "notice"]
    content = anthropic_messages(provider.requests[0].events)[0]["content"]
    assert content[0]["text"] == "Explain @df, @err and @fig; what is @nothing?"  # as written
    assert content[1]["text"].startswith('<notebook_data source="variable @df">')
    assert [block["type"] for block in content] == ["text", "text", "text", "text", "image"]
    assert provider.requests[0].system is not None  # attached data brings the data rule


class _Broken:
    """Every attribute a summary reads fails."""

    @property
    def shape(self) -> object:
        raise RuntimeError("no shape")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_at_name_of_an_object_that_breaks_when_read_attaches_what_could_be_read() -> None:
    attached = attach("What is @thing?", {"thing": _Broken()})
    [attachment] = attached.attachments
    assert "shape: (unreadable: RuntimeError: no shape)" in attachment.text
    assert "repr: (unreadable: RuntimeError: no repr)" in attachment.text


def test_a_restart_and_vanished_names_are_said_once() -> None:
    calls = [
        ToolCallRequest(
            call_id="1", name="python", arguments={"code": "model = fit(df)\nimport numpy as np"}
        ),
        ToolCallRequest(call_id="2", name="inspect", arguments={"name": "df.columns"}),
        ToolCallRequest(call_id="3", name="python", arguments={"code": "this is not python"}),
        *(ToolCallResponse(call_id=str(n), content="ok") for n in (1, 2, 3)),
    ]
    assert names_from_tool_calls(calls) == ["model", "np", "df"]
    reported: set[str] = set()
    note = kernel_note(calls, {"df": 1}, restarted_at="2026-11-23 10:00:00 UTC", reported=reported)
    assert note is not None and (note.label, note.source) == (NOTE_LABEL, "jupyter_turns")
    assert "The kernel restarted" in note.text and "2026-11-23 10:00:00 UTC" in note.text
    assert "no longer exist in the kernel: model, np" in note.text
    assert kernel_note(calls, {"df": 1}, restarted_at=None, reported=reported) is None
    again = kernel_note(calls, {}, restarted_at=None, reported=reported)
    assert again is not None and again.text.endswith("no longer exist in the kernel: df")
    assert json.loads(again.model_dump_json())["label"] == "note about the kernel"


@pytest.mark.parametrize("status", ["skipped", "error", "cancelled", "timeout"])
def test_a_python_call_that_did_not_run_leaves_no_names_to_call_gone(status: str) -> None:
    """A skipped (or denied, failed, cancelled) ``python`` call bound nothing: the next request
    must not tell the model that its names "no longer exist in the kernel"."""
    events = [
        ToolCallRequest(call_id="a", name="python", arguments={"code": "ran = 1"}),
        ToolCallResponse(call_id="a", content="ok"),
        ToolCallRequest(call_id="b", name="python", arguments={"code": "never = 2"}),
        ToolCallResponse(call_id="b", content="skipped by user", is_error=True, status=status),
        ToolCallRequest(call_id="c", name="inspect", arguments={"name": "missing"}),
        ToolCallResponse(call_id="c", content="no such name", is_error=True, status=status),
    ]
    assert names_from_tool_calls(events) == ["ran"]
    note = kernel_note(events, {}, restarted_at=None, reported=set())
    assert note is not None and note.text.endswith("no longer exist in the kernel: ran")
