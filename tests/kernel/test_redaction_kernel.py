"""Secrets in notebook data never leave with it, in a real kernel against the local API server.

The attack: the key in use is in the environment and a cell prints ``dict(os.environ)``; other
cells hold an Anthropic admin key, OpenAI keys, an AWS key pair, GitHub, Slack and Google
tokens, a JWT and private keys in variables; the environment has a ``…_TOKEN`` and a
``DATABASE_URL`` with a password (no token shape, not secret by name); the user's home has a
``~/.netrc`` and a ``~/.pgpass`` that cells print, a cell prints ``/proc/self/environ`` and a
``CLAUDE.md`` next to the notebook links to it. The request attaches ``@creds`` and the model
(the server's scripted reply) reads everything it can: ``cell_output`` of the printing cells,
``variables``, ``inspect``, ``notebook_cells`` and a ``python`` call the user allowed. Every
request body the server received and the chat cell's saved record are scanned: none of the
secrets is there, the ``[redacted: …]`` labels are, and a notice says how many were withheld —
exactly as many as the labels in the record.

Then paging around a withheld value: with pages of 12 characters the model reads a printed
line of secrets at every offset, then writes the key back whole, one character per streamed
delta; a later turn sends that answer back. No request and no saved byte holds six characters
of any secret, every page is the redacted text's own slice at that offset, and the saved answer
says ``[redacted: API key]``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from tests.support.anthropic_server import AnthropicTestServer, Reply
from tests.support.anthropic_sse import ToolUse, sse_message, sse_text_response
from tests.support.fake_secrets import ALNUM, fake_key_in_use, fake_tokens, random_chars
from tests.support.kernels import cell_record, execute_notebook

pytestmark = pytest.mark.kernel

KEY = fake_key_in_use()
TOKENS = {name: token for name, (token, _) in fake_tokens().items()}
AWS_SECRET = random_chars(40, ALNUM + "/+")
ENV_TOKEN = "svc-" + random_chars(28)  # the value of MY_SERVICE_TOKEN: no known shape
DB_PASSWORD = "db-" + random_chars(24)  # the value of DB_PASSWORD: secret by its name
URL_PASSWORD = random_chars(22)  # in DATABASE_URL: no shape, no secret name, but in a URL
DATABASE_URL = f"postgres://app:{URL_PASSWORD}@db.example.com:5432/app"
NETRC_PASSWORD = "netrc-" + random_chars(20)  # in ~/.netrc
PGPASS_PASSWORD = "pg-" + random_chars(20)  # in ~/.pgpass
VARIABLES = {name.replace(" ", "_").replace("-", "_"): token for name, token in TOKENS.items()}
VARIABLES["aws_secret_access_key"] = AWS_SECRET
PLANTED = [KEY, ENV_TOKEN, URL_PASSWORD, NETRC_PASSWORD, PGPASS_PASSWORD, *VARIABLES.values()]


def _planted_cell() -> str:
    lines = [f"{name} = {token!r}" for name, token in VARIABLES.items()]
    lines.append(f"creds = {{{', '.join(f'{n!r}: {n}' for n in VARIABLES)}}}")
    return "\n".join(lines)


CELLS = [
    "%load_ext jupyter_turns",  # In[1]
    _planted_cell(),  # In[2]
    "import os\nprint(dict(os.environ))",  # In[3]
    # the model reads the printing cells' outputs whole, however long this machine's env is
    "%chat allow python\n%config ChatMagics.output_chars = 1_000_000",  # In[4]
    "home = os.path.expanduser('~')\n"  # In[5]
    "print(open(f'{home}/.netrc').read(), open(f'{home}/.pgpass').read())",
    "print(open('/proc/self/environ').read())",  # In[6]
    "%%chat --provider anthropic --model claude-haiku-4-5 --builtins python\n"
    "What do @creds and my cells hold?",
]
PYTHON = (
    "import os\nprint(os.environ['ANTHROPIC_API_KEY'])\nprint(rsa_private_key)\n"
    "found = [github_classic, slack, (aws_id, aws_secret_access_key)]\nfound"
)
CALLS = [
    ToolUse("cell_output", {"index": 3}, id="toolu_env"),
    ToolUse("cell_output", {"index": 5}, id="toolu_files"),
    ToolUse("cell_output", {"index": 6}, id="toolu_proc"),
    ToolUse("variables", {}, id="toolu_vars"),
    ToolUse("inspect", {"name": "creds"}, id="toolu_creds"),
    ToolUse("inspect", {"name": "openssh_private_key"}, id="toolu_pem"),
    ToolUse("notebook_cells", {}, id="toolu_cells"),
    ToolUse("python", {"code": PYTHON}, id="toolu_python"),
]


def _run(
    tmp_path: Path, server: AnthropicTestServer, cells: list[str] = CELLS
) -> nbformat.NotebookNode:
    """``cells`` run in a new kernel whose home holds a ``~/.netrc`` and a ``~/.pgpass``,
    next to a ``CLAUDE.md`` that links to ``/proc/self/environ``."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".netrc").write_text(f"machine db.example.com login app password {NETRC_PASSWORD}\n")
    (home / ".pgpass").write_text(f"db.example.com:5432:app:app:{PGPASS_PASSWORD}\n")
    (tmp_path / "CLAUDE.md").symlink_to("/proc/self/environ")
    notebook = new_notebook(cells=[new_code_cell(source) for source in cells])
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(
        ANTHROPIC_API_KEY=KEY,
        ANTHROPIC_BASE_URL=server.url,
        MY_SERVICE_TOKEN=ENV_TOKEN,
        DB_PASSWORD=DB_PASSWORD,
        DATABASE_URL=DATABASE_URL,
        HOME=str(home),
        JUPYTER_DATA_DIR=str(tmp_path / "jupyter-data"),
    )
    return execute_notebook(notebook, cwd=tmp_path, env=env, timeout=180)


