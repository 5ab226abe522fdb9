"""Sphinx configuration of the docs site (./dev.sh docs builds and serves it).

The pages are MyST markdown; the example notebooks (docs/examples is a link to ../examples) are
rendered by MyST-NB from their saved outputs, never executed: each chat cell's saved output
carries a sanitized HTML transcript beside the record, and that fallback is what shows here.
Nothing reaches the network while building (no intersphinx, no remote images).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

# The one place the version is written (pyproject's [tool.hatch.version] reads it too)
_INIT = (Path(__file__).parents[1] / "jupyter_turns" / "__init__.py").read_text()
_VERSION = re.search(r'^__version__ = "([^"]+)"', _INIT, re.M)
assert _VERSION is not None, "jupyter_turns/__init__.py has no __version__"

project = "jupyter_turns"
author = "the jupyter_turns authors"
copyright = "the jupyter_turns authors"
release = _VERSION.group(1)
version = release

extensions = ["myst_nb"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = [
    "_build",
    "**.ipynb_checkpoints",
    "examples/*.md",
    "examples/conftest.py",
]

# MyST: GitHub-style anchors for headings (links such as architecture.md#9-benchmark-definitions)
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

# MyST-NB: show the notebooks as saved. A chat cell's output holds the record (its own mime
# type, which only the lab extension draws) beside a sanitized HTML transcript: ranked last, the
# record is never chosen and the transcript shows (tests/docs/test_docs_build.py checks it).
nb_execution_mode = "off"
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter-turns+json", 10_000),
]
# MyST-NB's Sphinx reader parses every mime type of an output before the HTML builder picks one,
# and warns on a type it has no renderer for: the record's is one, on purpose.
suppress_warnings = ["mystnb.unknown_mime_type"]

html_theme = "furo"
html_title = f"jupyter_turns {release}"
html_static_path: list[str] = []
html_show_sourcelink = False


_NOTEBOOK_LINK = re.compile(r"\[([^\]\n]+)\]\(\.\./examples/([\w.-]+)\.ipynb\)")


def _example_links(app: object, docname: str, source: list[str]) -> None:
    """A page links an example as ``../examples/NAME.ipynb``, which GitHub follows (it does not
    follow the docs/examples link); the site has the notebook as the page ``examples/NAME``
    (MyST resolves a markdown link's path through that link, out of the site: a ``{doc}``
    role names the page), and the example's other files under ``examples/``."""
    text = _NOTEBOOK_LINK.sub(r"{doc}`\1 <examples/\2>`", source[0])
    source[0] = text.replace("](../examples/", "](examples/")


def setup(app: Any) -> None:
    app.connect("source-read", _example_links)
