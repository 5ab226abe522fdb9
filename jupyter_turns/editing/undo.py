"""Undo: the model's steps in this kernel, newest last, and reverting them.

A *step* is one tool call that changed something: a ``python`` run (names created, rebound,
deleted), an inserted cell (run or not), an edited cell (run or not), a cell run, deleted or
moved. :class:`UndoLog` keeps, per step,
the objects the touched names were bound to before (in this kernel only: objects cannot be
saved in a notebook) and the cell's text before and after, with what the cell held that the
record does not (earlier outputs, a deleted cell, the provenance stamp a change replaced, which
undo puts back with the change). Steps are undone newest first: an
earlier step is refused while later ones stand, because they may build on it.

Reverting says plainly what it could not revert: objects changed in place, files written and
other side effects of code, a cell the user changed since. Each undo becomes an
:class:`~jupyter_turns.model.events.Undo` event.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..kernel_tools.code_run import CodeRun, run_code
from ..kernel_tools.figures import produced_images
from ..kernel_tools.state_diff import StateDiff, diff, snapshot
from ..model.events import Undo
from ..reading.cells import cell_place
from ..text import plural
from .page import KEEP, CellPage, Keep, PageError, Stamp

__all__ = ["SIDE_EFFECTS", "Step", "UndoLog", "UndoRefused", "describe", "run_step", "undo_log"]

_MISSING = object()
SIDE_EFFECTS = "files written and other side effects of the code, if any"


class UndoRefused(Exception):
    """Nothing was undone; the message says why (for the user)."""


@dataclass
class Step:
    call_id: str
    tool: str
    previous: dict[str, Any] = field(default_factory=dict)  # name -> object before, or _MISSING
    changed: list[str] = field(default_factory=list)  # changed in place: cannot be undone
    ran_code: bool = False
    cell: dict[str, Any] | None = None  # the response's ``cell``: op, cell_id, index, texts
    # kept in kernel memory only (never saved): a deleted cell's whole JSON, or the outputs
    # and execution count a run replaced
    restore: dict[str, Any] | None = None

    async def revert(self, namespace: dict[str, Any], page: CellPage | None) -> Undo:
        """Undo this step; the event says what was done and what could not be."""
        done: list[str] = []
        not_undone: list[str] = []
        if self.cell is not None:
            await self._revert_cell(page, done, not_undone)
        for name, value in self.previous.items():
            if value is _MISSING:
                namespace.pop(name, None)
                done.append(f"removed {name}")
            else:
                namespace[name] = value
                done.append(f"restored {name}")
        if self.changed:
            not_undone.append("the in-place changes to " + ", ".join(self.changed))
        if self.ran_code:
            not_undone.append(SIDE_EFFECTS)
        return Undo(call_id=self.call_id, tool=self.tool, done=done, not_undone=not_undone)

    async def _revert_cell(
        self, page: CellPage | None, done: list[str], not_undone: list[str]
    ) -> None:
        cell = self.cell or {}
        op = str(cell["op"])
        try:
            if page is None:
                raise PageError("no notebook page is connected to this kernel")
            done.append(await _REVERTS[op](page, cell, self.restore or {}))
        except PageError as exc:
            not_undone.append(f"{_WHAT[op]} ({exc})")


async def _revert_insert(page: CellPage, cell: dict[str, Any], _: dict[str, Any]) -> str:
    await page.delete(str(cell["cell_id"]), expected=str(cell["after"]))
    return "removed the inserted cell"


def _earlier_stamp(restore: dict[str, Any]) -> Stamp | Keep:
    """The provenance stamp the step replaced (None: the cell had none), or KEEP where the
    step left the stamp alone."""
    earlier: Stamp | Keep = restore.get("provenance", KEEP)
    return earlier


async def _revert_edit(page: CellPage, cell: dict[str, Any], restore: dict[str, Any]) -> str:
    before = str(cell["before"])
    earlier = _earlier_stamp(restore)
    await page.set_source(str(cell["cell_id"]), before, str(cell["after"]), earlier)
    if "outputs" not in restore:
        return "restored the edited cell's earlier text"
    await _earlier_outputs(page, cell, restore, before)
    return "restored the edited cell's earlier text and outputs"


async def _revert_run(page: CellPage, cell: dict[str, Any], restore: dict[str, Any]) -> str:
    await _earlier_outputs(page, cell, restore, str(cell["after"]), _earlier_stamp(restore))
    return "restored the cell's earlier outputs"


async def _earlier_outputs(
    page: CellPage,
    cell: dict[str, Any],
    restore: dict[str, Any],
    expected: str,
    stamp: Stamp | Keep = KEEP,
) -> None:
    count = restore.get("execution_count")
    await page.set_outputs(
        str(cell["cell_id"]),
        list(restore.get("outputs") or []),
        count if isinstance(count, int) else None,
        expected,
        stamp,
    )


async def _revert_delete(page: CellPage, cell: dict[str, Any], restore: dict[str, Any]) -> str:
    back = await page.restore(int(cell["index"]), dict(restore["cell"]))
    return f"put the deleted cell back: {cell_place(back.index)}"


async def _revert_move(page: CellPage, cell: dict[str, Any], _: dict[str, Any]) -> str:
    back = await page.move(str(cell["cell_id"]), int(cell["from"]), expected=str(cell["after"]))
    return f"moved the cell back: {cell_place(back.index)}"


_REVERTS: dict[str, Callable[[CellPage, dict[str, Any], dict[str, Any]], Awaitable[str]]] = {
    "insert": _revert_insert,
    "edit": _revert_edit,
    "run": _revert_run,
    "delete": _revert_delete,
    "move": _revert_move,
}
_WHAT = {
    "insert": "the inserted cell",
    "edit": "the edited cell's earlier text",
    "run": "the cell's earlier outputs",
    "delete": "the deleted cell",
    "move": "the moved cell's place",
}


class UndoLog:
    """The steps of this kernel that can be undone, newest last."""

    def __init__(self) -> None:
        self.steps: list[Step] = []

    def record(
        self,
        call_id: str,
        tool: str,
        previous: Mapping[str, Any],
        state: StateDiff | None,
        *,
        cell: dict[str, Any] | None = None,
        restore: dict[str, Any] | None = None,
    ) -> None:
        """Keep what a step changed: ``previous`` is the namespace before the code ran (for
        the names ``state`` says it touched), ``cell`` the cell it changed, ``restore`` what
        undo puts back that the record does not hold (a deleted cell, earlier outputs)."""
        step = Step(call_id, tool, cell=cell, ran_code=state is not None, restore=restore)
        if state is not None:
            touched = [n for n, _ in state.created] + [n for n, _ in state.rebound]
            step.previous = {name: previous.get(name, _MISSING) for name in touched}
            step.previous.update({name: previous.get(name, _MISSING) for name in state.deleted})
            step.changed = [n for n, _ in state.changed]
        self.steps.append(step)

    def steps_for(self, call_ids: set[str]) -> list[Step]:
        """The steps of ``call_ids`` held here, newest first, left in place (a rewind shows
        them before it takes them); UndoRefused when another step stands later than one of
        them (it may build on it: it must be undone first)."""
        positions = [i for i, s in enumerate(self.steps) if s.call_id in call_ids]
        if not positions:
            return []
        later = [s for s in self.steps[positions[0] :] if s.call_id not in call_ids]
        if later:
            names = ", ".join(f"{s.tool} {s.call_id}" for s in reversed(later))
            raise UndoRefused(
                f"undo the later {plural(len(later), 'step')} of another thread first "
                f"({names}): they may build on these"
            )
        return [self.steps[i] for i in reversed(positions)]

    def remove(self, steps: list[Step]) -> None:
        """Forget ``steps`` (being undone now)."""
        self.steps = [s for s in self.steps if all(s is not t for t in steps)]

    def take(self, *, count: int = 1, call_id: str | None = None) -> list[Step]:
        """Remove and return the steps to undo, newest first: the newest ``count``, or the
        one step of ``call_id`` when no later step stands; else UndoRefused says why."""
        if call_id is not None:
            position = next((i for i, s in enumerate(self.steps) if s.call_id == call_id), None)
            if position is None:
                raise UndoRefused(
                    "nothing to undo for this call in this kernel: it was undone already, or "
                    "the kernel restarted since (a restarted kernel holds none of the objects)"
                )
            later = self.steps[position + 1 :]
            if later:
                names = ", ".join(f"{s.tool} {s.call_id}" for s in reversed(later))
                raise UndoRefused(
                    f"undo the later {plural(len(later), 'step')} first ({names}): "
                    "they may build on this one"
                )
            count = 1
        if count < 1 or count > len(self.steps):
            raise UndoRefused(
                f"there {'is' if len(self.steps) == 1 else 'are'} "
                f"{plural(len(self.steps), 'step')} to undo in this kernel, not {count}"
            )
        taken = self.steps[-count:]
        del self.steps[-count:]
        return list(reversed(taken))


_logs: dict[int, UndoLog] = {}


def undo_log(namespace: Mapping[str, Any]) -> UndoLog:
    """The undo log of the kernel whose user namespace this is."""
    return _logs.setdefault(id(namespace), UndoLog())


def run_step(
    code: str,
    namespace: dict[str, Any],
    call_id: str,
    tool: str,
    *,
    cell: dict[str, Any] | None = None,
    restore: dict[str, Any] | None = None,
) -> tuple[CodeRun, StateDiff]:
    """Run ``code`` in ``namespace`` as a cell would (with the images it produced), and keep
    the run as a step of the undo log: what it did to the namespace (and ``cell``, the cell
    it ran as, with ``restore``, the outputs it replaced)."""
    before, previous = snapshot(namespace), dict(namespace)
    with produced_images() as images:
        run = run_code(code, namespace)
    run.images = images
    state = diff(before, namespace)
    undo_log(namespace).record(call_id, tool, previous, state, cell=cell, restore=restore)
    return run, state


def describe(event: Undo) -> str:
    """One line for the user and the model: what was undone and what was not."""
    line = f"Undid {event.tool} call {event.call_id}: " + (", ".join(event.done) or "nothing")
    if event.not_undone:
        line += "; not undone: " + "; ".join(event.not_undone)
    return line
