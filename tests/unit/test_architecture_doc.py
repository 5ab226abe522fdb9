"""docs/architecture.md shows the turn's state table as the code has it, its layer diagram names
every package and top-level module there is, and what cites it names sections that exist.

Run ``python -m tests.unit.test_architecture_doc`` to rewrite the table after changing
``TRANSITIONS``.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupyter_turns
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


def _layer_diagram() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## 1. Layers", 1)[1].split("\n## ", 1)[0]
    return section.split("```", 2)[1]


def test_the_layer_diagram_names_every_package_and_top_level_module() -> None:
    package = Path(jupyter_turns.__file__).parent
    packages = sorted(p.name for p in package.iterdir() if (p / "__init__.py").exists())
    modules = sorted(p.name for p in package.glob("*.py"))
    diagram = _layer_diagram()
    missing = [f"{name}/" for name in packages if f" {name}/" not in diagram]
    missing += [name for name in modules if name not in diagram]
    assert missing == [], f'docs/architecture.md, "Layers", does not list: {", ".join(missing)}'
    assert len(modules) <= 9, f"{len(modules)} modules at the top of the package: {modules}"


_CITATION = re.compile(r'docs/architecture\.md(?:,\s*|\s*§)((?:"[^"]+"(?:\s*(?:and|,)\s*)?)+|\d+)')


def _headings() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return [
        re.sub(r"^\d+\. ", "", line[3:]) for line in text.splitlines() if line.startswith("## ")
    ]


def _citations() -> list[tuple[str, str]]:
    """(file, what it cites) for every citation of the page in code, tests and the front end."""
    repo = DOC.parents[1]
    files = [
        *(repo / "jupyter_turns").rglob("*.py"),
        *(repo / "tests").rglob("*.py"),
        *(repo / "js" / "src").rglob("*.js"),
        *(repo / "js" / "labextension").glob("*.js"),
    ]
    found = []
    for path in files:
        if path.name == Path(__file__).name:
            continue
        # citations wrap lines, in docstrings, comments (#) and JSDoc (*)
        lines = path.read_text(encoding="utf-8").splitlines()
        text = " ".join(line.strip().lstrip("#*").strip() for line in lines)
        for match in _CITATION.finditer(text):
            found.append((str(path.relative_to(repo)), match.group(1)))
    return found


def test_code_cites_the_architecture_page_by_headings_that_exist() -> None:
    """A section number goes stale when sections move (five modules once cited §14 for long
    threads after it became MCP); a heading is checked here."""
    headings, citations = _headings(), _citations()
    assert len(citations) >= 10  # the citations were really found
    wrong = []
    for path, cited in citations:
        names = re.findall(r'"([^"]+)"', cited)
        if not names:
            wrong.append(f"{path}: cites a section by number ({cited}); name its heading")
        wrong += [f"{path}: no heading starts {n!r}" for n in names if not _starts(n, headings)]
    assert wrong == []


def _starts(name: str, headings: list[str]) -> bool:
    return any(heading.startswith(name) for heading in headings)


if __name__ == "__main__":
    text = DOC.read_text(encoding="utf-8")
    DOC.write_text(_TABLE.sub(lambda m: m.group(1) + transitions_table() + m.group(3), text))
    print(f"wrote {DOC}")
