"""Instruction files in random folder trees (hypothesis): no planted secret ever reaches the
system text or a note, nothing raises or blocks, and every legitimate file is still read.

Each example builds a home with Jupyter's folders where they usually are (the data folder, with
the signing secret and a kernel's connection file, under ``~/.local/share/jupyter``; the config
folder ``~/.jupyter``, with a server config and the user's own ``AGENTS.md``), a project (a
repository or not) three folders deep, and a folder outside home; a secret is planted above
home too. Every ``AGENTS.md`` / ``CLAUDE.md`` of every folder, and the user's own, is one of:
absent, a plain file, a link to a file beside it (legitimate, each with its own marker), a
link out of its folder, a link to the signing secret, the connection file or the server config,
a link to ``/proc/self/environ``, a link to a link that ends in the data folder, another user's
file, a link to another user's file beside it, a FIFO, a folder, a dangling link, 1.2 MB of
prose (past the 1 MB read), binary junk. The notebook sits in any of the folders, with ``HOME``
the real one or ``/``, the server's root unknown or the repository's. The folders that should
be searched are worked out here, from the rules in docs/reading.md, not asked of the finder.
"""

from __future__ import annotations

import os
import random
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_turns.reading.instructions import NAMES, InstructionFinder

EXAMPLES = 200
SECRET = "planted-value-Q2xhc3NpZmllZC1kby1ub3Qtc2VuZA-4711"  # no token shape: not redacted
OTHER = 65534  # nobody
LEGIT = ("plain", "link_beside", "huge", "binary")
PLANTED = (
    "link_out",
    "link_secret",
    "link_connection",
    "link_server_config",
    "link_environ",
    "link_chain",
    "other_owner",
    "link_to_other_owner",
)
NEUTRAL = ("absent", "fifo", "folder", "dangling")
KINDS = (*LEGIT, *PLANTED, *NEUTRAL) if os.geteuid() == 0 else (*LEGIT, *PLANTED[:6], *NEUTRAL)
PLACES = ("home", "repo", "a", "b", "outside")  # where the notebook may sit
_ENVIRON = Path("/proc/self/environ").read_bytes().split(b"\0")[0].decode(errors="replace")


@pytest.fixture(scope="module")
def seen() -> Iterator[Counter[str]]:
    """What the examples tried, checked once they all ran (a fuzz that never planted a secret
    in a searched folder, or never read a legitimate file, would prove nothing)."""
    counts: Counter[str] = Counter()
    yield counts
    assert counts["planted in a searched folder"] >= EXAMPLES // 2, counts
    assert counts["legitimate files read"] >= EXAMPLES // 2, counts
    assert counts["examples"] == EXAMPLES, counts


def _tree(base: Path, git: bool) -> dict[str, Path]:
    home = base / "home"
    folders = {
        "home": home,
        "repo": home / "repo",
        "a": home / "repo" / "a",
        "b": home / "repo" / "a" / "b",
        "outside": base / "outside" / "x",
        "data": home / ".local" / "share" / "jupyter",
        "config": home / ".jupyter",
    }
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    (folders["data"] / "runtime").mkdir()
    (folders["config"] / "jupyter_turns").mkdir()
    if git:
        (folders["repo"] / ".git").mkdir()
    for path in (
        base / "AGENTS.md",  # above home: never searched
        base / "outside" / "AGENTS.md",  # above a notebook outside home
        base / "plant.md",
        folders["data"] / "jupyter_turns_secret",
        folders["data"] / "runtime" / "kernel-1.json",
        folders["config"] / "jupyter_server_config.json",
    ):
        path.write_text(f"{SECRET}\n")
    return folders


