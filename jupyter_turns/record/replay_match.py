"""Matching: which saved turn a running ``%%chat`` cell replays, and why none does.

A cell replays only from the kernel's own notebook: a replayed turn's tool calls run here, with
this notebook's tools, so a turn saved in any other file — a notebook dropped beside yours —
would call your tools with someone else's arguments. The kernel's notebook is the file the
frontend names (JupyterLab's ``__session__`` / ``JPY_SESSION_NAME``, VS Code's). nbval,
nbclient, papermill and ``jupyter execute`` name none and start the kernel in the notebook's
folder: there it is the one ``.ipynb`` of the working directory whose code cells hold, in
order, every cell this kernel ran since the extension loaded, the running chat cell included
(the kernel's own log, :meth:`~.reading.history.KernelHistory.sources`) — identified by what
the kernel ran, never by where a recording is. When no notebook or several qualify nothing is
replayed and :meth:`Found.why` says why. Another file replays only once the user names it
(``%chat replay --from FILE``, :meth:`SavedIndex.use`).

In that notebook a cell's saved turn is found by its cell id where the frontend gives one,
else by its request text, in cell order. Runs of a cell that a re-run displaced are never
matched, and saved turns that cannot be read are reported with the reason none matched.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .notebook import find_notebook
from .saved_turns import SavedTurn, saved_turns

__all__ = ["Found", "SavedIndex", "find_saved"]

MAX_FILES = 50
MAX_BYTES = 100_000_000
PARAMETERS = "# Parameters"  # the first line of the cell papermill injects (it is in no file)
_SHOWN_PROBLEMS = 3
_FROM = "name the file to replay from with %chat replay --from FILE"


@dataclass
class _Notebook:
    path: Path
    turns: list[SavedTurn]  # each cell's current chat turn, in cell order
    code: list[str]  # its code cells' sources, in order (stripped): did this kernel run it?
    problems: list[str] = field(default_factory=list)  # saved turns that cannot be read
    cursor: int = 0  # the next turn, in cell order, a cell without an id is matched from

    def holds(self, ran: Sequence[str]) -> bool:
        """Whether this notebook's code cells hold, in order, every cell in ``ran`` (papermill's
        injected parameters cell aside). Nothing ran: no evidence, so no."""
        wanted = [source.strip() for source in ran if not _injected(source)]
        cells = iter(self.code)  # consumed as it is searched: the order counts
        return bool(wanted) and all(any(cell == source for cell in cells) for source in wanted)


def _injected(source: str) -> bool:
    return source.lstrip().split("\n", 1)[0].strip() == PARAMETERS


@dataclass
class SavedIndex:
    """The saved chat turns this kernel may replay: its own notebook's, or those of the file the
    user named with ``%chat replay --from``. Each file is read once per session."""

    named: _Notebook | None = None  # ``%chat replay --from FILE``: the source from then on
    files: dict[Path, _Notebook] = field(default_factory=dict)  # read so far, by resolved path
    folder: list[_Notebook] | None = None  # the working directory's notebooks, once read

    def use(self, path: Path) -> _Notebook:
        """``%chat replay --from``: replay from ``path`` from now on (read afresh). Raises
        OSError when the file cannot be opened."""
        path.stat()
        self.named = _read(path)
        return self.named

    def source(
        self, namespace: dict[str, Any], ran: Sequence[str], found: Found
    ) -> _Notebook | None:
        """The notebook this kernel replays from, or None (``found`` then says why)."""
        if self.named is not None:
            return self.named
        own = find_notebook(namespace)
        if own is not None:
            return self._file(own)
        folder = self._folder()
        holders = [notebook for notebook in folder if notebook.holds(ran)]
        if len(holders) == 1:
            return holders[0]
        found.recorded = any(notebook.turns for notebook in folder)
        found.candidates = [notebook.path.name for notebook in holders]
        found.unknown = not holders
        return None

    def _file(self, path: Path) -> _Notebook:
        key = path.resolve()
        if key not in self.files:
            self.files[key] = _read(path)
        return self.files[key]

    def _folder(self) -> list[_Notebook]:
        if self.folder is None:
            paths = sorted(Path.cwd().glob("*.ipynb"))[:MAX_FILES]
            self.folder = [self._file(path) for path in paths]
        return self.folder


def _read(path: Path) -> _Notebook:
    """The notebook at ``path``: its current chat turn of each cell, in cell order, its code
    cells' sources, and the problems of what cannot be read (never an exception)."""
    try:
        if path.stat().st_size > MAX_BYTES:
            problem = f"the file is larger than {MAX_BYTES // 1_000_000} MB: not read"
            return _Notebook(path, [], [], [problem])
        notebook = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError) as exc:
        return _Notebook(path, [], [], [f"the file cannot be read ({type(exc).__name__})"])
    if not isinstance(notebook, dict):
        return _Notebook(path, [], [], ["the file is not a notebook"])
    problems: list[str] = []
    newest: dict[int, SavedTurn] = {}  # a re-run cell keeps its current run only
    for turn in saved_turns(notebook, problems):
        if turn.displaced or turn.events[0].kind != "chat_request":
            continue
        if turn.cell not in newest or turn.started > newest[turn.cell].started:
            newest[turn.cell] = turn
    turns = sorted(newest.values(), key=lambda t: (t.cell, t.started))
    return _Notebook(path, turns, _code(notebook.get("cells")), problems)


