"""The notebook cells a page of the docs tells a reader to type, in order.

A reader follows README.md's Quickstart or docs/getting-started.md by typing each ``python`` or
``ipython`` code block into a cell (``bash`` blocks go in a terminal). The tests run those blocks
as they stand (tests/kernel/test_doc_cells_kernel.py, the browser tests), and
scripts/screenshots.py takes the docs' pictures from them, so a page and what it shows cannot
part: :func:`cells_before_image` are the cells a picture is taken after.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["GETTING_STARTED", "README", "REPO", "cells", "cells_before_image", "section"]

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
GETTING_STARTED = REPO / "docs" / "getting-started.md"

_BLOCK = re.compile(r"^```(python|ipython)\n(.*?)^```", re.M | re.S)


def section(path: Path, heading: str) -> str:
    """The text of the ``## heading`` section of ``path`` (up to the next ``## ``)."""
    text = path.read_text(encoding="utf-8")
    marker = f"\n## {heading}\n"
    if marker not in text:
        raise AssertionError(f"{path.name} has no section {heading!r}")
    return text.split(marker, 1)[1].split("\n## ", 1)[0]


def cells(text: str) -> list[str]:
    """The ``python`` and ``ipython`` code blocks of ``text``, in order, as cell sources."""
    return [body.rstrip("\n") for _, body in _BLOCK.findall(text)]


def cells_before_image(path: Path, image: str) -> list[str]:
    """The cells a reader of ``path`` has typed when they reach the picture ``image``."""
    text = path.read_text(encoding="utf-8")
    at = text.find(f"]({image})")
    if at < 0:
        raise AssertionError(f"{path.name} shows no picture {image}")
    return cells(text[:at])