def _plant(path: Path, kind: str, folders: dict[str, Path], marker: str) -> bool:
    """Make ``path`` a file of ``kind``; True when it is a legitimate file to be read."""
    beside = path.parent / f"beside-{path.name}"
    links = {
        "link_out": folders["home"].parent / "plant.md",
        "link_secret": folders["data"] / "jupyter_turns_secret",
        "link_connection": folders["data"] / "runtime" / "kernel-1.json",
        "link_server_config": folders["config"] / "jupyter_server_config.json",
        "link_environ": Path("/proc/self/environ"),
        "dangling": path.parent / "gone.md",
    }
    if kind in links:
        path.symlink_to(links[kind])
    elif kind in ("plain", "other_owner"):
        path.write_text(f"{marker}\n" if kind == "plain" else f"{SECRET}\n")
        if kind == "other_owner":
            os.chown(path, OTHER, OTHER)
    elif kind in ("link_beside", "link_to_other_owner", "link_chain"):
        if kind == "link_chain":  # inside its folder, then on to the data folder
            beside.symlink_to(folders["data"] / "jupyter_turns_secret")
        else:
            beside.write_text(f"{marker if kind == 'link_beside' else SECRET}\n")
        if kind == "link_to_other_owner":
            os.chown(beside, OTHER, OTHER)
        path.symlink_to(beside.name)
    elif kind == "huge":
        path.write_bytes(f"{marker}\n".encode() + b"keep the tests green. " * 55_000)
    elif kind == "binary":
        junk = random.Random(marker).randbytes(5_000)
        path.write_bytes(f"{marker}\n".encode() + junk.replace(b"\n", b" "))
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    return kind in LEGIT


def _searched(notebook: Path, home: Path, root: Path | None, repo: Path | None) -> list[Path]:
    """The rules of docs/reading.md: up to the nearest repository root, home or server root,
    never /; with none above, the notebook's folder alone."""
    chain: list[Path] = []
    for folder in (notebook, *notebook.parents):
        if folder == Path("/"):
            return [notebook]
        chain.append(folder)
        if folder in (root, repo) or (folder == home and home != Path("/")):
            return chain
    return [notebook]


tree_plans = st.fixed_dictionaries(
    {
        "kinds": st.fixed_dictionaries(
            {(place, name): st.sampled_from(KINDS) for place in PLACES for name in NAMES}
        ),
        "own": st.sampled_from(KINDS),
        "notebook": st.sampled_from(PLACES),
        "home_at_top": st.booleans(),
        "git": st.booleans(),
        "server_root_at_repo": st.booleans(),
    }
)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(plan=tree_plans)
def test_no_planted_secret_reaches_the_system_text(
    plan: dict[str, Any], seen: Counter[str]
) -> None:
    with tempfile.TemporaryDirectory(prefix="jt-instructions-") as scratch:
        base = Path(scratch).resolve()
        folders = _tree(base, plan["git"])
        legit: dict[Path, str] = {}
        planted: set[Path] = set()
        for (place, name), kind in sorted(plan["kinds"].items()):
            path = folders[place] / name
            marker = f"legit-{place}-{name}-{kind}"
            if _plant(path, kind, folders, marker):
                legit[path] = marker
            elif kind in PLANTED:
                planted.add(path)
        own = folders["config"] / "jupyter_turns" / "AGENTS.md"
        if _plant(own, plan["own"], folders, "legit-own"):
            legit[own] = "legit-own"
        home = Path("/") if plan["home_at_top"] else folders["home"]
        root = folders["repo"] if plan["server_root_at_repo"] else None
        notebook = folders[plan["notebook"]]
        searched = _searched(notebook, home, root, folders["repo"] if plan["git"] else None)
        found = _find(folders, home, notebook, root)

    shown = repr(found)
    assert SECRET not in shown and _ENVIRON not in shown, found.notes
    wanted = {p for p in legit if p.parent in searched or p == own}
    assert {f.path for f in found.files} == wanted
    for file in found.files:
        assert file.cut or legit[file.path] in file.text
    seen["examples"] += 1
    seen["legitimate files read"] += len(wanted)
    seen["planted in a searched folder"] += any(p.parent in searched for p in planted)


def _find(folders: dict[str, Path], home: Path, notebook: Path, root: Path | None) -> Any:
    """The finder as the kernel makes it (Jupyter's folders from the environment), asked twice:
    the second answer comes from its cache and must be the same."""
    environment = {
        "JUPYTER_DATA_DIR": str(folders["data"]),
        "JUPYTER_RUNTIME_DIR": str(folders["data"] / "runtime"),
        "JUPYTER_CONFIG_DIR": str(folders["config"]),
    }
    with mock.patch.dict(os.environ, environment):
        finder = InstructionFinder(home=home)
        found = finder.find(notebook, root)
        assert finder.find(notebook, root) == found
    return found
