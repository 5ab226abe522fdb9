"""This user's own record of what their kernels wrote and granted: where restored permissions
come from, and how a restore tells the user's turns from someone else's.

A notebook file is untrusted input: whatever it says, anyone could have written it, and any
signature in it could have been made by whoever read the key. So nothing in the file grants a
permission. Two stores under the user's Jupyter data directory
(``jupyter_data_dir()/jupyter_turns/conversations/``, directory 0700, files 0600) do, and only
this user's kernels write them:

* **authorship**, per conversation id (``<h>.authored``): the digest of every event this
  user's kernel saved for that conversation (:func:`event_digest`: SHA-256 of the event's
  canonical JSON, so the digest is the same after JupyterLab's save), appended as records are
  saved — a line per event, never rewritten;
* **grants**, per conversation id and notebook path (``<h>.grants.json``): the thread's
  settings as this user's kernel last saved them in the notebook at that path, rewritten
  (atomically) only when they change — a ``%chat revoke`` or a stricter cell option too — and
  the digests of the events of someone else's that the thread held then.

A restored thread gets its grant (:func:`judge`) only when the notebook is at the path the
grant is for and every event it would send was written by this user's kernel or was already
there, someone else's, when the user granted it. A notebook elsewhere, a crafted history, an
older copy after a revocation or a settings blob copied from another file gets nothing of
the file's: its settings are a proposal (``%chat trust``). A renamed or moved notebook whose
history is the user's asks once, naming the path it had. Nothing here is a secret: a process
that reads the user's files learns nothing that forges a grant; only writing these files as
the user could.

``h`` is a hash of the conversation id (a file's text never names a path). Both stores stay
bounded: at most :data:`MAX_CONVERSATIONS` conversations (the least recently written go) and
:data:`MAX_PATHS` grants per conversation.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..model.conversation import ORPHAN_TEXT
from ..model.events import API_KINDS, ConversationEvent
from ..record.thread_settings import parse_settings

__all__ = [
    "MAX_CONVERSATIONS",
    "MAX_PATHS",
    "STORE_DIR",
    "Authorship",
    "Grant",
    "UserStore",
    "Verdict",
    "authorship",
    "canonical",
    "event_digest",
    "judge",
    "sent_digests",
]

log = logging.getLogger(__name__)

STORE_DIR = "jupyter_turns"  # under the Jupyter data directory
MAX_CONVERSATIONS = 5_000
MAX_PATHS = 20  # grants of one conversation (a notebook copied to many places)
_DIGEST = 32  # hex characters of SHA-256 kept: 128 bits
_VERSION = 1


def canonical(value: Any) -> bytes:
    """The JSON bytes a digest covers, the same after any JSON round trip: keys sorted, no
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


def event_digest(saved: Mapping[str, Any]) -> str:
    """The digest of one event as saved (``event.model_dump(mode="json")``). Never raises: an
    event JSON cannot hold (a NaN in a tool's arguments) is digested as Python writes it,
    which holds within one kernel and is simply someone else's after a restore."""
    try:
        text = canonical(saved)
    except (TypeError, ValueError, RecursionError):
        text = repr(saved).encode("utf-8", "replace")
    return hashlib.sha256(text).hexdigest()[:_DIGEST]


def _sent(event: ConversationEvent) -> bool:
    """Whether ``event`` is part of what a model is sent (notices, undo and rewind marks, a
    sub-agent's steps are for readers), and not the answer a restore itself gives a call the
    file left unanswered (it carries nothing of the file's)."""
    if event.kind not in API_KINDS or event.parent is not None:
        return False
    return not (
        event.kind == "tool_call_response"
        and event.status == "cancelled"
        and event.content == ORPHAN_TEXT
        and not event.decisions
    )


def sent_digests(events: Iterable[ConversationEvent]) -> list[tuple[ConversationEvent, str]]:
    """Each event a model would be sent, with its digest."""
    return [(e, event_digest(e.model_dump(mode="json"))) for e in events if _sent(e)]


@dataclass(frozen=True)
class Authorship:
    """Which turns of a restored thread someone else wrote: a turn (a request and what
    followed it) is the user's only when every event of it that a model is sent was written
    by this user's kernel."""

    quoted: frozenset[str] = frozenset()  # the ids of every event of those turns
    foreign: frozenset[str] = frozenset()  # the digests of their sent events
    requests: int = 0  # how many of their requests there are

    @property
    def mixed(self) -> bool:
        return bool(self.quoted)


