"""Each picture of the docs is the one taken from the cells its page shows (issue 45: the
getting-started picture showed another script than the page's, and no reasoning, no approval).

scripts/screenshots.py takes every picture by running cells in JupyterLab and notes in
docs/screenshots.json where they came from, the cells it ran and the picture's SHA-256. Here:
the getting-started picture's cells are exactly the page's code blocks before it (what a reader
has typed when they reach it); an example's picture was taken from the example's cells as they
are now; and every picture on disk is the one the script took (retake after changing any).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import nbformat
import pytest

from tests.support.doc_cells import GETTING_STARTED, REPO, cells_before_image

DOCS = REPO / "docs"
MANIFEST = json.loads((DOCS / "screenshots.json").read_text(encoding="utf-8"))
RETAKE = "retake it: python scripts/screenshots.py"


def test_the_getting_started_picture_comes_from_the_pages_own_cells() -> None:
    taken = MANIFEST["getting-started.png"]
    assert taken["from"] == "docs/getting-started.md"
    assert taken["cells"] == cells_before_image(GETTING_STARTED, "getting-started.png"), RETAKE
    assert any("%%chat --script story --builtins python" in c for c in taken["cells"])


@pytest.mark.parametrize("picture", sorted(MANIFEST))
def test_each_picture_is_the_one_the_script_took_from_cells_that_still_read_so(
    picture: str,
) -> None:
    taken = MANIFEST[picture]
    digest = hashlib.sha256((DOCS / picture).read_bytes()).hexdigest()
    assert digest == taken["sha256"], f"docs/{picture} is not the picture the script took: {RETAKE}"
    source = Path(taken["from"])
    if source.suffix == ".ipynb":
        notebook = nbformat.read(REPO / source, as_version=4)
        code = [c.source for c in notebook.cells if c.cell_type == "code"]
        ran = [c for c in taken["cells"] if c in code]  # the example's own (a take adds some)
        assert ran == code[: len(ran)], f"{source} changed since docs/{picture} was taken: {RETAKE}"


def test_every_picture_the_docs_show_was_taken_by_the_script() -> None:
    shown = {
        line.split("](", 1)[1].split(")", 1)[0].removeprefix("docs/")
        for page in [REPO / "README.md", *DOCS.glob("*.md")]
        for line in page.read_text(encoding="utf-8").splitlines()
        if "![" in line and ".png)" in line
    }
    assert shown <= set(MANIFEST), sorted(shown - set(MANIFEST))
