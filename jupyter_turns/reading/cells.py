"""The notebook as the model reads it: cells with their outputs, as an outline or in full.

A :class:`NotebookView` is one snapshot of the cells, from wherever they could be read (the
page, the saved file or the kernel's own history, see :mod:`.sources`), with a label saying
which. :func:`outline` is what ``notebook_cells`` answers: per cell its index, type, execution
count, source (long sources cut) and a one-line summary of each output. :func:`cell_text` is
what ``cell_output`` pages through: a cell's outputs as text (rich reprs as text, an error's
traceback), with the images separately so that they reach the model as image blocks.

Outputs are nbformat dicts (``output_type``, ``data``, ``text``, ``ename``...), the same
shape from every source. Nothing here trusts them: a malformed output is summarized as such.
A text cut short here is cut after its secrets are withheld
(:func:`jupyter_turns.redaction.head`): a secret across the cut is never shown in part.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..model.content import MAX_IMAGES, ImageData
from ..model.images import base64_size, image_from_base64
from ..record.format import RECORD_MIME
from ..redaction import head
from ..text import ordinal

__all__ = [
    "CellView",
    "NotebookView",
    "cell_name",
    "cell_place",
    "cell_text",
    "error_text",
    "outline",
    "outline_entry",
    "output_summary",
]

Origin = Literal["live", "file", "history"]

SOURCE_CHARS = 600  # of each cell's source in the outline
OUTLINE_CHARS = 12_000  # of the whole outline; the rest is one call away
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_FRAME_ROWS = re.compile(r"\[(\d[\d,]*) rows x (\d[\d,]*) columns\]")
_HTML_FRAME_ROWS = re.compile(r"(\d[\d,]*) rows × (\d[\d,]*) columns")
_WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
_TEXT_MIMES = ("text/plain", "text/markdown", "text/latex", "application/json", "text/html")
_IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp")


@dataclass(frozen=True)
class CellView:
    index: int  # 0-based position in the notebook; in kernel history, the execution count
    cell_type: str
    source: str
    execution_count: int | None = None
    outputs: Sequence[dict[str, Any]] = ()
    chat: bool = False  # the %%chat cell that is asking
    id: str | None = None
    # its ``metadata.jupyter_turns.provenance`` as the notebook holds it (unchecked: undo puts
    # back whatever was there): which turn of a chat last changed it
    provenance: dict[str, Any] | None = None


@dataclass(frozen=True)
class NotebookView:
    origin: Origin
    label: str  # where the cells come from, said to the model with every answer
    cells: Sequence[CellView] = ()
    notes: Sequence[str] = field(default_factory=tuple)  # why a better source was not used

    def cell(self, index: int) -> CellView | None:
        return next((c for c in self.cells if c.index == index), None)


def _text(value: Any) -> str:
    """nbformat multiline strings are a string or a list of strings."""
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return value if isinstance(value, str) else ""


def _first_lines(text: str, lines: int = 2, chars: int = 160) -> str:
    kept = text.strip("\n").splitlines()[:lines]
    short = " ⏎ ".join(line.rstrip() for line in kept)
    more = len(text.strip("\n").splitlines()) > lines or len(short) > chars
    return (head(short, chars) + " …") if more else short


def _is_chat_output(output: dict[str, Any]) -> bool:
    data = output.get("data")
    return bool(output.get("jupyter_turns")) or (
        isinstance(data, dict) and (RECORD_MIME in data or _WIDGET_MIME in data)
    )


def _image_size(output: dict[str, Any], mime: str) -> str:
    size = (
        (output.get("metadata") or {}).get(mime)
        if isinstance(output.get("metadata"), dict)
        else None
    )
    if isinstance(size, dict) and size.get("width") and size.get("height"):
        return f" {size['width']}×{size['height']}"
    data = output.get("data")
    value = data.get(mime) if isinstance(data, dict) else None
    found = base64_size(_text(value)) if value else None
    return f" {found[0]}×{found[1]}" if found else ""


def output_summary(output: Any) -> str:
    """One line for one output: ``stdout: …``, ``ZeroDivisionError: …``, ``image/png 640×480``,
    ``DataFrame 1000×12``, or the first lines of its text."""
    if not isinstance(output, dict):
        return "(unreadable output)"
    kind = output.get("output_type")
    if kind == "stream":
        return f"{output.get('name', 'stdout')}: {_first_lines(_text(output.get('text')))}"
    if kind == "error":
        return f"{output.get('ename', 'Error')}: {_first_lines(str(output.get('evalue', '')), 1)}"
    data = output.get("data")
    if not isinstance(data, dict):
        return f"({kind or 'unknown'} output)"
    if _is_chat_output(output):
        return "(chat conversation)"
    plain = _text(data.get("text/plain"))
    html = _text(data.get("text/html"))
    frame = _FRAME_ROWS.search(plain) or _HTML_FRAME_ROWS.search(html)
    if frame:
        return f"DataFrame {frame.group(1)}×{frame.group(2)}"
    if 'class="dataframe' in html and "<tbody>" in html and "<thead>" in html:
        rows = html.split("<tbody>", 1)[1].count("<tr")
        columns = html.split("<thead>", 1)[1].split("</tr>", 1)[0].count("<th") - 1
        return f"DataFrame {rows}×{columns}"
    for mime in _IMAGE_MIMES:
        if mime in data:
            return f"{mime}{_image_size(output, mime)}"
    if plain:
        return _first_lines(plain)
    mimes = ", ".join(sorted(data)) or "empty"
    return f"({mimes})"


def outline(view: NotebookView, start: int | None, end: int | None) -> tuple[str, list[CellView]]:
    """``notebook_cells``: the cells from ``start`` to ``end`` (inclusive) as a compact list,
    and the cells whose whole source it shows. One cell alone is shown in full (up to
    ``OUTLINE_CHARS``): the way to read a long cell before editing it."""
    chosen = [
        c
        for c in view.cells
        if (start is None or c.index >= start) and (end is None or c.index <= end)
    ]
    limit = OUTLINE_CHARS if len(chosen) == 1 else SOURCE_CHARS
    kind = "entries" if view.origin == "history" else "cells"
    head = [f"Source: {view.label}. {len(view.cells)} {kind}; showing {len(chosen)}."]
    head.extend(f"Note: {note}" for note in view.notes)
    lines: list[str] = []
    whole: list[CellView] = []
    used = sum(len(h) + 1 for h in head)
    for position, cell in enumerate(chosen):
        entry = outline_entry(cell, view.origin, limit)
        if used + len(entry) > OUTLINE_CHARS and lines:
            rest = chosen[position:]
            lines.append(
                f"[… {len(rest)} more not shown: call notebook_cells(start={rest[0].index}) …]"
            )
            break
        lines.append(entry)
        used += len(entry) + 1
        if len(cell.source) <= limit:
            whole.append(cell)
    return "\n".join(head + lines), whole


def cell_name(cell: CellView, origin: Origin) -> str:
    """How a cell is named to a person, as Jupyter shows it (docs/reading.md, "How cells are
    named"): by its execution count, ``[19]``; in the kernel's history ``In[19]`` (the same
    count); a cell that has none (never run, markdown) by its place, ``the 4th cell``."""
    if origin == "history":
        return f"In[{cell.index}]"
    if cell.execution_count is not None:
        return f"[{cell.execution_count}]"
    return cell_place(cell.index)


def cell_place(index: int) -> str:
    """A cell named by its place, for a person and the model at once: ``the 4th cell (index
    3)`` (the tools take the 0-based index). The page's twin: cellPlace in js/src/util/cells.js."""
    return f"the {ordinal(index + 1)} cell (index {index})"


