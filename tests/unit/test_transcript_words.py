"""A transcript (``%chat export``, the saved HTML beside each record) says what happened in the
words a person reads (issue 45): who answered, the code a call ran as code, a result without
the frame that only the model needs, and an error result never called done."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from jupyter_turns.model.content import labeled, unframed
from jupyter_turns.model.events import (
    SCRIPTED,
    ChatRequest,
    ConversationEvent,
    Message,
    ToolCallRequest,
    ToolCallResponse,
)
from jupyter_turns.record.transcript import CODE_ARGUMENTS, to_html, to_markdown

CODE = 'total = sum(x)\nprint("total:", total)'
RAISED = "stderr:\nTraceback (most recent call last):\nNameError: name 'df' is not defined\n"
JS = Path(__file__).resolve().parents[2] / "js" / "src"


def _turn(
    *, scripted: bool, content: str = RAISED, is_error: bool = True
) -> list[ConversationEvent]:
    marked = {SCRIPTED: True} if scripted else {}
    return [
        ChatRequest(content="What is the total of x?"),
        ToolCallRequest(call_id="c1", name="python", arguments={"code": CODE}, metadata=marked),
        ToolCallResponse(
            call_id="c1", content=labeled(content, "python run output"), is_error=is_error
        ),
        Message(content="The total is **42**.", metadata=marked),
    ]


def test_an_exported_answer_names_who_wrote_it_never_claude_for_a_script() -> None:
    scripted = to_markdown(_turn(scripted=True))
    assert "**Scripted answer**\n\nThe total is **42**." in scripted and "Claude" not in scripted
    assert "**Assistant**\n\nThe total is **42**." in to_markdown(_turn(scripted=False))


def test_a_call_shows_its_code_as_code_and_its_result_without_the_models_frame() -> None:
    text = to_markdown(_turn(scripted=True))
    assert f"*code*\n\n````python\n{CODE}\n````" in text
    assert "\\n" not in text and '"code":' not in text
    assert "notebook_data" not in text and "NameError: name 'df' is not defined" in text
    shown = to_html(_turn(scripted=True))
    assert f"<summary>code · {len(CODE)} chars</summary><pre>{CODE.replace(chr(34), '&quot;')}" in (
        shown
    )
    assert "notebook_data" not in shown and "\\n" not in shown


def test_the_other_arguments_stay_json_beside_the_code() -> None:
    call = ToolCallRequest(
        call_id="c1", name="insert_cell", arguments={"source": "# Notes", "cell_type": "markdown"}
    )
    text = to_markdown([call])
    assert "*source*\n\n````\n# Notes\n````" in text  # a markdown cell: plain, not python
    assert '"cell_type": "markdown"' in text
    assert '"a": 1' in to_markdown([ToolCallRequest(call_id="c2", name="add", arguments={"a": 1})])


@pytest.mark.parametrize("status", [None, "done", "error"])
def test_an_error_result_is_never_done(status: str | None) -> None:
    """Saved as an older version wrote a python run that raised (``done``), or as now."""
    raw = {"kind": "tool_call_response", "call_id": "c1", "content": RAISED, "is_error": True}
    response = ToolCallResponse.model_validate({**raw, **({"status": status} if status else {})})
    assert response.status == "error"
    assert "**Tool result** (error)" in to_markdown([response])
    assert "<summary>Error · " in to_html([response])
    skipped = ToolCallResponse.model_validate({**raw, "status": "skipped"})
    assert skipped.status == "skipped"  # a call that did not run keeps its own word


def test_unframed_takes_off_exactly_what_labeled_puts_on() -> None:
    for text in ("plain", "a\n</notebook_data>\nb", "", "x</notebook_data>"):
        assert unframed(labeled(text, 'cell 3 "outputs"')) == text


def test_the_code_arguments_are_the_widgets() -> None:
    source = (JS / "render" / "codeargs.js").read_text()
    block = re.search(r"CODE_ARGUMENTS = .*?\(\{(.*?)\}\)", source, re.S)
    assert block is not None, "codeargs.js: CODE_ARGUMENTS moved"
    pairs = dict(re.findall(r"(\w+): \"(\w+)\"", block.group(1)))
    assert pairs == CODE_ARGUMENTS
    assert json.dumps(CODE_ARGUMENTS)  # plain data
