"""Asking about an error: the failing cell as labeled data (``%chat fix``, the page's **Ask chat**).

The cell is found in a :class:`~.cells.NotebookView` (the page, the saved file or the kernel's
own history, whichever :class:`~.sources.NotebookReader` could read): the one named by its
execution count as Jupyter shows it (``%chat fix 19`` for the cell showing ``[19]``), the cell
right above the asking one (``above``), or the last that raised. Cells are named to the person
as Jupyter shows them (:func:`~.cells.cell_name`). Three attachments go with the request,
framed as notebook data like an ``@name`` (:mod:`.attach`): the cell's source, its traceback
(colour codes removed, its end kept when long), and a summary (:func:`~.variables.summarize`) of
the user's variables that the failing lines name — the lines of this cell the traceback points
at — as they are now, after the error.
Nothing here trusts the view: a malformed output is no error, a traceback without a cell frame
names no line.
"""

from __future__ import annotations

import io
import keyword
import re
import tokenize
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..model.content import Attachment
from ..redaction import head
from .attach import MAX_ATTACHMENTS, cut_head
from .cells import CellView, NotebookView, cell_name, cell_place, error_text
from .variables import is_users, summarize

__all__ = ["ABOVE", "Failure", "FixRefused", "Which", "failure_of", "fix_request"]

SOURCE_CHARS = 8_000  # of the failing cell's source
_FRAME = re.compile(r"\bIn ?\[(\d+)\], line (\d+)")  # "Cell In[3], line 2" or "In[3], line 2"
_CHAT_MAGICS = ("%%chat", "%chat")
_PER_VARIABLE = 400  # the least one variable's summary gets when several share the budget


ABOVE = "above"  # the cell right above the asking chat cell (the page's Ask chat writes it)
Which = int | Literal["above"] | None  # an execution count, ABOVE, or None: the last that raised


class FixRefused(ValueError):
    """There is nothing to ask about: the message says why, and what to do instead."""


@dataclass(frozen=True)
class Failure:
    cell: CellView
    name: str  # "[19]" (its execution count), "In[19]" in the kernel's history, or its place
    request: str  # the question asked when the user wrote none
    attachments: list[Attachment]


def fix_request(name: str) -> str:
    """The question the **Ask chat** button and ``%chat fix`` ask: the page's twin is in
    js/labextension/errors.js. ``name``: ``[19]``, ``In[19]``, ``the cell above``, or a cell's
    place (``the 4th cell (index 3)``)."""
    cell = name if name.startswith("the ") else f"cell {name}"
    return f"Why does {cell} fail, and how do I fix it?"


def failure_of(
    view: NotebookView,
    which: Which,
    namespace: Mapping[str, Any],
    budget: int = 4_000,
    hidden: Collection[str] = (),
) -> Failure:
    """The cell of ``view`` that ``which`` names (an execution count, :data:`ABOVE`, or
    ``None``: the last that raised) with what goes with a question about its error;
    :class:`FixRefused` when it has none."""
    cell = _chosen(view, which)
    error = _error(cell)
    assert error is not None  # _chosen returns a cell with an error
    name = cell_name(cell, view.origin)
    traceback = error_text(error)
    attachments = [
        Attachment(label="source", source=f"cell {name}", text=_source(cell.source)),
        Attachment(label="traceback", source=f"cell {name}", text=cut_head(traceback, budget)),
    ]
    lines = _failing_lines(cell, view, traceback)
    variables = _variables(cell.source, lines, namespace, budget, hidden)
    if variables:
        attachments.append(Attachment(label="variables", source=f"cell {name}", text=variables))
    asked = "the cell above" if which == ABOVE else name
    return Failure(cell, name, fix_request(asked), attachments)


def _error(cell: CellView) -> dict[str, Any] | None:
    """The cell's last error output, if it has one."""
    errors = [o for o in cell.outputs if isinstance(o, dict) and o.get("output_type") == "error"]
    return errors[-1] if errors else None


def _chosen(view: NotebookView, which: Which) -> CellView:
    # a chat cell's own failure (an unknown option, another %chat fix) is no error in the code
    failed = [c for c in view.cells if not _chats(c) and _error(c) is not None]
    names = ", ".join(cell_name(c, view.origin) for c in failed[-8:])
    where = f"in {view.label}"
    if which is None:
        if not failed:
            raise FixRefused(
                f"no cell has an error {where}. Run the cell that fails first, or name it by "
                "the number Jupyter shows beside it: %chat fix 19 for [19]."
            )
        # the last to run: the highest execution count (the history's entries count as run)
        return max(failed, key=lambda c: (c.execution_count or 0, c.index))
    cell = _above(view) if isinstance(which, str) else _counted(view, which, where)
    if _error(cell) is None:
        others = f" Cells with an error: {names}." if names else " No cell has one."
        raise FixRefused(
            f"cell {cell_name(cell, view.origin)} has no error output {where}.{others}"
        )
    return cell


