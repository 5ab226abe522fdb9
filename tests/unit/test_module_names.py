"""No two modules of the package share a file name (issue 25): ``sink.py`` in two packages, or
three ``tools.py``, is two concepts under one name, and a reader (or a traceback) cannot tell
which one is meant without the folder. ``__init__.py`` is the one name every package has."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import jupyter_turns

ROOT = Path(jupyter_turns.__file__).parent


def _shared_names(root: Path = ROOT) -> dict[str, list[str]]:
    """Each file name used by more than one module, with the modules using it."""
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        if path.name != "__init__.py":
            where[path.name].append(path.relative_to(root.parent).as_posix())
    return {name: paths for name, paths in where.items() if len(paths) > 1}


def test_no_two_modules_share_a_file_name() -> None:
    assert _shared_names() == {}


def test_the_check_names_a_shared_file_name(tmp_path: Path) -> None:
    for package in ("a", "b"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
        (tmp_path / package / "sink.py").write_text("")
    (tmp_path / "a" / "only.py").write_text("")
    assert _shared_names(tmp_path) == {
        "sink.py": [f"{tmp_path.name}/a/sink.py", f"{tmp_path.name}/b/sink.py"]
    }
