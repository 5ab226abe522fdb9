"""BedrockProvider and VertexProvider through the real SDK cloud clients against the local server.

The Bedrock client signs every request with SigV4 from fake AWS credentials in the environment
(the config files point at empty files: nothing real is read) and decodes the AWS event stream
the server frames; the Vertex client sends a fake, unexpired OAuth token (nothing is refreshed)
and parses the Anthropic event stream. No request leaves 127.0.0.1: each test counts the
requests the server saw.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import google.oauth2.credentials
import pytest
from botocore.eventstream import ChecksumMismatch, EventStreamBuffer

from jupyter_turns import Chat, tool
from jupyter_turns.errors import ProviderConfigError
from jupyter_turns.model.events import ChatRequest, ErrorEvent, Reasoning
from jupyter_turns.providers import catalog, endpoints
from jupyter_turns.providers.anthropic import MessagesProvider
from jupyter_turns.providers.anthropic_cloud import (
    BEDROCK_MODEL,
    VERTEX_MODEL,
    BedrockProvider,
    VertexProvider,
)
from jupyter_turns.providers.base import Request
from jupyter_turns.providers.catalog import ProviderChoice
from jupyter_turns.providers.models import model_info
from jupyter_turns.redaction import redact
from tests.support.anthropic_json import message_from_sse
from tests.support.anthropic_replies import Reply, load_recording, recording_path
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.anthropic_sse import sse_text_response
from tests.support.cloud_credentials import GOOGLE_REGION, google_env
from tests.support.cloud_replies import (
    bedrock_error,
    bedrock_frames,
    bedrock_json,
    bedrock_path,
    bedrock_stream,
    eventstream_message,
    sse_data,
    vertex_path,
)

from .conftest import FakeClock

BEDROCK_ID = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
VERTEX_ID = "claude-haiku-4-5@20251001"
PROJECT, REGION = "test-project", "us-east5"
ACCESS_KEY, SECRET_KEY = "AKIDTESTONLY0000", "fake-secret-not-real"
TOKEN = "fake-vertex-token"


@pytest.fixture
def server() -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer() as server:
        yield server


@pytest.fixture(autouse=True)
def cloud_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fake AWS credentials, empty AWS config files, no instance metadata; Google's default
    credentials point at a missing file (found nowhere, asked of no server)."""
    import os

    for name in list(os.environ):
        if name.startswith(("AWS_", "ANTHROPIC_", "GOOGLE_", "CLOUD_ML_", "CLOUDSDK_")):
            monkeypatch.delenv(name)
    empty = tmp_path / "empty"
    empty.write_text("")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(empty))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(empty))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "no-such-adc.json"))
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))


def _vertex(server: AnthropicTestServer, model: str = VERTEX_ID, **kw: Any) -> VertexProvider:
    kw.setdefault("credentials", google.oauth2.credentials.Credentials(token=TOKEN))
    return VertexProvider(model, base_url=server.url, region=REGION, project=PROJECT, **kw)


@dataclass(frozen=True)
class Cloud:
    """One platform as the tests drive it: its provider, and its replies to a recorded body."""

    name: str
    make: Callable[[AnthropicTestServer], MessagesProvider]
    stream: Callable[[bytes | str], Reply]
    plain: Callable[[dict[str, Any]], Reply]
    path: Callable[[bool], str]


BEDROCK = Cloud(
    "bedrock",
    lambda server: BedrockProvider(BEDROCK_ID, base_url=server.url),
    lambda body: bedrock_stream(bedrock_frames(body), BEDROCK_ID),
    lambda message: bedrock_json(message, BEDROCK_ID),
    lambda stream: bedrock_path(BEDROCK_ID, stream=stream),
)
VERTEX = Cloud(
    "vertex",
    _vertex,
    lambda body: replace(Reply.sse(body), expect=("POST", vertex_path(PROJECT, REGION, VERTEX_ID))),
    lambda message: replace(
        Reply.json(200, message),
        expect=("POST", vertex_path(PROJECT, REGION, VERTEX_ID, stream=False)),
    ),
    lambda stream: vertex_path(PROJECT, REGION, VERTEX_ID, stream=stream),
)
CLOUDS = pytest.mark.parametrize("cloud", [BEDROCK, VERTEX], ids=["bedrock", "vertex"])


