"""Testing helpers: the nbval adjustment for notebooks with %%chat cells.

A chat cell has one output that the kernel replaces in place when the turn ends
(``update_display_data``), and nbval 0.11 ignores in-place updates: it would compare the
first display (the live widget or record) with the saved final record. And the record carries
event ids and timestamps, so it differs on every run. A long answer streamed headless may
leave its live parts after that output and end them with one more (its transcript and
summary): nbval reads those as the one final output, in the run and in the saved notebook
alike. Use this in a
``conftest.py`` next to your notebooks::

    from jupyter_turns.testing import nbval_for_chat_cells as pytest_collection_modifyitems

nbval then sees each chat cell's final output and compares everything but the record (the
transcript HTML, the summary, your other cells); tests that need the record load it with
:func:`jupyter_turns.record.notebook.load`. A replayed cell (``JUPYTER_TURNS_REPLAY=on``) differs
from its recording only by saying it is a replay (its opening notice, `` · replayed`` at the end of
its summary): that is left out of the comparison, on both sides.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from nbformat import NotebookNode

from .record.format import CONTINUES, RECORD_MIME, REPLAYED

__all__ = ["nbval_for_chat_cells", "skip_record_comparison"]

_OURS = "jupyter-turns-"  # the display ids persist.Recorder gives a chat cell's output
_END = "-end"  # ... and the output that ends a turn saved as live parts
# nbval's sanitizing regexes, applied to the new and the saved outputs alike: what says that a
# cell is a replay (transcript.py marks its notice; the notice's text is escaped: no "<")
REPLAY_PATTERNS = {
    r'<div class="jt-notice jt-notice-\w+ jt-replayed"[^>]*>[^<]*</div>': "",
    re.escape(REPLAYED) + "$": "",
}


def nbval_for_chat_cells(session: Any, config: Any, items: list[Any]) -> None:
    """A ``pytest_collection_modifyitems`` hook: in-place updates applied, the record skipped,
    a replay's note that it is one not compared, a long headless turn read as one output."""
    skip_record_comparison(session, config, items)
    for item in items:
        notebook: Any = getattr(item, "parent", None)
        patterns = getattr(notebook, "sanitize_patterns", None)
        if isinstance(patterns, dict):
            patterns.update(REPLAY_PATTERNS)
        get = getattr(notebook, "get_kernel_message", None)
        if get is not None and not getattr(get, "_jupyter_turns", False):
            notebook.get_kernel_message = _applying_updates(get)
        cell = getattr(item, "cell", None)
        outputs = getattr(cell, "outputs", None)
        if cell is not None and isinstance(outputs, list):
            cell.outputs = _one_output_per_turn(outputs)


def skip_record_comparison(session: Any, config: Any, items: list[Any]) -> None:
    """A ``pytest_collection_modifyitems`` hook: nbval skips the record mime type."""
    for item in items:
        notebook = getattr(item, "parent", None)
        skip = getattr(notebook, "skip_compare", None)
        if notebook is not None and isinstance(skip, tuple) and RECORD_MIME not in skip:
            notebook.skip_compare = (*skip, RECORD_MIME)


def _part(data: Any) -> tuple[bool, bool]:
    """Whether an output's data is a live part, and whether it is the one that ends its turn
    (:func:`jupyter_turns.record.format.end_part`)."""
    record = data.get(RECORD_MIME) if isinstance(data, dict) else None
    if not (isinstance(record, dict) and CONTINUES in record):
        return False, False
    return True, record.get("live") is not True


def _one_output_per_turn(outputs: list[Any]) -> list[Any]:
    """A saved cell's outputs as :func:`_applying_updates` reads a run: a long headless turn's
    live parts left out, and the data of the part that ends it (its transcript and summary) in
    its live record's place."""
    kept: list[Any] = []
    head: Any = None
    for output in outputs:
        data = output.get("data") if isinstance(output, dict) else None
        part, ends = _part(data)
        if part:
            if ends and head is not None:
                head["data"] = data
            continue
        if isinstance(data, dict) and RECORD_MIME in data:
            head = output
        kept.append(output)
    return kept


def _applying_updates(get: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """Wrap nbval's message reader: a chat output's ``data`` is kept as the very node nbval
    stores, and an update of that display rewrites it in place (and is not passed on). A long
    turn's live parts are not passed on either. Where the turn ends by clearing them
    (:meth:`jupyter_turns.kernel.persist.Recorder.finish`, with ``clear_output``, which nbval
    ignores), neither is that clear, nor what the turn printed again after it (nbval kept the
    first print); the final record then shown again under the first output's display id
    updates that output. Where it keeps them and adds one that ends them, that one's data (the
    transcript and the summary) rewrites the first output, as an update would."""
    shown: dict[str, Any] = {}
    parted: set[str] = set()  # the cells (request ids) whose turn added live parts
    cleared: set[str] = set()  # those whose clear was not passed on: their prints come again

    def get_kernel_message(*args: Any, **kwargs: Any) -> Any:
        while True:
            message = get(*args, **kwargs)
            kind = message.get("msg_type")
            content = message.get("content") or {}
            cell = str((message.get("parent_header") or {}).get("msg_id"))
            display_id = str((content.get("transient") or {}).get("display_id") or "")
            if kind == "clear_output" and cell in parted:
                cleared.add(cell)
                continue
            if kind == "stream" and cell in cleared:
                continue
            if not display_id.startswith(_OURS):
                return message
            part, ends = _part(content.get("data"))
            if part:
                parted.add(cell)
                head = shown.get(display_id.removesuffix(_END))
                if ends and head is not None:
                    head.clear()
                    head.update(content.get("data") or {})
                continue
            if kind == "display_data" and display_id not in shown:
                node = NotebookNode(content.get("data") or {})  # type: ignore[no-untyped-call]
                content["data"] = shown[display_id] = node
                return message
            if kind not in ("update_display_data", "display_data") or display_id not in shown:
                return message
            data = shown[display_id]
            data.clear()
            data.update(content.get("data") or {})

    get_kernel_message._jupyter_turns = True  # type: ignore[attr-defined]
    return get_kernel_message
