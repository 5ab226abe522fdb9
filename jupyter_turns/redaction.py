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
* the secrets in the user's credential files (:data:`SECRET_FILES`, read when they change, at
  most once every :data:`RECHECK` seconds; a missing file costs one ``stat``): the passwords
  of ``~/.netrc`` and ``~/.pgpass``, the secret-named keys of ``~/.aws/credentials``, the
  ``auths`` of ``~/.docker/config.json`` (and the password inside each), the secret-named
  fields of gcloud's application default credentials, this package's own
  ``jupyter_turns_secret`` in the Jupyter data directory, and the secret-named variables of
  every ``.env`` the kernel read a key from (:func:`watch`): ``[redacted: secret in ~/.netrc]``;
* the token shapes of :data:`SHAPES` (a table kept as data): Anthropic, OpenAI, AWS access key
  ids and secret access keys (next to their name or their key id), GitHub, Slack, Google API
  keys, JWTs, private key blocks, and the password of a URL (``postgres://ada:PASSWORD@db``
  keeps everything but the password).

All of it is one regular expression (the literal secrets first, then the shapes), tried only
where a match can begin: every shape names the few strings its matches start with
(``Shape.leads``), found with ``str.find``, so a long text with no secret costs a few fast
searches, not a regular expression at every character. It is compiled again only when the
secrets known by value change. Token shapes must start and end at a boundary (not inside a
longer run of base64 characters), so base64 image data, hex digests and UUIDs are left alone.
Redacting redacted text changes nothing: an existing label is skipped (only the labels made
here for the secrets known now, so that a crafted one cannot carry a secret past).

Text is redacted whole before it is cut: :func:`head` and :func:`tail` cut a text after
withholding its secrets (a secret across the cut is withheld whole, never shown in part), and
every tool that pages through a text (``cell_output``) pages the redacted text, so an offset
cannot land inside a secret. A text that arrives in pieces (the model's answer, delta by
delta) goes through a :class:`RedactedStream`, which holds back the shortest tail that may
still become a secret.

What it cannot recognise: a secret with no shape held under an ordinary name, and any
transformation of one (base64, reversed, split into pieces with other text between).

Where it is applied — each a choke point that everything of its kind passes: every tool
response (``ToolExecutor._respond``: the text and the saved fields), the tool card's lines
(``ToolOutput``), a turn's attachments (``TurnCoordinator.run``), the model's answers and
reasoning (``EventBuilder``, and the page's draft as it streams) and error messages
(``ProviderError``, ``McpServerError``). This module imports nothing of the package.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import functools
import itertools
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

__all__ = [
    "ENV_KEY",
    "MIN_SECRET",
    "RECHECK",
    "REDACTED",
    "SECRET_FILES",
    "SHAPES",
    "SPAN",
    "KeyBlocks",
    "Redacted",
    "RedactedStream",
    "Shape",
    "head",
    "label",
    "masked",
    "redact",
    "redact_data",
    "remember",
    "secret_name",
    "tail",
    "watch",
    "withheld",
]

ENV_KEY = "ANTHROPIC_API_KEY"
MIN_SECRET = 8  # shorter values are not withheld as text (they would mangle ordinary words)
# How far past a cut a long text is scanned (head, tail), so that a secret across the cut is
# seen whole; a text is redacted whole when it is not longer than the cut and this.
SPAN = 8_192
RECHECK = 2.0  # seconds between looks at the credential files (a stat each; never per token)


def label(kind: str) -> str:
    """What stands in for a withheld secret of ``kind``: ``[redacted: GitHub token]``."""
    return f"[redacted: {kind}]"


REDACTED = label("API key")  # the key in use, or one handed to a provider


def masked(key: str) -> str:
    """A form of ``key`` that identifies it without revealing it: ``sk-ant-…wXyZ``."""
    prefix = "sk-ant-" if key.startswith("sk-ant-") else ""
    tail = key[-4:] if len(key) >= 20 else ""
    return f"{prefix}…{tail}"


class Shape(NamedTuple):
    """A kind of secret recognised by its form.

    ``regex`` matches it; a shape recognised by its context (an AWS secret key is 40 base64
    characters, like much else: it is recognised next to its name or its key id) marks the
    secret with ``(?P<value>...)``: only that part is replaced, the context is redacted on its
    own. Every match begins with one of ``leads`` (as written), or of ``any_case`` (in any
    case). ``opening`` matches every beginning of a match that more text may still complete or
    change, from its lead to the end of what arrived (a stream holds such a tail back)."""

    regex: str
    leads: tuple[str, ...]
    opening: str
    any_case: tuple[str, ...] = ()


# _L/_R keep a shape from starting or ending inside a longer run of token characters (base64
# image data, a hash that contains "AKIA").
_TOKEN_CHARS = r"A-Za-z0-9_+/\-"
_L = rf"(?<![{_TOKEN_CHARS}])"  # "=" may come before: NAME=token (it only ends base64)
_R = rf"(?![{_TOKEN_CHARS}=])"
_AWS_IDS = ("AKIA", "ASIA", "ABIA", "ACCA")
_AWS_ID = r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}"
_PEM_BEGIN = r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_NOT_IN_URL = r"\s/?#'\"<>`"  # what ends a URL's userinfo (or the text around it)
_PLACEHOLDER = r"(?:\{[^{}@\s]*\}|\$\{?\w+\}?|%(?:\(\w+\))?s|<[^<>@\s]*>|\*+)"


