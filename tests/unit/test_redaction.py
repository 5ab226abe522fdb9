"""Redaction: every token shape, secrets named by the environment, known keys, the user's
credential files and URL passwords; no false positives on code, hashes, UUIDs or image data;
counts; idempotence; and the choke points (provider errors, tool results with their saved
fields and images, the live tool card, attachments) with the notice that says how many were
withheld. Then what cannot be paged around: every cut of a text (pages at any offset, heads,
tails) is cut after its secrets are withheld, and the model's own answer, streamed in pieces
split anywhere, is withheld where it is shown, saved and sent back.

Every token here is made up in the test, shaped like the real thing: none is a real key. The
credential files are written in a temporary home; the user's own are never read.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import os
import random
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from jupyter_turns import Chat, PolicyPrompter, tool
from jupyter_turns import redaction as redaction_module
from jupyter_turns.errors import McpServerError, ProviderError
from jupyter_turns.kernel.keys import api_key
from jupyter_turns.model.content import Attachment, ImageData
from jupyter_turns.model.events import (
    Finished,
    Flush,
    Message,
    MessageDelta,
    Notice,
    Part,
    Reasoning,
    ReasoningDelta,
    ToolCallResponse,
)
from jupyter_turns.model.sink import PrintSink
from jupyter_turns.providers.anthropic_wire import anthropic_messages
from jupyter_turns.providers.scripted import (
    Delay,
    ScriptBlock,
    ScriptedProvider,
    cycle,
    message,
    tool_call,
)
from jupyter_turns.reading import variables as variables_module
from jupyter_turns.reading.attach import cut_head
from jupyter_turns.reading.notebook_tools import page
from jupyter_turns.redaction import (
    REDACTED,
    KeyBlocks,
    RedactedStream,
    head,
    label,
    redact,
    redact_data,
    remember,
    tail,
)
from jupyter_turns.tools import ResponseFields, ToolResult, format_result
from jupyter_turns.tools.output import ToolOutput
from jupyter_turns.widget.renderer import WidgetSink
from tests.support.fake_secrets import ALNUM, fake_key_in_use, fake_pem, fake_tokens, random_chars

from .helpers import page_widget

_RANDOM = random.Random(7)  # for the noise image and random bytes
KEY_IN_USE = fake_key_in_use()
TOKENS = fake_tokens()


class Clock:
    """The credential files' clock: they are looked at again once it moved on."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def later(self) -> None:
        self.now += redaction_module.RECHECK


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, clock: Clock) -> Iterator[None]:
    """No known keys from other tests; the key in use is this module's; an empty home and
    Jupyter data directory (the user's credential files are never read here)."""
    monkeypatch.setattr(redaction_module, "_known", set())
    monkeypatch.setattr(redaction_module, "_watched", {})
    monkeypatch.setattr(redaction_module, "_files", redaction_module._Files(clock))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY_IN_USE)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter-data"))
    yield


# ---------------------------------------------------------------- what is withheld


@pytest.mark.parametrize("name", list(TOKENS))
@pytest.mark.parametrize(
    "template",
    ["before {} after", "x = '{}'", '{{"value": "{}"}}', "{}", "(\n{}\n)", "TOKEN={}"],
)
def test_each_token_shape_is_withheld_and_named(name: str, template: str) -> None:
    token, kind = TOKENS[name]
    text, count = redact(template.format(token))
    assert text == template.format(f"[redacted: {kind}]") and count == 1


def test_a_private_key_in_a_repr_and_one_cut_short_are_withheld() -> None:
    pem = fake_pem()
    shown = repr({"key": pem})  # newlines as \n escapes
    text, count = redact(f"{shown} and more")
    assert "PRIVATE KEY" not in text and count == 1 and text.endswith("} and more")
    body = pem.splitlines()[1]
    cut = "\n".join(pem.splitlines()[:3])  # an output truncated inside the block
    text, count = redact(f"{cut}\n[output truncated]")
    assert body not in text and count == 1 and text.endswith("\n[output truncated]")


