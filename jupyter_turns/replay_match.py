"""Matching: which saved turn a running ``%%chat`` cell replays, and why none does.

A cell's saved turn is found by its cell id where the frontend gives one (JupyterLab), else by
its request text, in cell order. Where the frontend names the kernel's notebook file, only that
file is read. nbval, nbclient and papermill name none (they start the kernel in the notebook's
folder): then the working directory's ``.ipynb`` files are read, and a cell replays a turn only
from the one notebook there that holds its request — never a turn of another notebook, whose
tool calls would run here; once a cell matched, that notebook is the kernel's for the session.
Runs of a cell that a re-run displaced are never matched, and saved turns that cannot be read
are reported with the reason none matched.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .notebook import find_notebook
from .saved_turns import SavedTurn, saved_turns

__all__ = ["Found", "SavedIndex", "find_saved"]

MAX_FILES = 50
MAX_BYTES = 100_000_000
_SHOWN_PROBLEMS = 3


@dataclass
class _Notebook:
    path: Path
    turns: list[SavedTurn]  # each cell's current chat turn, in cell order
    problems: list[str] = field(default_factory=list)  # saved turns that cannot be read
    cursor: int = 0  # the next turn, in cell order, a cell without an id is matched from


@dataclass
class SavedIndex:
    """The saved chat turns this kernel can replay, read once per session."""

    notebooks: list[_Notebook] = field(default_factory=list)
    read: bool = False
    home: _Notebook | None = None  # the kernel's notebook: named by the frontend, or matched

    def load(self, namespace: dict[str, Any]) -> None:
        if self.read:
            return
        self.read = True
        own = find_notebook(namespace)
        paths = [own] if own else sorted(Path.cwd().glob("*.ipynb"))[:MAX_FILES]
        for path in paths:
            turns, problems = _chat_turns(path)
            if turns or problems or path == own:
                self.notebooks.append(_Notebook(path, turns, problems))
        if own is not None:
            self.home = self.notebooks[0]


def _chat_turns(path: Path) -> tuple[list[SavedTurn], list[str]]:
    """The current chat turn of each cell of the notebook at ``path``, in cell order, and the
    problems of the saved turns that cannot be read."""
    try:
        if path.stat().st_size > MAX_BYTES:
            return [], [f"the file is larger than {MAX_BYTES // 1_000_000} MB: not read"]
        notebook = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError) as exc:
        return [], [f"the file cannot be read ({type(exc).__name__})"]
    if not isinstance(notebook, dict):
        return [], ["the file is not a notebook"]
    problems: list[str] = []
    newest: dict[int, SavedTurn] = {}  # a re-run cell keeps its current run only
    for turn in saved_turns(notebook, problems):
        if turn.displaced or turn.events[0].kind != "chat_request":
            continue
        if turn.cell not in newest or turn.started > newest[turn.cell].started:
            newest[turn.cell] = turn
    return sorted(newest.values(), key=lambda t: (t.cell, t.started)), problems


@dataclass
class Found:
    """What :func:`find_saved` found for a cell: its saved turn and file, or why none."""

    turn: SavedTurn | None = None
    source: str = ""  # the notebook file the turn came from
    change: str | None = None  # the request's diff against the turn this cell should replay
    candidates: list[str] = field(default_factory=list)  # notebooks that all hold the request
    problems: list[str] = field(default_factory=list)  # saved turns that cannot be read
    recorded: bool = False  # the notebooks searched hold saved chat turns at all

    def why(self) -> str:
        """Why the cell cannot be replayed."""
        if self.candidates:
            return (
                f"{len(self.candidates)} notebooks in {Path.cwd()} hold this request "
                f"({', '.join(self.candidates)}), and the kernel was not told which one it "
                "runs (nbval and nbclient do not say): keep one notebook per folder, or replay "
                "from JupyterLab"
            )
        why = f"its request changed:\n{self.change}" if self.change else "no saved turn matches it"
        if self.problems:
            shown = "; ".join(self.problems[:_SHOWN_PROBLEMS])
            more = len(self.problems) - _SHOWN_PROBLEMS
            why += f"\nSaved turns that cannot be read: {shown}" + (
                f" (and {more} more)" if more > 0 else ""
            )
        return why


def find_saved(
    index: SavedIndex, namespace: dict[str, Any], cell_id: str | None, request: str
) -> Found:
    """The saved turn of the running cell, or what is known about why there is none."""
    index.load(namespace)
    pool = [index.home] if index.home is not None else index.notebooks
    found = Found(
        problems=[f"{nb.path.name}: {problem}" for nb in pool for problem in nb.problems],
        recorded=any(nb.turns for nb in pool),
    )
    if cell_id:
        by_id = [(nb, [t for t in nb.turns if t.cell_id == cell_id]) for nb in pool]
        holders = [(nb, turns[-1]) for nb, turns in by_id if turns]
        if len(holders) > 1:
            found.candidates = [nb.path.name for nb, _ in holders]
            return found
        if holders:
            notebook, turn = holders[0]
            if _request(turn) == request:
                return _matched(index, notebook, turn, found)
            found.change = _diff(_request(turn), request)
            return found
    holders_of_text = [
        nb for nb in pool if any(_request(t) == request for t in nb.turns[nb.cursor :])
    ]
    if len(holders_of_text) > 1:
        found.candidates = [nb.path.name for nb in holders_of_text]
        return found
    for notebook in holders_of_text:
        for position in range(notebook.cursor, len(notebook.turns)):
            turn = notebook.turns[position]
            if _request(turn) == request:
                notebook.cursor = position + 1
                return _matched(index, notebook, turn, found)
    home = pool[0] if len(pool) == 1 else None  # the one notebook this kernel can be running
    if home is not None and home.cursor < len(home.turns):
        found.change = _diff(_request(home.turns[home.cursor]), request)
    return found


def _matched(index: SavedIndex, notebook: _Notebook, turn: SavedTurn, found: Found) -> Found:
    index.home = notebook  # later cells match in this notebook only
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