def authorship(
    events: Sequence[ConversationEvent],
    authored: Iterable[str],
    sent: list[tuple[ConversationEvent, str]] | None = None,
) -> Authorship:
    """Cut ``events`` into turns (each starts at a request of the thread's own; what precedes
    the first belongs to it) and keep those holding an event not in ``authored``. ``sent``:
    their :func:`sent_digests`, when the caller has them."""
    known = set(authored)
    digests = {id(e): d for e, d in (sent if sent is not None else sent_digests(events))}
    quoted: set[str] = set()
    foreign: set[str] = set()
    requests = 0
    for turn in _turns(events):
        theirs = [digests[id(e)] for e in turn if id(e) in digests]
        if all(d in known for d in theirs):
            continue
        quoted.update(e.id for e in turn)
        foreign.update(theirs)
        requests += sum(1 for e in turn if e.kind == "chat_request" and e.parent is None)
    return Authorship(frozenset(quoted), frozenset(foreign), requests)


def _turns(events: Sequence[ConversationEvent]) -> list[list[ConversationEvent]]:
    turns: list[list[ConversationEvent]] = [[]]
    asked = False
    for event in events:
        starts = event.kind == "chat_request" and event.parent is None
        if starts and asked:
            turns.append([])
        asked = asked or starts
        turns[-1].append(event)
    return [turn for turn in turns if turn]


@dataclass(frozen=True)
class Grant:
    """What the user granted a thread in the notebook at one path."""

    settings: dict[str, Any]  # the thread's settings as last saved there (``Thread.settings``)
    foreign: frozenset[str]  # digests of the events of someone else's it held then
    saved: str = ""  # when (ISO 8601), for pruning

    def covers(self, digests: Iterable[str], authored: frozenset[str]) -> bool:
        """Whether every digest is the user's own or was someone else's when they granted."""
        return all(d in authored or d in self.foreign for d in digests)


@dataclass(frozen=True)
class Verdict:
    """What a restored thread gets from the user's own stores."""

    authorship: Authorship
    grant: dict[str, Any] | None = None  # the settings to apply whole
    moved_from: str | None = None  # no grant here; the user's grant of it at this path
    moved: dict[str, Any] | None = None  # that grant's settings: asked once, never applied


def judge(
    store: UserStore | None,
    path: str | None,
    conversation_id: str,
    events: Sequence[ConversationEvent],
) -> Verdict:
    """The verdict on a thread restored from the notebook at ``path`` (its real path; None:
    not known, and no grant applies). Without a store every turn counts as someone else's."""
    if store is None:
        return Verdict(authorship(events, ()))
    conversations = {conversation_id, *_forked_from(events)}
    authored = frozenset(d for c in conversations for d in store.authored(c))
    sent = sent_digests(events)
    who = authorship(events, authored, sent)
    digests = [d for _, d in sent]
    grants = store.grants(conversation_id)
    here = grants.get(path) if path is not None else None
    if here is not None and here.covers(digests, authored):
        return Verdict(who, grant=parse_settings(here.settings, "your grant").values)
    if path is None:
        return Verdict(who)
    elsewhere = sorted(
        ((p, g) for p, g in grants.items() if p != path and g.covers(digests, authored)),
        key=lambda item: item[1].saved,
    )
    if elsewhere:
        old, grant = elsewhere[-1]
        return Verdict(who, moved_from=old, moved=parse_settings(grant.settings).values)
    return Verdict(who)


def _forked_from(events: Sequence[ConversationEvent]) -> set[str]:
    """The conversations a forked thread's history came from: its fork notices name them
    (those events were saved, and authored, under the source's id; a fork of a fork names
    both)."""
    found: set[str] = set()
    for event in events:
        data = event.data if event.kind == "notice" and event.parent is None else None
        fork = data.get("fork") if isinstance(data, dict) else None
        if isinstance(fork, dict) and isinstance(fork.get("conversation_id"), str):
            found.add(fork["conversation_id"])
    return found