def test_an_aws_secret_key_is_withheld_next_to_its_name_and_only_the_value() -> None:
    secret = random_chars(40, ALNUM + "/+")
    for line in (
        f'aws_secret_access_key = "{secret}"',
        f"aws_secret={secret}",
        f"AWS_SECRET_ACCESS_KEY={secret}",
        f"{{'SecretAccessKey': '{secret}'}}",
    ):
        text, count = redact(line)
        assert text == line.replace(secret, "[redacted: AWS secret key]") and count == 1
    assert redact(f"checksum {secret}") == (f"checksum {secret}", 0)  # 40 chars, no context
    key_id = TOKENS["aws id"][0]
    text, count = redact(f"pair = ('{key_id}', '{secret}')")  # next to its key id
    assert text == "pair = ('[redacted: AWS key]', '[redacted: AWS secret key]')" and count == 2


def test_a_private_key_cut_short_does_not_swallow_the_text_up_to_the_next_key() -> None:
    first, second = fake_pem().splitlines(), fake_pem("EC ")
    cut = "\n".join(first[:3])
    text, count = redact(f"{cut}\nprose between, kept\n{second}\nend")
    assert text == "[redacted: private key]\nprose between, kept\n[redacted: private key]\nend"
    assert count == 2


def test_the_key_in_use_and_keys_handed_out_are_withheld_as_api_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    proxy = "proxy-token-not-shaped-like-a-key"
    monkeypatch.setenv("ANTHROPIC_API_KEY", proxy)
    remember("explicit-client-key-0123")
    text, count = redact(f"sent {proxy}, also explicit-client-key-0123")
    assert text == f"sent {REDACTED}, also {REDACTED}" and count == 2
    assert REDACTED == "[redacted: API key]"


def test_a_key_handed_out_stays_withheld_after_the_environment_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    old = "sk-ant-api03-" + random_chars(40)
    monkeypatch.setenv("ANTHROPIC_API_KEY", old)
    assert api_key({}) == old
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY_IN_USE)  # %chat key: a new one
    text, count = redact(f"{old} {KEY_IN_USE}")
    assert text == f"{REDACTED} {REDACTED}" and count == 2


def test_environment_values_with_secret_names_are_withheld_when_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    values = {
        "MY_SERVICE_TOKEN": "plain-value-1234",
        "DB_PASSWORD": "correct horse battery",
        "STRIPE_KEY": "rk_live_abcdefgh",
        "HF_AUTH": "hf_aaaaaaaabbbbbbbb",
        "client_secret": "lowercase-name-too",
    }
    text = " | ".join(values.values())
    assert redact(text) == (text, 0)  # not set yet
    for name, value in values.items():
        monkeypatch.setenv(name, value)  # set later, like %chat key: read at each call
    cleaned, count = redact(text)
    assert count == len(values)
    assert cleaned == " | ".join(f"[redacted: secret in ${name}]" for name in values)


def test_environment_values_that_are_not_secrets_are_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KEYBOARD_LAYOUT", "dvorak-programmer")  # KEY not a word of it
    monkeypatch.setenv("SSH_AUTH_SOCK", "/tmp/ssh-agent.sock")  # a path
    monkeypatch.setenv("API_TOKEN", "short")  # under MIN_SECRET characters
    monkeypatch.setenv("PWD", "/home/ada/work")  # the working directory
    text = "dvorak-programmer /tmp/ssh-agent.sock short /home/ada/work"
    assert redact(text) == (text, 0)


# ---------------------------------------------------------------- what is left alone


