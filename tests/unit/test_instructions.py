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
