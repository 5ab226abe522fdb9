"""Which instruction files are read, and from where (jupyter_turns/reading/instructions.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyter_turns.reading import instructions
from jupyter_turns.reading.instructions import InstructionFinder, search, server_root


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
    chain = (deep.resolve(), (home / "a").resolve(), home.resolve())
    assert search(deep, None, home).folders == chain
    outside = tmp_path / "shared" / "x"
    outside.mkdir(parents=True)
    assert search(outside, None, home).folders == (outside.resolve(),)  # never /tmp/AGENTS.md
    assert search(deep, home / "a", home).folders == chain[:2]


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

    monkeypatch.setattr(instructions, "read_at_most", no_reading)
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


# ---------------------------------------------------------------- whose files they are (issue 39)

OTHER = 65534  # nobody: "another user" (the suite runs as root, who may chown)
SECRET = "jt-signing-secret-Zm9vYmFyYmF6cXV4LXBsYW50ZWQtaW4tdGhlLWRhdGEtZGly-88"


def _guarded(tmp_path: Path) -> tuple[Path, tuple[tuple[Path, str], ...]]:
    """A fake Jupyter data folder holding the signing secret, guarded as the real one is."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "jupyter_turns_secret").write_text(SECRET)
    return data, ((data.resolve(), "Jupyter's data folder"), (Path("/proc"), "/proc"))


def _chown(path: Path, uid: int = OTHER) -> None:
    if os.geteuid() != 0:
        pytest.skip("making another user's file needs root (the suite runs as root)")
    os.chown(path, uid, uid, follow_symlinks=False)


def test_a_link_out_of_its_folder_is_not_read_a_link_inside_it_is(tmp_path: Path) -> None:
    data, guarded = _guarded(tmp_path)
    project = tmp_path / "home" / "project"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "agents.md").write_text("in-folder-rule\n")
    (project / "AGENTS.md").symlink_to(data / "jupyter_turns_secret")
    (project / "CLAUDE.md").symlink_to("/proc/self/environ")
    (project.parent / "AGENTS.md").symlink_to("project/docs/agents.md")  # into a child: inside
    finder = InstructionFinder(user=tmp_path / "none", home=project.parent, guarded=guarded)
    found = finder.find(project)
    assert [f.label for f in found.files] == ["../AGENTS.md"]
    assert "in-folder-rule" in (found.system_text() or "")
    assert SECRET not in repr(found) and "PATH=" not in (found.system_text() or "")
    secret, environ = found.notes
    assert secret.startswith(f"{project.resolve() / 'AGENTS.md'}: not read: it is a link to ")
    assert "outside its folder" in secret and "may link only to a file in its own folder" in secret
    assert "/proc/" in environ and "outside its folder" in environ


def test_nothing_in_jupyters_folders_is_read_but_the_users_own_file(tmp_path: Path) -> None:
    """A notebook inside the data folder reads no file there; the user's own file (in the
    config folder) is read, and may not be a link out of its folder either."""
    data, guarded = _guarded(tmp_path)
    config = tmp_path / "config"
    user = config / "jupyter_turns"
    user.mkdir(parents=True)
    (user / "AGENTS.md").write_text("user-rule\n")
    (data / "AGENTS.md").write_text(SECRET)
    guarded = (*guarded, (config.resolve(), "Jupyter's config folder"))
    finder = InstructionFinder(user=user, home=tmp_path, guarded=guarded)
    found = finder.find(data)
    assert [f.where for f in found.files] == ["yours"] and SECRET not in repr(found)
    assert any("it is in Jupyter's data folder" in n for n in found.notes)
    (user / "AGENTS.md").unlink()
    (user / "AGENTS.md").symlink_to(data / "jupyter_turns_secret")
    found = finder.find(tmp_path)
    assert found.files == () and SECRET not in repr(found)
    assert any("outside its folder" in n for n in found.notes)