def _chat(provider: MessagesProvider, clock: FakeClock, **kw: Any) -> Chat:
    kw.setdefault("thinking", "off")
    return Chat(provider, sleep=clock.sleep, clock=clock, rand=lambda: 0.5, **kw)


def _run_me() -> Any:
    @tool(run="unattended")
    def run_me(bar: str | list[str], foo: str = "foo") -> str:
        """A test tool."""
        return "working!"

    return run_me


def _assert_signed(cloud: Cloud, request: Any) -> None:
    """The platform's credentials and body: SigV4 for Bedrock, the bearer token for Vertex;
    the platform's anthropic_version, and no model in the body (it is in the path)."""
    assert request.headers["host"].startswith("127.0.0.1:")
    if cloud is BEDROCK:
        auth = request.headers["authorization"]
        assert auth.startswith(f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/")
        assert "/us-east-1/bedrock/aws4_request" in auth and "Signature=" in auth
        assert SECRET_KEY not in json.dumps(request.headers)
        assert request.body["anthropic_version"] == "bedrock-2023-05-31"
    else:
        assert request.headers["authorization"] == f"Bearer {TOKEN}"
        assert request.body["anthropic_version"] == "vertex-2023-10-16"
    assert "model" not in request.body


# ---------------------------------------------------------------- the event stream encoder


def test_the_eventstream_encoder_is_what_botocore_decodes() -> None:
    payload = json.dumps({"bytes": "eyJ0eXBlIjoicGluZyJ9"}).encode()
    headers = {
        ":event-type": "chunk",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    encoded = eventstream_message(headers, payload)
    buffer = EventStreamBuffer()
    buffer.add_data(encoded[:7])  # a message split across reads
    buffer.add_data(encoded[7:])
    [message] = list(buffer)
    assert message.headers == headers and message.payload == payload
    damaged = bytearray(encoded)
    damaged[-6] ^= 1  # one bit of the payload: the message CRC no longer matches
    broken = EventStreamBuffer()
    broken.add_data(bytes(damaged))
    with pytest.raises(ChecksumMismatch):
        list(broken)


def test_recorded_events_are_reframed_byte_for_byte() -> None:
    [exchange] = load_recording(recording_path("test_chat_completion_stream.yml"))
    buffer = EventStreamBuffer()
    buffer.add_data(b"".join(bedrock_frames(exchange.body)))
    import base64

    chunks = [base64.b64decode(json.loads(m.payload)["bytes"]) for m in buffer]
    assert chunks == sse_data(exchange.body) and len(chunks) > 5


# ---------------------------------------------------------------- recorded turns


@CLOUDS
async def test_a_recorded_tool_turn_with_thinking(
    server: AnthropicTestServer, clock: FakeClock, cloud: Cloud
) -> None:
    exchanges = load_recording(recording_path("test_tool_call_reasoning.yml"))
    server.enqueue(*(cloud.stream(e.body) for e in exchanges))
    chat = _chat(cloud.make(server), clock, thinking=12800, tools=[_run_me()])
    turn = await chat.send("Please run the tool, providing whatever arguments you want.")
    assert turn.outcome == "complete" and turn.kinds[-1] == "message"
    assert "tool_call_request" in turn.kinds and "tool_call_response" in turn.kinds
    reasoning = next(e for e in turn.events if isinstance(e, Reasoning))
    assert reasoning.metadata["signature"]
    first, second = server.requests
    for request in (first, second):
        assert request.path == cloud.path(True)
        _assert_signed(cloud, request)
    assert first.body["thinking"]["budget_tokens"] == 12800
    assert first.body["tools"][-1]["cache_control"] == {"type": "ephemeral"}  # prompt caching
    sent_back = second.body["messages"][1]["content"][0]
    assert sent_back["type"] == "thinking"
    assert sent_back["signature"] == reasoning.metadata["signature"]
    recorded = exchanges[1].request_body["messages"][1]["content"][0]
    assert sent_back["signature"] == recorded["signature"]
    assert turn.cost_usd is not None and turn.cost_usd > 0  # the platform's name has a price
    server.assert_all_served()


@CLOUDS
async def test_stream_off_sends_plain_requests_with_the_same_events(
    server: AnthropicTestServer, cloud: Cloud
) -> None:
    [exchange] = load_recording(recording_path("test_chat_completion_stream.yml"))
    request = Request(events=(ChatRequest(content="hi"),), thinking=12800)
    server.enqueue(cloud.stream(exchange.body), cloud.plain(message_from_sse(exchange.body)))
    streamed = [e async for e in cloud.make(server).stream(request)]
    plain_provider = cloud.make(server)
    plain_provider.streaming = False
    plain = [e async for e in plain_provider.stream(request)]
    assert _joined(plain) == _joined(streamed)
    assert server.requests[1].path == cloud.path(False)
    _assert_signed(cloud, server.requests[1])
    server.assert_all_served()


def _joined(events: list[Any]) -> list[Any]:
    """Text pieces of one block joined (a stream splits them where the network did)."""
    out: list[Any] = []
    for event in events:
        previous = out[-1] if out else None
        content = getattr(event, "content", None)
        if (
            previous is not None
            and type(previous) is type(event)
            and getattr(previous, "index", None) == getattr(event, "index", -1)
            and hasattr(content, "text")
            and type(previous.content) is type(content)
        ):
            merged = type(content)(previous.content.text + content.text)
            out[-1] = replace(event, content=merged)
        else:
            out.append(event)
    return out


# ---------------------------------------------------------------- what the platforms offer


async def test_bedrock_has_no_token_counter_and_asks_for_none(
    server: AnthropicTestServer,
) -> None:
    provider = BedrockProvider(BEDROCK_ID, base_url=server.url)
    assert await provider.count_tokens(Request(events=(ChatRequest(content="hi"),))) is None
    assert server.requests == []


async def test_vertex_counts_tokens_at_its_count_tokens_route(
    server: AnthropicTestServer,
) -> None:
    models = f"/projects/{PROJECT}/locations/{REGION}/publishers/anthropic/models"
    path = f"{models}/count-tokens:rawPredict"
    server.enqueue(replace(Reply.json(200, {"input_tokens": 42}), expect=("POST", path)))
    count = await _vertex(server).count_tokens(Request(events=(ChatRequest(content="hi"),)))
    assert count == 42
    [request] = server.requests
    assert request.body["model"] == VERTEX_ID  # the count route takes the model in the body
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    server.assert_all_served()


async def test_bedrock_carries_betas_in_the_body_and_goes_on_when_compaction_is_refused(
    server: AnthropicTestServer,
) -> None:
    refused = bedrock_error(400, "ValidationException", "context_management: unknown field")
    server.enqueue(refused, bedrock_stream(bedrock_frames(sse_text_response(["ok"])), BEDROCK_ID))
    provider = BedrockProvider(BEDROCK_ID, base_url=server.url)
    edit = {"edits": [{"type": "compact_20260112", "trigger": {"type": "input_tokens"}}]}
    request = Request(events=(ChatRequest(content="hi"),), extra={"context_management": edit})
    events = [e async for e in provider.stream(request)]
    first, second = server.requests
    assert first.body["anthropic_beta"] == ["compact-2026-01-12"]
    assert first.body["context_management"] == edit
    assert "context_management" not in second.body and "anthropic_beta" not in second.body
    assert provider.compaction is False
    assert "context_management" in events[-1].details["compaction_refused"]
    assert "Amazon Bedrock" in events[-1].details["compaction_refused"]


# ---------------------------------------------------------------- faults


def _throttled(cloud: Cloud) -> Reply:
    if cloud is BEDROCK:
        return bedrock_error(429, "ThrottlingException", "Too many requests", retry_after=2)
    body = {"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}}
    return replace(Reply.json(429, body, headers=[("retry-after", "2")]), expect=None)


def _server_error(cloud: Cloud) -> Reply:
    if cloud is BEDROCK:
        return bedrock_error(503, "ServiceUnavailableException", "Bedrock is unavailable")
    body = {"error": {"code": 503, "message": "unavailable", "status": "UNAVAILABLE"}}
    return replace(Reply.json(503, body), expect=None)


_HELLO = sse_text_response(["Hello", " there", ", wörld 🙂"])


def _cut(cloud: Cloud, events: int, *, ending: str) -> Reply:
    """The first ``events`` events; then a dropped connection, or a clean end that leaves out
    the rest (no message_stop)."""
    if cloud is BEDROCK:
        frames = bedrock_frames(_HELLO)[:events]
        return bedrock_stream(
            frames, BEDROCK_ID, ending="close" if ending == "drop" else "complete"
        )
    if ending == "drop":
        return replace(Reply.close_after(_HELLO, events), expect=None)
    return replace(Reply.truncated(_HELLO, events), expect=None)


@CLOUDS
@pytest.mark.parametrize(
    ("fault", "waits", "kind"),
    [
        (_throttled, [2.0], "rate_limit"),
        (_server_error, [1.0], "server"),
        (lambda cloud: _cut(cloud, 2, ending="drop"), [1.0], "connection"),
        (lambda cloud: _cut(cloud, 2, ending="clean"), [1.0], "incomplete_stream"),
    ],
    ids=["429-retry-after", "503", "dropped-mid-stream", "no-message-stop"],
)
async def test_transient_faults_are_retried(
    server: AnthropicTestServer,
    clock: FakeClock,
    cloud: Cloud,
    fault: Callable[[Cloud], Reply],
    waits: list[float],
    kind: str,
) -> None:
    provider = cloud.make(server)
    server.enqueue(fault(cloud), cloud.stream(_HELLO))
    failures: list[str] = []
    original = provider.classify

    def watched(error: BaseException) -> Any:
        classified = original(error)
        failures.append(classified.kind)
        return classified

    provider.classify = watched  # type: ignore[method-assign]
    turn = await _chat(provider, clock).send("hi")
    assert turn.outcome == "complete" and turn.text == "Hello there, wörld 🙂"
    assert clock.sleeps == waits and failures == [kind]
    assert len(server.requests) == 2
    server.assert_all_served()


@pytest.mark.parametrize(
    ("exception", "kind", "retryable"),
    [
        ("throttlingException", "rate_limit", True),
        ("modelStreamErrorException", "stream_error", True),
        ("serviceUnavailableException", "overloaded", True),
        ("validationException", "bad_request", False),
    ],
)
async def test_bedrock_exceptions_inside_the_stream_are_classified(
    server: AnthropicTestServer, exception: str, kind: str, retryable: bool
) -> None:
    from tests.support.cloud_replies import bedrock_exception

    frames = [*bedrock_frames(_HELLO)[:2], bedrock_exception(exception, "it broke")]
    server.enqueue(bedrock_stream(frames, BEDROCK_ID))
    provider = BedrockProvider(BEDROCK_ID, base_url=server.url)
    with pytest.raises(Exception) as caught:
        async for _ in provider.stream(Request(events=(ChatRequest(content="hi"),))):
            pass
    error = provider.classify(caught.value)
    assert (error.kind, error.retryable) == (kind, retryable)
    assert exception in str(error) and "it broke" in str(error)
    assert "Amazon Bedrock" in str(error)


@pytest.mark.parametrize(
    ("cloud", "fault", "kind", "words"),
    [
        (
            BEDROCK,
            bedrock_error(403, "AccessDeniedException", "no access to this model"),
            "permission",
            ["AccessDeniedException", "no access", "Model access"],
        ),
        (
            BEDROCK,
            bedrock_error(400, "ValidationException", "The provided model identifier is invalid"),
            "bad_request",
            ["ValidationException", "model identifier"],
        ),
        (
            VERTEX,
            replace(
                Reply.json(
                    404,
                    [{"error": {"code": 404, "message": "Publisher model not found",
                                "status": "NOT_FOUND"}}],
                ),
                expect=None,
            ),
            "not_found",
            ["NOT_FOUND", "Publisher model not found", "--region", "--project"],
        ),
        (
            VERTEX,
            replace(
                Reply.json(401, {"error": {"code": 401, "message": "bad token",
                                           "status": "UNAUTHENTICATED"}}),
                expect=None,
            ),
            "auth",
            ["UNAUTHENTICATED", "gcloud auth application-default login"],
        ),
    ],
    ids=["bedrock-403", "bedrock-400", "vertex-404-list-body", "vertex-401"],
)  # fmt: skip
async def test_fatal_errors_say_what_to_check_on_the_platform(
    server: AnthropicTestServer,
    clock: FakeClock,
    cloud: Cloud,
    fault: Reply,
    kind: str,
    words: list[str],
) -> None:
    server.enqueue(fault)
    turn = await _chat(cloud.make(server), clock).send("hi")
    error = turn.events[-1]
    assert turn.outcome == "error" and clock.sleeps == []
    assert isinstance(error, ErrorEvent) and error.error_type == kind
    assert all(word in error.message for word in words), error.message
    assert "ANTHROPIC_API_KEY" not in error.message
    server.assert_all_served()


async def test_vertex_credentials_that_cannot_refresh_are_an_auth_error(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    # no token and nothing to refresh it with: google-auth refuses before any request
    provider = _vertex(server, credentials=google.oauth2.credentials.Credentials(token=None))
    turn = await _chat(provider, clock).send("hi")
    error = turn.events[-1]
    assert isinstance(error, ErrorEvent) and error.error_type == "auth"
    assert "RefreshError" in error.message and "gcloud auth" in error.message
    assert server.requests == []


# ---------------------------------------------------------------- configuration


def test_missing_aws_credentials_name_the_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(ProviderConfigError) as caught:
        BedrockProvider()
    message = str(caught.value)
    assert "No AWS credentials" in message
    assert all(name in message for name in ("AWS_ACCESS_KEY_ID", "AWS_PROFILE", "aws sso login"))


def test_missing_aws_region_says_where_to_set_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_REGION")
    with pytest.raises(ProviderConfigError, match=r"--region.*aws_region.*AWS_REGION"):
        BedrockProvider()


def test_an_unknown_aws_profile_is_a_config_error() -> None:
    with pytest.raises(ProviderConfigError, match="nobody"):
        BedrockProvider(profile="nobody")


def test_bedrock_region_model_and_endpoint_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AWS_REGION")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    provider = BedrockProvider()
    assert provider.endpoint == "https://bedrock-runtime.eu-west-1.amazonaws.com"
    assert provider.model == f"eu.{BEDROCK_MODEL}"
    assert BedrockProvider(region="ap-northeast-1").model == f"global.{BEDROCK_MODEL}"
    assert "eu-west-1" in repr(provider) and SECRET_KEY not in repr(provider)


async def test_a_bedrock_api_key_is_a_bearer_token_and_is_redacted(
    server: AnthropicTestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    key = "bedrock-api-key-for-tests-0123456789"
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", key)
    server.enqueue(bedrock_stream(bedrock_frames(_HELLO), BEDROCK_ID))
    provider = BedrockProvider(BEDROCK_ID, base_url=server.url)
    [_ async for _ in provider.stream(Request(events=(ChatRequest(content="hi"),)))]
    assert server.requests[0].headers["authorization"] == f"Bearer {key}"
    assert key not in redact(f"echoed {key}")


def test_missing_google_credentials_name_the_chain() -> None:
    with pytest.raises(ProviderConfigError) as caught:
        VertexProvider(region=REGION, project=PROJECT)
    message = str(caught.value)
    assert "gcloud auth application-default login" in message
    assert "GOOGLE_APPLICATION_CREDENTIALS" in message


def test_missing_vertex_region_and_project_say_where_to_set_them() -> None:
    token = google.oauth2.credentials.Credentials(token=TOKEN)
    with pytest.raises(ProviderConfigError, match=r"--region.*vertex_region.*CLOUD_ML_REGION"):
        VertexProvider(credentials=token, project=PROJECT)
    with pytest.raises(
        ProviderConfigError, match=r"--project.*vertex_project.*ANTHROPIC_VERTEX_PROJECT_ID"
    ):
        VertexProvider(credentials=token, region=REGION)


def test_vertex_region_and_project_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CLOUD_ML_REGION", "europe-west1")
    monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "env-project")
    provider = VertexProvider(api_key=TOKEN)
    assert provider.endpoint == "https://europe-west1-aiplatform.googleapis.com/v1"
    assert (provider.region, provider.project, provider.model) == (
        "europe-west1",
        "env-project",
        VERTEX_MODEL,
    )
    assert TOKEN not in redact(f"a {TOKEN}")


# ---------------------------------------------------------------- model names


@pytest.mark.parametrize(
    ("name", "family", "version", "price", "adaptive"),
    [
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", "sonnet", (4, 5), 3.0, False),
        ("us.anthropic.claude-haiku-4-5-20251001-v1:0", "haiku", (4, 5), 1.0, False),
        ("global.anthropic.claude-opus-4-6-v1", "opus", (4, 6), 5.0, True),
        ("anthropic.claude-3-7-sonnet-20250219-v1:0", "sonnet", (3, 7), 3.0, False),
        ("claude-sonnet-4-5@20250929", "sonnet", (4, 5), 3.0, False),
        ("claude-opus-4-1@20250805", "opus", (4, 1), 15.0, False),
        ("claude-sonnet-4@20250514", "sonnet", (4, 0), 3.0, False),
        ("claude-3-5-sonnet-v2@20241022", "sonnet", (3, 5), 3.0, False),
    ],
)
def test_model_info_reads_the_platforms_names(
    name: str, family: str, version: tuple[int, int], price: float, adaptive: bool
) -> None:
    info = model_info(name)
    assert (info.family, info.version, info.input_price) == (family, version, price)
    assert info.adaptive_thinking is adaptive and info.context_window == 200_000
    assert info.thinking is (version >= (3, 7))


def test_the_default_models_are_known() -> None:
    for name in (BEDROCK_MODEL, VERTEX_MODEL):
        assert model_info(name).family == "sonnet" and model_info(name).input_price == 3.0


# ---------------------------------------------------------------- where the credentials may go

OWN_ENDPOINTS = {
    "bedrock": [
        "https://bedrock-runtime.us-east-1.amazonaws.com",
        "https://bedrock-runtime.eu-central-1.amazonaws.com/",
        "https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com",
        "https://bedrock-runtime.ap-southeast-2.amazonaws.com:443",
    ],
    "vertex": [
        "https://us-east5-aiplatform.googleapis.com/v1",
        "https://europe-west1-aiplatform.googleapis.com/v1",
        "https://northamerica-northeast1-aiplatform.googleapis.com/v1",
        "https://aiplatform.googleapis.com/v1",
        "https://aiplatform.us.rep.googleapis.com/v1",
    ],
}
LOOK_ALIKES = {
    "bedrock": [
        "http://bedrock-runtime.us-east-1.amazonaws.com",  # not TLS
        "https://bedrock-runtime.us-east-1.amazonaws.com:8443",
        "https://bedrock-runtime.us-east-1.amazonaws.com.attacker.example",
        "https://bedrock-runtime.us-east-1.amazonaws.com@attacker.example",
        "https://attacker.example/bedrock-runtime.us-east-1.amazonaws.com",
        "https://x.bedrock-runtime.us-east-1.amazonaws.com",
        "https://bedrock-runtime.x.evil.amazonaws.com",  # a region that is no region
        "https://bedrock.us-east-1.amazonaws.com",  # the control plane, not the runtime
        "https://bedrock-runtime.us-east-1.amazonaws.com:x",
    ],
    "vertex": [
        "http://us-east5-aiplatform.googleapis.com/v1",
        "https://us-east5-aiplatform.googleapis.com.attacker.example/v1",
        "https://us-east5-aiplatform.googleapis.com@attacker.example/v1",
        "https://attacker-aiplatform.googleapis.com/v1",
        "https://aiplatform.googleapis.com:8443/v1",
        "https://x.aiplatform.googleapis.com/v1",
        "https://aiplatform.evil.example/v1",
    ],
}


@pytest.mark.parametrize("name", ["bedrock", "vertex"])
def test_the_platforms_own_endpoints_and_no_look_alike(name: str) -> None:
    cloud = endpoints.CLOUDS[name]
    assert [url for url in OWN_ENDPOINTS[name] if not cloud.own(url)] == []
    assert [url for url in LOOK_ALIKES[name] if cloud.own(url)] == []


@pytest.fixture
def session(monkeypatch: pytest.MonkeyPatch) -> None:
    """No endpoint chosen in this kernel yet, nothing applied from a .env."""
    monkeypatch.setattr(endpoints, "_choices", {})
    monkeypatch.setattr(endpoints, "_from_dotenv", {})


def _from_dotenv(monkeypatch: pytest.MonkeyPatch, variable: str, url: str) -> None:
    """What ``%chat endpoint --from-dotenv`` does with a .env that names ``url``."""
    monkeypatch.setenv(variable, "")  # teardown removes it again
    monkeypatch.delenv(variable)
    endpoints.apply({variable: url}, "from /shared/.env", source="/shared/.env")


BEARER = "bedrock-api-key-for-tests-0123456789"
CREDENTIALS = {  # the AWS credentials a Bedrock client can sign with, in the environment
    "bearer token": {"AWS_BEARER_TOKEN_BEDROCK": BEARER},
    "access key": {},  # the fixture's
    "session token": {"AWS_SESSION_TOKEN": "fake-session-token-0123456789"},
    "profile": {"AWS_PROFILE": "work"},
}


@pytest.mark.parametrize("credentials", list(CREDENTIALS))
def test_aws_credentials_never_go_where_a_dotenv_or_a_saved_thread_points(
    server: AnthropicTestServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    session: None,
    credentials: str,
) -> None:
    for name, value in CREDENTIALS[credentials].items():
        monkeypatch.setenv(name, value)
    if credentials in ("bearer token", "profile"):
        monkeypatch.delenv("AWS_ACCESS_KEY_ID")
        monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    if credentials == "profile":
        profiles = tmp_path / "credentials"
        profiles.write_text(
            f"[work]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET_KEY}\n"
        )
        monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(profiles))
    _from_dotenv(monkeypatch, "ANTHROPIC_BEDROCK_BASE_URL", server.url)
    with pytest.raises(ProviderConfigError) as from_dotenv:
        BedrockProvider(BEDROCK_ID)
    saved = ProviderChoice("bedrock", BEDROCK_ID, base_url=server.url + "/saved")
    with pytest.raises(ProviderConfigError) as restored:
        catalog.build(saved, {})
    assert server.requests == []  # no client was made: nothing was sent
    said = str(from_dotenv.value)
    assert said.startswith("Not sent: the ")
    assert f"requests would go to {server.url} (ANTHROPIC_BEDROCK_BASE_URL, set from " in said
    assert "the thread's saved base URL, not chosen in this kernel" in str(restored.value)
    assert BEARER not in said + str(restored.value)

    endpoints.choose(server.url + "/saved", "--base-url on a cell")  # the user types it
    assert catalog.build(saved, {}).endpoint == server.url + "/saved"
    monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", server.url + "/v")  # the user's code sets it
    assert BedrockProvider(BEDROCK_ID).endpoint == server.url + "/v"


def test_google_credentials_never_go_where_a_dotenv_or_a_saved_thread_points(
    server: AnthropicTestServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, session: None
) -> None:
    for name, value in google_env(tmp_path).items():  # application default credentials
        monkeypatch.setenv(name, value)
    _from_dotenv(monkeypatch, "ANTHROPIC_VERTEX_BASE_URL", server.url)
    given = google.oauth2.credentials.Credentials(token=TOKEN)
    with pytest.raises(ProviderConfigError, match=r"^Not sent: the Google credentials given "):
        VertexProvider(VERTEX_ID, credentials=given)
    with pytest.raises(ProviderConfigError, match=r"^Not sent: the Google access token \(…code\)"):
        VertexProvider(VERTEX_ID, api_key="ya29.a-token-given-in-code")
    saved = ProviderChoice("vertex", VERTEX_ID, base_url=server.url)
    with pytest.raises(ProviderConfigError) as restored:
        catalog.build(saved, {})
    assert str(restored.value).startswith(
        "Not sent: the Google application default credentials (an access token) may go only "
        "to Vertex AI's own endpoints (https://REGION-aiplatform.googleapis.com) or to one you "
        f"chose in this kernel, and requests would go to {server.url} (the thread's saved "
        "base URL, not chosen in this kernel)."
    )
    assert server.requests == []
    # the platform's own endpoint, and one given in code, get them
    monkeypatch.delenv("ANTHROPIC_VERTEX_BASE_URL")
    own = VertexProvider(VERTEX_ID, credentials=given)
    assert own.endpoint == f"https://{GOOGLE_REGION}-aiplatform.googleapis.com/v1"
    assert VertexProvider(VERTEX_ID, credentials=given, base_url=server.url).endpoint == server.url


def test_a_region_that_is_none_of_the_platforms_gets_no_credentials(session: None) -> None:
    """The SDK builds the host from the region: one that makes no host of the platform's is
    refused, naming the region (a cell's ``--region`` is free text)."""
    with pytest.raises(ProviderConfigError) as caught:
        BedrockProvider(BEDROCK_ID, region="x.attacker")
    assert str(caught.value).endswith(
        "requests would go to https://bedrock-runtime.x.attacker.amazonaws.com (the SDK's "
        "endpoint for the region asked for). If you trust it, run the cell with --base-url "
        "https://bedrock-runtime.x.attacker.amazonaws.com; otherwise check the region (--region)."
    )
    assert BedrockProvider(BEDROCK_ID, region="eu-west-3").endpoint.endswith(".amazonaws.com")
