"""Testing helpers: the nbval adjustment for notebooks with %%chat cells.

A conversation record carries event ids and timestamps, so it differs on every run. Use this
in a ``conftest.py`` next to your notebooks::

    from jupyter_turns.testing import skip_record_comparison as pytest_collection_modifyitems

nbval then compares everything else (the transcript, the widget's text, your other cells) and
leaves the record to tests that load it with :func:`jupyter_turns.notebook.load`.
"""

from __future__ import annotations

from typing import Any

from .persist import RECORD_MIME

__all__ = ["skip_record_comparison"]


def skip_record_comparison(session: Any, config: Any, items: list[Any]) -> None:
    """A ``pytest_collection_modifyitems`` hook: nbval skips the record mime type."""
    for item in items:
        notebook = getattr(item, "parent", None)
        skip = getattr(notebook, "skip_compare", None)
        if notebook is not None and isinstance(skip, tuple) and RECORD_MIME not in skip:
            notebook.skip_compare = (*skip, RECORD_MIME)
