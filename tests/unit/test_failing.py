"""Asking about an error (reading/failing.py): which cell, which lines, which variables."""

from __future__ import annotations

import pytest

from jupyter_turns.reading.cells import CellView, NotebookView
from jupyter_turns.reading.failing import FixRefused, failure_of

# IPython's traceback as the page holds it: ANSI-coloured, cells named "Cell In[n]"
LIVE_TRACEBACK = [
    "\x1b[0;31m---------------------------------------------------------------------------\x1b[0m",
    "\x1b[0;31mKeyError\x1b[0m                                  Traceback (most recent call last)",
    "Cell \x1b[0;32mIn[7], line 5\x1b[0m\n\x1b[1;32m      2\x1b[0m ...\n\x1b[0;32m----> 5\x1b[0m "
    "mean_rain(rain)",
    "Cell \x1b[0;32mIn[7], line 3\x1b[0m, in \x1b[0;36mmean_rain\x1b[0;34m(frame)\x1b[0m",
    "\x1b[0;31mKeyError\x1b[0m: 'rain'",
]
SOURCE = (
    "def mean_rain(frame):\n"
    "    columns = dict(frame.items())\n"
    "    return columns['rain'].mean()  # rain, in 'rain'\n\n"
    "mean_rain(rain)"
)


def _error(traceback: list[str]) -> dict[str, object]:
    return {"output_type": "error", "ename": "KeyError", "evalue": "'rain'", "traceback": traceback}


def _view(*cells: CellView, origin: str = "live") -> NotebookView:
    return NotebookView(origin, "the page", cells)  # type: ignore[arg-type]


def test_the_failing_lines_name_the_variables_summarized_as_they_are_now() -> None:
    cell = CellView(3, "code", SOURCE, 7, (_error(LIVE_TRACEBACK),))
    namespace = {"rain": [1.5, 2.5], "frame": "a global frame", "dict": dict, "unused": 1}
    failure = failure_of(_view(cell), 7, namespace)  # the count Jupyter shows: [7]
    assert failure.request == "Why does cell [7] fail, and how do I fix it?"
    source, traceback, variables = failure.attachments
    assert (source.label, source.source, source.text) == ("source", "cell [7]", SOURCE)
    assert "\x1b" not in traceback.text and "Cell In[7], line 5" in traceback.text
    assert variables.text.startswith("The variables line 5, line 3 names, as they are now")
    assert "\nrain:\ntype: builtins.list\nlength: 2" in variables.text
    # line 3 names `columns` (not the user's: a local) and .mean (an attribute); the comment's
    # and the string's words are no names
    assert "unused" not in variables.text and "frame:" not in variables.text


def test_the_last_error_is_the_last_run_and_chat_cells_do_not_count() -> None:
    early = CellView(1, "code", "1 / 0", 9, (_error([]),))
    late = CellView(4, "code", "x", 12, (_error([]),))
    chat = CellView(5, "code", "%%chat --fix\n", 13, (_error([]),))
    failure = failure_of(_view(early, late, chat, CellView(6, "code", "", None)), None, {})
    assert failure.cell is late
    assert [a.label for a in failure.attachments] == ["source", "traceback"]  # no variables


@pytest.mark.parametrize(
    ("index", "said"),
    [
        (None, "no cell has an error in the page. Run the cell that fails first"),
        (1, "cell [1] has no error output in the page. No cell has one."),
        (0, "there is no cell [0] in the page."),  # index 0 shows [1]: no cell shows [0]
        (9, "there is no cell [9] in the page."),
    ],
)
def test_nothing_to_ask_about_says_why(index: int | None, said: str) -> None:
    with pytest.raises(FixRefused, match=r"^" + said.replace(".", r"\.").replace("[", r"\[")):
        failure_of(_view(CellView(0, "code", "x = 1", 1)), index, {})


def test_the_page_asks_the_question_the_kernel_asks() -> None:
    """errors.js writes the chat cell a person reads; its question is ``fix_request``'s."""
    import re
    from pathlib import Path

    from jupyter_turns.reading.failing import fix_request

    js = (Path(__file__).resolve().parents[2] / "js" / "labextension" / "errors.js").read_text()
    template = re.search(r"return `%%chat --fix \$\{count\}\\n([^`]*)`;", js)
    assert template is not None, "errors.js: askSource's template moved"
    assert template.group(1).replace("${count}", "19") == fix_request("[19]")
    above = re.search(r'return "%%chat --fix above\\n([^"]*)";', js)
    assert above is not None, "errors.js: askSource's question about the cell above moved"
    assert above.group(1) == fix_request("the cell above")


def test_a_cell_is_named_by_the_count_jupyter_shows_else_by_its_place() -> None:
    """Issue 45: the failing cell showed ``[19]:`` and Ask chat asked about "cell [18]" (its
    0-based index, in the brackets Jupyter uses for execution counts)."""
    failing = CellView(18, "code", "x", 19, (_error([]),))
    view = _view(CellView(0, "markdown", "# Notes"), failing)
    failure = failure_of(view, 19, {})
    assert (failure.name, failure.request) == (
        "[19]",
        "Why does cell [19] fail, and how do I fix it?",
    )
    with pytest.raises(FixRefused, match=r"^there is no cell \[18\] in the page\.$"):
        failure_of(view, 18, {})
    never_run = CellView(3, "code", "x", None, (_error([]),))  # an error saved without a count
    assert failure_of(_view(never_run), None, {}).name == "the 4th cell (index 3)"
    history = NotebookView(
        "history", "the kernel's history", (CellView(19, "code", "x", 19, (_error([]),)),)
    )
    assert failure_of(history, 19, {}).request == "Why does cell In[19] fail, and how do I fix it?"


def test_the_cell_above_the_asking_one_and_a_count_two_cells_show() -> None:
    first = CellView(0, "code", "1 / 0", 3, (_error([]),))
    again = CellView(1, "code", "x", 3, (_error([]),))  # a restarted kernel counts from 1 again
    asking = CellView(2, "code", "%%chat --fix above", None, chat=True)
    view = _view(first, again, asking)
    failure = failure_of(view, "above", {})
    assert failure.cell is again
    assert failure.request == "Why does the cell above fail, and how do I fix it?"
    with pytest.raises(FixRefused) as twice:
        failure_of(view, 3, {})
    assert str(twice.value) == (
        "2 cells show [3] in the page (the 1st cell (index 0) and the 2nd cell (index 1)): run the "
        "one you mean again, or ask from the cell below it with %chat fix above."
    )
    with pytest.raises(FixRefused, match="cannot tell which cell is above this one"):
        failure_of(_view(first), "above", {})  # no asking cell known (the saved file)
