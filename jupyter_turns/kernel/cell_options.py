"""``%%chat`` options: the parser, and the checks every option passes before a cell runs.

A cell whose options are wrong fails with a message and changes nothing (the magic checks them
all before it touches the session).
"""

from __future__ import annotations

import argparse
import difflib
import re
import shlex
from typing import Any, NoReturn
from urllib.parse import urlsplit

from IPython.core.error import UsageError

from ..kernel_tools.builtin import parse_builtins
from ..providers.catalog import KINDS
from ..providers.endpoints import shown
from ..reading.above import parse_context
from ..reading.failing import ABOVE, Which
from ..record.thread_settings import DISPLAY_PATTERN

__all__ = ["parse_base_url", "parse_budget", "parse_fix", "parse_options", "parse_thinking"]

_REASONING = re.compile(DISPLAY_PATTERN)


_SEE = "See %chat? for the options."


class _Parser(argparse.ArgumentParser):
    """argparse that fails with one line in the cell's error, never its usage dump on stderr
    (a missing value: argparse would print and exit). No abbreviations: ``--tool`` is no
    option (it gets "did you mean `--tools`?"), never ``--tools`` taken silently."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"%%chat: {message}. {_SEE}")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="%%chat", add_help=False, exit_on_error=False, allow_abbrev=False)
    parser.add_argument("--new", action="store_true")
    parser.add_argument("--thread")
    parser.add_argument("--model")
    parser.add_argument("--provider", choices=tuple(KINDS))
    parser.add_argument("--base-url")
    parser.add_argument("--region")
    parser.add_argument("--project")
    parser.add_argument("--script")
    parser.add_argument("--tools", choices=("ask", "unattended", "deny"))
    parser.add_argument("--edits", choices=("ask", "review"))
    parser.add_argument("--reasoning")
    parser.add_argument("--thinking")
    parser.add_argument("--max-cycles", type=int)
    parser.add_argument("--system")
    parser.add_argument("--use")
    parser.add_argument("--builtins")
    parser.add_argument("--sequential", action="store_true")
    parser.add_argument("--stream", choices=("on", "off"))
    parser.add_argument("--replay-tools", choices=("run", "saved"), default="run")
    parser.add_argument("--budget")
    parser.add_argument("--fix", nargs="?", const="last")
    parser.add_argument("--context")
    return parser


def parse_options(line: str) -> argparse.Namespace:
    """Parse and check the cell's options; values come back normalized."""
    parser = _parser()
    try:
        options, unknown = parser.parse_known_args(shlex.split(line))
    except (argparse.ArgumentError, ValueError) as exc:
        raise UsageError(f"%%chat: {exc}. {_SEE}") from None
    if unknown:
        raise UsageError(_not_an_option(unknown[0], parser))
    if options.reasoning and not _REASONING.match(options.reasoning):
        raise UsageError("--reasoning must be full, hidden, truncate:N, progress or static")
    if options.thinking is not None:
        options.thinking = parse_thinking(options.thinking)
    if options.base_url is not None:
        options.base_url = parse_base_url(options.base_url)
    if options.max_cycles is not None and options.max_cycles < 1:
        raise UsageError(f"--max-cycles must be 1 or more, not {options.max_cycles}")
    if options.budget is not None:
        options.budget = parse_budget(options.budget)
    if options.fix is not None:
        parse_fix(options.fix)  # checked now; the magic reads the index with it again
    if options.context is not None:
        try:
            parse_context(options.context)
        except ValueError as exc:
            raise UsageError(f"--context: {exc}") from None
        options.context = options.context.strip().lower()
    try:
        options.builtins = parse_builtins(options.builtins) if options.builtins else None
    except ValueError as exc:
        raise UsageError(f"--builtins: {exc}") from None
    return options


def _not_an_option(word: str, parser: argparse.ArgumentParser) -> str:
    """What is wrong with the first word of the ``%%chat`` line that is no option: a misspelled
    one gets the closest option's name; a bare word is a request written on the wrong line."""
    if not word.startswith("-"):
        return (
            f"%%chat: {word!r} is not an option: the request goes in the cell below the %%chat "
            f"line. {_SEE}"
        )
    name = word.split("=", 1)[0]
    close = difflib.get_close_matches(name, parser._option_string_actions, n=1, cutoff=0.6)
    guess = f": did you mean `{close[0]}`?" if close else "."
    return f"%%chat: no option `{name}`{guess} {_SEE}"


def parse_base_url(value: str) -> str:
    """``--base-url URL``: an http(s) URL with a host (where requests, and a key given for it,
    go)."""
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--base-url must be an http(s) URL, not {shown(value)!r}")
    return value.strip()


def parse_fix(value: str) -> Which:
    """``--fix [N|above]`` and ``%chat fix [N|above]``: the cell whose error to ask about, by
    the execution count Jupyter shows beside it (``19`` for ``[19]``; ``[19]`` is taken too),
    or the cell right above the asking one; None for the last that raised."""
    text = value.strip().lower()
    if text in ("", "last"):
        return None
    if text == ABOVE:
        return "above"
    number = text.removeprefix("[").removesuffix("]").removesuffix(":")
    if not number.isdigit():
        raise UsageError(
            f"--fix takes the number Jupyter shows beside the cell (19 for [19]) or 'above', "
            f"not {value.strip()!r}"
        )
    return int(number)


def parse_thinking(value: str) -> Any:
    value = value.strip().lower()
    if value in ("off", "adaptive"):
        return value
    if value.isdigit():
        return int(value)
    raise UsageError("--thinking must be off, adaptive or a token budget")


def parse_budget(value: str) -> float:
    """``--budget USD``: a positive amount in dollars (``$`` allowed); ``off`` or 0 is none."""
    text = value.strip().lower().lstrip("$")
    if text == "off":
        return 0.0
    try:
        amount = float(text)
    except ValueError:
        amount = -1.0
    if not amount >= 0 or amount == float("inf"):
        raise UsageError(f"--budget must be an amount in USD (e.g. 0.50) or off, not {value!r}")
    return amount