def _noise_png() -> str:
    noise = bytes(_RANDOM.getrandbits(8) for _ in range(160 * 160 * 3))
    buffer = io.BytesIO()
    Image.frombytes("RGB", (160, 160), noise).save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def test_no_false_positives_on_code_hashes_uuids_and_image_data() -> None:
    png = _noise_png()
    texts = [
        "The quick brown fox: sklearn, task-runner, desk-ant-lamp, ask-anything-here-now.",
        "def authenticate(token: str, password: str) -> bool:\n    return check(token)\n",
        "api_key = os.environ['OPENAI_API_KEY']  # read, not shown",
        "from sklearn.ensemble import RandomForestClassifier  # sk-learn",
        hashlib.sha256(b"data").hexdigest(),
        hashlib.sha1(b"data").hexdigest() + " " + hashlib.md5(b"x").hexdigest(),
        " ".join(str(uuid.UUID(int=_RANDOM.getrandbits(128))) for _ in range(20)),
        png,
        json.dumps({"image/png": png, "text/plain": "<Figure size 640x480>"}),
        base64.b64encode(bytes(_RANDOM.getrandbits(8) for _ in range(60_000))).decode(),
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
        "AKIA is a prefix; AIza too; ghp_ and xoxb- alone are not tokens; eyJ...",
    ]
    for text in texts:
        assert redact(text) == (text, 0), text[:80]
    image = ImageData(media_type="image/png", data=png)
    assert redact_data({"images": [image]}) == ({"images": [image]}, 0)


def test_counts_add_up_and_redaction_is_idempotent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", "service-token-value")
    tokens = [token for token, _ in TOKENS.values()]
    text = "\n".join([*tokens, KEY_IN_USE, "service-token-value", KEY_IN_USE])
    once, count = redact(text)
    assert count == len(tokens) + 3
    assert all(token not in once for token in tokens) and KEY_IN_USE not in once
    assert redact(once) == (once, 0)
    crafted = f"[redacted: {KEY_IN_USE}] [redacted: {tokens[0]}]"  # not a label made here
    assert redact(crafted) == (
        "[redacted: [redacted: API key]] [redacted: [redacted: Anthropic key]]",
        2,
    )


def test_nested_data_is_redacted_value_by_value() -> None:
    token = TOKENS["github classic"][0]
    data = {"outputs": [{"text": f"x {token}", "n": 3}], "state": ("a", token), "ok": None}
    cleaned, count = redact_data(data)
    assert count == 2 and token not in json.dumps(cleaned)
    assert cleaned["outputs"][0]["n"] == 3 and cleaned["ok"] is None
    assert cleaned["state"] == ("a", "[redacted: GitHub token]")


# ---------------------------------------------------------------- the choke points


def test_errors_are_redacted_when_made() -> None:
    error = ProviderError(f"proxy said: {KEY_IN_USE[:-1]}X and {KEY_IN_USE}")
    assert KEY_IN_USE not in error.message and KEY_IN_USE not in repr(error)
    assert REDACTED in error.message
    token = TOKENS["slack"][0]
    assert token not in str(McpServerError(f"stderr: bad token {token}"))


def test_the_live_card_withholds_secrets_and_a_key_printed_line_by_line() -> None:
    output = ToolOutput(head=3, tail=20)
    token = TOKENS["aws id"][0]
    pem = fake_pem()
    for line in [f"id {token}", *pem.splitlines(), "done", *(f"line {i}" for i in range(10))]:
        output.write("stdout", line + "\n")
    output.line(f"progress with {KEY_IN_USE}")
    shown = "\n".join(output.snapshot().lines())
    assert token not in shown and KEY_IN_USE not in shown
    assert all(line not in shown for line in pem.splitlines()[1:-1])
    assert "[redacted: AWS key]" in shown and "done" in shown and "line 9" in shown
    blocks = KeyBlocks()
    lines = ["a", pem.splitlines()[0], "MIIB", "-----END RSA PRIVATE KEY-----b", "c"]
    assert [blocks.line(x) for x in lines] == [
        "a",
        pem.splitlines()[0],  # the BEGIN line: redact() withholds it
        label("private key"),
        label("private key") + "b",
        "c",
    ]


