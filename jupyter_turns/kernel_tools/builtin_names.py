"""The built-in kernel tools by name: which there are, which a new thread is offered, and
what ``--builtins`` and ``ChatMagics.builtins`` mean.

Light at import: ``ChatMagics.builtins`` names them at ``%load_ext``, long before a tool is
made. :data:`~jupyter_turns.kernel_tools.builtin.BUILTINS` makes each (one maker per name of
:data:`NAMES`).
"""

from __future__ import annotations

__all__ = ["CELL_TOOLS", "DEFAULT", "NAMES", "READ_ONLY", "default_builtins", "parse_builtins"]

READ_ONLY = ("notebook_cells", "cell_output", "variables", "inspect")  # never ask
CELL_TOOLS = ("insert_cell", "edit_cell", "run_cell", "delete_cell", "move_cell")  # always ask
DEFAULT = (*READ_ONLY, *CELL_TOOLS)  # offered by default
NAMES = (*DEFAULT, "python")  # every built-in


def parse_builtins(text: str) -> tuple[bool, set[str]]:
    """``(clear, names)`` of a ``--builtins`` value: ``none`` clears, ``default`` stands for
    the default tools; raises ValueError naming what is unknown."""
    names = {n.strip() for n in text.split(",") if n.strip()}
    clear = "none" in names
    if "default" in names:
        names |= set(DEFAULT)
    names -= {"none", "default"}
    unknown = names - set(NAMES)
    if unknown:
        known = ", ".join([*NAMES, "default", "none"])
        raise ValueError(f"unknown {', '.join(sorted(unknown))} (built-in tools: {known})")
    return clear, names


def default_builtins(text: str) -> set[str]:
    """The built-ins a new thread gets from ``ChatMagics.builtins`` (unknown names left out:
    a bad setting is reported when a cell uses it)."""
    try:
        return parse_builtins(text)[1]
    except ValueError:
        return set(DEFAULT) & {n.strip() for n in text.split(",")}
