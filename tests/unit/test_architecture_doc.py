"""docs/architecture.md shows the turn's state table as the code has it.

Run ``python -m tests.unit.test_architecture_doc`` to rewrite the table after changing
``TRANSITIONS``.
"""

from __future__ import annotations

import re
from pathlib import Path

from jupyter_turns.engine.turn_state import TRANSITIONS

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
_TABLE = re.compile(r"(<!-- transitions:start -->\n)(.*?)(<!-- transitions:end -->)", re.S)


def transitions_table() -> str:
    rows = ["| from | to |", "| --- | --- |"]
    for state, targets in TRANSITIONS.items():
        to = ", ".join(sorted(t.value for t in targets)) or "—"
        rows.append(f"| {state.value} | {to} |")
    return "\n".join(rows) + "\n"


def test_the_state_table_in_the_architecture_page_is_current() -> None:
    match = _TABLE.search(DOC.read_text(encoding="utf-8"))
    assert match is not None, "docs/architecture.md lost its transitions markers"
    assert match.group(2) == transitions_table(), (
        "docs/architecture.md is stale: run python -m tests.unit.test_architecture_doc"
    )


if __name__ == "__main__":
    text = DOC.read_text(encoding="utf-8")
    DOC.write_text(_TABLE.sub(lambda m: m.group(1) + transitions_table() + m.group(3), text))
    print(f"wrote {DOC}")