async def test_tool_results_saved_fields_and_notice_withhold_secrets_images_kept() -> None:
    png = _noise_png()
    token, jwt = TOKENS["github classic"][0], TOKENS["jwt"][0]

    @tool(run="unattended")
    def leak() -> ToolResult:
        """Print a token and return another, with an image."""
        print(f"printed {jwt}")
        image = ImageData(media_type="image/png", data=png)
        return ToolResult(f"token={token}", [image], ResponseFields(outputs=[{"text": jwt}]))

    @tool(run="unattended")
    def quiet() -> str:
        """Nothing secret."""
        return "plain"

    calls = cycle(tool_call("leak", call_id="c1"), tool_call("quiet", call_id="c2"))
    provider = ScriptedProvider([calls, cycle(message("ok"))])
    chat = Chat(provider=provider, tools=[leak, quiet], prompter=PolicyPrompter("allow"))
    turn = await chat.send("go")
    leaked, plain = [e for e in turn.events if isinstance(e, ToolCallResponse)]
    assert leaked.content == "token=[redacted: GitHub token]" and plain.content == "plain"
    assert leaked.outputs == [{"text": "[redacted: JWT]"}]
    assert [image.data for image in leaked.images] == [png]  # not corrupted
    sent = json.dumps([e.model_dump() for e in provider.requests[1].events], default=str)
    assert token not in sent and jwt not in sent
    notices = [e for e in turn.events if isinstance(e, Notice) and e.data and "redacted" in e.data]
    [notice] = notices  # once for the batch of calls
    assert notice.data == {"redacted": 1, "in": {"leak": 1}}  # what the model would have read
    assert notice.text.startswith("1 secret withheld from tool results (leak 1)")
    assert token not in json.dumps(chat.conversation.to_record())


async def test_attachments_are_redacted_before_they_are_recorded_or_sent() -> None:
    token = TOKENS["google"][0]
    provider = ScriptedProvider([cycle(message("ok"))])
    chat = Chat(provider=provider)
    attachment = Attachment(label="@config", text=f"@config:\n{{'maps': '{token}'}}")
    turn = await chat.send("look at @config", [attachment])
    request = turn.events[0]
    assert request.attachments[0].text == "@config:\n{'maps': '[redacted: Google API key]'}"
    [notice] = [e for e in turn.events if isinstance(e, Notice)]
    assert notice.data == {"redacted": 1, "in": {"@config": 1}}
    assert token not in json.dumps(chat.conversation.to_record())
    assert token not in json.dumps([e.model_dump() for e in provider.requests[0].events])


# ---------------------------------------------------------------- credential files


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_secrets_of_credential_files_are_withheld_and_named_by_their_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    aws_secret = random_chars(40, ALNUM + "/+")
    docker = base64.b64encode(b"ada:docker-pass-9012").decode()
    jupyter = base64.b64encode(bytes(range(64))).decode()
    _write(home / ".netrc", "machine api.example.com\n  login ada\n  password netrc-pass-1234\n")
    _write(home / ".pgpass", "db.example.com:5432:*:ada:pg\\:pass-5678\n# a comment:a:b:c:d\n")
    _write(
        home / ".aws" / "credentials",
        f"[default]\naws_secret_access_key = {aws_secret}\naws_session_token = session-tok-42\n"
        "region = eu-west-1\n",
    )
    _write(
        home / ".docker" / "config.json",
        json.dumps({"auths": {"ghcr.io": {"auth": docker}}, "credsStore": "desktop"}),
    )
    _write(
        home / ".config" / "gcloud" / "application_default_credentials.json",
        json.dumps(
            {
                "client_id": "1234.apps.googleusercontent.com",
                "client_secret": "gcloud-secret-3456",
                "refresh_token": "1//refresh-token-7890",
                "type": "authorized_user",
            }
        ),
    )
    _write(tmp_path / "jupyter-data" / "jupyter_turns_secret", jupyter + "\n")
    dotenv = _write(tmp_path / "project" / ".env", 'DB_PASSWORD="dotenv-pass-1234"\nDEBUG=on\n')
    redaction_module.watch(dotenv)
    secrets = {
        "netrc-pass-1234": "~/.netrc",
        "pg:pass-5678": "~/.pgpass",
        aws_secret: "~/.aws/credentials",
        "session-tok-42": "~/.aws/credentials",
        docker: "~/.docker/config.json",
        "docker-pass-9012": "~/.docker/config.json",
        "gcloud-secret-3456": "gcloud credentials",
        "1//refresh-token-7890": "gcloud credentials",
        jupyter: "jupyter_turns_secret",
        "dotenv-pass-1234": "$DB_PASSWORD",
    }
    kept = "eu-west-1 desktop 1234.apps.googleusercontent.com authorized_user ada on"
    text = " | ".join([*secrets, kept])
    cleaned, count = redact(text)
    assert count == len(secrets)
    assert cleaned == " | ".join([*(f"[redacted: secret in {w}]" for w in secrets.values()), kept])


