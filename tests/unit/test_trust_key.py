"""This user's key for thread settings (jupyter_turns/kernel/trust.py): the secret is made once,
0600, and reused; a signature survives a JSON round trip (JupyterLab's too) and nothing else."""

from __future__ import annotations

import json
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from jupyter_turns.kernel.trust import SECRET_FILE, SettingsKey, canonical, secret_path

SETTINGS: dict[str, Any] = {
    "provider": "anthropic",
    "model": None,
    "reasoning": "full",
    "always_allow": ["python"],
    "max_cycles": 25,
    "thinking": "adaptive",
    "system": "Réponds en français. ✓",
    "mcp_servers": {"t": {"command": ["python", "s.py"], "env": ["K"], "timeout": 120.0}},
    "conversation_id": "conv-1",
}


def test_the_secret_is_made_once_with_mode_0600_in_the_jupyter_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    assert secret_path() == tmp_path / "data" / SECRET_FILE
    first = SettingsKey.of_user()
    path = tmp_path / "data" / SECRET_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    made = path.read_bytes()
    signed = first.sign(SETTINGS, "conv-1")
    again = SettingsKey.of_user()  # a restarted kernel reads the same secret
    assert path.read_bytes() == made and again.verifies(signed, "conv-1")
    assert [p.name for p in path.parent.iterdir()] == [SECRET_FILE]  # no temporary left


def test_kernels_starting_together_make_one_secret(tmp_path: Path) -> None:
    keys: list[SettingsKey] = []
    threads = [
        threading.Thread(target=lambda: keys.append(SettingsKey.of_user(tmp_path)))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    signed = keys[0].sign(SETTINGS, "conv-1")
    assert all(key.verifies(signed, "conv-1") for key in keys)


def test_a_short_or_empty_secret_is_refused_never_used(tmp_path: Path) -> None:
    (tmp_path / SECRET_FILE).write_bytes(b"")
    with pytest.raises(ValueError, match="at least 32"):
        SettingsKey.of_user(tmp_path)


def test_the_signature_survives_a_json_round_trip_and_javascripts_numbers() -> None:
    key = SettingsKey(b"s" * 64)
    signed = key.sign(SETTINGS, "conv-1")
    assert key.verifies(json.loads(json.dumps(signed)), "conv-1")
    # JupyterLab saves 120.0 as 120, and may order keys its own way
    text = json.dumps(signed).replace("120.0", "120")
    reordered = dict(reversed(list(json.loads(text).items())))
    assert key.verifies(reordered, "conv-1")
    assert canonical({"b": 1.0, "a": [2.5]}) == b'{"a":[2.5],"b":1}'


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s.update(max_cycles=26),
        lambda s: s.update(model="claude-opus-4-1"),
        lambda s: s["always_allow"].append("helper"),
        lambda s: s["mcp_servers"]["t"]["command"].append("--evil"),
        lambda s: s.pop("system"),
        lambda s: s.update(extra=1),
        lambda s: s.update(system=None),
        lambda s: s.pop("signature"),
        lambda s: s.update(signature=7),
        lambda s: s.update(signature="hmac-sha256:" + "0" * 64),
    ],
)
def test_any_change_does_not_verify(change: Any) -> None:
    key = SettingsKey(b"s" * 64)
    signed = json.loads(json.dumps(key.sign(SETTINGS, "conv-1")))
    change(signed)
    assert not key.verifies(signed, "conv-1")


def test_another_conversation_or_another_secret_does_not_verify() -> None:
    mine, theirs = SettingsKey(b"m" * 64), SettingsKey(b"t" * 64)
    signed = mine.sign(SETTINGS, "conv-1")
    assert mine.verifies(signed, "conv-1")
    assert not mine.verifies(signed, "conv-2")
    assert not theirs.verifies(signed, "conv-1")
    assert not mine.verifies(theirs.sign(SETTINGS, "conv-1"), "conv-1")


def test_junk_never_raises() -> None:
    key = SettingsKey(b"s" * 64)
    deep: Any = "x"
    for _ in range(5_000):
        deep = [deep]
    for junk in ({"signature": "hmac-sha256:ab", "x": deep}, {"signature": "hmac-sha256:é"}):
        assert not key.verifies(junk, "conv-1")