def _beginnings(*atoms: str) -> str:
    """A regex for every nonempty beginning of the atoms in sequence (``a``, ``aw``, ``aws``...),
    the first atom whole: ``a(?:w(?:s)?)?``."""
    inner = ""
    for atom in reversed(atoms[1:]):
        inner = f"(?:{atom}{inner})?"
    return atoms[0] + inner


_AWS_CONTEXT = (  # the beginnings of a name that says a secret access key follows
    "(?i:"
    + _beginnings("aws", ".?", *"secret")
    + "|"
    + _beginnings("secret", ".?", *"access", ".?", *"key")
    + ")"
)

SHAPES: dict[str, Shape] = {
    "Anthropic key": Shape(_L + r"sk-ant-[A-Za-z0-9_\-]{8,}", ("sk-",), r"sk-[A-Za-z0-9_\-]*"),
    "OpenAI key": Shape(
        _L + r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]{32,}" + _R + ")",
        ("sk-",),
        r"sk-[A-Za-z0-9_\-]*",
    ),
    "AWS secret key": Shape(
        r"(?:(?i:aws.?secret.?access.?key|secret.?access.?key|aws.?secret)|"
        + _L
        + _AWS_ID
        + _R
        + r")[^\n]{0,60}?"
        + _L
        + r"(?P<value>[A-Za-z0-9/+]{40})"
        + _R,
        _AWS_IDS,
        # a name or key id begun, or whole and what may follow it: from the end of the shortest
        # name (10 characters) the context's rest, 60 between and the 40 are 111 at most
        _AWS_CONTEXT
        + r"|(?:(?i:aws.?secret|secret.?access.?key)|(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16})"
        + r"[^\n]{0,111}|(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{0,15}",
        any_case=("aws", "secret"),
    ),
    "AWS key": Shape(_L + _AWS_ID + _R, _AWS_IDS, r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{0,16}"),
    "GitHub token": Shape(
        _L + r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})" + _R,
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        r"gh[pousr]_[A-Za-z0-9]{0,255}|github_pat_[A-Za-z0-9_]{0,255}",
    ),
    "Slack token": Shape(
        _L + r"(?:xox[abposre]|xapp)-[A-Za-z0-9\-]{10,}",
        ("xox", "xapp"),
        r"(?:xox[abposre]?|xapp)(?:-[A-Za-z0-9\-]*)?",
    ),
    "Google API key": Shape(
        _L + r"AIza[0-9A-Za-z_\-]{35}" + _R, ("AIza",), r"AIza[0-9A-Za-z_\-]{0,35}"
    ),
    "JWT": Shape(
        _L + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}" + _R,
        ("eyJ",),
        r"eyJ[A-Za-z0-9_\-.]*",
    ),
    # the whole block (up to its END, never into another block); cut short (no END line),
    # the BEGIN line and the whole lines of base64 after it (real or \n-escaped newlines, as
    # in a repr; the last may end where the text was cut: a quote, "…", " [")
    "private key": Shape(
        _PEM_BEGIN
        + r"(?:(?:(?!-----BEGIN )[\s\S]){0,20000}?"
        + _PEM_END
        + r"|(?:(?:\r?\n|\\[nr])[A-Za-z0-9+/=]+(?=\r?\n|\\[nr]|['\"…\]]| \[|$))*)",
        ("-----BEGIN ",),
        r"-----BEGIN [A-Z0-9 ]*(?:-{0,4}|PRIVATE KEY(?: BLOCK)?-----"
        rf"(?:(?!-----BEGIN )(?!{_PEM_END})[\s\S]){{0,20000}})",
    ),
    # scheme://user:PASSWORD@host: the password up to the authority's last "@" (not a
    # placeholder in code or a template: {password}, ${PGPASSWORD}, %s, <password>, ****)
    "password in URL": Shape(
        rf"://[^{_NOT_IN_URL}@:]*:(?!{_PLACEHOLDER}@)(?P<value>[^{_NOT_IN_URL}]+)@",
        ("://",),
        rf"://[^{_NOT_IN_URL}@:]*(?::[^{_NOT_IN_URL}]*)?",
    ),
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
_LABELLED = "[redacted: "  # how every label begins: the lead of an existing one
_DONE_OPENING = r"\[redacted: [^\]\n]{0,200}"
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
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
    state = _state()
    pieces: list[str] = []
    last = count = 0
    for match in _scan(text, 0, state).matches:
        replacement, found = _replacement(match, state)
        pieces += (text[last : match.start()], replacement)
        last, count = match.end(), count + found
    if not pieces:
        return Redacted(text, 0)
    pieces.append(text[last:])
    return Redacted("".join(pieces), count)