def outline_entry(cell: CellView, origin: Origin, limit: int) -> str:
    """One cell as the outline shows it: its index (``In[n]`` in the kernel's history), type
    and execution count, its source (cut past ``limit``) and one line per output."""
    name = f"In[{cell.index}]" if origin == "history" else f"index {cell.index}:"
    count = f" [{cell.execution_count}]" if cell.execution_count is not None else ""
    marker = "  ← this chat cell (asking now)" if cell.chat else ""
    source = cell.source
    if len(source) > limit:
        cut = len(source) - limit
        whole = f"; notebook_cells(start={cell.index}, end={cell.index}) shows it whole"
        source = (
            f"{head(source, limit)}… [{cut:,} more characters"
            f"{whole if limit < OUTLINE_CHARS else ''}]"
        )
    body = "\n".join(f"    {line}" for line in source.splitlines()) or "    (empty)"
    outputs = [f"    → {output_summary(o)}" for o in cell.outputs]
    if cell.chat:
        outputs = []
    return "\n".join([f"{name} {cell.cell_type}{count}{marker}", body, *outputs])


def error_text(output: dict[str, Any]) -> str:
    """An error output as text: ``ename: evalue``, then its traceback without the terminal's
    colour codes (IPython's tracebacks are ANSI-coloured)."""
    traceback = "\n".join(_ANSI.sub("", str(t)) for t in output.get("traceback") or [])
    return f"{output.get('ename', 'Error')}: {output.get('evalue', '')}\n{traceback}"


@dataclass(frozen=True)
class CellText:
    text: str
    images: list[ImageData]


def cell_text(cell: CellView) -> CellText:
    """A cell's outputs in full, as text; images (at most ``MAX_IMAGES``) apart."""
    parts: list[str] = []
    images: list[ImageData] = []
    for number, output in enumerate(cell.outputs, 1):
        head = f"--- output {number}"
        if not isinstance(output, dict):
            parts.append(f"{head}: (unreadable)")
            continue
        kind = output.get("output_type")
        if kind == "stream":
            parts.append(
                f"{head} ({output.get('name', 'stdout')}) ---\n{_text(output.get('text'))}"
            )
        elif kind == "error":
            parts.append(f"{head} (error) ---\n{error_text(output)}")
        elif _is_chat_output(output):
            parts.append(f"{head}: a chat conversation (read it in the thread, not here) ---")
        else:
            parts.append(_rich(output, head, f"cell {cell.index} output {number}", images))
    if not cell.outputs:
        parts.append("(this cell has no outputs)")
    return CellText("\n".join(parts), images)


def _rich(output: dict[str, Any], head: str, label: str, images: list[ImageData]) -> str:
    data = output.get("data")
    if not isinstance(data, dict):
        return f"{head}: (no data) ---"
    lines = [f"{head} ({output.get('output_type', 'display_data')}) ---"]
    for mime in _IMAGE_MIMES:
        if mime in data:
            image = (
                image_from_base64(_text(data[mime]), mime, label)
                if len(images) < MAX_IMAGES
                else None
            )
            if image is not None:
                images.append(image)
                lines.append(f"[{image.describe()} — image {len(images)} attached to this result]")
            else:
                lines.append(f"[{mime}{_image_size(output, mime)} — not attached]")
            break
    for mime in _TEXT_MIMES:
        if mime in data:
            text = _text(data[mime]) if mime != "application/json" else str(data[mime])
            if mime == "text/html" and "text/plain" in data:
                continue  # the plain repr says the same, shorter
            lines.append(text if mime == "text/plain" else f"({mime})\n{text}")
            break
    return "\n".join(lines)
