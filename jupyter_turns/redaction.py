"""Secrets withheld from text that leaves the notebook: for the model, the record, the screen.

Notebook data is full of things that must not reach a model or the saved record: a cell that
prints ``dict(os.environ)``, a variable holding a token, a traceback quoting a URL with a key.
:func:`redact` replaces each secret it recognises with a label that names its kind and nothing
of its value (``[redacted: GitHub token]``) and says how many it withheld. It recognises:

* the Anthropic key in use (``ANTHROPIC_API_KEY``, read at each call, so a key set later by
  ``%chat key`` counts) and every key the package handed to a provider (:func:`remember`):
  ``[redacted: API key]``;
* the value of every environment variable whose name says it is a secret (``…TOKEN``,
  ``…SECRET…``, ``…PASSWORD``, ``…_KEY``, ``…AUTH…``, ``…CREDENTIAL…``, ``…PRIVATE…``), at least
  :data:`MIN_SECRET` characters long and not a file path: ``[redacted: secret in $NAME]``;
* the token shapes of :data:`SHAPES` (a table kept as data): Anthropic, OpenAI, AWS access key
  ids and secret access keys (next to their name or their key id), GitHub, Slack, Google API
  keys, JWTs and private key blocks.

All of it is one regular expression (the literal secrets first, then the shapes), so a text
is scanned once however many kinds there are; it is compiled again only when the secrets in
the environment change. Token shapes must start and end at a boundary (not inside a longer
run of base64 characters), so base64 image data, hex digests and UUIDs are left alone.
Redacting redacted text changes nothing: an existing label is skipped.

Where it is applied — each a choke point that everything of its kind passes: every tool
response (``ToolExecutor._respond``: the text and the saved fields), the tool card's lines
(``ToolOutput``), a turn's attachments (``TurnCoordinator.run``) and error messages
(``ProviderError``, ``McpServerError``). This module imports nothing of the package.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Any, NamedTuple

__all__ = [
    "ENV_KEY",
    "MIN_SECRET",
    "REDACTED",
    "SHAPES",
    "KeyBlocks",
    "Redacted",
    "label",
    "masked",
    "redact",
    "redact_data",
    "remember",
    "secret_name",
]

ENV_KEY = "ANTHROPIC_API_KEY"
MIN_SECRET = 8  # shorter values are not withheld as text (they would mangle ordinary words)


def label(kind: str) -> str:
    """What stands in for a withheld secret of ``kind``: ``[redacted: GitHub token]``."""
    return f"[redacted: {kind}]"


REDACTED = label("API key")  # the key in use, or one handed to a provider


def masked(key: str) -> str:
    """A form of ``key`` that identifies it without revealing it: ``sk-ant-…wXyZ``."""
    prefix = "sk-ant-" if key.startswith("sk-ant-") else ""
    tail = key[-4:] if len(key) >= 20 else ""
    return f"{prefix}…{tail}"


# Token shapes: label -> regex, tried in this order at each position. A shape recognised by
# its context (an AWS secret key is 40 base64 characters, like much else: it is recognised
# next to its name or its key id) marks the secret with (?P<value>...): only that part is
# replaced, and the context is redacted on its own. _L/_R keep a shape from starting or ending
# inside a longer run of token characters (base64 image data, a hash that contains "AKIA").
_TOKEN_CHARS = r"A-Za-z0-9_+/\-"
_L = rf"(?<![{_TOKEN_CHARS}])"  # "=" may come before: NAME=token (it only ends base64)
_R = rf"(?![{_TOKEN_CHARS}=])"
_AWS_ID = r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}"
_PEM_BEGIN = r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"

SHAPES: dict[str, str] = {
    "Anthropic key": _L + r"sk-ant-[A-Za-z0-9_\-]{8,}",
    "OpenAI key": _L
    + r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]{32,}"
    + _R
    + ")",
    "AWS secret key": r"(?:(?i:aws.?secret.?access.?key|secret.?access.?key|aws.?secret)|"
    + _L
    + _AWS_ID
    + _R
    + r")[^\n]{0,60}?"
    + _L
    + r"(?P<value>[A-Za-z0-9/+]{40})"
    + _R,
    "AWS key": _L + _AWS_ID + _R,
    "GitHub token": _L + r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})" + _R,
    "Slack token": _L + r"(?:xox[abposre]|xapp)-[A-Za-z0-9\-]{10,}",
    "Google API key": _L + r"AIza[0-9A-Za-z_\-]{35}" + _R,
    "JWT": _L + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}" + _R,
    # the whole block (up to its END, never into another block); cut short (no END line),
    # the BEGIN line and the whole lines of base64 after it (real or \n-escaped newlines, as
    # in a repr; the last may end where the text was cut: a quote, "…", " [")
    "private key": _PEM_BEGIN
    + r"(?:(?:(?!-----BEGIN )[\s\S]){0,20000}?"
    + _PEM_END
    + r"|(?:(?:\r?\n|\\[nr])[A-Za-z0-9+/=]+(?=\r?\n|\\[nr]|['\"…\]]| \[|$))*)",
}

# Environment variable names that say their value is a secret: anywhere in the name, or
# (short, ambiguous words) as a whole word of it. PWD is the working directory, not a password.
_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|APIKEY|API_KEY|ACCESS_KEY|PRIVATE"
    r"|(?:^|_)(?:KEY|KEYS|AUTH|PASS|PASSPHRASE)(?:_|$)",
    re.IGNORECASE,
)
_PATH = re.compile(r"^(?:[/~.]|[A-Za-z]:[\\/])")  # a file path names a secret, it is not one
_KINDS = tuple(SHAPES)
# An existing label, kept as it is (idempotence): only the labels made here, so that text
# crafted to look like one ("[redacted: sk-ant-…]") cannot carry a secret past.
_MADE = "|".join(["API key", r"secret in \$[A-Za-z_][A-Za-z0-9_]{0,80}", *map(re.escape, _KINDS)])
_DONE = rf"\[redacted: (?:{_MADE})\]"
# Every character a label or a shape can start with: most positions of a text are passed
# over by this one test, without trying each alternative.
_STARTS = "[sSaAgxe-"
_known: set[str] = set()  # keys handed to a provider explicitly, not through the environment


class Redacted(NamedTuple):
    """A text with its secrets withheld, and how many were."""

    text: str
    found: int  # how many secrets were withheld (not ``count``: tuples have a count method)


def remember(key: str) -> None:
    """Withhold ``key`` too, wherever it appears (a key handed to a provider)."""
    if len(key) >= MIN_SECRET:
        _known.add(key)


def secret_name(name: str) -> bool:
    """Whether an environment variable called ``name`` holds a secret, by its name."""
    return _SECRET_NAME.search(name) is not None


def redact(text: str) -> Redacted:
    """``text`` with every secret it holds replaced by a label naming its kind; the count."""
    if not text:
        return Redacted(text, 0)
    pattern, literals = _compiled(_current())
    count = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal count
        group = match.lastgroup
        if group == "done":
            return match.group()
        count += 1
        if group == "literal":
            return literals[match.group()]
        assert group is not None  # sN: shape N
        kind = _KINDS[int(group[1:])]
        value = f"v{group[1:]}"
        if value not in pattern.groupindex:
            return label(kind)
        found, base = match.group(), match.start()
        start, end = match.span(value)  # the secret; its context is redacted on its own
        before, in_before = redact(found[: start - base])
        after, in_after = redact(found[end - base :])
        count += in_before + in_after
        return before + label(kind) + after

    return Redacted(pattern.sub(replace, text), count)


def redact_data(value: Any) -> tuple[Any, int]:
    """``value`` (JSON-like: dicts, lists, strings) with the secrets of every string withheld;
    the count. Other values are returned as they are; an image's base64 data has no match."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        pairs = [(key, redact_data(item)) for key, item in value.items()]
        return {key: item for key, (item, _) in pairs}, sum(n for _, (_, n) in pairs)
    if isinstance(value, list | tuple):
        items = [redact_data(item) for item in value]
        kind = list if isinstance(value, list) else tuple
        return kind(item for item, _ in items), sum(n for _, n in items)
    return value, 0