@dataclass
class UserStore:
    """The two stores of one user (see the module docstring). Reads never raise for what the
    files hold; writes raise OSError (the caller logs it: a save never fails for it)."""

    root: Path  # <jupyter data dir>/jupyter_turns
    # what this kernel last wrote of each grant (canonical JSON): unchanged is not written again
    _granted: dict[tuple[str, str], bytes] = field(default_factory=dict, repr=False)

    @classmethod
    def of_user(cls, data_dir: str | os.PathLike[str] | None = None) -> UserStore:
        if data_dir is None:
            from jupyter_core.paths import jupyter_data_dir

            data_dir = jupyter_data_dir()
        return cls(Path(data_dir) / STORE_DIR)

    @property
    def folder(self) -> Path:
        return self.root / "conversations"

    def _file(self, conversation_id: str, suffix: str) -> Path:
        name = hashlib.sha256(conversation_id.encode("utf-8", "replace")).hexdigest()[:32]
        return self.folder / f"{name}{suffix}"

    # ------------------------------------------------------------------ authorship

    def authored(self, conversation_id: str) -> frozenset[str]:
        """Every digest this user's kernels saved for the conversation (read from the file
        each time: another kernel may have added some; nothing of it is kept in memory)."""
        try:
            text = self._file(conversation_id, ".authored").read_text("ascii", "replace")
        except OSError:
            return frozenset()
        return frozenset(line for line in text.split("\n") if _is_digest(line))

    def author(self, conversation_id: str, digests: Iterable[str]) -> None:
        """Append ``digests`` (events this kernel saves now, new ones: the caller knows which)
        to the conversation's authorship, in one write."""
        new = list(dict.fromkeys(digests))
        if not new:
            return
        path = self._file(conversation_id, ".authored")
        self._prepare(not path.exists())
        handle = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(handle, "".join(f"{d}\n" for d in new).encode("ascii"))
        finally:
            os.close(handle)

    # ------------------------------------------------------------------ grants

    def grants(self, conversation_id: str) -> dict[str, Grant]:
        """The user's grants of the conversation, by notebook path."""
        try:
            raw = json.loads(self._file(conversation_id, ".grants.json").read_text("utf-8"))
        except (OSError, ValueError, RecursionError):
            return {}
        entries = raw.get("grants") if isinstance(raw, dict) else None
        if not isinstance(entries, dict):
            return {}
        found = {str(path): _grant_of(entry) for path, entry in entries.items()}
        return {path: grant for path, grant in found.items() if grant is not None}

    def grant(
        self,
        path: str,
        conversation_id: str,
        settings: Mapping[str, Any],
        foreign: Iterable[str] = (),
    ) -> None:
        """Record ``settings`` as what the user granted the thread in the notebook at
        ``path``; written only when it changed since this kernel last wrote it."""
        granted, digests = dict(settings), frozenset(foreign)
        key, mark = (path, conversation_id), canonical([granted, sorted(digests)])
        if self._granted.get(key) == mark:
            return
        grants = self.grants(conversation_id)
        grants[path] = Grant(granted, digests, _now())
        kept = sorted(grants.items(), key=lambda item: item[1].saved)[-MAX_PATHS:]
        body = {
            "version": _VERSION,
            "conversation_id": conversation_id,
            "grants": {
                p: {"settings": g.settings, "foreign": sorted(g.foreign), "saved": g.saved}
                for p, g in kept
            },
        }
        target = self._file(conversation_id, ".grants.json")
        self._prepare(not target.exists())
        _write_atomically(target, json.dumps(body, ensure_ascii=False).encode("utf-8"))
        self._granted[key] = mark

    # ------------------------------------------------------------------ the folder

    def _prepare(self, new_conversation: bool) -> None:
        """The folder exists, 0700; a new conversation first makes room for itself."""
        for folder in (self.root, self.folder):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            if folder.stat().st_mode & 0o077:
                folder.chmod(0o700)
        if new_conversation:
            self._prune()

    def _prune(self) -> None:
        """Keep at most MAX_CONVERSATIONS conversations: the least recently written go."""
        try:
            files = list(self.folder.iterdir())
        except OSError:
            return
        by_conversation: dict[str, list[Path]] = {}
        for file in files:
            by_conversation.setdefault(file.name.split(".", 1)[0], []).append(file)
        if len(by_conversation) < MAX_CONVERSATIONS:
            return

        def written(group: list[Path]) -> float:
            return max((_mtime(f) for f in group), default=0.0)

        oldest = sorted(by_conversation.values(), key=written)
        for group in oldest[: len(oldest) - MAX_CONVERSATIONS + 1]:
            for file in group:
                try:
                    file.unlink()
                except OSError as exc:
                    log.debug("jupyter_turns: could not prune %s: %s", file, exc)
        self._granted.clear()


def _grant_of(entry: Any) -> Grant | None:
    """One grant as the store holds it (None: not one; the store may be from another version)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("settings"), dict):
        return None
    foreign = entry.get("foreign")
    digests = [d for d in foreign if _is_digest(d)] if isinstance(foreign, list) else []
    saved = entry.get("saved")
    return Grant(entry["settings"], frozenset(digests), saved if isinstance(saved, str) else "")


def _is_digest(text: Any) -> bool:
    return (
        isinstance(text, str)
        and len(text) == _DIGEST
        and all(c in "0123456789abcdef" for c in text)
    )


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` whole to ``path`` (0600): a kernel reading at the same moment sees the
    old file or the new one, never half of one."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")  # 0600
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
