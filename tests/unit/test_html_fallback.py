"""The HTML a chat cell's output carries for readers without the extension: nbconvert, VS Code,
GitHub and nbviewer. It must show the conversation at once (the answer outside any fold), need
no script and no external stylesheet, and survive a sanitizer that strips everything else."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import nh3
from nbconvert import HTMLExporter

from jupyter_turns.model.conversation import parse_events
from jupyter_turns.record.format import RECORD_MIME, record_bundle
from jupyter_turns.record.transcript import to_html, to_markdown

FIXTURE = Path(__file__).parent.parent / "fixtures" / "record_all_kinds.json"
ANSWER = "Paris has about <strong>2.1 million</strong> people."


def _notebook() -> nbformat.NotebookNode:
    record = json.loads(FIXTURE.read_text())
    cell = nbformat.v4.new_code_cell("%%chat\nFind the population of Paris", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("display_data", data=record_bundle(record))]
    return nbformat.v4.new_notebook(cells=[cell])


def _outside_details(page: str, text: str) -> bool:
    """Whether ``text`` occurs in ``page`` outside every <details> element."""
    depth = 0
    for match in re.finditer(r"<(/?)details\b|" + re.escape(text), page):
        if match.group(0) == text:
            if depth == 0:
                return True
        elif match.group(1):
            depth -= 1
        else:
            depth += 1
    return False


def test_nbconvert_html_shows_the_answer_outside_any_fold() -> None:
    page, _ = HTMLExporter().from_notebook_node(_notebook())
    assert ANSWER in page
    assert _outside_details(page, ANSWER)
    assert not _outside_details(page, "The user wants a number; search first.")  # folded


def test_the_fallback_needs_no_script_and_no_stylesheet() -> None:
    html = record_bundle(json.loads(FIXTURE.read_text()))["text/html"]
    assert not re.search(r"<(script|style|link|iframe|img)\b", html)
    assert " on" not in re.sub(r'"[^"]*"', '""', html)  # no event handler attributes
    assert html.startswith('<div class="jt-root jt-saved">')


def test_a_strict_sanitizer_keeps_the_whole_conversation() -> None:
    html = record_bundle(json.loads(FIXTURE.read_text()))["text/html"]
    cleaned = nh3.clean(html)  # the defaults: no classes, no styles
    text = re.sub(r"<[^>]+>", "", cleaned)
    for shown in ("Find the population of Paris", "Paris has about 2.1 million people.",
                  "lookup", "ConnectionError: refused", "Stopped by the user.",
                  "Claude Code · call 7"):  # fmt: skip
        assert shown in text, shown
    assert _outside_details(cleaned, "Paris has about <strong>2.1 million</strong> people.")


def test_the_record_is_kept_beside_the_html() -> None:
    output = _notebook().cells[0].outputs[0]
    assert sorted(output.data) == sorted([RECORD_MIME, "text/html", "text/plain"])


def test_a_terminal_agents_call_names_its_client_in_both_transcripts() -> None:
    events = parse_events(json.loads(FIXTURE.read_text()))
    html = to_html(events)
    assert '<span class="jt-tool-asker">Claude Code · call 7</span>' in html  # as its card says
    markdown = to_markdown(events)
    assert "**Tool call** `edit_cell` (from Claude Code · call 7)" in markdown
    assert markdown.count("(from ") == 1  # a model's calls name nobody