class KeyBlocks:
    """Private key blocks in a stream of lines (what a running tool prints, line by line).

    :func:`redact` withholds a whole block only when it sees it whole; a tool card gets its
    lines one at a time. :meth:`line` replaces each line after a BEGIN line, through the END
    line, with the label (the BEGIN line itself is :func:`redact`'s). It is a substring test
    for most lines, cheap enough for every line a tool prints.
    """

    _OPEN = re.compile(_PEM_BEGIN)
    _CLOSE = re.compile(_PEM_END)

    def __init__(self) -> None:
        self.inside = False

    def line(self, text: str) -> str:
        marked = "PRIVATE KEY" in text
        if self.inside:
            close = self._CLOSE.search(text) if marked else None
            if close is None:
                return label("private key")
            self.inside = False
            return label("private key") + text[close.end() :]
        if marked:
            opened = self._OPEN.search(text)
            self.inside = opened is not None and self._CLOSE.search(text, opened.end()) is None
        return text


class _Literals:
    """The secrets known by value, each with its label: env values by name, then the keys.

    Worked out again only when the environment or the known keys changed: comparing the
    environment's raw mapping costs well under a microsecond, reading it through
    ``os.environ`` tens (and a tool card redacts line by line).
    """

    def __init__(self) -> None:
        self._state: tuple[object, tuple[tuple[str, str], ...]] = (None, ())

    def __call__(self) -> tuple[tuple[str, str], ...]:
        raw = getattr(os.environ, "_data", None)  # CPython's; without it, always work it out
        seen, found = self._state
        if raw is None or seen is None or seen != (raw, _known):
            # what was seen is taken before working it out: a change meanwhile is seen next time
            seen = None if raw is None else (dict(raw), frozenset(_known))
            found = _literals()
            self._state = (seen, found)  # one assignment: threads see a matching pair
        return found