def head(text: str, size: int) -> str:
    """At most the first ``size`` characters of ``text`` once its secrets are withheld: a
    secret across the cut is withheld whole, and a label is never cut in half (the cut moves
    before it). Only the first ``size + SPAN`` characters are scanned."""
    shown = redact(text[: size + SPAN]).text
    if len(shown) <= size:
        return shown
    opened = _label_across(shown, size)
    return shown[: size if opened is None else opened]


def tail(text: str, size: int) -> str:
    """At most the last ``size`` characters of ``text`` once its secrets are withheld (see
    :func:`head`): what a traceback's end says."""
    shown = redact(text[-(size + SPAN) :]).text if size > 0 else ""
    if len(shown) <= size:
        return shown
    start = len(shown) - size
    opened = _label_across(shown, start)
    return shown[start if opened is None else shown.index("]", opened) + 1 :]


def _label_across(text: str, cut: int) -> int | None:
    """Where the label that a cut at ``cut`` would split begins (None: it splits none)."""
    opened = text.rfind(_LABELLED, 0, cut + len(_LABELLED) - 1)
    if opened < 0 or opened >= cut:
        return None
    closed = text.find("]", opened)
    return opened if closed >= cut else None  # an unclosed "[redacted: " is no label


def withheld(text: str) -> int:
    """How many labels made here ``text`` holds: the secrets withheld from it, however many
    times it was redacted (a page of a text redacted whole counts the labels it shows)."""
    if _LABELLED not in text:
        return 0
    state = _state()
    found, start = 0, text.find(_LABELLED)
    while start >= 0:
        match = state.pattern.match(text, start)
        done = match is not None and match.lastgroup == "done"
        found += done
        start = text.find(_LABELLED, match.end() if done and match else start + 1)
    return found


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


class RedactedStream:
    """A text that arrives in pieces (the model's answer, delta by delta), redacted as it comes.

    :meth:`feed` returns what of the text so far can be shown, :meth:`end` the rest; joined,
    they are :func:`redact` of the whole text. A tail that may still become a secret (the
    beginning of a known one, ``sk-ant-api0``, or of a shape, ``postgres://ada:hun``) is held
    back until the text after it shows whether it is one. Each call scans only the new text and
    what was held back, never the whole text again. Not thread-safe: one stream, one reader.
    """

    def __init__(self) -> None:
        self._held = ""
        self._before = ""  # the character before what is held: the boundary a token needs
        self.found = 0  # how many secrets were withheld so far

    def feed(self, text: str) -> str:
        """What can be shown now that ``text`` arrived."""
        return self._emit(self._before + self._held + text, final=False)

    def end(self) -> str:
        """The text is complete: what was held back, redacted."""
        return self._emit(self._before + self._held, final=True)

    def _emit(self, window: str, *, final: bool) -> str:
        base = len(self._before)
        if len(window) == base:
            return ""
        state = _state()
        scan = _scan(window, base, state)
        hold = len(window) if final else _hold(window, base, scan, state)
        pieces: list[str] = []
        last = base
        for match in scan.matches:
            if match.end() > hold:
                break
            replacement, found = _replacement(match, state)
            pieces += (window[last : match.start()], replacement)
            last = match.end()
            self.found += found
        pieces.append(window[last:hold])
        self._held = window[hold:]
        if hold > base:
            self._before = window[hold - 1 : hold]
        return "".join(pieces)


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