def _counted(view: NotebookView, count: int, where: str) -> CellView:
    """The cell whose execution count is ``count`` (in the kernel's history: ``In[count]``)."""
    shown = f"In[{count}]" if view.origin == "history" else f"[{count}]"
    found = [
        c
        for c in view.cells
        if (c.index if view.origin == "history" else c.execution_count) == count
    ]
    if not found:
        raise FixRefused(f"there is no cell {shown} {where}.")
    failing = [c for c in found if _error(c) is not None] or found
    if len(failing) > 1:  # a restarted kernel counts from 1 again: two cells can show [3]
        places = " and ".join(cell_place(c.index) for c in failing)
        raise FixRefused(
            f"{len(failing)} cells show {shown} {where} ({places}): run the one you mean again, "
            "or ask from the cell below it with %chat fix above."
        )
    return failing[0]


def _above(view: NotebookView) -> CellView:
    """The cell right above the asking chat cell (as the page or the file has them)."""
    asking = next((i for i, c in enumerate(view.cells) if c.chat), None)
    if asking is None or view.origin == "history":
        raise FixRefused(
            f"cannot tell which cell is above this one in {view.label}: name the failing cell "
            "by the number Jupyter shows beside it (%chat fix 19 for [19])."
        )
    if asking == 0:
        raise FixRefused("there is no cell above this one.")
    return view.cells[asking - 1]


def _chats(cell: CellView) -> bool:
    """The asking cell, or any ``%%chat`` / ``%chat`` cell."""
    return cell.chat or cell.source.lstrip().startswith(_CHAT_MAGICS)


def _source(source: str) -> str:
    if len(source) <= SOURCE_CHARS:
        return source
    return f"{head(source, SOURCE_CHARS)}\n… [{len(source) - SOURCE_CHARS:,} more characters]"


def _failing_lines(cell: CellView, view: NotebookView, traceback: str) -> list[int]:
    """The line numbers (1-based) of this cell that the traceback's frames point at, in
    order: the cell's own statement first, then any function of the cell it called. A
    traceback that names other cells only (an edited cell, rerun elsewhere) gives its first."""
    own = {cell.execution_count, cell.index if view.origin == "history" else None} - {None}
    frames = [(int(n), int(line)) for n, line in _FRAME.findall(traceback)]
    lines = [line for number, line in frames if number in own] or [line for _, line in frames[:1]]
    return list(dict.fromkeys(lines))


def _variables(
    source: str,
    lines: list[int],
    namespace: Mapping[str, Any],
    budget: int,
    hidden: Collection[str],
) -> str:
    """The summaries of the user's variables that the failing lines name (the whole cell's
    when no line is known), within ``budget`` characters; empty when they name none."""
    rows = source.splitlines()
    chosen = [rows[n - 1] for n in lines if 0 < n <= len(rows)] or rows
    names = [n for n in _names(chosen) if n in namespace and _users(n, namespace[n], hidden)]
    names = names[:MAX_ATTACHMENTS]
    if not names:
        return ""
    where = ", ".join(f"line {n}" for n in lines) if lines else "the cell"
    head = f"The variables {where} names, as they are now (after the error):"
    each = max(_PER_VARIABLE, (budget - len(head)) // len(names) - 20)
    parts = [head, *(f"\n{name}:\n{summarize(namespace[name], each)}" for name in names)]
    return "\n".join(parts)  # each summary within its share: the whole within about budget


def _users(name: str, value: Any, hidden: Collection[str]) -> bool:
    try:
        return is_users(name, value, hidden)
    except Exception:  # a __class__ property that raises: still the user's value
        return True


def _names(lines: list[str]) -> list[str]:
    """The names ``lines`` use as variables, in order, each once: not keywords, not
    attributes (``.mean``), nothing inside strings or comments."""
    found: dict[str, None] = {}
    for line in lines:
        previous = ""
        try:
            for token in tokenize.generate_tokens(io.StringIO(line.strip()).readline):
                name = token.type == tokenize.NAME and not keyword.iskeyword(token.string)
                if name and previous != ".":
                    found.setdefault(token.string, None)
                if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
                    previous = token.string
        except (tokenize.TokenError, SyntaxError):  # a line of a longer statement: keep what
            continue  # was read before the end
    return list(found)
