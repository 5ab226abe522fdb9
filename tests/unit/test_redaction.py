"""Redaction: every token shape, secrets named by the environment, known keys; no false
positives on code, hashes, UUIDs or image data; counts; idempotence; and the choke points
(provider errors, tool results with their saved fields and images, the live tool card,
attachments) with the notice that says how many were withheld.

Every token here is made up in the test, shaped like the real thing: none is a real key.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import random
import uuid
from collections.abc import Iterator

import pytest
from PIL import Image

from jupyter_turns import Chat, PolicyPrompter, tool
from jupyter_turns import redaction as redaction_module
from jupyter_turns.errors import McpServerError, ProviderError
from jupyter_turns.kernel.keys import api_key
from jupyter_turns.model.content import Attachment, ImageData
from jupyter_turns.model.events import Notice, ToolCallResponse
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call
from jupyter_turns.redaction import REDACTED, KeyBlocks, label, redact, redact_data, remember
from jupyter_turns.tools import ResponseFields, ToolResult
from jupyter_turns.tools.output import ToolOutput
from tests.support.fake_secrets import ALNUM, fake_key_in_use, fake_pem, fake_tokens, random_chars

_RANDOM = random.Random(7)  # for the noise image and random bytes
KEY_IN_USE = fake_key_in_use()
TOKENS = fake_tokens()


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No known keys from other tests; the key in use is this module's."""
    monkeypatch.setattr(redaction_module, "_known", set())
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY_IN_USE)
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