# ---------------------------------------------------------------------------- the scan


class _State(NamedTuple):
    """The compiled pattern for the secrets known now, and what finds where it may match."""

    pattern: re.Pattern[str]
    labels: dict[str, str]  # literal secret -> its label
    searches: tuple[_Search, ...]  # how the leads are found
    openings: tuple[re.Pattern[str], ...]  # by shape number; then the label's
    beginnings: tuple[frozenset[str], frozenset[str]]  # of the leads: as written, in lower case
    lead_longest: int


class _Search(NamedTuple):
    """One pass over a text (``any_case``: over its lower case) for ``needle``; each place it
    is found may be where one of the ``leads`` begins, ``offset`` characters before it."""

    needle: str
    any_case: bool
    leads: tuple[tuple[str, int, tuple[int, ...]], ...]  # lead, offset, the shapes it begins


class _Scan(NamedTuple):
    """What one scan of a text found from a start: the matches, left to right and not
    overlapping (as a scan of every position would find them), the text in lower case (ASCII
    letters only: same length) and where each lead is, with the shapes it begins."""

    matches: list[re.Match[str]]
    low: str
    leads: list[tuple[int, tuple[int, ...]]]


def _scan(text: str, start: int, state: _State) -> _Scan:
    low = text.lower()
    if len(low) != len(text):  # a character whose lower case is longer ("İ")
        low = text.translate(_ASCII_LOWER)
    leads = sorted(_leads(text, low, start, state))
    places = sorted({at for at, _ in leads}.union(*(_finds(text, s, start) for s in state.labels)))
    found: list[re.Match[str]] = []
    end = start
    for place in places:
        if place < end:
            continue
        match = state.pattern.match(text, place)
        if match is not None:
            found.append(match)
            end = match.end()
    return _Scan(found, low, leads)


def _leads(text: str, low: str, start: int, state: _State) -> Iterator[tuple[int, tuple[int, ...]]]:
    """Where a lead begins from ``start`` on, with the shapes it begins."""
    for needle, any_case, leads in state.searches:
        haystack = low if any_case else text
        if len(needle) == 1 and haystack.count(needle, start) * 100 > len(haystack):
            # a capital that is not rare here (base64, upper-case data): each lead whole
            for lead, _, shapes in leads:
                yield from ((at, shapes) for at in _finds(haystack, lead, start))
            continue
        for found in _finds(haystack, needle, start):
            for lead, offset, shapes in leads:
                at = found - offset
                if at >= start and haystack.startswith(lead, at):
                    yield at, shapes


def _finds(text: str, needle: str, start: int) -> Iterator[int]:
    at = text.find(needle, start)
    while at >= 0:
        yield at
        at = text.find(needle, at + 1)


def _replacement(match: re.Match[str], state: _State) -> tuple[str, int]:
    """What stands in for ``match``, and how many secrets it withholds."""
    group = match.lastgroup
    if group == "done":
        return match.group(), 0
    if group == "literal":
        return state.labels[match.group()], 1
    assert group is not None  # sN: shape N
    kind = _KINDS[int(group[1:])]
    value = f"v{group[1:]}"
    if value not in state.pattern.groupindex:
        return label(kind), 1
    found, base = match.group(), match.start()
    start, end = match.span(value)  # the secret; its context is redacted on its own
    before, in_before = redact(found[: start - base])
    after, in_after = redact(found[end - base :])
    return before + label(kind) + after, 1 + in_before + in_after