def test_a_credential_file_is_read_again_when_it_changes_and_not_on_every_call(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    netrc = _write(tmp_path / "home" / ".netrc", "machine a login b password first-pass-1\n")
    assert redact("first-pass-1").text == "[redacted: secret in ~/.netrc]"
    opened: list[Path] = []
    read_text = Path.read_text

    def counted(path: Path, *args: object, **kwargs: object) -> str:
        opened.append(path)
        return read_text(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", counted)
    netrc.write_text("machine a login b password second-pass-2\n")
    os.utime(netrc, ns=(1, 10**18))  # a later modification time, whatever the clock's grain
    for _ in range(100):  # within RECHECK seconds: what was read is used, nothing is looked at
        assert redact("second-pass-2").text == "second-pass-2"
    assert opened == []
    clock.later()
    assert redact("first-pass-1 second-pass-2").text == (
        "first-pass-1 [redacted: secret in ~/.netrc]"
    )
    assert opened == [netrc]  # read once, on the first call after the change
    clock.later()
    redact("again")
    assert opened == [netrc]  # unchanged: a stat, no read
    netrc.unlink()
    clock.later()
    assert redact("second-pass-2").text == "second-pass-2"  # gone, forgotten


def test_short_values_and_paths_in_credential_files_are_not_withheld(tmp_path: Path) -> None:
    _write(tmp_path / "home" / ".pgpass", "h:1:d:u:short\nh:1:d:u:/etc/pass/file\n")
    text = "short /etc/pass/file"
    assert redact(text) == (text, 0)


# ---------------------------------------------------------------- passwords in URLs


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgres://ada:S3cr3t-pw@db.example.com:5432/app",
            "postgres://ada:[redacted: password in URL]@db.example.com:5432/app",
        ),
        ("redis://:hunter2@cache:6379/0", "redis://:[redacted: password in URL]@cache:6379/0"),
        # the password runs up to the last "@" of the host part
        ("mysql://u:p@ss@host/db", "mysql://u:[redacted: password in URL]@host/db"),
        (
            "DATABASE_URL=postgres://user:PASSWORD@host/db\0HOME=/root\0",  # /proc/self/environ
            "DATABASE_URL=postgres://user:[redacted: password in URL]@host/db\0HOME=/root\0",
        ),
        (
            "engine = create_engine('postgresql+psycopg://app:pw%40x@localhost')",
            "engine = create_engine('postgresql+psycopg://app:[redacted: password in URL]"
            "@localhost')",
        ),
    ],
)
def test_the_password_of_a_url_is_withheld_and_the_rest_kept(url: str, shown: str) -> None:
    assert redact(url) == (shown, 1)


@pytest.mark.parametrize(
    "text",
    [
        "https://example.com:8080/path@v2",
        "ssh://git@github.com:22/org/repo.git",
        "http://[::1]:8888/lab",
        "mailto:ada@example.com and user:pass@host without a scheme",
        "https://ada@example.com/ (a user, no password)",
        # placeholders in code and templates, not passwords
        'f"postgres://{user}:{password}@{host}/{db}"',
        "redis://:${REDIS_PASSWORD}@cache:6379 and mysql://u:$PW@db",
        "'mysql://%s:%s@%s/%s' % args, 'pg://%(user)s:%(pw)s@h'",
        "https://user:<password>@host and https://user:****@host",
    ],
)
def test_urls_without_a_password_are_left_alone(text: str) -> None:
    assert redact(text) == (text, 0)