def _literals() -> tuple[tuple[str, str], ...]:
    found: dict[str, str] = {}
    for name, value in os.environ.items():
        value = value.strip()
        if len(value) >= MIN_SECRET and secret_name(name) and not _PATH.match(value):
            found[value] = label(f"secret in ${name}")
    for key in (*_known, os.environ.get(ENV_KEY, "").strip()):
        if len(key) >= MIN_SECRET:
            found[key] = REDACTED
    return tuple(sorted(found.items()))


@functools.lru_cache(maxsize=8)
def _compiled(literals: tuple[tuple[str, str], ...]) -> tuple[re.Pattern[str], dict[str, str]]:
    """One pattern for every secret: existing labels, the literal secrets (longest first, so
    a secret containing another is withheld whole), then the shapes; and each literal's label.
    Group ``sN`` is shape N of :data:`SHAPES`, ``vN`` its secret part."""
    labels = dict(literals)
    parts = [f"(?P<done>{_DONE})"]
    if labels:
        ordered = sorted(labels, key=len, reverse=True)
        parts.append("(?P<literal>" + "|".join(map(re.escape, ordered)) + ")")
    for number, regex in enumerate(SHAPES.values()):
        parts.append(f"(?P<s{number}>" + regex.replace("(?P<value>", f"(?P<v{number}>") + ")")
    starts = _STARTS + "".join(sorted({secret[0] for secret in labels}))
    return re.compile(f"(?=[{re.escape(starts)}])(?:" + "|".join(parts) + ")"), labels


_current = _Literals()