def _hold(window: str, base: int, scan: _Scan, state: _State) -> int:
    """Where the tail of ``window`` that may still become a secret begins (its length: none).

    The leftmost of: the beginning of a lead at the very end (``sk``, ``-----BEG``), the
    beginning of a secret known by value at the very end, a lead whose shape more text may
    still complete or change (its ``opening`` reaches the end), a match reaching the end (more
    text may extend it). A position inside a match that more text cannot change is no start:
    that match is what the whole text will have there."""
    size, matches, low = len(window), scan.matches, scan.low
    starts = [match.start() for match in matches]

    def inside(at: int) -> bool:
        number = bisect.bisect_right(starts, at) - 1
        return number >= 0 and starts[number] < at < matches[number].end()

    found = [matches[-1].start()] if matches and matches[-1].end() == size else []
    written, lowered = state.beginnings
    for at in range(max(base, size - state.lead_longest + 1), size):
        if (window[at:] in written or low[at:] in lowered) and not inside(at):
            found.append(at)
            break
    for secret in state.labels:  # its first characters at the very end
        for at in _finds(window, secret[0], max(base, size - len(secret) + 1)):
            if window.startswith(secret[: size - at], at) and not inside(at):
                found.append(at)
                break
    first = min(found, default=size)
    at_match = dict(zip(starts, matches, strict=True))
    for at, shapes in scan.leads:
        if at >= first:
            break
        if inside(at):
            continue
        rank = _rank(at_match[at]) if at in at_match else len(_KINDS)
        if any(state.openings[s].fullmatch(window, at) for s in shapes if _order(s) <= rank):
            return at
    return first


def _order(shape: int) -> int:
    """Where alternative ``shape`` comes in the pattern: the labels (-2), the literal secrets
    (-1), then the shapes in order (``len(SHAPES)`` stands for the labels in ``leads``)."""
    return -2 if shape == len(_KINDS) else shape


def _rank(match: re.Match[str]) -> int:
    """The alternative that made ``match`` (see :func:`_order`): an earlier one may still
    match there with more text, a later one never wins."""
    group = match.lastgroup or ""
    if group in ("done", "literal"):
        return -2 if group == "done" else -1
    return int(group[1:])


def _state() -> _State:
    return _compiled(_current())


@functools.lru_cache(maxsize=8)
def _compiled(literals: tuple[tuple[str, str], ...]) -> _State:
    """One pattern for every secret: existing labels, the literal secrets (longest first, so
    a secret containing another is withheld whole), then the shapes; and each literal's label.
    Group ``sN`` is shape N of :data:`SHAPES`, ``vN`` its secret part."""
    labels = dict(literals)
    kinds = ["API key", *_KINDS, *sorted({v[len(_LABELLED) : -1] for v in labels.values()})]
    parts = [rf"(?P<done>\[redacted: (?:{'|'.join(map(re.escape, kinds))})\])"]
    if labels:
        ordered = sorted(labels, key=len, reverse=True)
        parts.append("(?P<literal>" + "|".join(map(re.escape, ordered)) + ")")
    for number, shape in enumerate(SHAPES.values()):
        regex = shape.regex.replace("(?P<value>", f"(?P<v{number}>")
        parts.append(f"(?P<s{number}>{regex})")
    leads: dict[tuple[str, bool], list[int]] = {(_LABELLED, False): [len(_KINDS)]}
    for number, shape in enumerate(SHAPES.values()):
        for lead, any_case in [
            *((w, False) for w in shape.leads),
            *((w, True) for w in shape.any_case),
        ]:
            leads.setdefault((lead, any_case), []).append(number)
    openings = [*(s.opening for s in SHAPES.values()), _DONE_OPENING]
    return _State(
        pattern=re.compile("|".join(parts)),
        labels=labels,
        searches=_searches({key: tuple(shapes) for key, shapes in leads.items()}),
        openings=tuple(re.compile(o) for o in openings),
        beginnings=(
            frozenset(w[:n] for w, fold in leads if not fold for n in range(1, len(w))),
            frozenset(w[:n] for w, fold in leads if fold for n in range(1, len(w))),
        ),
        lead_longest=max(len(w) for w, _ in leads),
    )


