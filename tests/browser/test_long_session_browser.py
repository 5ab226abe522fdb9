"""A long session in one page (issue 32, point 4): thirty turns with tools, one after the other,
in one JupyterLab page. What a finished turn leaves is its saved record, drawn in its cell: the
comms of the page and of the kernel stay as they were, no chat view stays live or held after
its turn, and the page's elements, nodes and event listeners grow per turn by what its record
draws plus what JupyterLab itself keeps for any cell that ran (measured on plain cells run in
the same page afterwards). B12 (tests/bench/b12_long_session.py) reports the heap, the DOM and
the first-token latency of the same session."""

from __future__ import annotations

import pytest

from .lab import Lab
from .long_session import TurnFigures, run_long_session

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

TURNS = 30
SETTLED = 5  # by then the page has loaded what it loads once (the widget's code, styles)
# per turn, beyond JupyterLab's cost of a cell run and the record: listeners of the cell's
# toolbar and editor that vary with the clicks; nodes JupyterLab keeps for a widget output
# (its cell toolbar, empty fragments: about 100 measured); a held chat view is checked apart
LISTENER_SLACK = 10
NODE_SLACK = 150


def _per_turn(late: TurnFigures, early: TurnFigures, field: str) -> float:
    return float(getattr(late, field) - getattr(early, field)) / (late.turn - early.turn)


def test_thirty_turns_in_one_page_leave_their_records_and_nothing_else(lab: Lab) -> None:
    figures, plain = run_long_session(lab, "long.ipynb", TURNS, measured={SETTLED, TURNS})
    early, late = figures
    # no comm or widget outlives its turn, in the page or in the kernel
    for field in ("page_comms", "kernel_comms", "kernel_widgets"):
        assert getattr(late, field) == getattr(early, field), (field, early, late)
    # every live view was replaced by its record, and nothing holds a finished one (but the
    # page's last selection, which a click may leave in the last turn's view)
    assert late.live_views == 0
    assert late.detached_views <= 1, late
    # the page's elements grow inside the chat cells (their records) only: outside them, less
    # than one per turn (a leak of one per turn is 25 here; under load JupyterLab's status bar
    # or a notification may hold an element or two more at one moment than at another)
    outside = (late.elements - late.cell_elements) - (early.elements - early.cell_elements)
    assert outside < late.turn - early.turn, (early, late)
    # per turn: what JupyterLab keeps for any cell run, plus the turn's record
    last = plain[-1]
    for field, drawn, plain_output, slack in (
        ("dom_nodes", late.output_nodes, last.output_nodes, NODE_SLACK),
        ("listeners", late.output_listeners, last.output_listeners, LISTENER_SLACK),
    ):
        lab_cost = _per_turn(last, plain[0], field) - plain_output
        grown = _per_turn(late, early, field)
        assert grown <= lab_cost + drawn + slack, (field, grown, lab_cost, drawn)
    assert lab.unexpected_page_errors() == []