def test_another_users_file_is_read_only_once_allowed_and_while_they_own_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "AGENTS.md").write_text("their-rule\n")
    _chown(tmp_path / "AGENTS.md")
    finder = InstructionFinder(user=tmp_path / "none", home=tmp_path, guarded=())
    found = finder.find(tmp_path)
    assert found.files == ()
    [note] = found.notes
    assert "it belongs to nobody (uid 65534), not to you" in note
    assert note.endswith(f"%chat instructions --allow {tmp_path.resolve() / 'AGENTS.md'}")
    assert finder.allow(tmp_path / "AGENTS.md") == ((tmp_path / "AGENTS.md").resolve(), OTHER)
    assert "their-rule" in (finder.find(tmp_path).system_text() or "")
    _chown(tmp_path / "AGENTS.md", OTHER - 1)  # given to a third user: asked again
    assert finder.find(tmp_path).files == ()
    with pytest.raises(ValueError, match="no such file"):
        finder.allow(tmp_path / "CLAUDE.md")


def test_a_link_owned_by_me_to_another_users_file_is_theirs(tmp_path: Path) -> None:
    (tmp_path / "theirs.md").write_text("their-rule\n")
    _chown(tmp_path / "theirs.md")
    (tmp_path / "AGENTS.md").symlink_to("theirs.md")
    found = InstructionFinder(user=tmp_path / "none", home=tmp_path, guarded=()).find(tmp_path)
    assert found.files == () and "nobody (uid 65534)" in found.notes[0]


def test_the_walk_stops_at_a_repository_root_and_never_reaches_the_top(tmp_path: Path) -> None:
    home = tmp_path / "home"
    deep = home / "repo" / "src" / "nb"
    deep.mkdir(parents=True)
    (home / "repo" / ".git").mkdir()
    walked = search(deep, None, home)
    assert walked.folders == (deep, deep.parent, home / "repo") and "holds .git" in walked.stop
    assert walked.describe() == (
        f"in {deep} and its parents up to {home / 'repo'} (the repository's root: it holds .git)"
    )
    # HOME=/ (a container's arbitrary uid): no folder to stop at, so the notebook's alone
    (home / "repo" / ".git").rmdir()
    alone = search(deep, None, Path("/"))
    assert alone.folders == (deep,) and alone.stop is None
    assert alone.describe().startswith(f"in {deep} only (no repository root, home folder")
    assert search(deep, Path("/"), Path("/")).folders == (deep,)  # a server rooted at /
    assert search(Path("/"), None, Path("/")).folders == (Path("/"),)
    assert search(home, None, home).describe() == f"in {home} only (your home folder)"


def test_fifos_folders_and_dangling_links_are_named_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "AGENTS.md")  # opened for reading, it would block the kernel
    (tmp_path / "CLAUDE.md").mkdir()
    finder = InstructionFinder(user=tmp_path / "none", home=tmp_path, guarded=())
    found = finder.find(tmp_path)
    assert found.files == ()
    assert [n.rsplit(": ", 1)[1] for n in found.notes] == ["not a regular file"] * 2
    (tmp_path / "CLAUDE.md").rmdir()
    (tmp_path / "CLAUDE.md").symlink_to("gone.md")
    assert [n.rsplit(": ", 1)[1] for n in finder.find(tmp_path).notes] == ["not a regular file"]


def test_a_file_swapped_for_a_link_after_the_check_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race the descriptor checks close: AGENTS.md was a plain file when its real path was
    worked out, and is a link to the secret when it is opened."""
    data, guarded = _guarded(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").symlink_to(data / "jupyter_turns_secret")
    resolved = project.resolve() / "AGENTS.md"
    realpath = os.path.realpath

    def as_before_the_swap(path: str, strict: bool = False) -> str:
        return str(resolved) if str(path).endswith("AGENTS.md") else realpath(path, strict=strict)

    monkeypatch.setattr(instructions.os.path, "realpath", as_before_the_swap)
    found = InstructionFinder(user=tmp_path / "none", home=tmp_path, guarded=guarded).find(project)
    assert found.files == () and SECRET not in repr(found)
    assert found.notes == (f"{resolved}: not read: cannot be opened (OSError)",)