def _leaked(text: str) -> list[str]:
    """The planted secrets found in ``text``, and any line of a private key's body."""
    found = [secret[:16] for secret in PLANTED if secret in text]
    for name in ("rsa_private_key", "openssh_private_key", "pkcs8_private_key"):
        body = VARIABLES[name].splitlines()[1:-1]
        found += [f"{name} line" for line in body if line in text]
    return found


def _labels(value: Any) -> int:
    return json.dumps(value, ensure_ascii=False).count("[redacted: ")


def test_no_secret_in_notebook_data_reaches_the_model_or_the_saved_record(
    tmp_path: Path,
) -> None:
    with AnthropicTestServer() as server:
        server.enqueue(
            Reply.sse(sse_message(CALLS, stop_reason="tool_use")),
            Reply.sse(sse_text_response(["Nothing I can repeat."])),
        )
        notebook = _run(tmp_path, server)
        requests = list(server.requests)
    assert len(requests) == 2 and all(KEY in json.dumps(r.headers) for r in requests)  # in use
    printed = notebook.cells[2].outputs[0]["text"]
    assert KEY in printed and ENV_TOKEN in printed  # the attack cells did print them
    assert NETRC_PASSWORD in notebook.cells[4].outputs[0]["text"]
    assert URL_PASSWORD in notebook.cells[5].outputs[0]["text"]

    bodies = json.dumps([r.body for r in requests], ensure_ascii=False)
    assert _leaked(bodies) == []
    chat_cell = notebook.cells[-1]
    path = tmp_path / "saved.ipynb"
    nbformat.write(notebook, path)
    saved = json.loads(path.read_text())
    kept = json.dumps([saved["metadata"], saved["cells"][-1]], ensure_ascii=False)
    assert _leaked(kept) == []

    # what the model was sent instead: labels naming each kind
    for kind in (
        "API key",
        "secret in $MY_SERVICE_TOKEN",
        "Anthropic key",
        "OpenAI key",
        "AWS key",
        "AWS secret key",
        "GitHub token",
        "Slack token",
        "Google API key",
        "JWT",
        "private key",
        "secret in ~/.netrc",
        "secret in ~/.pgpass",
        "password in URL",
    ):
        assert f"[redacted: {kind}]" in bodies, kind
    results = {
        b["tool_use_id"]: b
        for b in requests[1].body["messages"][-1]["content"]
        if b["type"] == "tool_result"
    }
    assert set(results) == {call.id for call in CALLS}
    assert all(not result["is_error"] for result in results.values()), results
    assert "[redacted: API key]" in json.dumps(results["toolu_python"])  # it ran, redacted

    # the notices say how many: as many as the labels in what the model was sent
    record = cell_record(chat_cell)
    events = record["events"]
    notices = [e for e in events if e["kind"] == "notice" and (e.get("data") or {}).get("redacted")]
    assert len(notices) == 2, notices  # once for the attachments, once for the tool calls
    attached, tools = notices
    count = _labels(list(results.values()))
    assert tools["data"]["redacted"] == count > 30
    assert tools["text"].startswith(f"{count} secrets withheld from tool results (cell_output ")
    assert set(tools["data"]["in"]) == {
        "cell_output",
        "variables",
        "inspect",
        "notebook_cells",
        "python",
    }
    [attachment] = events[0]["attachments"]
    count = _labels(attachment)
    assert attachment["label"] == "@creds" and count >= 10
    assert attached["data"] == {"redacted": count, "in": {"@creds": count}}


