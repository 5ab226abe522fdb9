"""The guides read right on GitHub as well as on the Sphinx site (issue 45).

The README links the guides' ``.md`` files, which GitHub renders as plain markdown: a MyST role
(``{doc}`...```) shows there as raw text, and a link through ``docs/examples`` (a link to
``../examples`` that GitHub does not follow) leads nowhere. The pages link the examples as
``../examples/NAME.ipynb`` instead, which docs/conf.py turns into the site's own page.
tests/docs/test_docs_build.py builds the site strictly (every link must resolve there too).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_ROLE = re.compile(r"\{(doc|ref|download|term|numref)\}`")


def _guides() -> list[Path]:
    """The docs pages the README links."""
    linked = {m.split("#", 1)[0] for m in _LINK.findall(README.read_text(encoding="utf-8"))}
    pages = sorted(REPO / m for m in linked if m.startswith("docs/") and m.endswith(".md"))
    assert len(pages) > 10, pages
    return pages


def _broken(page: Path) -> list[str]:
    """The relative links of ``page`` that lead nowhere as GitHub reads the repository: to a
    missing file, or through a symbolic link."""
    broken = []
    for target in _LINK.findall(page.read_text(encoding="utf-8")):
        path = target.split("#", 1)[0]
        if not path or re.match(r"^[a-z]+:", path):
            continue
        resolved = page.parent / path
        parts = [resolved.parents[i] for i in range(len(resolved.parents))]
        through_link = any(p.is_symlink() for p in [resolved, *parts])
        if through_link or not resolved.exists():
            broken.append(target)
    return broken


@pytest.mark.parametrize("page", _guides(), ids=lambda p: p.name)
def test_a_guide_has_no_myst_role_and_no_link_that_github_cannot_follow(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert _ROLE.findall(text) == [], "a MyST role shows as raw text on GitHub"
    assert _broken(page) == []


def test_the_check_finds_a_role_and_a_link_through_docs_examples(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.ipynb").write_text("{}")
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    page = tmp_path / "page.md"
    page.write_text("[a](alias/a.ipynb) [b](real/a.ipynb) [c](real/none.md) [d](https://x.org)")
    assert _broken(page) == ["alias/a.ipynb", "real/none.md"]
    assert _ROLE.findall("See {doc}`the notebook <examples/quickstart>`.") == ["doc"]