def test_a_crafted_label_cannot_carry_an_environment_secret_past(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    value = "abc_" + random_chars(20)  # characters an environment variable's name may have
    monkeypatch.setenv("DB_TOKEN", value)
    crafted = f"[redacted: secret in ${value}]"
    assert redact(crafted) == ("[redacted: secret in $[redacted: secret in $DB_TOKEN]]", 1)
    assert redact("[redacted: secret in $DB_TOKEN]") == ("[redacted: secret in $DB_TOKEN]", 0)


# ---------------------------------------------------------------- where a scan starts


def _everywhere(text: str) -> str:
    """The reference: the same pattern tried at every position of ``text``."""
    state = redaction_module._state()
    return state.pattern.sub(lambda m: redaction_module._replacement(m, state)[0], text)


_PIECES = [
    *(token for token, _ in TOKENS.values()),
    KEY_IN_USE,
    "postgres://ada:hunter2hunter2@db/x",
    "redis://:p@ss@h:5/",
    "aws_secret_access_key = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789/+ab'",
    "AKIAABCDEFGHIJKLMNOP AbCdEfGhIjKlMnOpQrStUvWxYz0123456789/+ab",
    "[redacted: API key]",
    "[redacted: secret in $NOT_SET]",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
]
# the fixtures set the environment and an empty home once for all of a test's examples
_ONCE = HealthCheck.function_scoped_fixture
_NOISE = "abcxyzAKISgh_p-:/@\n='[]eyJ.AIza0123456789 "


@st.composite
def _texts(draw: st.DrawFn) -> str:
    """Secrets, their beginnings and ends, and characters that begin and end them, mixed."""
    parts = []
    for _ in range(draw(st.integers(0, 6))):
        piece = draw(st.sampled_from(_PIECES))
        start = draw(st.integers(0, len(piece)))
        parts.append(
            draw(
                st.one_of(
                    st.just(piece),
                    st.just(piece[:start]),
                    st.just(piece[start:]),
                    st.text(_NOISE, max_size=12),
                )
            )
        )
    return "".join(parts)


@settings(max_examples=400, deadline=None, suppress_health_check=[_ONCE])
@given(_texts())
def test_the_scan_from_where_secrets_begin_finds_what_a_scan_of_every_position_finds(
    text: str,
) -> None:
    assert redact(text).text == _everywhere(text)


# ---------------------------------------------------------------- no page shows a part


DB_PASSWORD = "db-" + random_chars(24)
URL_PASSWORD = random_chars(20)
# (what comes before the unique part, the unique part, what comes after): the key in use,
# a value secret by its name, a token shape, a key pair by its context, a URL's password
PLANTED = [
    ("sk-ant-api03-", KEY_IN_USE.removeprefix("sk-ant-api03-"), ""),
    ("", DB_PASSWORD, ""),
    ("ghp_", random_chars(36), ""),
    ("AKIA", random_chars(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"), ""),
    ("postgres://ada:", URL_PASSWORD, "@db/app"),
]


def _grams(text: str, size: int = 4) -> set[str]:
    return {text[i : i + size] for i in range(len(text) - size + 1)}


@st.composite
def _planted(draw: st.DrawFn) -> tuple[str, set[str]]:
    """A text with the planted secrets among arbitrary text; the 4-character pieces of the
    secrets' unique parts that nothing else in it holds."""
    alphabet = ALNUM + " \n.:=/'\"-_[]"
    fillers = [draw(st.text(alphabet, max_size=40)) for _ in range(len(PLANTED) + 1)]
    order = draw(st.permutations(PLANTED))
    pieces = [fillers[0]]
    for (before, unique, after), filler in zip(order, fillers[1:], strict=True):
        pieces += [" ", before, unique, after, " ", filler]
    text = "".join(pieces)
    known = "".join(fillers) + " ".join(label(k) for k in ("API key", "secret in $DB_PASSWORD"))
    known += " ".join(label(k) for k in ("GitHub token", "AWS key", "password in URL"))
    secret = set().union(*(_grams(unique) for _, unique, _ in PLANTED)) - _grams(known)
    return text, secret


def _shows(text: str, secret: set[str]) -> set[str]:
    """The pieces of ``secret`` (all of one size) that ``text`` holds."""
    size = len(next(iter(secret), ""))
    return {gram for gram in _grams(text, size) if gram in secret} if size else set()


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DB_PASSWORD", DB_PASSWORD)


@settings(max_examples=150, deadline=None, suppress_health_check=[_ONCE])
@given(_planted(), st.integers(0, 400), st.integers(1, 60))
def test_no_page_of_a_text_shows_four_characters_of_a_secret_at_any_offset(
    planted: None, case: tuple[str, set[str]], offset: int, size: int
) -> None:
    """What ``cell_output`` sends for any offset and page size (the page, then the tool
    response's own redaction), and every other cut of a text the model reads."""
    text, secret = case
    piece, note = page(text, offset, size, lambda at: f"cell_output(1, offset={at})")
    assert _shows(redact(piece).text, secret) == set()
    assert _shows(note, secret) == set()
    for cut in (
        head(text, size),
        tail(text, size),
        format_result(text, size),
        cut_head(text, size),
        variables_module._clip(text, size + 60),
        variables_module._short(text, size),
    ):
        assert _shows(redact(cut).text, secret) == set(), cut


def test_paging_through_a_text_reads_its_labels_whole_and_offsets_count_the_redacted_text(
    planted: None,
) -> None:
    text = f"{'x' * 30}{KEY_IN_USE}{'y' * 30} {DB_PASSWORD} end"
    whole = f"{'x' * 30}[redacted: API key]{'y' * 30} [redacted: secret in $DB_PASSWORD] end"
    read, offset = "", 0
    while True:
        piece, note = page(text, offset, 7, lambda at: f"more({at})")
        read += piece
        if not note.endswith(")]"):
            break
        offset = int(note.rsplit("more(", 1)[1][:-2])
    assert read == whole  # every label whole in some page, never a character of a secret


# ---------------------------------------------------------------- text that arrives in pieces


def _streamed(pieces: list[str]) -> tuple[list[str], int]:
    stream = RedactedStream()
    shown = [stream.feed(piece) for piece in pieces]
    return [*shown, stream.end()], stream.found


@pytest.mark.parametrize("piece", _PIECES)
def test_a_secret_streamed_in_two_pieces_split_anywhere_is_withheld_as_whole(
    piece: str, planted: None
) -> None:
    text = f"It is {piece} — there."
    whole = redact(text)
    for cut in range(len(text) + 1):
        shown, found = _streamed([text[:cut], text[cut:]])
        assert "".join(shown) == whole.text and found == whole.found, cut
    shown, found = _streamed(list(text))  # one character at a time
    assert "".join(shown) == whole.text and found == whole.found


@settings(max_examples=300, deadline=None, suppress_health_check=[_ONCE])
@given(_texts(), st.lists(st.integers(0, 200), max_size=8))
def test_a_stream_split_anywhere_shows_what_redacting_the_whole_text_shows(
    text: str, cuts: list[int]
) -> None:
    bounds = sorted({min(c, len(text)) for c in cuts})
    pieces = [text[a:b] for a, b in zip([0, *bounds], [*bounds, len(text)], strict=True)]
    shown, found = _streamed(pieces)
    assert "".join(shown) == redact(text).text and found == redact(text).found


def test_a_stream_holds_back_only_a_tail_that_may_still_become_a_secret() -> None:
    stream = RedactedStream()
    assert stream.feed("Plain prose, nothing secret here.") == "Plain prose, nothing secret here."
    assert stream.feed(" The key is sk") == " The key is "  # "sk" may begin a key
    assert stream.feed("etched on paper") == "sketched on paper"  # it did not
    assert stream.feed(" and postgres://ada:hun") == " and postgres"  # a URL's password
    assert stream.feed("ter2@db/app.") == "://ada:[redacted: password in URL]@db/app."
    assert stream.feed(f" {KEY_IN_USE[:20]}") == " "  # the beginning of the key in use
    assert stream.feed(KEY_IN_USE[20:]) == ""  # whole now, but a longer token may follow
    assert stream.feed(" done") == f"{REDACTED} don"  # "e" may begin a JWT (eyJ…)
    assert stream.end() == "e" and stream.found == 2


# ---------------------------------------------------------------- what the model says


async def _loop_turns(_seconds: float) -> None:
    """The scripted stream's pause: the loop turns (the sink's flush, due at once, runs), no
    time passes."""
    for _ in range(3):
        await asyncio.sleep(0)


async def test_an_answer_that_reassembles_the_key_is_withheld_shown_saved_and_sent_back(
    planted: None,
) -> None:
    """The model read the key in two pages and writes it back whole, split across deltas at
    every position, in its reasoning and its answer: neither what the sink sends to the page
    (a flush after every piece), nor the events, nor the saved record, nor the next request
    holds any six characters of it."""
    key = KEY_IN_USE
    # six characters: four of a random key also turn up by chance in what is checked here, the
    # JSON of events (hex ids, timestamps) and their words (seen once: '08c4' in an id)
    secret = _grams(key[len("sk-ant-api03-") :], 6)
    for cut in range(1, len(key)):
        widget, comm = page_widget()
        sink = WidgetSink(widget, max_rate=1e9)  # no coalescing: a flush after every piece
        script = [
            Part(0, ReasoningDelta(f"Joining {key[:cut]}")),
            Delay(0),
            Part(0, ReasoningDelta(f"{key[cut:]} from both pages.")),
            Flush(0, {"signature": "signed-by-the-api"}),
            Part(1, MessageDelta(f"The key is {key[:cut]}")),
            Delay(0),
            Part(1, MessageDelta(f"{key[cut:]}.")),
            Flush(1),
            Finished("end_turn"),
        ]
        provider = ScriptedProvider([script, cycle(message("ok"))], sleep=_loop_turns)
        chat = Chat(provider=provider, sink=sink)
        turn = await chat.send("join the pages")
        await chat.send("and now?")
        sink.flush()
        deltas = [m for m in comm.custom("delta") for part in m["parts"] if part[0] == 1]
        assert len(deltas) >= 2, "the answer reached the page in pieces"
        thought, answer = [e for e in turn.events if isinstance(e, Reasoning | Message)]
        assert answer.content == f"The key is {REDACTED}."
        assert thought.content == f"Joining {REDACTED} from both pages."
        # not the text that was signed: kept without its signature, never sent back
        assert thought.metadata["redacted"] == 1 and "signature" not in thought.metadata
        shown = json.dumps(comm.sent, ensure_ascii=False)
        saved = json.dumps(chat.conversation.to_record(), ensure_ascii=False)
        sent = json.dumps(anthropic_messages(provider.requests[1].events), ensure_ascii=False)
        for where in (shown, saved, sent):
            assert _shows(where, secret) == set(), cut
        assert f"The key is {REDACTED}." in sent and "thinking" not in sent


async def test_the_notice_counts_the_labels_a_tool_redacted_whole_before_cutting(
    planted: None,
) -> None:
    text = f"{'x' * 20} {KEY_IN_USE} {DB_PASSWORD} {'y' * 20}"

    @tool(run="unattended")
    def pages(offset: int) -> str:
        """A page of a text with secrets."""
        return page(text, offset, 40, lambda at: f"pages({at})")[0]

    calls = cycle(tool_call("pages", {"offset": 15}, call_id="c1"))
    provider = ScriptedProvider([calls, cycle(message("ok"))])
    turn = await Chat(provider=provider, tools=[pages]).send("read")
    [response] = [e for e in turn.events if isinstance(e, ToolCallResponse)]
    assert response.content == f"xxxxx {REDACTED} [redacted: secret in $DB_PAS"[:40]
    [notice] = [e for e in turn.events if isinstance(e, Notice) and e.data]
    assert notice.data == {"redacted": 1, "in": {"pages": 1}}  # the whole label the page shows


async def test_the_terminal_sink_prints_an_answer_rebuilding_the_key_withheld() -> None:
    out = io.StringIO()
    pieces = ["The key is ", *KEY_IN_USE, "."]  # one character per delta
    script = cycle(ScriptBlock(tuple(MessageDelta(p) for p in pieces)))
    await Chat(provider=ScriptedProvider([script]), sink=PrintSink(out)).send("join them")
    printed = out.getvalue()
    assert f"The key is {REDACTED}." in printed
    assert _shows(printed, _grams(KEY_IN_USE.removeprefix("sk-ant-api03-"))) == set()
