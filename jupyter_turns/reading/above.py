"""The cells above a chat cell, sent with its request (``--context above[:N]``).

The model sees what the user just did without calling ``notebook_cells`` first: each cell
above the chat cell (the ``N`` nearest, default all) as the outline shows it — source, one line
per output — with an error's traceback and the cells' images (up to ``MAX_IMAGES``), oldest
first and the nearest last, in one attachment (labeled notebook data: never instructions). The
nearest cells are kept first within :data:`ABOVE_CHARS`; older ones are named, not sent.

A thread remembers what it sent (:class:`SentCells`): a later turn sends only the cells that
are new or changed since, and names the unchanged ones. A cell counts as seen only while the
request that carried it is still sent (a forget, a compaction or a rewind drops it: it is sent
again).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..engine.window import to_send
from ..model.content import MAX_IMAGES, Attachment, ImageData
from ..model.events import ConversationEvent
from ..redaction import tail
from ..text import plural
from .cells import CellView, NotebookView, cell_text, error_text, outline_entry

__all__ = ["ABOVE_CHARS", "SentCells", "cells_above", "parse_context"]

ABOVE_CHARS = 24_000  # of the cells above (≈ 6,000 tokens), the nearest kept first
CELL_CHARS = 4_000  # of one cell's source
ERROR_CHARS = 3_000  # of one traceback (its end: where it failed)
LABEL = "cells above"


def parse_context(value: str) -> tuple[bool, int | None]:
    """``none``, ``above`` or ``above:N`` -> (send the cells above?, how many: None for all).
    Raises ValueError naming the forms."""
    text = value.strip().lower()
    if text == "none":
        return False, None
    if text == "above":
        return True, None
    head, _, count = text.partition(":")
    if head == "above" and count.isdigit() and int(count) >= 1:
        return True, int(count)
    raise ValueError(f"expected none, above or above:N (N ≥ 1), not {value!r}")


@dataclass
class SentCells:
    """What one thread's model saw of the cells above: per cell, a digest of what it was sent
    and the request that carried it."""

    sent: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> digest, request id
    offered: dict[str, str] = field(default_factory=dict)  # this turn's, until commit

    def commit(self, events: Sequence[ConversationEvent], before: int) -> None:
        """The turn's request is in ``events`` now (after the first ``before``, which the
        thread held when it started): what it offered counts as seen. A turn that never
        recorded its request (it could not start) sent nothing."""
        request = next(
            (e.id for e in events[before:] if e.kind == "chat_request" and e.parent is None),
            None,
        )
        if request is not None:
            self.sent.update({key: (digest, request) for key, digest in self.offered.items()})
        self.offered = {}

    def status(self, key: str, digest: str, live: set[str]) -> str:
        """``new``, ``changed`` or ``unchanged`` since the model last saw the cell."""
        seen = self.sent.get(key)
        if seen is None or seen[1] not in live:
            return "new"
        return "unchanged" if seen[0] == digest else "changed"


@dataclass
class _Picked:
    entries: list[tuple[CellView, str]] = field(default_factory=list)  # sent, nearest first
    changed: list[int] = field(default_factory=list)
    unchanged: list[int] = field(default_factory=list)
    left_out: list[int] = field(default_factory=list)


def cells_above(
    view: NotebookView,
    count: int | None,
    sent: SentCells,
    events: Sequence[ConversationEvent],
) -> Attachment | None:
    """The attachment for the cells above the chat cell in ``view`` (``count`` nearest; None:
    all), given the thread's ``events`` so far; None when there is no cell above."""
    cells = _above(view)
    if count is not None:
        cells = cells[-count:]
    if not cells:
        return None
    live = {e.id for e in to_send(events) if e.kind == "chat_request"}
    picked = _pick(cells, view, sent, live)
    images: list[ImageData] = []
    for cell, _ in picked.entries:  # the nearest cells' images first
        images.extend(cell_text(cell).images[: MAX_IMAGES - len(images)])
    lines = _head(view, cells, picked)
    lines += [entry for _, entry in reversed(picked.entries)]
    return Attachment(label=LABEL, source="notebook", text="\n".join(lines), images=images)


def _above(view: NotebookView) -> list[CellView]:
    """The cells before the chat cell; every cell when the view does not show it."""
    chat = next((c.index for c in view.cells if c.chat), None)
    return [c for c in view.cells if chat is None or c.index < chat]


def _pick(cells: list[CellView], view: NotebookView, sent: SentCells, live: set[str]) -> _Picked:
    picked, used = _Picked(), 0
    for cell in reversed(cells):  # the nearest first: they keep the budget
        key = cell.id or f"{view.origin}:{cell.index}"
        digest = _digest(cell)
        status = sent.status(key, digest, live)
        if status == "unchanged":
            picked.unchanged.append(cell.index)
            continue
        entry = _entry(cell, view)
        if used + len(entry) > ABOVE_CHARS:
            picked.left_out.append(cell.index)
            continue
        used += len(entry)
        picked.entries.append((cell, entry))
        sent.offered[key] = digest
        if status == "changed":
            picked.changed.append(cell.index)
    return picked


def _head(view: NotebookView, cells: list[CellView], picked: _Picked) -> list[str]:
    """What the attachment says before the cells: where they come from, and what is not in it."""
    history = view.origin == "history"
    many = plural(len(cells), "entry", "entries") if history else plural(len(cells), "cell")
    where = " of this kernel's history" if history else ""
    lines = [
        f"The {many}{where} above this chat cell, from {view.label}; oldest first, "
        "the nearest last."
    ]
    lines += [f"Note: {note}" for note in view.notes]
    names = functools.partial(_names, "In" if view.origin == "history" else "")
    if picked.unchanged:
        lines.append(f"Unchanged since you last saw them, not repeated: {names(picked.unchanged)}.")
    if picked.changed:
        lines.append(f"Changed since you last saw them: {names(picked.changed)}.")
    if picked.left_out:
        lines.append(
            f"Not sent (the cells above are sent up to {ABOVE_CHARS:,} characters, the "
            f"nearest first): {names(picked.left_out)}; notebook_cells reads them."
        )
    if not picked.entries and not picked.left_out:
        lines.append("Nothing above changed since your last look.")
    return lines


def _names(prefix: str, indexes: list[int]) -> str:
    """``index 2, index 5`` (``In[2], In[5]`` in the kernel's history), as the outline names
    cells."""
    if prefix:
        return ", ".join(f"{prefix}[{i}]" for i in sorted(indexes))
    return ", ".join(f"index {i}" for i in sorted(indexes))


def _entry(cell: CellView, view: NotebookView) -> str:
    """One cell: the outline's entry (source cut at ``CELL_CHARS``), then each error's
    traceback (its last ``ERROR_CHARS`` characters)."""
    parts = [outline_entry(cell, view.origin, CELL_CHARS)]
    for output in cell.outputs:
        if output.get("output_type") == "error":
            text = error_text(output)
            if len(text) > ERROR_CHARS:
                text = f"[… {len(text) - ERROR_CHARS:,} characters cut]\n{tail(text, ERROR_CHARS)}"
            parts.append("\n".join(f"    | {line}" for line in text.splitlines()))
    return "\n".join(parts)


def _digest(cell: CellView) -> str:
    """What identifies a cell's content (not its place: a cell moved down is not changed)."""
    shown = json.dumps(
        [cell.cell_type, cell.source, list(cell.outputs)], sort_keys=True, default=str
    )
    return hashlib.sha256(shown.encode("utf-8", errors="replace")).hexdigest()
