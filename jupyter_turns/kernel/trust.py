"""This user's signature on thread settings: the only source of restored permissions.

A notebook stores each thread's settings (cell records, notebook metadata). Anyone can write
them, so a setting read back from a file may grant something ("always allow", a system prompt,
an MCP server...) only when this user's own jupyter_turns wrote it. When the kernel saves a
thread's settings it adds ``signature``: an HMAC-SHA256, keyed by a secret in the user's
Jupyter data directory (``jupyter_turns_secret``, mode 0600, made on first use), over the
canonical JSON of every saved field together with the thread's ``conversation_id``. A changed
field, a dict moved to another conversation or a signature made with another user's secret
does not verify.

Jupyter's own notebook signature (``nbformat.sign.NotebookNotary``) is not the basis: it only
says the outputs may run scripts, and JupyterLab signs on save any notebook whose outputs are
all trusted — a notebook with no rich outputs, whatever its metadata holds.

This module imports nothing of the package; ``jupyter_core`` only when the secret is looked up.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["SECRET_FILE", "SIGNATURE", "SettingsKey", "canonical", "secret_path"]

SECRET_FILE = "jupyter_turns_secret"
SIGNATURE = "signature"  # the field of a saved settings dict that holds it
_SCHEME = "hmac-sha256:"
_CONTEXT = b"jupyter_turns thread settings, version 1\n"  # never valid for anything else
_MIN_SECRET = 32  # bytes: a shorter (or empty) file is refused, never used as a key


def secret_path(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where this user's secret lives: ``jupyter_turns_secret`` in the Jupyter data dir."""
    if data_dir is None:
        from jupyter_core.paths import jupyter_data_dir

        data_dir = jupyter_data_dir()
    return Path(data_dir) / SECRET_FILE


class SettingsKey:
    """Signs the settings this kernel saves and checks those a notebook says were saved."""

    def __init__(self, secret: bytes) -> None:
        if len(secret) < _MIN_SECRET:
            raise ValueError(f"the secret is {len(secret)} bytes; at least {_MIN_SECRET} needed")
        self._secret = secret

    @classmethod
    def of_user(cls, data_dir: str | os.PathLike[str] | None = None) -> SettingsKey:
        """This user's key, its secret made on first use (raises OSError or ValueError when
        the secret can neither be read nor made)."""
        return cls(_load_or_create(secret_path(data_dir)))

    def sign(self, settings: Mapping[str, Any], conversation_id: str) -> dict[str, Any]:
        """``settings`` with their signature (an earlier one is replaced)."""
        body = {k: v for k, v in settings.items() if k != SIGNATURE}
        return {**body, SIGNATURE: self._mac(body, conversation_id)}

    def verifies(self, saved: Mapping[str, Any], conversation_id: str) -> bool:
        """Whether ``saved`` carries this key's signature for exactly these fields and this
        conversation (never raises: a file's junk simply does not verify)."""
        signature = saved.get(SIGNATURE)
        if not isinstance(signature, str) or not signature.startswith(_SCHEME):
            return False
        body = {k: v for k, v in saved.items() if k != SIGNATURE}
        try:
            expected = self._mac(body, conversation_id)
        except (TypeError, ValueError, RecursionError):
            return False
        return hmac.compare_digest(signature.encode("utf-8", "replace"), expected.encode())

    def _mac(self, body: Mapping[str, Any], conversation_id: str) -> str:
        message = _CONTEXT + canonical([conversation_id, body])
        return _SCHEME + hmac.new(self._secret, message, hashlib.sha256).hexdigest()


def canonical(value: Any) -> bytes:
    """The JSON bytes a signature covers, the same after any JSON round trip: keys sorted, no
    spaces, ASCII, and a float with an integral value written as an integer (JupyterLab's
    JavaScript saves ``120.0`` as ``120``). Raises ValueError or TypeError for what JSON
    cannot hold."""
    return json.dumps(
        _plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    ).encode("ascii")


def _plain(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _load_or_create(path: Path) -> bytes:
    """The secret at ``path``; the first caller makes it (0600, written whole before it
    appears: a kernel starting at the same moment reads the same secret, never half of it)."""
    try:
        return path.read_bytes().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{SECRET_FILE}-")  # 0600
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(base64.b64encode(os.urandom(64)) + b"\n")
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(temporary, path)  # fails if another kernel made it first: theirs is used
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not path.exists():
                os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return path.read_bytes().strip()
