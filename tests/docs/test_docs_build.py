"""The docs site builds strictly, and its example pages show the saved conversations.

A chat cell's saved output holds the record (a mime type only the lab extension draws) beside a
sanitized HTML transcript; the site must show the transcript, not an empty output or the
record's JSON. The build runs without the network (no intersphinx, execution off).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SPHINX = Path(sys.executable).parent / "sphinx-build"
STRICT = [str(SPHINX), "-W", "--keep-going", "-n", "-q", "-b", "html"]  # as dev.sh builds it


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built as ./dev.sh docs builds it (warnings are errors)."""
    if not SPHINX.exists():
        pytest.fail(f"{SPHINX} is missing: install the docs extra (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("docs") / "html"
    run = subprocess.run(
        [*STRICT, "docs", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return out


def _text(page: Path) -> str:
    """The page's visible text, roughly: tags dropped, entities decoded, spaces collapsed."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", page.read_text(encoding="utf-8"), flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def _answers_shown(page: Path) -> str:
    """The text of the transcript's answers on a page (not the cells' source), without spaces:
    inline tags (code, strong) split the text where they sit."""
    html = page.read_text(encoding="utf-8")
    answers = re.findall(r'<div class="jt-message">(.*?)</div>', html, re.S)
    return "".join(unescape(re.sub(r"<[^>]+>", "", "".join(answers))).split())


def _saved_answer(notebook: str) -> str:
    """The first answer saved in an example notebook's record: what a reader should see."""
    nb = json.loads((REPO / "examples" / notebook).read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            record = output.get("data", {}).get("application/vnd.jupyter-turns+json")
            for event in (record or {}).get("events", []):
                if event["kind"] == "message" and event["content"].strip():
                    return str(event["content"])
    raise AssertionError(f"{notebook} has no saved answer")


def test_an_example_page_shows_its_saved_conversation(site: Path) -> None:
    text = _text(site / "examples" / "quickstart.html")
    assert "What can you do in a notebook?" in text  # the request
    answers = _answers_shown(site / "examples" / "quickstart.html")
    assert "Scriptedecho—nomodelwascalled." in answers  # the answer, markdown made HTML
    assert "Sentwiththisrequest:2turns,1answer." in answers  # the second turn's answer
    assert '"conversation_id"' not in text  # the record's JSON is not what shows


def test_every_example_page_shows_a_line_of_its_first_answer(site: Path) -> None:
    for notebook in sorted(p.name for p in (REPO / "examples").glob("*.ipynb")):
        # the answer's first line, without its markdown markup (bold, code, quote)
        first = _saved_answer(notebook).strip().splitlines()[0]
        line = re.sub(r"\s+", " ", re.sub(r"[*`>]", "", first)).strip()
        page = site / "examples" / notebook.replace(".ipynb", ".html")
        assert "".join(line.split()) in _answers_shown(page), f"{page.name} lacks {line!r}"


def test_the_pages_hold_what_the_readme_held_and_link_the_architecture(site: Path) -> None:
    for page, words in {
        "options.html": "stop a runaway tool loop after N model calls",
        "security.html": "A notebook cannot grant itself permissions",
        "benchmarks.html": "What B7 shows.",
        "getting-started.html": "./dev.sh demo",
        "index.html": "Headless runners (nbclient, nbval, papermill, jupyter execute )",
        "troubleshooting.html": "is Ollama running?",
    }.items():
        assert words in _text(site / page), f"{page} lost {words!r}"
    # a link into a section of the architecture page lands on that section
    links = (site / "long-threads.html").read_text(encoding="utf-8")
    anchor = re.search(r'href="architecture\.html#([\w-]*long-threads[\w-]*)"', links)
    assert anchor is not None, "long-threads lost its link to architecture §15"
    assert f'id="{anchor.group(1)}"' in (site / "architecture.html").read_text(encoding="utf-8")


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(
        REPO / "docs", docs, ignore=shutil.ignore_patterns("_build", "examples", "*.png")
    )
    (docs / "examples.md").write_text("# Example notebooks\n")
    (docs / "index.md").write_text(
        (docs / "index.md").read_text(encoding="utf-8").replace("![The chat", "![x](a.png)\n![")
        + "\nSee [the missing page](no-such-page.md).\n"
    )
    shutil.copy(REPO / "README.md", tmp_path)  # index.md shows its where-it-runs table
    (tmp_path / "jupyter_turns").mkdir()
    shutil.copy(REPO / "jupyter_turns" / "__init__.py", tmp_path / "jupyter_turns")
    run = subprocess.run(
        [*STRICT, str(docs), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode != 0
    assert "no-such-page" in run.stderr, run.stderr


def test_the_readme_links_only_to_files_that_exist() -> None:
    """The README is read on the forge, outside the site: its relative links are checked here."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert local, "the README links to no docs page"
    missing = [t for t in local if not (REPO / t).exists()]
    assert missing == [], f"README links to missing files: {missing}"
    for page, anchor in re.findall(r"\]\((docs/[\w-]+\.md)#([\w-]+)\)", readme):
        headings = re.findall(r"^#+ (.+)$", (REPO / page).read_text(encoding="utf-8"), re.M)
        slugs = {re.sub(r"[^\w -]", "", h.lower()).replace(" ", "-") for h in headings}
        assert anchor in slugs, f"README links to {page}#{anchor}, which has no such heading"
    assert len(readme.splitlines()) <= 200, "the README is a landing page: 200 lines at most"


def test_every_screenshot_is_one_the_script_takes() -> None:
    """docs/*.png stay true only if scripts/screenshots.py can take them again."""
    script = (REPO / "scripts" / "screenshots.py").read_text(encoding="utf-8")
    taken = set(re.findall(r'DOCS / "([\w-]+\.png)"', script))
    assert taken == {p.name for p in (REPO / "docs").glob("*.png")}
