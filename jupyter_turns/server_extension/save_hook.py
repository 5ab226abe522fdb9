"""The Jupyter server's pre-save hook: a finished chat record saved without its HTML transcript
gets it, so the file reads everywhere (nbconvert, GitHub, VS Code) as if the kernel had sent it.

Where a page with the lab extension shows a turn, on a server where this hook runs, the kernel
leaves the transcript out of the final record (docs/architecture.md, "Where a conversation is
saved, and why each store exists"): it is the answer's text again, rendered, and was the largest
part of what the kernel sent for a turn. The server adds it here, once per save, from the record
the file holds: :func:`jupyter_turns.record.format.record_html`, the one implementation the
kernel uses too, so the file is the same either way. In a shared document (real-time
collaboration) the server saves the one document: the transcript is added once, whichever pages
showed the turn. The page's own copy keeps no transcript: it draws the record.

Only a finished record (not a live record or a live part) missing its ``text/html`` gets one; a
record that does not read (crafted, damaged) is left as it is and the save goes on.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import OrderedDict
from typing import Any

from ..record.format import RECORD_MIME, is_final, record_html

__all__ = ["add_transcripts"]

log = logging.getLogger(__name__)
_KEPT = 64  # transcripts remembered: a notebook is saved again and again with the same records
_made: OrderedDict[str, str] = OrderedDict()


def add_transcripts(model: dict[str, Any], **_context: Any) -> int:
    """``ContentsManager.register_pre_save_hook``'s hook: add the HTML transcript to each
    finished record output of a notebook ``model`` that lacks one; how many were added."""
    content = model.get("content") if model.get("type") == "notebook" else None
    cells = content.get("cells") if isinstance(content, dict) else None
    added = 0
    for cell in cells if isinstance(cells, list) else ():
        outputs = cell.get("outputs") if isinstance(cell, dict) else None
        for output in outputs if isinstance(outputs, list) else ():
            data = output.get("data") if isinstance(output, dict) else None
            if not isinstance(data, dict) or "text/html" in data:
                continue
            record = data.get(RECORD_MIME)
            if not is_final(record):
                continue
            html = _transcript(record)
            if html is not None:
                data["text/html"] = html
                added += 1
    return added


def _transcript(record: dict[str, Any]) -> str | None:
    """The record's transcript (remembered by the record's content), or None when the record
    does not read."""
    key = hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()
    html = _made.get(key)
    if html is not None:
        _made.move_to_end(key)
        return html
    try:
        html = record_html(record)
    except Exception as exc:  # a record that does not read: saved as it is
        log.warning("jupyter_turns: no HTML transcript for a saved record: %s", exc)
        return None
    _made[key] = html
    if len(_made) > _KEPT:
        _made.popitem(last=False)
    return html