def _searches(leads: dict[tuple[str, bool], tuple[int, ...]]) -> tuple[_Search, ...]:
    """As few passes over a text as find every lead: a lead with a capital letter is looked
    for by it (capitals are rare in prose: one pass finds AKIA, ASIA, ABIA, ACCA and AIza),
    leads with a common beginning by it (``gh``: five GitHub prefixes), others whole."""
    needles: dict[tuple[str, bool], list[tuple[str, int, tuple[int, ...]]]] = {}
    for (lead, any_case), shapes in leads.items():
        capital = next((i for i, c in enumerate(lead) if c.isupper()), None)
        if any_case:
            needle, offset = lead, 0
        elif capital is not None:
            needle, offset = lead[capital], capital
        else:
            shared = [w for w, fold in leads if not fold and w[:2] == lead[:2]]
            needle, offset = _shared_beginning(shared), 0
        needles.setdefault((needle, any_case), []).append((lead, offset, shapes))
    return tuple(_Search(n, fold, tuple(found)) for (n, fold), found in needles.items())


def _shared_beginning(words: list[str]) -> str:
    """The longest beginning all ``words`` share (of the first and last in order: all)."""
    first, last = min(words), max(words)
    pairs = enumerate(zip(first, last, strict=False))  # first is the shorter when a prefix
    size = next((i for i, (a, b) in pairs if a != b), len(first))
    return first[:size]


# ---------------------------------------------------------------------------- known by value


class _Literals:
    """The secrets known by value, each with its label: env values by name, the credential
    files' secrets, then the keys.

    Worked out again only when the environment, the known keys or a credential file changed:
    comparing the environment's raw mapping costs well under a microsecond, reading it through
    ``os.environ`` tens (and a tool card redacts line by line); the files are looked at once
    every :data:`RECHECK` seconds at most.
    """

    def __init__(self) -> None:
        self._state: tuple[object, tuple[tuple[str, str], ...]] = (None, ())

    def __call__(self) -> tuple[tuple[str, str], ...]:
        raw = getattr(os.environ, "_data", None)  # CPython's; without it, always work it out
        files = _files()
        seen, found = self._state
        if raw is None or seen is None or seen != (raw, _known, files):
            # what was seen is taken before working it out: a change meanwhile is seen next time
            seen = None if raw is None else (dict(raw), frozenset(_known), files)
            found = _literals(files)
            self._state = (seen, found)  # one assignment: threads see a matching pair
        return found


def _literals(files: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    found: dict[str, str] = dict(files)
    for name, value in os.environ.items():
        value = value.strip()
        if _secret_value(name, value):
            found[value] = label(f"secret in ${name}")
    for key in (*_known, os.environ.get(ENV_KEY, "").strip()):
        if len(key) >= MIN_SECRET:
            found[key] = REDACTED
    return tuple(sorted(found.items()))


def _secret_value(name: str, value: str) -> bool:
    return len(value) >= MIN_SECRET and secret_name(name) and not _PATH.match(value)


_current = _Literals()


# ---------------------------------------------------------------------------- credential files

Parse = Callable[[str], Iterable[tuple[str, str]]]  # a file's text -> (secret, where) pairs


def _netrc(text: str) -> Iterator[tuple[str, str]]:
    words = text.split()
    for word, value in itertools.pairwise(words):
        if word in ("password", "account"):
            yield value, "~/.netrc"


def _pgpass(text: str) -> Iterator[tuple[str, str]]:
    """``host:port:database:user:password`` lines (``\\:`` and ``\\\\`` escaped)."""
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        fields = re.split(r"(?<!\\):", line, maxsplit=4)
        if len(fields) == 5:
            yield fields[4].replace("\\:", ":").replace("\\\\", "\\"), "~/.pgpass"


def _ini(where: str) -> Parse:
    """``name = value`` lines whose name says it is a secret (``aws_secret_access_key``)."""

    def parse(text: str) -> Iterator[tuple[str, str]]:
        for line in text.splitlines():
            name, equals, value = line.partition("=")
            if equals and secret_name(name.strip()):
                yield value.strip().strip("'\""), where

    return parse


def _json(where: str) -> Parse:
    """The string values under secret-named keys, at any depth; a Docker ``auth`` (base64 of
    ``user:password``) also gives its password."""

    def parse(text: str) -> Iterator[tuple[str, str]]:
        try:
            data = json.loads(text)
        except ValueError:
            return
        for name, value in _json_strings(data):
            if not secret_name(name):
                continue
            yield value, where
            if name == "auth":
                try:
                    decoded = base64.b64decode(value, validate=True).decode("utf-8")
                except (binascii.Error, UnicodeDecodeError):
                    continue
                yield decoded.partition(":")[2], where

    return parse


def _json_strings(data: Any) -> Iterator[tuple[str, str]]:
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, str):
                yield str(key), value
            else:
                yield from _json_strings(value)
    elif isinstance(data, list):
        for item in data:
            yield from _json_strings(item)


