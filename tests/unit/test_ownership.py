"""Whose a file is, and opening it safely (jupyter_turns/ownership.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyter_turns.ownership import (
    not_yours,
    open_for_others,
    open_regular,
    opened_path,
    owner,
    read_at_most,
)


def test_a_file_is_yours_when_you_or_root_own_it(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    assert not_yours(os.stat(tmp_path / "f")) is None
    if os.geteuid() != 0:
        pytest.skip("making another user's file needs root (the suite runs as root)")
    os.chown(tmp_path / "f", 65534, 65534)
    assert not_yours(os.stat(tmp_path / "f")) == "it belongs to nobody (uid 65534), not to you"
    assert owner(4_000_000) == "uid 4000000"  # no such user: the number alone


@pytest.mark.parametrize(
    ("mode", "open_to_all"), [(0o777, True), (0o1777, False), (0o775, False), (0o700, False)]
)
def test_a_folder_every_user_can_write_without_the_sticky_bit_is_open(
    tmp_path: Path, mode: int, open_to_all: bool
) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(mode)
    assert (open_for_others(folder) is not None) is open_to_all


def test_a_link_is_refused_without_following_and_a_fifo_never_blocks(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("text\n")
    (tmp_path / "link.md").symlink_to("real.md")
    assert open_regular(tmp_path / "link.md", follow=False) == "cannot be opened (OSError)"
    opened = open_regular(tmp_path / "link.md", follow=True)
    assert isinstance(opened, tuple)
    fd, info = opened
    assert opened_path(fd) == (tmp_path / "real.md").resolve() and info.st_size == 5
    assert read_at_most(fd, 3) == b"tex"
    os.mkfifo(tmp_path / "fifo")
    assert open_regular(tmp_path / "fifo", follow=True) == "not a regular file"
    (tmp_path / "folder").mkdir()
    assert open_regular(tmp_path / "folder", follow=True) == "not a regular file"
    assert open_regular(tmp_path / "missing", follow=True) is None