def _code(cells: Any) -> list[str]:
    """The sources of the code cells (nbformat: a string or a list of lines), stripped."""
    sources = []
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source")
        if isinstance(source, list):
            source = "".join(line for line in source if isinstance(line, str))
        sources.append(source.strip() if isinstance(source, str) else "")
    return sources


@dataclass
class Found:
    """What :func:`find_saved` found for a cell: its saved turn and file, or why none."""

    turn: SavedTurn | None = None
    source: str = ""  # the notebook file the turn came from
    change: str | None = None  # the request's diff against the turn this cell should replay
    candidates: list[str] = field(default_factory=list)  # notebooks that all hold what ran
    unknown: bool = False  # no notebook of the working directory holds what this kernel ran
    problems: list[str] = field(default_factory=list)  # saved turns that cannot be read
    recorded: bool = False  # the notebooks searched hold saved chat turns at all
    unrecorded: bool = False  # the cell has an id no saved turn has: it was never recorded

    def why(self) -> str:
        """Why the cell cannot be replayed."""
        if self.candidates:
            return (
                f"{len(self.candidates)} notebooks in {Path.cwd()} hold every cell this kernel "
                f"ran ({', '.join(self.candidates)}), and the kernel was not told which one it "
                f"runs (nbval and nbclient do not say): keep one copy per folder, or {_FROM}"
            )
        if self.unknown:
            return (
                "the kernel was not told which notebook it runs, and no notebook in "
                f"{Path.cwd()} holds, in order, every cell it ran (a recording in another "
                f"notebook is never replayed on its own): save the notebook, or {_FROM}"
            )
        why = (
            f"its request changed:\n{self.change}"
            if self.change
            else "this cell has no saved turn (it was never run with a model in this notebook)"
            if self.unrecorded
            else "no saved turn matches it"
        )
        if self.problems:
            shown = "; ".join(self.problems[:_SHOWN_PROBLEMS])
            more = len(self.problems) - _SHOWN_PROBLEMS
            why += f"\nSaved turns that cannot be read: {shown}" + (
                f" (and {more} more)" if more > 0 else ""
            )
        return why


def find_saved(
    index: SavedIndex,
    namespace: dict[str, Any],
    cell_id: str | None,
    request: str,
    ran: Sequence[str] = (),
) -> Found:
    """The saved turn of the running cell, or what is known about why there is none. ``ran``:
    the sources of the cells this kernel ran, the running one last (what identifies its
    notebook when no frontend names one)."""
    found = Found()
    notebook = index.source(namespace, ran, found)
    if notebook is None:
        return found
    found.problems = [f"{notebook.path.name}: {problem}" for problem in notebook.problems]
    found.recorded = bool(notebook.turns)
    if cell_id:
        held = [turn for turn in notebook.turns if turn.cell_id == cell_id]
        if held:
            if _request(held[-1]) == request:
                return _matched(notebook, held[-1], found)
            found.change = _diff(_request(held[-1]), request)
            return found
    for position in range(notebook.cursor, len(notebook.turns)):
        turn = notebook.turns[position]
        if _request(turn) == request:
            notebook.cursor = position + 1
            return _matched(notebook, turn, found)
    if cell_id and any(turn.cell_id for turn in notebook.turns):
        found.unrecorded = True  # the cells are named, and no saved turn is this one's
        return found
    if notebook.cursor < len(notebook.turns):  # no names: the next turn in cell order
        found.change = _diff(_request(notebook.turns[notebook.cursor]), request)
    return found


def _matched(notebook: _Notebook, turn: SavedTurn, found: Found) -> Found:
    found.turn, found.source = turn, notebook.path.name
    return found


def _request(turn: SavedTurn) -> str:
    first = turn.events[0]
    return first.content.strip() if first.kind == "chat_request" else ""


def _diff(saved: str, now: str) -> str:
    lines = difflib.unified_diff(
        saved.splitlines(), now.splitlines(), "saved request", "this cell", lineterm="", n=1
    )
    return "\n".join(lines)