def _whole(where: str) -> Parse:
    return lambda text: [(text.strip(), where)]


def _dotenv(text: str) -> Iterator[tuple[str, str]]:
    """``NAME=value`` lines whose name says the value is a secret, labelled by the name."""
    for line in text.splitlines():
        match = re.match(r"\s*(?:export\s+)?([A-Za-z_]\w*)\s*=\s*(.*)$", line)
        if match is not None and secret_name(match.group(1)):
            value = match.group(2).strip()
            quoted = re.match(r"""(['"])(.*?)\1""", value)
            value = quoted.group(2) if quoted else re.split(r"\s+#", value, maxsplit=1)[0]
            yield value.strip(), f"${match.group(1)}"


def _data_dir() -> Path | None:
    try:
        from jupyter_core.paths import jupyter_data_dir
    except ImportError:  # outside Jupyter: no data directory, no secret of ours in it
        return None
    return Path(jupyter_data_dir())


# The user's credential files, where their secrets are: (path under the home directory, or
# a function giving the path; how to read the secrets out of its text)
SECRET_FILES: tuple[tuple[str | Callable[[], Path | None], Parse], ...] = (
    (".netrc", _netrc),
    (".pgpass", _pgpass),
    (".aws/credentials", _ini("~/.aws/credentials")),
    (".docker/config.json", _json("~/.docker/config.json")),
    (
        ".config/gcloud/application_default_credentials.json",
        _json("gcloud credentials"),
    ),
    (
        lambda: (d / "jupyter_turns_secret") if (d := _data_dir()) else None,
        _whole("jupyter_turns_secret"),
    ),
)
_watched: dict[Path, None] = {}  # the .env files the kernel read (see watch)


def watch(path: str | os.PathLike[str]) -> None:
    """Withhold the secret-named values of the ``.env`` file at ``path`` too, as it is now and
    whenever it changes (the kernel calls this for every ``.env`` it reads a key from)."""
    _watched[Path(path).resolve()] = None


class _Files:
    """The secrets of the credential files, read again when a file's modification time or
    size changes; looked at no more than once every :data:`RECHECK` seconds."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._checked = float("-inf")
        self._read: dict[Path, tuple[tuple[int, int], tuple[tuple[str, str], ...]]] = {}
        self.found: tuple[tuple[str, str], ...] = ()

    def __call__(self) -> tuple[tuple[str, str], ...]:
        now = self.clock()
        if now - self._checked < RECHECK or not self._lock.acquire(blocking=False):
            return self.found  # another thread is looking: what was found is still good
        try:
            self._checked = now
            found = {pair for path, parse in _files_now() for pair in self._secrets(path, parse)}
            self.found = tuple(sorted(dict(found).items()))
        finally:
            self._lock.release()
        return self.found

    def forget(self) -> None:
        """Look at the files again at the next call (a test that just wrote one)."""
        self._checked = float("-inf")

    def _secrets(self, path: Path, parse: Parse) -> tuple[tuple[str, str], ...]:
        try:
            info = path.stat()
        except OSError:
            self._read.pop(path, None)
            return ()
        stamp = (info.st_mtime_ns, info.st_size)
        cached = self._read.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            text = path.read_text(encoding="utf-8", errors="replace")[:1_000_000]
        except OSError:
            return ()
        secrets = tuple(
            (value, label(f"secret in {where}"))
            for value, where in parse(text)
            if len(value) >= MIN_SECRET and not _PATH.match(value)
        )
        self._read[path] = (stamp, secrets)
        return secrets


def _files_now() -> Iterator[tuple[Path, Parse]]:
    home = Path.home()
    for where, parse in SECRET_FILES:
        path = home / where if isinstance(where, str) else where()
        if path is not None:
            yield path, parse
    for path in list(_watched):
        yield path, _dotenv


_files = _Files()