# ---------------------------------------------------------------- paging around a withheld value

PAGE = 12  # characters per cell_output page
LINE = [
    "import os",
    "pg = open(os.path.expanduser('~/.pgpass')).read().rsplit(':', 1)[1].strip()",
    "env = os.environ",
    "print('x' * 20, env['ANTHROPIC_API_KEY'], env['DB_PASSWORD'], pg,",
    "      env['DATABASE_URL'], 'y' * 20)",
]
SHOWN = (  # what cell_output reads of it: the output redacted whole
    "--- output 1 (stdout) ---\n"
    + " ".join(
        [
            "x" * 20,
            "[redacted: API key]",
            "[redacted: secret in $DB_PASSWORD]",
            "[redacted: secret in ~/.pgpass]",
            "postgres://app:[redacted: password in URL]@db.example.com:5432/app",
            "y" * 20,
        ]
    )
    + "\n"
)
CHAT = "%%chat --provider anthropic --model claude-haiku-4-5\n"


def _pieces(secret: str, size: int = 6) -> set[str]:
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


def test_no_offset_pages_into_a_withheld_value_and_an_answer_that_rebuilds_the_key_is_withheld(
    tmp_path: Path,
) -> None:
    cells = [
        "%load_ext jupyter_turns",  # In[1]
        "\n".join(LINE),  # In[2]
        f"%config ChatMagics.output_chars = {PAGE}",  # In[3]
        CHAT + "Read In[2] page by page.",
        CHAT + "And now?",
    ]
    pages = [
        ToolUse("cell_output", {"index": 2, "offset": at}, id=f"toolu_at_{at}", pieces=1)
        for at in range(len(SHOWN))
    ]
    rebuilt = ["The key is ", *KEY, "."]  # the key back whole, one character per delta
    with AnthropicTestServer() as server:
        server.enqueue(
            Reply.sse(sse_message(pages, stop_reason="tool_use")),
            Reply.sse(sse_text_response(rebuilt)),
            Reply.sse(sse_text_response(["Nothing more."])),
        )
        notebook = _run(tmp_path, server, cells)
        requests = list(server.requests)
    assert len(requests) == 3
    assert KEY in notebook.cells[1].outputs[0]["text"]  # the cell did print it

    path = tmp_path / "saved.ipynb"
    nbformat.write(notebook, path)
    saved = json.loads(path.read_text())
    # the printing cell's own output stays the user's, as Jupyter saves it; the rest is ours
    kept = json.dumps([saved["metadata"], saved["cells"][3:]], ensure_ascii=False)
    bodies = json.dumps([r.body for r in requests], ensure_ascii=False)
    unique = [KEY[len("sk-ant-api03-") :], DB_PASSWORD, PGPASS_PASSWORD, URL_PASSWORD]
    for where, text in (("requests", bodies), ("the chat cells and metadata", kept)):
        shown = {piece for secret in unique for piece in _pieces(secret) if piece in text}
        assert shown == set(), where

    results = {
        b["tool_use_id"]: b["content"]
        for b in requests[1].body["messages"][-1]["content"]
        if b["type"] == "tool_result"
    }
    for at in range(len(SHOWN)):  # every page is the redacted text's own, at that offset
        assert SHOWN[at : at + PAGE] in str(results[f"toolu_at_{at}"]), at

    answer = cell_record(notebook.cells[3])["events"]
    [message] = [e for e in answer if e["kind"] == "message"]
    assert message["content"] == "The key is [redacted: API key]."
    assert "The key is [redacted: API key]." in json.dumps(requests[2].body)  # sent back so
