"""Which instruction files are read, and from where (jupyter_turns/reading/instructions.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyter_turns.reading import instructions
from jupyter_turns.reading.instructions import InstructionFinder, folders, server_root


def test_the_server_root_is_the_notebook_path_without_the_pages_path(tmp_path: Path) -> None:
    notebook = tmp_path / "srv" / "team" / "nb.ipynb"
    assert server_root(notebook, "team/nb.ipynb") == tmp_path / "srv"
    assert server_root(notebook, "nb.ipynb") == tmp_path / "srv" / "team"
    assert server_root(notebook, "other/nb.ipynb") is None  # renamed since: unknown
    assert server_root(notebook, "../team/nb.ipynb") is None
    assert server_root(notebook, "") is None


def test_without_a_root_the_walk_stops_at_home_or_stays_in_the_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    deep = home / "a" / "b"
    deep.mkdir(parents=True)
    assert folders(deep, None, home) == [deep.resolve(), (home / "a").resolve(), home.resolve()]
    outside = tmp_path / "shared" / "x"
    outside.mkdir(parents=True)
    assert folders(outside, None, home) == [outside.resolve()]  # never /tmp/AGENTS.md
    assert folders(deep, home / "a", home) == [deep.resolve(), (home / "a").resolve()]


def test_a_linked_claude_md_is_sent_once_and_a_fifo_is_not_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "AGENTS.md").write_text("rule\n")
    (home / "CLAUDE.md").symlink_to(home / "AGENTS.md")
    finder = InstructionFinder(user=tmp_path / "none", home=home)
    found = finder.find(home)
    assert [f.label for f in found.files] == ["AGENTS.md"]
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    (home / "CLAUDE.md").unlink()
    os.mkfifo(home / "CLAUDE.md")  # reading it would block the kernel
    assert [f.label for f in finder.find(home).files] == ["AGENTS.md"]


def test_an_unchanged_file_is_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "AGENTS.md").write_text("one\n")
    finder = InstructionFinder(user=tmp_path / "none", home=tmp_path)
    assert "one" in (finder.find(tmp_path).system_text() or "")

    def no_reading(*args: object, **kwargs: object) -> None:
        raise AssertionError("read again")

    monkeypatch.setattr(instructions, "open", no_reading, raising=False)
    assert "one" in (finder.find(tmp_path).system_text() or "")  # a stat, from the cache
    monkeypatch.undo()
    (tmp_path / "AGENTS.md").write_text("two, longer\n")
    assert "two, longer" in (finder.find(tmp_path).system_text() or "")


def test_all_the_files_share_one_budget_the_nearest_keep_it(tmp_path: Path) -> None:
    """Each file is sent up to FILE_CHARS, all of them up to TOTAL_CHARS: the farthest are cut
    first, each with a note, and the card says which were cut."""
    near = tmp_path / "team" / "project"
    near.mkdir(parents=True)
    for folder in (tmp_path, tmp_path / "team", near):
        (folder / "AGENTS.md").write_text(f"{folder.name}-start\n" + "x" * 12_000 + "\n")
    found = InstructionFinder(user=tmp_path / "none", home=tmp_path).find(near)
    farthest, middle, nearest = found.files  # sent in this order: the nearest last
    assert nearest.text.startswith("project-start") and "team-start" in middle.text
    assert len(nearest.text) < instructions.FILE_CHARS + 200 and nearest.cut > 0
    sent = sum(len(f.text) for f in found.files)
    assert instructions.TOTAL_CHARS - 200 < sent < instructions.TOTAL_CHARS + 200
    assert farthest.cut > middle.cut  # what is left of the budget, after the nearer two
    assert "all of them up to 30,000]" in farthest.text
    assert found.summary() == (
        "Instructions: AGENTS.md (this folder, 2 lines, cut), ../AGENTS.md (the folder above, "
        "2 lines, cut), ../../AGENTS.md (2 folders up, 2 lines, cut)"
    )
